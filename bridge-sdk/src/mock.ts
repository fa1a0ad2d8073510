import { ErrorCodes, LimeCapabilityError } from "./errors.js";
import { buildHandles, type CallOptions, type LimeAppEvent, type PermissionResult, type StorageListPage } from "./handles.js";
import type { ErrorCode, HostSnapshot, ThemeSnapshot } from "./protocol.js";
import type { LimeRuntime } from "./runtime.js";

/** App events shared by several mock runtimes (entries of one app); never across apps. */
export interface MockEventBus {
  publish(appId: string, event: LimeAppEvent): void;
  join(appId: string, deliver: (event: LimeAppEvent) => void): () => void;
}

export function createMockEventBus(): MockEventBus {
  const members = new Map<string, Set<(e: LimeAppEvent) => void>>();
  return {
    publish(appId, event) {
      for (const d of [...(members.get(appId) ?? [])]) d(structuredClone(event));
    },
    join(appId, deliver) {
      const set = members.get(appId) ?? new Set();
      members.set(appId, set);
      set.add(deliver);
      return () => set.delete(deliver);
    },
  };
}

export interface MockOptions {
  appId?: string;
  entryKey?: string;
  /** Capabilities the mock host offers (default: all the host implements). */
  capabilities?: string[];
  /** Methods to deny as the host would (`"lime.storage.set"`): APP_E002. */
  denied?: string[];
  /** Storage quota in bytes of keys plus JSON values, per app (default 64 MiB). */
  quotaBytes?: number;
  snapshot?: Partial<HostSnapshot>;
  /** Declared secret slots and whether each is bound (`getRef` of an unbound one fails). */
  secrets?: Record<string, boolean>;
  /** Optional permissions and the user's answer to `requestPermission` (default: undeclared). */
  permissions?: Record<string, PermissionResult["persistence"]>;
  /** Shares `lime.events` between mock runtimes of the same app. */
  bus?: MockEventBus;
  /** Delay before each call answers, to exercise timeouts and cancellation (default 0). */
  latencyMs?: number;
  /** Default deadline of a call, as in the real runtime (default 30 s). */
  timeoutMs?: number;
}

/** A recorded call, for assertions in app authors' tests. */
export interface MockCall {
  capability: string;
  method: string;
  args: unknown;
}

export interface MockArtifact {
  artifactId: string;
  name: string;
  mimeType: string;
  size: number;
  createdAt: string;
  content: string;
  encoding: "text" | "base64";
}

export interface MockLimeRuntime extends LimeRuntime {
  readonly calls: MockCall[];
  /** The key-value storage contents, as the real host would keep them. */
  readonly store: Map<string, unknown>;
  /** Table rows by table name, then by row id. */
  readonly tables: Map<string, Map<string, Record<string, unknown>>>;
  readonly artifactStore: Map<string, MockArtifact>;
  readonly evidenceRecords: Record<string, unknown>[];
  /** Pushes a theme update to `onSnapshot` listeners. */
  setTheme(theme: Partial<ThemeSnapshot>): void;
  readonly toasts: { message: string; level: string }[];
  readonly navigations: string[];
}

/** Every capability the real host implements (the mock's default offer). */
export const MOCK_CAPABILITIES = ["lime.ui", "lime.storage", "lime.artifacts", "lime.evidence", "lime.secrets", "lime.events", "lime.policy"];

const MAX_KEY_BYTES = 512;
const MAX_VALUE_BYTES = 1024 * 1024;
const MAX_LIMIT = 1000;
const bytes = (s: string) => new TextEncoder().encode(s).length;
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

class Refusal {
  constructor(
    readonly code: ErrorCode,
    readonly message: string,
    readonly causeCode?: string,
  ) {}
}
const invalid = (message: string, cause?: string) => new Refusal(ErrorCodes.INVALID_ARGUMENT, message, cause);

