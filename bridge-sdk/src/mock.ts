// An in-memory `lime` runtime for app authors' unit tests. It follows the host's services
// (crates/host-core/src/capability/services/*.rs, runtime-core's app_artifacts.rs and
// app_evidence.rs, docs/bridge-protocol.md §5–6): the same methods, argument checks, result
// shapes, error codes and causeCodes, so a test that passes here exercises what the host answers.

import { ErrorCodes, LimeCapabilityError } from "./errors.js";
import {
  buildHandles,
  type ArtifactMetadata,
  type CallOptions,
  type EvidencePack,
  type EvidencePackArtifact,
  type EvidenceRecord,
  type LimeAppEvent,
  type PermissionResult,
  type Provenance,
  type RowId,
  type StorageListPage,
  type TableRow,
} from "./handles.js";
import type { AgentTaskEvent, AgentTaskEventType, AgentTaskStatus, SessionPolicyMode } from "./agent.js";
import type { ErrorCode, HostSnapshot, ThemeSnapshot } from "./protocol.js";
import type { LimeRuntime } from "./runtime.js";

/** One entry's end of a {@link MockEventBus}. */
export interface MockBusMember {
  /** Whether the entry subscribes to `topic`. */
  accepts(topic: string): boolean;
  deliver(event: LimeAppEvent): void;
}

/** App events shared by several mock runtimes (entries of one app); never across apps. */
export interface MockEventBus {
  /** Delivers `event` to every member of `appId` but `from` that accepts its topic; returns how many. */
  publish(appId: string, from: MockBusMember, event: LimeAppEvent): number;
  join(appId: string, member: MockBusMember): () => void;
}

export function createMockEventBus(): MockEventBus {
  const members = new Map<string, Set<MockBusMember>>();
  return {
    publish(appId, from, event) {
      let n = 0;
      for (const m of [...(members.get(appId) ?? [])]) {
        if (m === from || !m.accepts(event.topic)) continue;
        n += 1;
        m.deliver(structuredClone(event));
      }
      return n;
    },
    join(appId, member) {
      const set = members.get(appId) ?? new Set();
      members.set(appId, set);
      set.add(member);
      return () => set.delete(member);
    },
  };
}

/**
 * An optional permission as the mock host knows it: the user's answer when asked (`once`,
 * `always`, `denied`, or `dismissed`: the prompt closed unanswered), `granted` (already granted:
 * no prompt), or `required` (granted by install consent; requesting it is `APP_E900`).
 */
export type MockPermission = PermissionResult["persistence"] | "dismissed" | "granted" | "required";

/** A table the app's `storage/schema.json` declares. */
export interface MockTable {
  /** Default `"id"`. A row inserted without it gets the next integer, as SQLite's rowid. */
  primaryKey?: string;
  /** The columns the database has; any column is accepted when absent. */
  columns?: string[];
}

export interface MockOptions {
  appId?: string;
  entryKey?: string;
  /** Stamped in provenance (default `"1.0.0"`). */
  appVersion?: string;
  packageHash?: string;
  manifestHash?: string;
  /** Capabilities the mock host offers (default: all the host implements). */
  capabilities?: string[];
  /** Methods to deny as the host would (`"lime.storage.set"`): APP_E002. */
  denied?: string[];
  /** Storage quota in bytes of keys, JSON values and table rows, per app (default 64 MiB). */
  quotaBytes?: number;
  /** Artifact quota in bytes of distinct contents (default 256 MiB). */
  artifactQuotaBytes?: number;
  /** Evidence quota in bytes of kind + summary + data + refs (default 16 MiB). */
  evidenceQuotaBytes?: number;
  /**
   * Declared storage tables. When given, any other table is `APP_E900`
   * (`storage.undeclared_table`) and an unknown column `APP_E203`; when absent, every table is
   * accepted with primary key `id`.
   */
  tables?: Record<string, MockTable>;
  snapshot?: Partial<HostSnapshot>;
  /** Declared secret slots and whether each is bound (`getRef` of an unbound one: `APP_E011`). */
  secrets?: Record<string, boolean>;
  /** Declared optional (or required) permissions and how the mock user answers (default: none declared). */
  permissions?: Record<string, MockPermission>;
  /** Shares `lime.events` between mock runtimes of the same app. */
  bus?: MockEventBus;
  /**
   * The manifest's `events[]` as `{topic: direction}`. When given, publishing or subscribing to
   * a topic not declared for that direction is `APP_E002` (`events.undeclared_topic`), as in
   * the host; when absent, every topic is accepted.
   */
  events?: Record<string, "publish" | "subscribe" | "both">;
  /** Delay before each call answers, to exercise timeouts and cancellation (default 0). */
  latencyMs?: number;
  /** Default deadline of a call, as in the real runtime (default 30 s). */
  timeoutMs?: number;
  /** How the mock user answers `lime.ui.download` (default `"save"`). */
  downloadAnswer?: "save" | "cancel";
  /** The clock for `createdAt` / `generatedAt` (default: now). */
  now?: () => Date;
  /**
   * A scripted model for `lime.agent`. Without it the mock host has no model: `startTask` and
   * `retryTask` fail with `APP_E012` (`agent.needs_setup`), as the real host does.
   */
  agent?: MockAgent;
  /**
   * The manifest's `agentRuntime.sessionPolicy.modes` (default `["new"]`): `startTask` with an
   * undeclared mode is `APP_E002` (`agent.session_policy_not_declared`), as in the host.
   */
  sessionModes?: SessionPolicyMode[];
}

/** One scripted task event (the mock fills in the envelope: ids, sequence, time). */
export interface MockTaskStep {
  type: AgentTaskEventType;
  subtype?: string;
  payload?: Record<string, unknown>;
  /** Wait this long before the event (default 0). */
  delayMs?: number;
}

/**
 * The mock's model. `script` returns each run's events after `system:init` / `task:queued`;
 * an `approval:requested` step (its `payload.actionId` is filled in when absent) waits for
 * `respondAction`; a run without a `result` step ends with `result/success`.
 */
export interface MockAgent {
  /**
   * `history`: the inputs of the earlier runs that ended successfully in the task's session
   * (oldest first), i.e. the conversation a `resume`d task continues.
   */
  script(req: { input: unknown; run: number; taskId: string; expectedOutput: unknown; sessionId: string; history: unknown[] }): MockTaskStep[];
  /**
   * The user answering the prompt the host draws for an `approval:requested` step (only the
   * user approves: the app's `respondAction` may only reject), at once or when the promise
   * settles. `undefined`: the user does not answer.
   */
  user?(action: { taskId: string; actionId: string; toolName: string | null }): "approve" | "reject" | Promise<"approve" | "reject"> | undefined;
}

