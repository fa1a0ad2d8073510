// The Agent App standard's call shapes, mapped onto the mock's one internal form exactly as the
// host maps them (crates/host-core/src/capability/services/{shapes,start_task_shape}.rs).
import { ErrorCodes } from "../errors.js";
import { invalid, isRecord, refuse, Refusal } from "./common.js";

const hasAny = (a: Record<string, unknown>, keys: string[]) => keys.some((k) => k in a);
const ambiguous = (cause: string, what: string) => invalid(`the arguments mix two call shapes (${what}); use one`, cause);

function closedTo(a: Record<string, unknown>, allowed: string[], bad: (m: string) => Refusal) {
  const extra = Object.keys(a).find((k) => !allowed.includes(k));
  if (extra !== undefined) throw bad(`unknown argument ${JSON.stringify(extra.slice(0, 64))}`);
}
function str(a: Record<string, unknown>, k: string, bad: (m: string) => Refusal): string | undefined {
  const v = a[k];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw bad(`args.${k} must be a string`);
  return v;
}

/** `lime.artifacts.create`: `{kind, title?, content}` / `{type, data, title?}` → `{name, mimeType, text}`. */
export function artifactCreateArgs(a: Record<string, unknown>): Record<string, unknown> {
  const kindForm = hasAny(a, ["kind", "content"]);
  const typeForm = hasAny(a, ["type", "data"]);
  if (!kindForm && !typeForm && !("title" in a)) return a;
  const cause = "artifacts.ambiguous_shape";
  if (hasAny(a, ["name", "text", "base64"])) throw ambiguous(cause, "name/text/base64 with a standard form");
  if (kindForm && typeForm) throw ambiguous(cause, "{kind, content} with {type, data}");
  const bad = (m: string) => invalid(m, "artifacts.invalid_argument");
  const [label, body] = typeForm ? ["type", "data"] : ["kind", "content"];
  closedTo(a, [label, body, "title", "mimeType"], bad);
  const l = str(a, label, bad);
  if (l === undefined) throw bad(`args.${label} is required`);
  const name = str(a, "title", bad) ?? l;
  const mime = str(a, "mimeType", bad);
  const c = a[body];
  if (c === undefined || c === null) throw bad(`args.${body} is required`);
  const text = typeof c === "string" ? c : JSON.stringify(c);
  return { name, mimeType: mime ?? (typeof c === "string" ? "text/plain" : "application/json"), text };
}

/** `lime.evidence.record`: `{kind, message?, refs?}` / `{subject, sources?, kind?}` → `{kind, summary, data}`. */
export function evidenceRecordArgs(a: Record<string, unknown>): Record<string, unknown> {
  const messageForm = hasAny(a, ["message", "refs"]);
  const subjectForm = hasAny(a, ["subject", "sources"]);
  if (!messageForm && !subjectForm) return a;
  const cause = "evidence.ambiguous_shape";
  if (hasAny(a, ["summary", "data", "artifactIds"])) throw ambiguous(cause, "summary/data/artifactIds with a standard form");
  if (messageForm && subjectForm) throw ambiguous(cause, "{message, refs} with {subject, sources}");
  const bad = (m: string) => invalid(m, "evidence.invalid_argument");
  if (messageForm) {
    closedTo(a, ["kind", "message", "refs"], bad);
    const kind = str(a, "kind", bad);
    if (kind === undefined) throw bad("args.kind is required");
    const refs = a["refs"];
    if (refs !== undefined && refs !== null && !Array.isArray(refs)) throw bad("args.refs must be an array");
    return { kind, summary: str(a, "message", bad) ?? "", data: Array.isArray(refs) ? { refs } : null };
  }
  closedTo(a, ["kind", "subject", "sources"], bad);
  const kind = str(a, "kind", bad) ?? "source";
  const subject = a["subject"];
  if (subject === undefined || subject === null) throw bad("args.subject is required");
  const sources = a["sources"] ?? [];
  if (!Array.isArray(sources)) throw bad("args.sources must be an array");
  return { kind, summary: typeof subject === "string" ? subject : "", data: { subject, sources } };
}

/** Every field `startTask` accepts. */
export const START_TASK_FIELDS = [
  "input",
  "idempotencyKey",
  "expectedOutput",
  "sessionPolicy",
  "options",
  "appId",
  "entry",
  "entryKey",
  "taskKind",
  "context",
  "metadata",
  "businessObjectRef",
  "capabilityHints",
  "knowledge",
  "tools",
  "files",
  "secrets",
  "budget",
];

const bindsSomething = (v: unknown) =>
  v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0) && !(isRecord(v) && Object.keys(v).length === 0);
const unsupported = (binding: string) =>
  new Refusal(ErrorCodes.CAPABILITY_NOT_AVAILABLE, `binding ${JSON.stringify(binding)} is not supported by this host yet`, "agent.binding_unsupported", false, { binding });

