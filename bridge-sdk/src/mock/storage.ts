// lime.storage in memory (crates/host-core/src/capability/services/storage.rs, runtime-core's
// app_storage/): key-value and rows of declared tables, kept as SQLite would keep them, under
// one quota per app.
import { ErrorCodes } from "../errors.js";
import type { RowId, StorageListPage, TableRow } from "../handles.js";
import {
  bytes,
  invalid,
  isRecord,
  json,
  limitOf,
  MAX_KEY_BYTES,
  MAX_QUERY_OFFSET,
  MAX_VALUE_BYTES,
  optStr,
  refuse,
  type MockContext,
  type Service,
} from "./common.js";

/** A table value as SQLite keeps it: booleans as 0/1, arrays and objects as JSON text. */
function toSql(v: unknown): string | number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "string") return v;
  return JSON.stringify(v);
}
/** SQLite's order of values: NULL, numbers, text (by bytes). */
function sqlCompare(x: unknown, y: unknown): number {
  const rank = (v: unknown) => (v === null || v === undefined ? 0 : typeof v === "number" ? 1 : 2);
  const d = rank(x) - rank(y);
  if (d !== 0) return d;
  if (typeof x === "number" && typeof y === "number") return x - y;
  const a = String(x);
  const b = String(y);
  return a < b ? -1 : a > b ? 1 : 0;
}