/** A recorded call, for assertions in app authors' tests. */
export interface MockCall {
  capability: string;
  method: string;
  args: unknown;
}

/** A stored artifact: its metadata and bytes. */
export interface MockArtifact extends ArtifactMetadata {
  bytes: Uint8Array;
}

export interface MockLimeRuntime extends LimeRuntime {
  readonly calls: MockCall[];
  /** The key-value storage contents, as the real host would keep them. */
  readonly store: Map<string, unknown>;
  /** Table rows by table name, then by primary key (values stored as the host stores them). */
  readonly tables: Map<string, Map<RowId, TableRow>>;
  /** Artifacts by id, oldest first. */
  readonly artifactStore: Map<string, MockArtifact>;
  readonly evidenceRecords: EvidenceRecord[];
  /** Permissions the mock user was asked for, in order. */
  readonly permissionPrompts: string[];
  /** Binds (new ref, the old one stops working) or unbinds a declared secret slot, as the user would. */
  setSecretBound(key: string, bound: boolean): void;
  /** Pushes a theme update to `onSnapshot` listeners. */
  setTheme(theme: Partial<ThemeSnapshot>): void;
  readonly toasts: { message: string; level: string }[];
  readonly navigations: string[];
  /** Files the mock user saved through `lime.ui.download`: the name and the bytes. */
  readonly downloads: { fileName: string; bytes: Uint8Array; mimeType: string }[];
}

/** Every capability the real host implements (the mock's default offer). */
export const MOCK_CAPABILITIES = ["lime.ui", "lime.storage", "lime.artifacts", "lime.evidence", "lime.secrets", "lime.events", "lime.policy", "lime.agent"];

// The host's limits (docs/bridge-protocol.md §5).
const MAX_KEY_BYTES = 512;
const MAX_VALUE_BYTES = 1024 * 1024;
const MAX_LIST_LIMIT = 1000;
const MAX_QUERY_OFFSET = 100_000;
const MAX_CONTENT_BYTES = 1024 * 1024;
const MAX_NAME_BYTES = 255;
const MAX_MIME_BYTES = 127;
const MAX_ARTIFACTS = 100_000;
const MAX_KIND_BYTES = 64;
const MAX_SUMMARY_BYTES = 2000;
const MAX_DATA_BYTES = 64 * 1024;
const MAX_ARTIFACT_REFS = 64;
const MAX_RECORDS = 100_000;
const MAX_TOPIC_BYTES = 128;
const MAX_PAYLOAD_BYTES = 64 * 1024;
const MAX_SUBSCRIPTIONS = 32;
const MAX_SLOT_BYTES = 256;
const MAX_ID_BYTES = 128;

const utf8 = new TextEncoder();
const bytes = (s: string) => utf8.encode(s).length;
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const json = (v: unknown) => JSON.stringify(v === undefined ? null : v);

interface MockTask {
  taskId: string;
  traceId: string;
  sessionId: string;
  idempotencyKey: string | null;
  createdAt: string;
  input: unknown;
  expectedOutput: unknown;
  seq: number;
  events: AgentTaskEvent[];
  runs: { turnId: string; status: AgentTaskStatus }[];
  status: AgentTaskStatus;
  cancel: boolean;
  pending: { actionId: string; toolName: string | null; resume: (decision: string) => void } | undefined;
  result?: { text: string | null; structuredOutput: unknown } | undefined;
  /** The task runs in a session an earlier task created (`resume`): no `system:init`. */
  joined: boolean;
}

class Refusal {
  constructor(
    readonly code: ErrorCode,
    readonly message: string,
    readonly causeCode?: string,
    readonly retryable = false,
  ) {}
}
const refuse = (code: ErrorCode, message: string, cause?: string) => new Refusal(code, message, cause);
const invalid = (message: string, cause: string) => refuse(ErrorCodes.INVALID_ARGUMENT, message, cause);

/** 32 random lowercase hex digits, as the host's ids. */
function randomHex(): string {
  const b = new Uint8Array(16);
  const c = (globalThis as { crypto?: { getRandomValues?: (a: Uint8Array) => Uint8Array } }).crypto;
  if (c?.getRandomValues) c.getRandomValues(b);
  else for (let i = 0; i < b.length; i++) b[i] = Math.floor(Math.random() * 256);
  return hex(b);
}

function hex(b: Uint8Array): string {
  let s = "";
  for (const x of b) s += x.toString(16).padStart(2, "0");
  return s;
}

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 as lowercase hex (synchronous, no platform crypto needed). */
export function sha256Hex(data: Uint8Array): string {
  const len = data.length;
  const total = Math.ceil((len + 9) / 64) * 64;
  const m = new Uint8Array(total);
  m.set(data);
  m[len] = 0x80;
  const view = new DataView(m.buffer);
  view.setUint32(total - 8, Math.floor(len / 0x20000000));
  view.setUint32(total - 4, (len * 8) >>> 0);
  const h = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const w = new Uint32Array(64);
  const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));
  for (let off = 0; off < total; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(off + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!;
      const b = w[i - 2]!;
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, hh] = [h[0]!, h[1]!, h[2]!, h[3]!, h[4]!, h[5]!, h[6]!, h[7]!];
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    h[0] = (h[0]! + a) >>> 0;
    h[1] = (h[1]! + b) >>> 0;
    h[2] = (h[2]! + c) >>> 0;
    h[3] = (h[3]! + d) >>> 0;
    h[4] = (h[4]! + e) >>> 0;
    h[5] = (h[5]! + f) >>> 0;
    h[6] = (h[6]! + g) >>> 0;
    h[7] = (h[7]! + hh) >>> 0;
  }
  let out = "";
  for (const x of h) out += x.toString(16).padStart(8, "0");
  return out;
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** RFC 4648 standard alphabet, padded, canonical (zero trailing bits), as the host decodes; `null` if not. */
function decodeBase64(s: string): Uint8Array | null {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s)) return null;
  const pad = s.endsWith("==") ? 2 : s.endsWith("=") ? 1 : 0;
  const out = new Uint8Array((s.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < s.length; i += 4) {
    const v = [0, 1, 2, 3].map((j) => (s[i + j] === "=" ? 0 : B64.indexOf(s[i + j]!)));
    const n = (v[0]! << 18) | (v[1]! << 12) | (v[2]! << 6) | v[3]!;
    const last = i + 4 === s.length;
    if (last && pad === 2 && (n & 0xffff) !== 0) return null;
    if (last && pad === 1 && (n & 0xff) !== 0) return null;
    for (const shift of [16, 8, 0]) if (o < out.length) out[o++] = (n >> shift) & 0xff;
  }
  return out;
}