function page<T>(items: T[], keyOf: (t: T) => string, a: Record<string, unknown>) {
  const cursor = a["cursor"];
  const limit = a["limit"] ?? 100;
  if (cursor !== undefined && typeof cursor !== "string") throw invalid("args.cursor must be a string");
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw invalid(`args.limit must be 1..=${MAX_LIMIT}`);
  const rest = items.filter((i) => cursor === undefined || keyOf(i) > cursor);
  const out = rest.slice(0, limit);
  const last = out[out.length - 1];
  return { items: out, nextCursor: rest.length > limit && last !== undefined ? keyOf(last) : null };
}

/**
 * An in-memory `lime` runtime with the same surface, types and errors as the real host, for app
 * authors' unit tests. No network, no frame, no host.
 */
export function createMockLimeRuntime(options: MockOptions = {}): MockLimeRuntime {
  const appId = options.appId ?? "mock-app";
  const entryKey = options.entryKey ?? "home";
  const offered = new Set(options.capabilities ?? MOCK_CAPABILITIES);
  const denied = new Set(options.denied ?? []);
  const quota = options.quotaBytes ?? 64 * 1024 * 1024;
  const secrets = options.secrets ?? {};
  const permissions = options.permissions ?? {};
  const bus = options.bus ?? createMockEventBus();
  const latency = options.latencyMs ?? 0;
  const defaultTimeout = options.timeoutMs ?? 30_000;
  const store = new Map<string, unknown>();
  const tables = new Map<string, Map<string, Record<string, unknown>>>();
  const artifactStore = new Map<string, MockArtifact>();
  const evidenceRecords: Record<string, unknown>[] = [];
  const secretRefs = new Map<string, string>();
  const subscribed = new Set<string>();
  const calls: MockCall[] = [];
  const toasts: { message: string; level: string }[] = [];
  const navigations: string[] = [];
  const listeners = new Set<(s: HostSnapshot) => void>();
  let seq = 0;
  const id = (prefix: string) => `${prefix}_${(++seq).toString(36).padStart(6, "0")}`;
  const theme: ThemeSnapshot = { themeMode: "system", effectiveThemeMode: "light", colorSchemeId: "lime-default", tokens: {} };
  let snapshot: HostSnapshot = {
    appId, entryKey, entryKind: "page", route: "/", origin: `agentapp://${appId}`,
    locale: "en-US", timezone: "UTC", workspaceId: "local", tenantId: "local",
    ...theme, theme,
    capabilities: { available: [...offered], blocked: [] },
    ...options.snapshot,
  };

  const used = () => {
    let n = 0;
    for (const [k, v] of store) n += bytes(k) + bytes(JSON.stringify(v));
    for (const [, rows] of tables) for (const [k, r] of rows) n += bytes(k) + bytes(JSON.stringify(r));
    for (const a of artifactStore.values()) n += a.size;
    return n;
  };
  const ensureRoom = (add: number, old = 0) => {
    if (add > old && used() - old + add > quota) throw new Refusal(ErrorCodes.STORAGE_QUOTA_EXCEEDED, "storage quota exceeded", "storage.quota_exceeded");
  };
  const str = (a: Record<string, unknown>, field: string, max = 256) => {
    const v = a[field];
    if (typeof v !== "string" || v.length === 0 || bytes(v) > max || /[\u0000-\u001f\u007f]/.test(v)) throw invalid(`args.${field} must be a non-empty string`, `${field}.invalid`);
    return v;
  };
  const key = (a: Record<string, unknown>) => {
    const k = a["key"];
    if (typeof k !== "string" || k.length === 0 || bytes(k) > MAX_KEY_BYTES || /[\u0000-\u001f\u007f]/.test(k)) throw invalid("invalid key", "storage.invalid_key");
    return k;
  };

  const services: Record<string, Record<string, (a: Record<string, unknown>) => unknown>> = {
    "lime.ui": {
      getSnapshot: () => snapshot,
      getLocale: () => ({ locale: snapshot.locale, timezone: snapshot.timezone }),
      getTheme: () => snapshot.theme,
    },
    "lime.storage": {
      tableGet(a) {
        const row = tables.get(str(a, "table"))?.get(String(a["id"]));
        return row === undefined ? null : structuredClone(row);
      },
      get(a) {
        const k = key(a);
        return store.has(k) ? structuredClone(store.get(k)) : null;
      },
      set(a) {
        const k = key(a);
        if (!("value" in a)) throw invalid("args.value is required");
        const text = JSON.stringify(a["value"]);
        if (text === undefined || bytes(text) > MAX_VALUE_BYTES) throw invalid("value too large or not JSON", "storage.value_too_large");
        const old = store.has(k) ? bytes(k) + bytes(JSON.stringify(store.get(k))) : 0;
        ensureRoom(bytes(k) + bytes(text), old);
        store.set(k, JSON.parse(text));
        return null;
      },
      tableDelete(a) {
        return { deleted: tables.get(str(a, "table"))?.delete(String(a["id"])) ?? false };
      },
      delete(a) {
        return { deleted: store.delete(key(a)) };
      },
      list(a) {
        const prefix = a["prefix"] ?? "";
        if (typeof prefix !== "string") throw invalid("args.prefix must be a string");
        const keys = [...store.keys()].filter((k) => k.startsWith(prefix)).sort();
        const p = page(keys, (k) => k, a);
        const out: StorageListPage = { items: p.items.map((k) => ({ key: k, value: structuredClone(store.get(k)) })), nextCursor: p.nextCursor };
        return out;
      },
      tableInsert(a) {
        const t = str(a, "table");
        if (!isRecord(a["row"])) throw invalid("args.row must be an object");
        const row = structuredClone(a["row"]);
        const rowId = typeof row["id"] === "string" && row["id"] ? row["id"] : id("row");
        const rows = tables.get(t) ?? new Map<string, Record<string, unknown>>();
        if (rows.has(rowId)) throw invalid(`a row with id ${rowId} exists`, "storage.duplicate_id");
        ensureRoom(bytes(rowId) + bytes(JSON.stringify({ ...row, id: rowId })));
        rows.set(rowId, { ...row, id: rowId });
        tables.set(t, rows);
        return { id: rowId };
      },
      tableUpdate(a) {
        const t = str(a, "table");
        const rowId = String(a["id"]);
        if (!isRecord(a["patch"])) throw invalid("args.patch must be an object");
        const rows = tables.get(t);
        const old = rows?.get(rowId);
        if (!rows || !old) return { updated: false };
        const next = { ...old, ...structuredClone(a["patch"]), id: rowId };
        ensureRoom(bytes(JSON.stringify(next)), bytes(JSON.stringify(old)));
        rows.set(rowId, next);
        return { updated: true };
      },
      tableQuery(a) {
        const rows = [...(tables.get(str(a, "table"))?.values() ?? [])];
        const where = a["where"] ?? {};
        if (!isRecord(where)) throw invalid("args.where must be an object");
        const limit = a["limit"] ?? 100;
        const offset = a["offset"] ?? 0;
        if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalid("args.limit must be 1..=1000");
        if (typeof offset !== "number" || !Number.isInteger(offset) || offset < 0 || offset > 100000) throw invalid("args.offset must be 0..=100000");
        const hits = rows.filter((r) => Object.entries(where).every(([f, v]) => JSON.stringify(r[f]) === JSON.stringify(v)));
        const orderBy = typeof a["orderBy"] === "string" ? a["orderBy"] : "id";
        hits.sort((x, y) => String(x[orderBy]).localeCompare(String(y[orderBy])));
        if (a["descending"] === true) hits.reverse();
        return { rows: structuredClone(hits.slice(offset, offset + limit)) };
      },
    },
    "lime.artifacts": {
      create(a) {
        const name = str(a, "name");
        const content = a["content"];
        const encoding = a["encoding"] ?? "text";
        if (typeof content !== "string") throw invalid("args.content must be a string");
        if (encoding !== "text" && encoding !== "base64") throw invalid("args.encoding must be text or base64");
        if (encoding === "base64" && !/^[A-Za-z0-9+/]*={0,2}$/.test(content)) throw invalid("args.content is not base64", "artifact.invalid_base64");
        const size = encoding === "base64" ? Math.floor((content.length * 3) / 4) - (content.match(/=+$/)?.[0].length ?? 0) : bytes(content);
        ensureRoom(size);
        const art: MockArtifact = {
          artifactId: id("art"), name, mimeType: typeof a["mimeType"] === "string" ? a["mimeType"] : "application/octet-stream",
          size, createdAt: new Date(0).toISOString(), content, encoding,
        };
        artifactStore.set(art.artifactId, art);
        const { content: _c, ...meta } = art;
        return meta;
      },
      read(a) {
        const art = artifactStore.get(str(a, "artifactId"));
        if (!art) throw invalid("no such artifact", "artifact.not_found");
        return { ...art };
      },
      list(a) {
        const all = [...artifactStore.values()].map(({ content: _c, ...meta }) => meta);
        return page(all, (m) => m.artifactId, a);
      },
      delete: (a) => ({ deleted: artifactStore.delete(str(a, "artifactId")) }),
    },
    "lime.evidence": {
      record(a) {
        const kind = str(a, "kind", 64);
        const data = a["data"];
        if (data !== undefined && bytes(JSON.stringify(data)) > MAX_VALUE_BYTES) throw invalid("args.data too large", "evidence.too_large");
        const ids = a["artifactIds"] ?? [];
        if (!Array.isArray(ids) || ids.some((x) => typeof x !== "string" || !artifactStore.has(x))) throw invalid("args.artifactIds must name this app's artifacts", "artifact.not_found");
        const rec = { evidenceId: id("ev"), kind, summary: typeof a["summary"] === "string" ? a["summary"] : "", data: structuredClone(data ?? null), artifactIds: [...ids], provenance: { appId, entryKey } };
        evidenceRecords.push(rec);
        return { evidenceId: rec.evidenceId };
      },
      list(a) {
        const kind = a["kind"];
        return page(evidenceRecords.filter((r) => kind === undefined || r["kind"] === kind), (r) => String(r["evidenceId"]), a);
      },
      export: () => ({ schemaVersion: 1, app: { appId }, records: structuredClone(evidenceRecords) }),
    },
    "lime.secrets": {
      getRef(a) {
        const slot = str(a, "key", 128);
        if (!(slot in secrets)) throw new Refusal(ErrorCodes.PERMISSION_DENIED, `the app declares no secret ${slot}`, "secret.not_declared");
        if (!secrets[slot]) throw new Refusal(ErrorCodes.CAPABILITY_NOT_AVAILABLE, `secret ${slot} is not bound yet`, "secret.unbound");
        let ref = secretRefs.get(slot);
        if (!ref) secretRefs.set(slot, (ref = `secretref_${Math.random().toString(36).slice(2, 14)}`));
        return { ref };
      },
    },
    "lime.events": {
      publish(a) {
        const topic = str(a, "topic", 128);
        const payload = a["payload"];
        if (payload !== undefined && bytes(JSON.stringify(payload)) > 64 * 1024) throw invalid("args.payload too large", "events.too_large");
        bus.publish(appId, payload === undefined ? { topic } : { topic, payload });
        return null;
      },
      subscribe(a) {
        subscribed.add(str(a, "topic", 128));
        return null;
      },
      unsubscribe(a) {
        subscribed.delete(str(a, "topic", 128));
        return null;
      },
    },
    "lime.policy": {
      requestPermission(a) {
        const perm = str(a, "permission", 128);
        const answer = permissions[perm];
        if (!answer) throw new Refusal(ErrorCodes.PERMISSION_DENIED, `the app declares no optional permission ${perm}`, "permission.not_declared");
        const r: PermissionResult = { granted: answer !== "denied", persistence: answer };
        return r;
      },
    },
  };

  const fail = (code: ErrorCode, message: string, capability: string, method: string, causeCode?: string, retryable = false) =>
    new LimeCapabilityError({ code, message, capability, method, retryable, causeCode });

  function wait(capability: string, method: string, opts: CallOptions): Promise<void> {
    const timeout = opts.timeoutMs ?? defaultTimeout;
    if (latency <= 0 && !opts.signal) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (e?: LimeCapabilityError) => {
        clearTimeout(t1);
        clearTimeout(t2);
        opts.signal?.removeEventListener("abort", onAbort);
        if (e) reject(e);
        else resolve();
      };
      const onAbort = () => done(fail(ErrorCodes.CANCELLED, "cancelled by the app", capability, method));
      const t1 = setTimeout(() => done(), latency);
      const t2 = setTimeout(() => done(fail(ErrorCodes.TIMEOUT, `no answer within ${timeout} ms`, capability, method, undefined, true)), timeout);
      opts.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  async function invoke<T>(capability: string, method: string, args: unknown = {}, opts: CallOptions = {}): Promise<T> {
    calls.push({ capability, method, args: structuredClone(args) });
    if (opts.signal?.aborted) throw fail(ErrorCodes.CANCELLED, "cancelled by the app", capability, method);
    await wait(capability, method, opts);
    const service = offered.has(capability) ? services[capability] : undefined;
    const fn = service && Object.hasOwn(service, method) ? service[method] : undefined;
    if (!fn) throw fail(ErrorCodes.CAPABILITY_NOT_AVAILABLE, `${capability}.${method} is not available in this host`, capability, method, "capability.not_available");
    if (denied.has(`${capability}.${method}`)) throw fail(ErrorCodes.PERMISSION_DENIED, `the user denied ${capability}.${method}`, capability, method, "permission.denied");
    const a = args === null || args === undefined ? {} : args;
    if (!isRecord(a)) throw fail(ErrorCodes.INVALID_ARGUMENT, "args must be an object", capability, method, "args.not_an_object");
    try {
      return fn(a) as T;
    } catch (e) {
      if (e instanceof Refusal) throw fail(e.code, e.message, capability, method, e.causeCode);
      throw e;
    }
  }

  const handles = buildHandles(invoke, {
    navigate: async (route, o) => {
      await wait("lime.ui", "navigate", o ?? {});
      if (!route.startsWith("/") || route.startsWith("//")) throw fail(ErrorCodes.PERMISSION_DENIED, "not one of this app's routes", "lime.ui", "navigate", "navigate.foreign_route");
      navigations.push(route);
    },
    toast: (message, level = "info") => {
      toasts.push({ message, level });
    },
    openExternal: () => undefined,
  });
  const leave = bus.join(appId, (e) => {
    if (subscribed.has(e.topic)) handles.hub.deliver(e);
  });

  const rt: MockLimeRuntime = {
    appId,
    entryKey,
    calls,
    store,
    tables,
    artifactStore,
    evidenceRecords,
    toasts,
    navigations,
    ready: async () => snapshot,
    snapshot: () => snapshot,
    onSnapshot(cb) {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    onVisibility: () => () => undefined,
    invoke,
    ui: handles.ui,
    storage: handles.storage,
    artifacts: handles.artifacts,
    evidence: handles.evidence,
    secrets: handles.secrets,
    events: handles.events,
    policy: handles.policy,
    setTheme(t) {
      const th = { ...snapshot.theme, ...t };
      snapshot = { ...snapshot, ...th, theme: th };
      listeners.forEach((cb) => cb(snapshot));
    },
    close: () => {
      listeners.clear();
      handles.hub.clear();
      leave();
    },
  };
  return rt;
}