export function createStorage(ctx: MockContext) {
  const quota = ctx.options.quotaBytes ?? 64 * 1024 * 1024;
  const declaredTables = ctx.options.tables;
  const store = new Map<string, unknown>();
  const tables = new Map<string, Map<RowId, TableRow>>();

  const storageUsed = () => {
    let n = 0;
    for (const [k, v] of store) n += bytes(k) + bytes(json(v));
    for (const [, rows] of tables) for (const r of rows.values()) n += bytes(json(r));
    return n;
  };
  const ensureRoom = (add: number, old = 0) => {
    if (add > old && storageUsed() - old + add > quota) {
      throw refuse(ErrorCodes.STORAGE_QUOTA_EXCEEDED, `storage quota exceeded: the database may use ${quota} bytes`, "storage.quota_exceeded");
    }
  };
  const bad = (message: string) => invalid(message, "storage.invalid_argument");
  const key = (a: Record<string, unknown>) => {
    const k = a["key"];
    if (typeof k !== "string") throw bad("args.key must be a string");
    const why = k.length === 0 ? "empty" : bytes(k) > MAX_KEY_BYTES ? "longer than 512 bytes" : /[\u0000-\u001f\u007f]/.test(k) ? "contains a control character" : null;
    if (why) throw invalid(`invalid key: ${why}`, "storage.invalid_key");
    return k;
  };
  const table = (a: Record<string, unknown>) => {
    const name = a["table"];
    if (typeof name !== "string") throw bad("args.table must be a string");
    const decl = declaredTables ? (Object.hasOwn(declaredTables, name) ? declaredTables[name] : undefined) : {};
    if (!decl || name.startsWith("lime_")) throw invalid(`table ${JSON.stringify(name.slice(0, 128))} is not declared in the app's storage schema`, "storage.undeclared_table");
    const pk = decl.primaryKey ?? "id";
    const columns = decl.columns;
    if (columns && !columns.includes(pk)) throw refuse(ErrorCodes.STORAGE_SCHEMA_MISMATCH, `schema mismatch: table ${JSON.stringify(name)} has no column ${JSON.stringify(pk)}, its declared primary key`, "storage.schema_mismatch");
    const checkColumns = (names: Iterable<string>) => {
      for (const c of names) {
        if (columns && !columns.includes(c)) {
          throw refuse(ErrorCodes.STORAGE_SCHEMA_MISMATCH, `schema mismatch: table ${JSON.stringify(name)} has no writable column ${JSON.stringify(c.slice(0, 128))}`, "storage.schema_mismatch");
        }
      }
    };
    const rows = tables.get(name) ?? new Map<RowId, TableRow>();
    return { name, pk, rows, checkColumns, save: () => tables.set(name, rows) };
  };
  const sqlValues = (o: Record<string, unknown>) => {
    const out: TableRow = {};
    for (const [k, v] of Object.entries(o)) {
      const s = toSql(v);
      if (typeof s === "string" && bytes(s) > MAX_VALUE_BYTES) throw invalid(`value too large: ${bytes(s)} bytes (at most ${MAX_VALUE_BYTES})`, "storage.value_too_large");
      out[k] = s;
    }
    return out;
  };
  const rowId = (a: Record<string, unknown>): RowId | null => {
    if (!("id" in a) || a["id"] === undefined) throw bad("args.id is required");
    const id = toSql(a["id"]);
    return id;
  };
  const object = (a: Record<string, unknown>, field: string) => {
    const v = a[field];
    if (!isRecord(v)) throw bad(`args.${field} must be an object`);
    return v;
  };

  const service: Service = {
    get(a) {
      const k = key(a);
      return store.has(k) ? structuredClone(store.get(k)) : null;
    },
    set(a) {
      if (!("value" in a)) throw bad("args.value is required");
      const k = key(a);
      const text = json(a["value"]);
      if (bytes(text) > MAX_VALUE_BYTES) throw invalid(`value too large: ${bytes(text)} bytes (at most ${MAX_VALUE_BYTES})`, "storage.value_too_large");
      const old = store.has(k) ? bytes(k) + bytes(json(store.get(k))) : 0;
      ensureRoom(bytes(k) + bytes(text), old);
      store.set(k, JSON.parse(text));
      return null;
    },
    delete(a) {
      return { deleted: store.delete(key(a)) };
    },
    list(a) {
      const prefix = optStr(a, "prefix", bad) ?? "";
      const cursor = optStr(a, "cursor", bad);
      const limit = limitOf(a, bad);
      if (bytes(prefix) > MAX_KEY_BYTES) throw invalid("invalid key: prefix longer than a key", "storage.invalid_key");
      const keys = [...store.keys()].filter((k) => k.startsWith(prefix) && (cursor === undefined || k > cursor)).sort();
      const items = keys.slice(0, limit);
      const out: StorageListPage = {
        items: items.map((k) => ({ key: k, value: structuredClone(store.get(k)) })),
        nextCursor: keys.length > limit ? (items[items.length - 1] ?? null) : null,
      };
      return out;
    },
    tableGet(a) {
      const t = table(a);
      const id = rowId(a);
      const row = id === null ? undefined : t.rows.get(id);
      return row === undefined ? null : structuredClone(row);
    },
    tableQuery(a) {
      const where = a["where"] ?? {};
      if (!isRecord(where)) throw bad("args.where must be an object");
      const orderBy = optStr(a, "orderBy", bad);
      const descending = a["descending"] ?? false;
      if (typeof descending !== "boolean") throw bad("args.descending must be a boolean");
      const limit = limitOf(a, bad);
      const offset = a["offset"] ?? 0;
      if (typeof offset !== "number" || !Number.isInteger(offset) || offset < 0) throw bad("args.offset must be a whole number");
      if (offset > MAX_QUERY_OFFSET) throw bad(`invalid argument: offset must be at most ${MAX_QUERY_OFFSET}`);
      const t = table(a);
      t.checkColumns([...Object.keys(where), ...(orderBy === undefined ? [] : [orderBy])]);
      const filter = sqlValues(where);
      const hits = [...t.rows.values()].filter((r) => Object.entries(filter).every(([c, v]) => (v === null ? (r[c] ?? null) === null : r[c] === v)));
      const dir = descending ? -1 : 1;
      hits.sort((x, y) => dir * (sqlCompare(orderBy === undefined ? x[t.pk] : x[orderBy], orderBy === undefined ? y[t.pk] : y[orderBy]) || sqlCompare(x[t.pk], y[t.pk])));
      return { rows: structuredClone(hits.slice(offset, offset + limit)) };
    },
    tableInsert(a) {
      const t = table(a);
      const given = object(a, "row");
      if (Object.keys(given).length === 0) throw bad("invalid argument: row has no columns");
      t.checkColumns(Object.keys(given));
      const row = sqlValues(given);
      let id = row[t.pk] as RowId | null | undefined;
      if (id === null || id === undefined) {
        let max = 0;
        for (const k of t.rows.keys()) if (typeof k === "number" && k > max) max = k;
        id = Math.floor(max) + 1;
        row[t.pk] = id;
      }
      if (t.rows.has(id)) throw bad(`invalid argument: constraint failed: UNIQUE constraint failed: ${t.name}.${t.pk}`);
      ensureRoom(bytes(json(row)));
      t.rows.set(id, row);
      t.save();
      return { id };
    },
    tableUpdate(a) {
      const t = table(a);
      const id = rowId(a);
      const patch = object(a, "patch");
      if (Object.keys(patch).length === 0) throw bad("invalid argument: patch has no columns");
      t.checkColumns(Object.keys(patch));
      const old = id === null ? undefined : t.rows.get(id);
      if (id === null || !old) return { updated: false };
      const next: TableRow = { ...old, ...sqlValues(patch) };
      const newId = next[t.pk] as RowId | null;
      if (newId === null || (newId !== id && t.rows.has(newId))) throw bad(`invalid argument: constraint failed: ${t.name}.${t.pk}`);
      ensureRoom(bytes(json(next)), bytes(json(old)));
      t.rows.delete(id);
      t.rows.set(newId, next);
      return { updated: true };
    },
    tableDelete(a) {
      const t = table(a);
      const id = rowId(a);
      return { deleted: id !== null && t.rows.delete(id) };
    },
  };
  const notAnObject = bad("args must be an object");
  return { store, tables, service, notAnObject };
}