function encodeBase64(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i += 3) {
    const n = (b[i]! << 16) | ((b[i + 1] ?? 0) << 8) | (b[i + 2] ?? 0);
    s += B64[(n >> 18) & 63]! + B64[(n >> 12) & 63]!;
    s += i + 1 < b.length ? B64[(n >> 6) & 63]! : "=";
    s += i + 2 < b.length ? B64[n & 63]! : "=";
  }
  return s;
}

// Checks the host applies (runtime-core's app_artifacts.rs and app_evidence.rs).
const isRuntimeId = (id: string, prefix: string) => id.startsWith(prefix) && id.length <= MAX_ID_BYTES && /^[A-Za-z0-9_.:-]+$/.test(id);
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;
function nameProblem(name: string): string | null {
  if (name.length === 0) return "empty";
  if (bytes(name) > MAX_NAME_BYTES) return "longer than 255 bytes";
  if (name === "." || name === "..") return "not a file name";
  if (/[/\\]/.test(name)) return "contains a path separator ('/' or '\\')";
  if (INVISIBLE.test(name)) return "contains a control or invisible formatting character";
  if (name.startsWith(" ") || name.endsWith(" ")) return "starts or ends with a space";
  return null;
}
function isMime(m: string): boolean {
  const tok = (s: string) => /^[A-Za-z0-9!#$&\-^_.+]+$/.test(s);
  const [essence = "", ...params] = m.split(";");
  const slash = essence.indexOf("/");
  return (
    bytes(m) <= MAX_MIME_BYTES &&
    slash > 0 &&
    tok(essence.slice(0, slash)) &&
    tok(essence.slice(slash + 1)) &&
    params.every((p) => {
      const t = p.trimStart();
      const eq = t.indexOf("=");
      return eq > 0 && tok(t.slice(0, eq)) && tok(t.slice(eq + 1).replace(/^"+|"+$/g, ""));
    })
  );
}
const isKind = (k: string) => k.length > 0 && k.length <= MAX_KIND_BYTES && /^[A-Za-z0-9._:-]+$/.test(k);
const isTopic = (t: unknown): t is string => typeof t === "string" && t.length > 0 && t.length <= MAX_TOPIC_BYTES && /^[A-Za-z0-9._:/-]+$/.test(t);

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

/**
 * An in-memory `lime` runtime with the same surface, types and errors as the real host, for app
 * authors' unit tests. No network, no frame, no host.
 */
export function createMockLimeRuntime(options: MockOptions = {}): MockLimeRuntime {
  const appId = options.appId ?? "mock-app";
  const entryKey = options.entryKey ?? "home";
  const appVersion = options.appVersion ?? "1.0.0";
  const packageHash = options.packageHash ?? `sha256:${"0".repeat(64)}`;
  const manifestHash = options.manifestHash ?? `sha256:${"0".repeat(64)}`;
  const offered = new Set(options.capabilities ?? MOCK_CAPABILITIES);
  const denied = new Set(options.denied ?? []);
  const declaredEvents = options.events;
  const checkDeclared = (topic: string, direction: "publish" | "subscribe") => {
    if (declaredEvents === undefined) return;
    const d = Object.hasOwn(declaredEvents, topic) ? declaredEvents[topic] : undefined;
    if (d !== direction && d !== "both") {
      throw refuse(ErrorCodes.PERMISSION_DENIED, `the app's manifest declares no event ${JSON.stringify(topic)} to ${direction} (events[])`, "events.undeclared_topic");
    }
  };
  // As in the host: evidence shows artifact data only while artifacts are readable.
  const artifactsReadable = () => offered.has("lime.artifacts") && !denied.has("lime.artifacts.read");
  const quota = options.quotaBytes ?? 64 * 1024 * 1024;
  const artifactQuota = options.artifactQuotaBytes ?? 256 * 1024 * 1024;
  const evidenceQuota = options.evidenceQuotaBytes ?? 16 * 1024 * 1024;
  const declaredTables = options.tables;
  const secrets = new Map(Object.entries(options.secrets ?? {}));
  const permissions = options.permissions ?? {};
  const bus = options.bus ?? createMockEventBus();
  const latency = options.latencyMs ?? 0;
  const defaultTimeout = options.timeoutMs ?? 30_000;
  const now = () => (options.now ? options.now() : new Date()).toISOString();
  const store = new Map<string, unknown>();
  const tables = new Map<string, Map<RowId, TableRow>>();
  const artifactStore = new Map<string, MockArtifact>();
  const evidenceRecords: EvidenceRecord[] = [];
  const evidenceBytes: number[] = [];
  const secretRefs = new Map<string, string>();
  const subscribed = new Set<string>();
  const answered = new Map<string, "once" | "denied">();
  const permissionPrompts: string[] = [];
  const calls: MockCall[] = [];
  const toasts: { message: string; level: string }[] = [];
  const navigations: string[] = [];
  const downloads: { fileName: string; bytes: Uint8Array; mimeType: string }[] = [];
  const listeners = new Set<(s: HostSnapshot) => void>();
  const theme: ThemeSnapshot = { themeMode: "system", effectiveThemeMode: "light", colorSchemeId: "lime-default", tokens: {} };
  let snapshot: HostSnapshot = {
    appId, entryKey, entryKind: "page", route: "/", origin: `agentapp://${appId}`,
    locale: "en-US", timezone: "UTC", workspaceId: "local", tenantId: "local",
    ...theme, theme,
    capabilities: { available: [...offered], blocked: [] },
    ...options.snapshot,
  };
  let traceId = "";
  const provenance = (): Provenance => ({ appId, appVersion, entryKey, packageHash, manifestHash, traceId });

  // ---- lime.storage ----
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
  const optStr = (a: Record<string, unknown>, field: string, err: (m: string) => Refusal) => {
    const v = a[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "string") throw err(`args.${field} must be a string`);
    return v;
  };
  const limitOf = (a: Record<string, unknown>, err: (m: string) => Refusal) => {
    const v = a["limit"];
    if (v === undefined || v === null) return 100;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > MAX_LIST_LIMIT) throw err(`args.limit must be 1..=${MAX_LIST_LIMIT}`);
    return v;
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

  // ---- lime.artifacts / lime.evidence ----
  const closed = (a: Record<string, unknown>, allowed: string[], cause: string) => {
    const extra = Object.keys(a).find((k) => !allowed.includes(k));
    if (extra !== undefined) throw invalid(`unknown argument ${JSON.stringify(extra.slice(0, 64))}`, cause);
  };
  const artBad = (m: string) => invalid(m, "artifacts.invalid_argument");
  const evBad = (m: string) => invalid(m, "evidence.invalid_argument");
  const artifactId = (a: Record<string, unknown>) => {
    const id = a["id"];
    if (id === undefined || id === null) throw artBad("args.id is required");
    if (typeof id !== "string") throw artBad("args.id must be a string");
    if (!isRuntimeId(id, "artifact_")) throw invalid("invalid artifact id", "artifacts.invalid_id");
    return id;
  };
  const meta = (art: MockArtifact): ArtifactMetadata => {
    const { bytes: _b, ...m } = art;
    return structuredClone(m);
  };
  const artifactBytes = () => {
    const seen = new Map<string, number>();
    for (const a of artifactStore.values()) seen.set(a.sha256, a.size);
    let n = 0;
    for (const s of seen.values()) n += s;
    return n;
  };
  const cursorSeq = (cursor: string | undefined, err: (m: string) => Refusal) => {
    if (cursor === undefined) return 0;
    if (!/^c[0-9]{1,19}$/.test(cursor)) throw err("invalid argument: unknown cursor");
    return Number(cursor.slice(1));
  };
  let artifactSeq = 0;
  const artifactSeqs = new Map<string, number>();
  let evidenceSeq = 0;
  const evidenceSeqs: number[] = [];
  const evidencePage = (kind: string | undefined, cursor: string | undefined, limit: number) => {
    if (kind !== undefined && !isKind(kind)) throw invalid("invalid kind: 1..=64 characters of [A-Za-z0-9._:-]", "evidence.invalid_kind");
    const after = cursorSeq(cursor, evBad);
    const rest = evidenceRecords
      .map((r, i) => ({ r, seq: evidenceSeqs[i]! }))
      .filter((x) => x.seq > after && (kind === undefined || x.r.kind === kind));
    const out = rest.slice(0, limit);
    const last = out[out.length - 1];
    return { items: structuredClone(out.map((x) => x.r)), nextCursor: rest.length > limit && last ? `c${last.seq}` : null };
  };

  // ---- lime.policy ----
  const permissionAnswer = (perm: string): PermissionResult => {
    const how = Object.hasOwn(permissions, perm) ? permissions[perm] : undefined;
    if (how === undefined) throw refuse(ErrorCodes.PERMISSION_DENIED, "the app declares no permission with this key", "permission.not_declared");
    if (how === "required") {
      throw invalid("this permission is required: install consent grants it, so it cannot be requested", "policy.permission_required");
    }
    if (how === "granted" || (how === "always" && permissionPrompts.includes(perm))) return { granted: true, persistence: "always" };
    const remembered = answered.get(perm);
    if (remembered === "denied") return { granted: false, persistence: "denied" };
    if (remembered === "once") return { granted: true, persistence: "once" };
    permissionPrompts.push(perm);
    if (how === "dismissed") return { granted: false, persistence: "denied" };
    if (how === "once" || how === "denied") answered.set(perm, how);
    return { granted: how !== "denied", persistence: how };
  };

  let member: MockBusMember;
  const mockTasks = new Map<string, MockTask>();
  const taskKeys = new Map<string, string>();
  const sessionRefs = new Map<string, string>();
  /** Inputs of the runs that succeeded, per session, oldest first. */
  const sessionHistory = new Map<string, unknown[]>();
  const sessionModes = new Set<string>(["new", ...(options.sessionModes ?? [])]);
  const sessionBusy = (sessionId: string) => [...mockTasks.values()].some((t) => t.sessionId === sessionId && !isFinal(t.status));
  /** `startTask`'s sessionPolicy, as the host checks it: `[sessionId, joined, newRef]`. */
  const chooseSession = (p: unknown): [string, boolean, string | undefined] => {
    const fresh = (): [string, boolean, string | undefined] => [`session_${randomHex()}`, false, undefined];
    if (p === undefined || p === null) return fresh();
    const shape = 'args.sessionPolicy must be "new", {mode: "new"} or {mode: "resume", taskId | businessObjectRef}';
    let mode: unknown;
    let o: Record<string, unknown> = {};
    if (typeof p === "string") mode = p;
    else if (typeof p === "object" && !Array.isArray(p)) {
      o = p as Record<string, unknown>;
      mode = o["mode"];
    }
    if (mode !== "new" && mode !== "resume" && mode !== "continue" && mode !== "fork") throw invalid(shape, "agent.invalid_argument");
    if (!sessionModes.has(mode)) {
      throw refuse(ErrorCodes.PERMISSION_DENIED, `sessionPolicy mode "${mode}" is not declared in agentRuntime.sessionPolicy.modes`, "agent.session_policy_not_declared");
    }
    if (Object.keys(o).some((k) => k !== "mode" && k !== "taskId" && k !== "businessObjectRef")) throw invalid("unknown sessionPolicy field", "agent.invalid_argument");
    const id = o["taskId"];
    const ref = o["businessObjectRef"];
    if (mode === "continue" || mode === "fork") {
      throw invalid(`sessionPolicy mode "${mode}" is not supported: start a task with {mode: "resume", taskId}`, "agent.session_policy_unsupported");
    }
    if (mode === "new") {
      if (id !== undefined || ref !== undefined) throw invalid(shape, "agent.invalid_argument");
      return fresh();
    }
    let found: [string, boolean, string | undefined];
    if (typeof id === "string" && ref === undefined) {
      found = [ownTask({ taskId: id }).sessionId, true, undefined];
    } else if (typeof ref === "string" && id === undefined) {
      if (ref.length === 0 || bytes(ref) > 200 || /\p{Cc}/u.test(ref)) {
        throw invalid("businessObjectRef must be 1-200 bytes without control characters", "agent.invalid_argument");
      }
      const s = sessionRefs.get(ref);
      found = s ? [s, true, undefined] : [`session_${randomHex()}`, false, ref];
    } else throw invalid(shape, "agent.invalid_argument");
    if (found[1] && sessionBusy(found[0])) {
      throw invalid("the session's latest turn has not ended: wait for its result or cancel it", "agent.session_busy");
    }
    return found;
  };
  const isFinal = (s: AgentTaskStatus) => s === "succeeded" || s === "failed" || s === "cancelled";
  const ownTask = (a: Record<string, unknown>): MockTask => {
    const t = typeof a["taskId"] === "string" ? mockTasks.get(a["taskId"]) : undefined;
    if (!t) throw refuse(ErrorCodes.NOT_FOUND, "no task with this id in this app", "agent.task_not_found");
    return t;
  };
  const taskView = (t: MockTask) => ({
    taskId: t.taskId,
    traceId: t.traceId,
    sessionId: t.sessionId,
    idempotencyKey: t.idempotencyKey,
    createdAt: t.createdAt,
    status: t.status,
    runs: t.runs.map((r, i) => ({ run: i + 1, turnId: r.turnId, status: r.status, errorCode: null })),
    pendingActions: t.pending ? [{ actionId: t.pending.actionId, toolName: t.pending.toolName, prompt: null, actionType: "tool_confirmation" }] : [],
    result: t.result && isFinal(t.status) ? { status: t.status, text: t.result.text, structuredOutput: t.result.structuredOutput, errorCode: null, errorMessage: null } : null,
  });
  const emit = (t: MockTask, turnId: string, step: { type: AgentTaskEventType; subtype?: string | undefined; payload?: Record<string, unknown> | undefined }) => {
    t.seq += 1;
    const event: AgentTaskEvent = {
      schemaVersion: "lime.agent-task-event.v1",
      eventId: `event_${randomHex()}`,
      sequence: t.seq,
      type: step.type,
      appId,
      taskId: t.taskId,
      traceId: t.traceId,
      sessionId: t.sessionId,
      turnId,
      at: now(),
      payload: { runtimeType: "mock", ...(step.payload ?? {}) },
    };
    if (step.subtype !== undefined) event.subtype = step.subtype;
    t.events.push(event);
    handles.hub.deliver({ capability: "lime.agent", event });
    return event;
  };
  async function runMockTask(t: MockTask): Promise<void> {
    const run = t.runs.length;
    const turnId = `turn_${randomHex()}`;
    const r = { turnId, status: "queued" as AgentTaskStatus };
    t.runs.push(r);
    t.result = undefined;
    const history = structuredClone(sessionHistory.get(t.sessionId) ?? []);
    const steps = options.agent!.script({ input: structuredClone(t.input), run, taskId: t.taskId, expectedOutput: t.expectedOutput, sessionId: t.sessionId, history });
    const finish = (subtype: string, payload: Record<string, unknown> = {}) => {
      const status: AgentTaskStatus = subtype === "success" ? "succeeded" : subtype === "cancelled" ? "cancelled" : "failed";
      t.status = status;
      r.status = status;
      t.result = { text: typeof payload["text"] === "string" ? payload["text"] : null, structuredOutput: payload["structuredOutput"] ?? null };
      if (status === "succeeded") sessionHistory.set(t.sessionId, [...(sessionHistory.get(t.sessionId) ?? []), structuredClone(t.input)]);
      emit(t, turnId, { type: "result", subtype, payload });
    };
    await Promise.resolve();
    if (run === 0 && !t.joined) emit(t, turnId, { type: "system:init" });
    emit(t, turnId, { type: "task:queued" });
    t.status = "running";
    r.status = "running";
    let text = "";
    for (const step of steps) {
      if (step.delayMs) await new Promise((res) => setTimeout(res, step.delayMs));
      else await Promise.resolve();
      if (t.cancel) return finish("cancelled");
      if (step.type === "result") return finish(step.subtype ?? "success", { text, ...(step.payload ?? {}) });
      if (step.type === "assistant:delta" && typeof step.payload?.["text"] === "string") text += step.payload["text"];
      if (step.type === "approval:requested") {
        const actionId = typeof step.payload?.["actionId"] === "string" ? step.payload["actionId"] : `action_${randomHex()}`;
        const toolName = typeof step.payload?.["toolName"] === "string" ? step.payload["toolName"] : null;
        const decision = await new Promise<string>((resume) => {
          t.pending = { actionId, toolName, resume };
          t.status = "waiting_approval";
          r.status = "waiting_approval";
          emit(t, turnId, { type: "approval:requested", payload: { ...(step.payload ?? {}), actionId } });
          const user = options.agent?.user?.({ taskId: t.taskId, actionId, toolName });
          if (user !== undefined) void Promise.resolve(user).then(resume);
        });
        t.pending = undefined;
        if (t.cancel) return finish("cancelled");
        t.status = "running";
        r.status = "running";
        emit(t, turnId, { type: "task:progress", subtype: "approval_resolved", payload: { actionId, decision } });
        continue;
      }
      emit(t, turnId, step);
    }
    finish("success", { text });
  }

  const services: Record<string, Record<string, (a: Record<string, unknown>) => unknown>> = {
    "lime.ui": {
      getSnapshot: () => snapshot,
      getLocale: () => ({ locale: snapshot.locale, timezone: snapshot.timezone }),
      getTheme: () => snapshot.theme,
    },
    "lime.storage": {
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
    },
    "lime.artifacts": {
      create(a) {
        closed(a, ["name", "mimeType", "text", "base64"], "artifacts.invalid_argument");
        const name = optStr(a, "name", artBad);
        if (name === undefined) throw artBad("args.name is required");
        const mime = optStr(a, "mimeType", artBad);
        const text = optStr(a, "text", artBad);
        const b64 = optStr(a, "base64", artBad);
        const tooLarge = (n: number) => invalid(`content is ${n} bytes or more (at most ${MAX_CONTENT_BYTES})`, "artifacts.too_large");
        let content: Uint8Array;
        if (text !== undefined && b64 === undefined) {
          content = utf8.encode(text);
          if (content.length > MAX_CONTENT_BYTES) throw tooLarge(content.length);
        } else if (b64 !== undefined && text === undefined) {
          if (b64.length > Math.ceil(MAX_CONTENT_BYTES / 3) * 4) throw tooLarge(Math.floor(b64.length / 4) * 3);
          const decoded = decodeBase64(b64);
          if (!decoded) throw invalid("args.base64 is not valid base64 (standard alphabet, padded)", "artifacts.invalid_base64");
          if (decoded.length > MAX_CONTENT_BYTES) throw tooLarge(decoded.length);
          content = decoded;
        } else if (text !== undefined) {
          throw artBad("give args.text or args.base64, not both");
        } else {
          throw artBad("args.text or args.base64 is required");
        }
        const why = nameProblem(name);
        if (why) throw invalid(`invalid artifact name: ${why}`, "artifacts.invalid_name");
        if (mime !== undefined && !isMime(mime)) throw invalid("invalid MIME type: must be type/subtype, at most 127 characters", "artifacts.invalid_mime_type");
        if (artifactStore.size >= MAX_ARTIFACTS) throw refuse(ErrorCodes.STORAGE_QUOTA_EXCEEDED, `the app already keeps ${MAX_ARTIFACTS} artifacts`, "artifacts.too_many");
        const sha256 = sha256Hex(content);
        const used = artifactBytes();
        const adding = [...artifactStore.values()].some((x) => x.sha256 === sha256) ? 0 : content.length;
        if (used + adding > artifactQuota) {
          throw refuse(ErrorCodes.STORAGE_QUOTA_EXCEEDED, `artifact quota exceeded: ${used} + ${adding} bytes > ${artifactQuota} bytes`, "artifacts.quota_exceeded");
        }
        const art: MockArtifact = {
          id: `artifact_${randomHex()}`, name, mimeType: mime ?? "application/octet-stream", size: content.length,
          sha256, createdAt: now(), provenance: provenance(), bytes: content,
        };
        artifactStore.set(art.id, art);
        artifactSeqs.set(art.id, ++artifactSeq);
        return meta(art);
      },
      read(a) {
        closed(a, ["id", "encoding"], "artifacts.invalid_argument");
        const id = artifactId(a);
        const encoding = optStr(a, "encoding", artBad) ?? "base64";
        if (encoding !== "base64" && encoding !== "text") throw artBad('args.encoding must be "base64" or "text"');
        const art = artifactStore.get(id);
        if (!art) throw refuse(ErrorCodes.NOT_FOUND, "no artifact with this id", "artifacts.not_found");
        let content: string;
        if (encoding === "text") {
          try {
            content = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(art.bytes);
          } catch {
            throw invalid("the artifact is not UTF-8 text; read it as base64", "artifacts.not_text");
          }
        } else {
          content = encodeBase64(art.bytes);
        }
        return { ...meta(art), encoding, content };
      },
      list(a) {
        closed(a, ["cursor", "limit"], "artifacts.invalid_argument");
        const cursor = optStr(a, "cursor", artBad);
        const limit = limitOf(a, artBad);
        const all = [...artifactStore.values()].map((x) => ({ m: meta(x), seq: artifactSeqs.get(x.id)! }));
        const after = cursorSeq(cursor, artBad);
        const rest = all.filter((x) => x.seq > after);
        const out = rest.slice(0, limit);
        const last = out[out.length - 1];
        return { items: out.map((x) => x.m), nextCursor: rest.length > limit && last ? `c${last.seq}` : null };
      },
      delete(a) {
        closed(a, ["id"], "artifacts.invalid_argument");
        const id = artifactId(a);
        artifactSeqs.delete(id);
        return { deleted: artifactStore.delete(id) };
      },
    },
    "lime.evidence": {
      record(a) {
        closed(a, ["kind", "summary", "data", "artifactIds"], "evidence.invalid_argument");
        const kind = optStr(a, "kind", evBad);
        if (kind === undefined) throw evBad("args.kind is required");
        if (!isKind(kind)) throw invalid("invalid kind: 1..=64 characters of [A-Za-z0-9._:-]", "evidence.invalid_kind");
        const summary = optStr(a, "summary", evBad) ?? "";
        const data = a["data"] === undefined ? null : structuredClone(a["data"]);
        const rawIds = a["artifactIds"] ?? [];
        if (!Array.isArray(rawIds)) throw evBad("args.artifactIds must be an array");
        if (rawIds.length > MAX_ARTIFACT_REFS) throw invalid(`at most ${MAX_ARTIFACT_REFS} artifactIds`, "evidence.too_large");
        if (rawIds.some((x) => typeof x !== "string")) throw evBad("args.artifactIds must be strings");
        if (bytes(summary) > MAX_SUMMARY_BYTES) throw invalid(`summary longer than ${MAX_SUMMARY_BYTES} bytes`, "evidence.too_large");
        const dataText = json(data);
        if (bytes(dataText) > MAX_DATA_BYTES) throw invalid(`data is ${bytes(dataText)} bytes of JSON (at most ${MAX_DATA_BYTES})`, "evidence.too_large");
        const refs: { artifactId: string; sha256: string }[] = [];
        if (rawIds.length > 0 && !artifactsReadable()) {
          throw refuse(ErrorCodes.PERMISSION_DENIED, "this entry may not read the app's artifacts (lime.artifacts and a granted artifact permission)", "evidence.artifacts_not_allowed");
        }
        for (const id of rawIds as string[]) {
          if (!isRuntimeId(id, "artifact_")) throw invalid("artifact ref: invalid artifact id", "artifacts.invalid_id");
          if (refs.some((r) => r.artifactId === id)) continue;
          const art = artifactStore.get(id);
          if (!art) throw refuse(ErrorCodes.NOT_FOUND, "artifact ref: no artifact with this id", "artifacts.not_found");
          refs.push({ artifactId: art.id, sha256: art.sha256 });
        }
        const size = bytes(kind) + bytes(summary) + bytes(dataText) + bytes(JSON.stringify(refs));
        if (evidenceRecords.length >= MAX_RECORDS) throw refuse(ErrorCodes.STORAGE_QUOTA_EXCEEDED, `the app already keeps ${MAX_RECORDS} evidence records`, "evidence.too_many");
        const used = evidenceBytes.reduce((x, y) => x + y, 0);
        if (used + size > evidenceQuota) {
          throw refuse(ErrorCodes.STORAGE_QUOTA_EXCEEDED, `evidence quota exceeded: ${used} + ${size} bytes > ${evidenceQuota} bytes`, "evidence.quota_exceeded");
        }
        const rec: EvidenceRecord = {
          id: `evidence_${randomHex()}`, kind, summary, data, artifacts: refs, createdAt: now(), provenance: provenance(),
        };
        evidenceRecords.push(rec);
        evidenceBytes.push(size);
        evidenceSeqs.push(++evidenceSeq);
        return structuredClone(rec);
      },
      list(a) {
        closed(a, ["kind", "cursor", "limit"], "evidence.invalid_argument");
        const kind = optStr(a, "kind", evBad);
        const cursor = optStr(a, "cursor", evBad);
        const limit = limitOf(a, evBad);
        return evidencePage(kind, cursor, limit);
      },
      export(a) {
        closed(a, ["kind"], "evidence.invalid_argument");
        const kind = optStr(a, "kind", evBad);
        const records = evidencePage(kind, undefined, Number.MAX_SAFE_INTEGER).items;
        const refs = new Map<string, EvidencePackArtifact>();
        for (const r of records) {
          for (const ref of r.artifacts) {
            const k = `${ref.artifactId}\u0000${ref.sha256}`;
            if (refs.has(k)) continue;
            const art = artifactStore.get(ref.artifactId);
            if (!artifactsReadable()) {
              refs.set(k, { artifactId: ref.artifactId, sha256: ref.sha256, withheld: true });
              continue;
            }
            refs.set(
              k,
              art && art.sha256 === ref.sha256
                ? { artifactId: art.id, sha256: art.sha256, present: true, name: art.name, mimeType: art.mimeType, size: art.size, createdAt: art.createdAt, provenance: structuredClone(art.provenance) }
                : { artifactId: ref.artifactId, sha256: ref.sha256, present: false },
            );
          }
        }
        const pack: EvidencePack = {
          schemaVersion: "apphost.evidence-pack.v1",
          app: { appId, appVersion, packageHash, manifestHash },
          generatedAt: now(),
          kind: kind ?? null,
          records,
          artifacts: [...refs.entries()].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([, v]) => v),
        };
        return pack;
      },
    },
    "lime.secrets": {
      getRef(a) {
        const slot = a["key"];
        if (typeof slot !== "string" || slot.length === 0 || bytes(slot) > MAX_SLOT_BYTES) {
          throw invalid("args.key must be a slot key (a non-empty string)", "secrets.invalid_argument");
        }
        const bound = secrets.get(slot);
        if (bound === undefined) throw refuse(ErrorCodes.PERMISSION_DENIED, "the app's manifest declares no secret slot with this key", "secrets.not_declared");
        if (!bound) throw refuse(ErrorCodes.SECRET_NOT_BOUND, "no value is bound to this secret slot yet; the user binds one in the host", "secrets.not_bound");
        let ref = secretRefs.get(slot);
        if (!ref) secretRefs.set(slot, (ref = `secretref_${randomHex()}`));
        return { ref, key: slot };
      },
    },
    "lime.events": {
      publish(a) {
        const topic = a["topic"];
        if (!isTopic(topic)) throw invalid(`args.topic must be 1-${MAX_TOPIC_BYTES} bytes of A-Z a-z 0-9 . _ - : /`, "events.invalid_topic");
        checkDeclared(topic, "publish");
        const payload = a["payload"] === undefined ? null : a["payload"];
        if (bytes(json(payload)) > MAX_PAYLOAD_BYTES) {
          throw invalid(`an event payload may be at most ${MAX_PAYLOAD_BYTES} bytes of JSON`, "events.payload_too_large");
        }
        const event: LimeAppEvent = { capability: "lime.events", topic, payload: structuredClone(payload), sourceEntryKey: entryKey };
        return { delivered: bus.publish(appId, member, event) };
      },
      subscribe(a) {
        const topic = a["topic"];
        if (!isTopic(topic)) throw invalid(`args.topic must be 1-${MAX_TOPIC_BYTES} bytes of A-Z a-z 0-9 . _ - : /`, "events.invalid_topic");
        checkDeclared(topic, "subscribe");
        if (!subscribed.has(topic) && subscribed.size >= MAX_SUBSCRIPTIONS) {
          throw invalid(`a frame may subscribe to at most ${MAX_SUBSCRIPTIONS} topics`, "events.too_many_subscriptions");
        }
        subscribed.add(topic);
        return { subscribed: true, topic };
      },
      unsubscribe(a) {
        const topic = a["topic"];
        if (!isTopic(topic)) throw invalid(`args.topic must be 1-${MAX_TOPIC_BYTES} bytes of A-Z a-z 0-9 . _ - : /`, "events.invalid_topic");
        return { unsubscribed: subscribed.delete(topic), topic };
      },
    },
    "lime.agent": {
      startTask(a) {
        if (!Object.keys(a).every((k) => ["input", "idempotencyKey", "expectedOutput", "sessionPolicy", "options"].includes(k))) {
          throw invalid("unknown argument", "agent.invalid_argument");
        }
        if (a["input"] === undefined || a["input"] === null) throw invalid("args.input is required", "agent.invalid_argument");
        const key = a["idempotencyKey"];
        if (key !== undefined && (typeof key !== "string" || key.length === 0 || bytes(key) > 200)) {
          throw invalid("idempotencyKey must be 1-200 bytes", "agent.invalid_argument");
        }
        const policy = a["sessionPolicy"];
        if (policy !== undefined && policy !== null && typeof policy !== "string" && (typeof policy !== "object" || Array.isArray(policy))) {
          throw invalid("args.sessionPolicy must be a string or an object", "agent.invalid_argument");
        }
        if (!options.agent) throw refuse("APP_E012", "no model is set up", "agent.needs_setup");
        const existing = typeof key === "string" ? taskKeys.get(key) : undefined;
        if (existing) {
          const t = mockTasks.get(existing)!;
          return { taskId: t.taskId, traceId: t.traceId, sessionId: t.sessionId, created: false };
        }
        const [sessionId, joined, newRef] = chooseSession(policy);
        if (newRef !== undefined) sessionRefs.set(newRef, sessionId);
        const t: MockTask = {
          taskId: `task_${randomHex()}`,
          traceId: `trace_${randomHex()}`,
          sessionId,
          joined,
          idempotencyKey: typeof key === "string" ? key : null,
          createdAt: now(),
          input: a["input"],
          expectedOutput: a["expectedOutput"] ?? null,
          seq: 0,
          events: [],
          runs: [],
          status: "queued",
          cancel: false,
          pending: undefined,
        };
        mockTasks.set(t.taskId, t);
        if (t.idempotencyKey) taskKeys.set(t.idempotencyKey, t.taskId);
        void runMockTask(t);
        return { taskId: t.taskId, traceId: t.traceId, sessionId: t.sessionId, created: true };
      },
      getTask: (a) => taskView(ownTask(a)),
      listTasks: () => ({ items: [...mockTasks.values()].map(taskView), nextCursor: null }),
      cancelTask(a) {
        const t = ownTask(a);
        if (!isFinal(t.status)) {
          t.cancel = true;
          t.pending?.resume("cancel");
        }
        return taskView(t);
      },
      retryTask(a) {
        const t = ownTask(a);
        if (!options.agent) throw refuse("APP_E012", "no model is set up", "agent.needs_setup");
        if (!isFinal(t.status)) throw invalid("the task's latest run has not ended", "agent.task_busy");
        if (sessionBusy(t.sessionId)) throw invalid("another task's turn in this session has not ended", "agent.session_busy");
        t.cancel = false;
        t.status = "queued";
        void runMockTask(t);
        return taskView(t);
      },
      respondAction(a) {
        const t = ownTask(a);
        const decision = a["decision"];
        if (decision !== "approve" && decision !== "reject" && decision !== "answer") {
          throw invalid('args.decision must be "approve", "reject" or "answer"', "agent.invalid_argument");
        }
        if (!t.pending || t.pending.actionId !== a["actionId"]) {
          throw refuse(ErrorCodes.NOT_FOUND, "no pending approval with this id in this task", "agent.action_not_found");
        }
        // Only the user approves (the host's prompt: MockAgent.user); an app may only reject.
        if (decision !== "reject" || a["updatedInput"] != null || a["remember"] === "session") {
          const rewrite = a["updatedInput"] != null;
          throw refuse(ErrorCodes.PERMISSION_DENIED, rewrite ? "an app cannot change the input of a tool that needs the user's approval" : "only the user approves this action, in the prompt AppHost shows", rewrite ? "agent.updated_input_unsupported" : "agent.approval_requires_user");
        }
        t.pending.resume(decision);
        return { responded: true };
      },
      getTaskEvents(a) {
        const t = ownTask(a);
        const after = typeof a["afterSequence"] === "number" ? a["afterSequence"] : 0;
        const limit = typeof a["limit"] === "number" ? Math.min(Math.max(a["limit"], 1), 1000) : 200;
        const events = t.events.filter((e) => e.sequence > after).slice(0, limit);
        return { events, nextAfterSequence: events.length ? events[events.length - 1]!.sequence : after };
      },
      watchTask(a) {
        const t = ownTask(a);
        const after = typeof a["afterSequence"] === "number" ? a["afterSequence"] : 0;
        for (const e of t.events) if (e.sequence > after) queueMicrotask(() => handles.hub.deliver({ capability: "lime.agent", event: e }));
        return { watching: true, taskId: t.taskId, afterSequence: after };
      },
    },
    "lime.policy": {
      requestPermission(a) {
        const perm = a["permission"];
        if (typeof perm !== "string" || perm.length === 0 || bytes(perm) > 256) {
          throw invalid("args.permission must be the key of a declared permission", "policy.invalid_argument");
        }
        return permissionAnswer(perm);
      },
    },
  };

  /** What the host answers for `args` that are not an object, per capability. */
  const notAnObject: Record<string, Refusal> = {
    "lime.storage": bad("args must be an object"),
    "lime.artifacts": artBad("args must be an object"),
    "lime.evidence": evBad("args must be an object"),
    "lime.secrets": invalid("args.key must be a slot key (a non-empty string)", "secrets.invalid_argument"),
    "lime.events": invalid("args.topic must be a topic", "events.invalid_topic"),
    "lime.policy": invalid("args.permission must be the key of a declared permission", "policy.invalid_argument"),
    "lime.agent": invalid("args must be an object", "agent.invalid_argument"),
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
    const service = offered.has(capability) && Object.hasOwn(services, capability) ? services[capability] : undefined;
    const fn = service && Object.hasOwn(service, method) ? service[method] : undefined;
    if (!fn) throw fail(ErrorCodes.CAPABILITY_NOT_AVAILABLE, `${capability}.${method} is not available in this host`, capability, method, "capability.not_available");
    if (denied.has(`${capability}.${method}`)) throw fail(ErrorCodes.PERMISSION_DENIED, `the user denied ${capability}.${method}`, capability, method, "permission.denied");
    const a = args === null || args === undefined ? {} : args;
    try {
      if (!isRecord(a)) {
        if (capability === "lime.ui") return fn({}) as T;
        throw notAnObject[capability] ?? invalid("args must be an object", "args.invalid");
      }
      traceId = `trace_${randomHex()}`;
      // Arguments cross the bridge as JSON: the mock sees them as the host would.
      return fn(JSON.parse(JSON.stringify(a)) as Record<string, unknown>) as T;
    } catch (e) {
      if (e instanceof Refusal) throw fail(e.code, e.message, capability, method, e.causeCode, e.retryable);
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
    download: async (what, o) => {
      await wait("lime.ui", "download", o ?? {});
      const w = what as { artifactId?: string; text?: string; base64?: string; fileName?: string; mimeType?: string };
      const sources = [w.artifactId, w.text, w.base64].filter((x) => x !== undefined).length;
      if (sources !== 1) throw fail(ErrorCodes.INVALID_ARGUMENT, "exactly one of artifactId, text, base64", "lime.ui", "download", "download.invalid_argument");
      let bytes: Uint8Array;
      let name = w.fileName ?? "";
      let mimeType = w.mimeType ?? "application/octet-stream";
      if (w.artifactId !== undefined) {
        if (!offered.has("lime.artifacts") || denied.has("lime.artifacts.read")) {
          throw fail(ErrorCodes.PERMISSION_DENIED, "downloading an artifact needs its artifact permission", "lime.artifacts", "read", "permission.denied");
        }
        const art = artifactStore.get(w.artifactId);
        if (!art) throw fail(ErrorCodes.NOT_FOUND, "no artifact with this id", "lime.artifacts", "read", "artifacts.not_found");
        bytes = art.bytes.slice();
        name = name || art.name;
        mimeType = w.mimeType ?? art.mimeType;
      } else if (w.text !== undefined) {
        bytes = new TextEncoder().encode(w.text);
        if (w.mimeType === undefined) mimeType = "text/plain";
      } else {
        bytes = Uint8Array.from(atob(w.base64 ?? ""), (c) => c.charCodeAt(0));
      }
      if (options.downloadAnswer === "cancel") return { saved: false };
      // As the host: the last path component, no leading dots, never empty.
      const fileName = (name.split(/[/\\]/).pop() ?? "").replace(/^[. ]+/, "") || "download";
      downloads.push({ fileName, bytes, mimeType });
      return { saved: true, fileName };
    },
  });
  member = {
    accepts: (topic) => subscribed.has(topic),
    deliver: (e) => void handles.hub.deliver(e),
  };
  const leave = bus.join(appId, member);

  const rt: MockLimeRuntime = {
    appId,
    entryKey,
    calls,
    store,
    tables,
    artifactStore,
    evidenceRecords,
    permissionPrompts,
    toasts,
    navigations,
    downloads,
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
    agent: handles.agent,
    setSecretBound(k, b) {
      secrets.set(k, b);
      secretRefs.delete(k);
    },
    setTheme(t) {
      const th = { ...snapshot.theme, ...t };
      snapshot = { ...snapshot, ...th, theme: th };
      listeners.forEach((cb) => cb(snapshot));
    },
    close: () => {
      listeners.clear();
      handles.hub.clear();
      subscribed.clear();
      leave();
    },
  };
  return rt;
}
