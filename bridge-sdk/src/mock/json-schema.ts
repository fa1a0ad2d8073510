// A small JSON Schema subset for the mock's `user-input` answers (the host checks the full
// JSON Schema): `type`, `required`, `properties`, `additionalProperties: false`, `items`, `enum`,
// `const`, `minimum` / `maximum`, `minLength` / `maxLength`. Returns the first violation's JSON
// pointer and message, or undefined.

type Schema = Record<string, unknown>;

const typeOf = (v: unknown): string => {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
};

const matchesType = (v: unknown, t: unknown): boolean => {
  const types = Array.isArray(t) ? t : [t];
  const actual = typeOf(v);
  return types.some((x) => x === actual || (x === "number" && actual === "integer"));
};

const ptr = (path: string, key: string | number) => `${path}/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`;

export function firstViolation(schema: unknown, value: unknown, path = ""): { path: string; message: string } | undefined {
  if (typeof schema !== "object" || schema === null) return undefined;
  const s = schema as Schema;
  if (s["type"] !== undefined && !matchesType(value, s["type"])) return { path, message: `${JSON.stringify(value)?.slice(0, 80)} is not of type ${JSON.stringify(s["type"])}` };
  if (Array.isArray(s["enum"]) && !s["enum"].some((e) => JSON.stringify(e) === JSON.stringify(value))) return { path, message: "is not one of the allowed values" };
  if ("const" in s && JSON.stringify(s["const"]) !== JSON.stringify(value)) return { path, message: "is not the allowed value" };
  if (typeof value === "number") {
    if (typeof s["minimum"] === "number" && value < s["minimum"]) return { path, message: `${value} is less than the minimum of ${s["minimum"]}` };
    if (typeof s["maximum"] === "number" && value > s["maximum"]) return { path, message: `${value} is greater than the maximum of ${s["maximum"]}` };
  }
  if (typeof value === "string") {
    const n = [...value].length;
    if (typeof s["minLength"] === "number" && n < s["minLength"]) return { path, message: "is too short" };
    if (typeof s["maxLength"] === "number" && n > s["maxLength"]) return { path, message: "is too long" };
  }
  if (Array.isArray(value) && s["items"] !== undefined) {
    for (let i = 0; i < value.length; i++) {
      const v = firstViolation(s["items"], value[i], ptr(path, i));
      if (v) return v;
    }
  }
  if (typeOf(value) === "object") {
    const o = value as Record<string, unknown>;
    for (const k of Array.isArray(s["required"]) ? s["required"] : []) {
      if (typeof k === "string" && !Object.hasOwn(o, k)) return { path, message: `"${k}" is a required property` };
    }
    const props = (typeof s["properties"] === "object" && s["properties"] !== null ? s["properties"] : {}) as Schema;
    for (const [k, v] of Object.entries(o)) {
      if (Object.hasOwn(props, k)) {
        const bad = firstViolation(props[k], v, ptr(path, k));
        if (bad) return bad;
      } else if (s["additionalProperties"] === false) return { path: ptr(path, k), message: "additional properties are not allowed" };
    }
  }
  return undefined;
}