/** Checks the standard's `startTask` fields; returns the request's `expectedOutput` schema source. */
export function checkStartTask(a: Record<string, unknown>, appId: string, entryKey: string, knowledge: Record<string, unknown> = {}): unknown {
  const bad = (m: string) => invalid(m, "agent.invalid_argument");
  closedTo(a, START_TASK_FIELDS, bad);
  const app = str(a, "appId", bad);
  if (app !== undefined && app !== appId) throw refuse(ErrorCodes.PERMISSION_DENIED, "args.appId names another appId than the calling one", "agent.app_mismatch");
  const e1 = str(a, "entry", bad);
  const e2 = str(a, "entryKey", bad);
  if (e1 !== undefined && e2 !== undefined && e1 !== e2) throw bad("args.entry and args.entryKey differ");
  const entry = e1 ?? e2;
  if (entry !== undefined && entry !== entryKey) {
    throw refuse(ErrorCodes.PERMISSION_DENIED, "args.entryKey names another entryKey than the calling one", "agent.entry_mismatch");
  }
  const kind = str(a, "taskKind", bad);
  if (kind !== undefined && (kind.length === 0 || [...kind].length > 128)) throw bad("args.taskKind must be 1-128 characters");
  for (const k of ["context", "metadata"]) if (a[k] !== undefined && a[k] !== null && !isRecord(a[k])) throw bad(`args.${k} must be an object`);
  const ref = a["businessObjectRef"];
  if (ref !== undefined && ref !== null && typeof ref !== "string" && !isRecord(ref)) throw bad("args.businessObjectRef must be a string or an object");
  const hints = a["capabilityHints"];
  if (hints !== undefined && hints !== null && !Array.isArray(hints)) throw bad("args.capabilityHints must be an array");
  // `knowledge`: templates the task may search (declared and bound, as the host checks).
  const kb = a["knowledge"];
  if (kb !== undefined && kb !== null) {
    if (!Array.isArray(kb) || kb.length > 16) throw bad("args.knowledge must be an array of template keys");
    for (const item of kb) {
      const key = typeof item === "string" ? item : isRecord(item) ? (item["template"] ?? item["key"]) : undefined;
      if (typeof key !== "string" || key === "") throw bad("args.knowledge items must be template keys (or {template})");
      if (!Object.hasOwn(knowledge, key)) throw refuse(ErrorCodes.PERMISSION_DENIED, "the app's manifest declares no knowledge template with this key", "knowledge.template_not_declared");
      if (knowledge[key] === null) throw refuse(ErrorCodes.KNOWLEDGE_NOT_BOUND, "no folder is bound to this knowledge template yet; the user binds one in the host", "knowledge.not_bound");
    }
  }
  // `tools`: MCP tools the app declares and the user granted; the mock host has no MCP
  // servers, so a non-empty binding is refused as the host refuses an ungranted tool.
  const tools = a["tools"];
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools) || tools.length > 16) throw bad("args.tools must be an array of \"<server>/<tool>\" refs");
    if (tools.length > 0) throw refuse(ErrorCodes.PERMISSION_DENIED, "no MCP tool is granted to this app in the mock host", "tools.not_granted");
  }
  for (const b of ["secrets"]) if (bindsSomething(a[b])) throw unsupported(b);
  // `budget: {maxTokens}`: a whole number of tokens, 1 to 10^12 (services/task_budget.rs).
  const budget = a["budget"];
  if (budget !== undefined && budget !== null) {
    const badBudget = () => invalid("args.budget must be {maxTokens} with a whole number of tokens from 1 to 1000000000000", "agent.invalid_budget");
    if (!isRecord(budget) || Object.keys(budget).some((k) => k !== "maxTokens")) throw badBudget();
    const n = budget["maxTokens"];
    if (n !== undefined && n !== null && (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > 1_000_000_000_000)) throw badBudget();
  }
  const eo = a["expectedOutput"];
  if (eo === undefined || eo === null) return null;
  if (!isRecord(eo)) throw bad("args.expectedOutput must be an object");
  closedTo(eo, ["schema", "schemaRef", "outputFormat", "artifactKind", "materializer"], (m) => bad(m.replace("argument", "expectedOutput field")));
  for (const b of ["artifactKind", "materializer"]) if (bindsSomething(eo[b])) throw unsupported(`expectedOutput.${b}`);
  const found: [string, unknown][] = [];
  for (const k of ["schema", "schemaRef"]) if (k in eo) found.push([k, eo[k]]);
  const f = eo["outputFormat"];
  if (f !== undefined && f !== null) {
    if (!isRecord(f)) throw bad("expectedOutput.outputFormat must be an object");
    closedTo(f, ["type", "schema", "schemaRef", "maxValidationRetries"], (m) => bad(m.replace("argument", "expectedOutput.outputFormat field")));
    if (f["type"] !== undefined && f["type"] !== null && f["type"] !== "json_schema") throw bad('expectedOutput.outputFormat.type must be "json_schema"');
    const r = f["maxValidationRetries"];
    if (r !== undefined && r !== null && (typeof r !== "number" || !Number.isInteger(r) || r < 0 || r > 10)) {
      throw bad("expectedOutput.outputFormat.maxValidationRetries must be 0-10");
    }
    for (const k of ["schema", "schemaRef"]) if (k in f) found.push([k, f[k]]);
  }
  const [one] = found;
  if (found.length !== 1 || !one || (one[0] === "schema" ? !isRecord(one[1]) : typeof one[1] !== "string")) {
    throw bad("expectedOutput needs exactly one of schema (an object) or schemaRef (a package path)");
  }
  return { [one[0]]: one[1] };
}
