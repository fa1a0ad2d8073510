// The typed `lime.*` handles, built over one `invoke` function: the real runtime's (the bridge)
// and the mock's (in memory) share them, so both have exactly the same surface.
//
// Argument and result shapes are the host's, as docs/bridge-protocol.md §5 documents them
// (crates/host-core/src/capability/services/*.rs); where a shape is exactly the per-method
// schema's, it is the generated type (./generated/capabilities.ts, from
// crates/host-core/src/hosting/capability/contract/), and test/types/contract.ts holds the
// hand-written ones to the generated ones. `invoke()` stays available for anything not
// wrapped here.

import { buildAgent, type LimeAgent } from "./agent.js";
import { buildFiles, type LimeFiles } from "./files.js";
import { buildProjections, type LimeCapabilities, type LimeModelSettings, type LimeWorkspace } from "./projections.js";
import { buildWorkflow, type LimeWorkflow } from "./workflow.js";
import { buildServices, type LimeServices } from "./services.js";
import { buildUiRoutes, type LaunchHub, type LimeUiRoutes } from "./ui.js";
import type { HostSnapshot, LocaleInfo, ThemeSnapshot, ToastLevel } from "./protocol.js";
import type {
  ArtifactsDeleteArgs,
  ArtifactsDeleteResult,
  ArtifactsReadArgs,
  EventsPublishResult,
  PolicyRequestPermissionArgs,
  PolicyRequestPermissionResult,
  SecretsGetRefArgs,
  SecretsGetRefResult,
  StorageDeleteResult,
  StorageTableDeleteResult,
  StorageTableInsertResult,
  StorageTableUpdateResult,
} from "./generated/capabilities.js";

/** Per-call options. */
export interface CallOptions {
  /** Cancels the call (`capability:cancel`); the promise rejects with `HOST_E_CANCELLED`. */
  signal?: AbortSignal;
  /** Deadline in milliseconds (default: the runtime's, 30 s); rejects with `HOST_E_TIMEOUT`. */
  timeoutMs?: number;
  /** Receives `host:event` payloads addressed to this call. */
  onEvent?: (payload: unknown) => void;
  /** Passed to the host as the call's `options` (`idempotencyKey`, …). */
  options?: Record<string, unknown>;
}

/** The one primitive every handle is built on. */
export type Invoke = <T = unknown>(capability: string, method: string, args?: unknown, opts?: CallOptions) => Promise<T>;

/** Extra argument fields are passed through unchanged (only where the host ignores them). */
export type Args<T extends object = object> = T & { [field: string]: unknown };

/** One page of a listing; pass `nextCursor` as `cursor` for the next (`null`: the last page). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface StorageListPage<T = unknown> {
  items: { key: string; value: T }[];
  nextCursor: string | null;
}

export interface LimeUi extends LimeUiRoutes {
  getSnapshot(opts?: CallOptions): Promise<HostSnapshot>;
  getLocale(opts?: CallOptions): Promise<LocaleInfo>;
  getTheme(opts?: CallOptions): Promise<ThemeSnapshot>;
  /** Navigates within the app's own routes. */
  navigate(route: string, opts?: CallOptions): Promise<void>;
  toast(message: string, level?: ToastLevel): void;
  /** Asks the host to open an http(s) URL; the user confirms. */
  openExternal(url: string): void;
  /**
   * Offers a file to save into the user's Downloads folder (`host:download`): one of the app's
   * own artifacts (needs its artifact permission) or `text` / `base64` bytes. The host shows the
   * user the name, size and type; resolves `{saved: false}` when they cancel, `{saved: true,
   * fileName}` (the name the file got; never replaces a file) when saved. Waits for the user:
   * the default deadline is 5 minutes.
   */
  download(what: DownloadRequest, opts?: CallOptions): Promise<DownloadResult>;
}

/** What `lime.ui.download` offers: exactly one source, a suggested name, a MIME type to show. */
export type DownloadRequest = ({ artifactId: string } | { text: string } | { base64: string }) & {
  fileName?: string;
  mimeType?: string;
};

/** The answer of `lime.ui.download`. */
export interface DownloadResult {
  saved: boolean;
  fileName?: string;
}

/** A table row as the host returns it: column -> value (booleans read back as 0/1, arrays and
 * objects as their JSON text, BLOBs as lowercase hex). */
export type TableRow = Record<string, unknown>;

/** A primary key value: the declared key's value, or SQLite's rowid (a number) when it chose it. */
export type RowId = string | number;

export interface TableQueryArgs {
  /** AND of equalities, `null` matching NULL. */
  where?: Record<string, unknown>;
  /** A column (default: the primary key; ties are ordered by the primary key). */
  orderBy?: string;
  descending?: boolean;
  /** 1–1000, default 100. */
  limit?: number;
  /** 0–100000, default 0. */
  offset?: number;
}

/** A table declared in the app's `storage/schema.json` (rows addressed by the table's key). */
export interface LimeStorageTable<R extends TableRow = TableRow> {
  readonly name: string;
  /** `lime.storage.tableQuery`. */
  query(args?: Args<TableQueryArgs>, opts?: CallOptions): Promise<{ rows: R[] }>;
  /** `lime.storage.tableGet`: the row, or `null`. `get(id)` (the standard's form) or `get({ id })`. */
  get(args: RowId | Args<{ id: RowId }>, opts?: CallOptions): Promise<R | null>;
  /** `lime.storage.tableInsert`: the new row's primary key. */
  insert(args: Args<{ row: Partial<R> }>, opts?: CallOptions): Promise<StorageTableInsertResult>;
  /** `lime.storage.tableUpdate`: whether the row existed. */
  update(args: Args<{ id: RowId; patch: Partial<R> }>, opts?: CallOptions): Promise<StorageTableUpdateResult>;
  /** `lime.storage.tableDelete`: whether the row existed. `delete(id)` or `delete({ id })`. */
  delete(args: RowId | Args<{ id: RowId }>, opts?: CallOptions): Promise<StorageTableDeleteResult>;
}

/** A storage key: the key itself, or the standard's `{ key }` object. */
export type StorageKeyArg = string | { key: string };

export interface LimeStorage {
  /** `get(key)` or the standard's `get({ key })`: the value, or `null`. */
  get<T = unknown>(key: StorageKeyArg, opts?: CallOptions): Promise<T | null>;
  /** `set(key, value)` or the standard's `set({ key, value })`. */
  set(key: string, value: unknown, opts?: CallOptions): Promise<void>;
  set(entry: { key: string; value: unknown }, opts?: CallOptions): Promise<void>;
  /** `delete(key)` or `delete({ key })`. */
  delete(key: StorageKeyArg, opts?: CallOptions): Promise<StorageDeleteResult>;
  list<T = unknown>(query?: { prefix?: string; cursor?: string; limit?: number }, opts?: CallOptions): Promise<StorageListPage<T>>;
  /** Table calls: `lime.storage.table<Query|Get|Insert|Update|Delete>` with `{ table: name, ...args }`. */
  table<R extends TableRow = TableRow>(name: string): LimeStorageTable<R>;
}

/** Who made a record: stamped by the host from the mount, never taken from the message. */
export interface Provenance {
  appId: string;
  appVersion: string;
  entryKey: string;
  packageHash: string;
  manifestHash: string;
  traceId: string;
}

/**
 * `lime.artifacts.create` arguments (a closed object: the host refuses unknown fields). Content is
 * exactly one of `text` (stored as its UTF-8 bytes) or `base64` (standard alphabet, padded); at
 * most 1 MiB after decoding.
 *
 * The standard's forms are accepted too: `{kind, title?, content}` and `{type, data, title?}`
 * (the name is the `title`, else the `kind` / `type`; a string content is stored as `text/plain`
 * text, any other JSON value as `application/json`; `mimeType` overrides). Mixing two forms is
 * refused (`artifacts.ambiguous_shape`).
 */
export type ArtifactCreateArgs =
  | ({ name: string; mimeType?: string } & ({ text: string; base64?: never } | { base64: string; text?: never }))
  | { kind: string; content: unknown; title?: string; mimeType?: string }
  | { type: string; data: unknown; title?: string; mimeType?: string };

/** An artifact's metadata. */
export interface ArtifactMetadata {
  /** `artifact_` + 32 hex digits, scoped to the app. */
  id: string;
  name: string;
  mimeType: string;
  size: number;
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
  /** UTC, milliseconds (`2026-11-23T16:00:00.000Z`). */
  createdAt: string;
  provenance: Provenance;
}

/** `lime.artifacts.read`: the metadata plus the content. */
export interface ArtifactContent extends ArtifactMetadata {
  encoding: "base64" | "text";
  content: string;
}

export interface LimeArtifacts {
  create(args: ArtifactCreateArgs, opts?: CallOptions): Promise<ArtifactMetadata>;
  /** `encoding` defaults to `"base64"`; `"text"` fails (`artifacts.not_text`) unless the bytes are UTF-8. */
  read(args: ArtifactsReadArgs, opts?: CallOptions): Promise<ArtifactContent>;
  /** Oldest first; `limit` 1–1000, default 100. */
  list(args?: { cursor?: string; limit?: number }, opts?: CallOptions): Promise<Page<ArtifactMetadata>>;
  /** `{deleted: false}` for an id the app does not have. */
  delete(args: ArtifactsDeleteArgs, opts?: CallOptions): Promise<ArtifactsDeleteResult>;
}

/** `lime.evidence.record` arguments in the host's form (a closed object). */
export interface EvidenceRecordHostArgs {
  /** 1–64 characters of `[A-Za-z0-9._:-]` (`model.call`, `tool.call`, `source`, `eval.result`, …). */
  kind: string;
  /** At most 2,000 bytes. */
  summary?: string;
  /** Any JSON value, at most 64 KiB as compact JSON. */
  data?: unknown;
  /** At most 64 ids of this app's artifacts. */
  artifactIds?: string[];
}

/**
 * `lime.evidence.record` arguments: the host's form, or the standard's `{kind, message?, refs?}`
 * (recorded as `{kind, summary: message, data: {refs}}`) or `{subject, sources?, kind?}`
 * (recorded as `{kind: kind ?? "source", summary: subject (a string) or "", data: {subject,
 * sources}}`). Mixing forms is refused (`evidence.ambiguous_shape`).
 */
export type EvidenceRecordArgs =
  | EvidenceRecordHostArgs
  | { kind: string; message?: string; refs?: unknown[] }
  | { subject: unknown; sources?: unknown[]; kind?: string };

/** A record's ref to one of the app's artifacts, with the SHA-256 it had at record time. */
export interface EvidenceArtifactRef {
  artifactId: string;
  sha256: string;
}

export interface EvidenceRecord {
  /** `evidence_` + 32 hex digits. */
  id: string;
  kind: string;
  summary: string;
  /** `null` when the record has none. */
  data: unknown;
  artifacts: EvidenceArtifactRef[];
  createdAt: string;
  provenance: Provenance;
}

/** An artifact an evidence pack's records refer to: with its metadata while it still exists
 * with the recorded content, else `present: false`; `withheld: true` (id and hash only) when the
 * calling entry may not read the app's artifacts right now. */
export type EvidencePackArtifact =
  | ({ artifactId: string; sha256: string; present: true } & Omit<ArtifactMetadata, "id" | "sha256">)
  | { artifactId: string; sha256: string; present: false }
  | { artifactId: string; sha256: string; withheld: true; present?: undefined };

/** `lime.evidence.export`: the `apphost.evidence-pack.v1` evidence pack. */
export interface EvidencePack {
  schemaVersion: "apphost.evidence-pack.v1";
  app: { appId: string; appVersion: string; packageHash: string; manifestHash: string };
  generatedAt: string;
  /** The `kind` filter, or `null`. */
  kind: string | null;
  records: EvidenceRecord[];
  /** Each artifact the records refer to, once. */
  artifacts: EvidencePackArtifact[];
  /** The Agent Runtime standard's correlation: `taskId`'s latest run, or the call's trace only. */
  runtimeCorrelation: RuntimeCorrelation;
}

/** The runtime ids an evidence pack is joined on; an id the host does not have is `null` and named in `missing`. */
export interface RuntimeCorrelation {
  runtimeId: string | null;
  sessionId: string | null;
  threadId: string | null;
  turnId: string | null;
  taskId: string | null;
  runId: string | null;
  traceId: string | null;
  missing: ("runtimeId" | "sessionId" | "threadId" | "turnId" | "taskId" | "runId" | "traceId")[];
}

export interface LimeEvidence {
  record(args: EvidenceRecordArgs, opts?: CallOptions): Promise<EvidenceRecord>;
  /** Oldest first; `limit` 1–1000, default 100. */
  list(args?: { kind?: string; cursor?: string; limit?: number }, opts?: CallOptions): Promise<Page<EvidenceRecord>>;
  /** The pack; with `taskId` (one of the app's agent tasks) its `runtimeCorrelation` names that task's latest run. */
  export(args?: { kind?: string; taskId?: string }, opts?: CallOptions): Promise<EvidencePack>;
}

/** An opaque secret reference (`secretref_` + 32 hex digits) and the slot it is for. */
export type SecretRef = SecretsGetRefResult;

/** One `lime.knowledge.search` hit and its citation. */
export interface KnowledgeHit {
  /** The document's path relative to the folder the user bound. */
  document: string;
  /** The heading above the chunk (`""` before the first heading). */
  section: string;
  /** The chunk's byte span in the document. */
  start: number;
  end: number;
  /** A few words around the matches, matches in `[`…`]`. */
  snippet: string;
  /** BM25 relevance, higher is better. */
  score: number;
}

export interface KnowledgeSearchResult {
  template: string;
  hits: KnowledgeHit[];
}

export interface LimeKnowledge {
  /**
   * The best chunks of the folder the user bound to the declared knowledge template, best
   * first. The query is matched as words (any of them), never as search syntax. Unbound:
   * `APP_E003` (`knowledge.not_bound`).
   */
  search(args: { template: string; query: string; topK?: number }, opts?: CallOptions): Promise<KnowledgeSearchResult>;
}

export interface LimeSecrets {
  /** An opaque reference to the value bound to the declared slot `key`; never the value. */
  getRef(args: SecretsGetRefArgs, opts?: CallOptions): Promise<SecretRef>;
}

/** An app event as `host:event` (without `requestId`) delivers it to a subscription. */
export interface LimeAppEvent {
  capability: "lime.events";
  topic: string;
  /** `null` when the publisher sent none. */
  payload: unknown;
  /** The entry that published it (never this frame: a publisher does not receive its own event). */
  sourceEntryKey: string;
}

export interface LimeEvents {
  /** Delivers to every *other* frame of this app subscribed to `topic`; resolves how many. */
  publish(topic: string, payload?: unknown, opts?: CallOptions): Promise<EventsPublishResult>;
  /**
   * Subscribes this frame to `topic` (the first listener of a topic calls
   * `lime.events.subscribe`) and calls `listener` for each event; resolves with a function that
   * removes the listener (the last one calls `lime.events.unsubscribe`).
   */
  subscribe(topic: string, listener: (event: LimeAppEvent) => void, opts?: CallOptions): Promise<() => Promise<void>>;
  /** Removes every listener of `topic` and calls `lime.events.unsubscribe`. */
  unsubscribe(topic: string, opts?: CallOptions): Promise<void>;
}

export type PermissionResult = PolicyRequestPermissionResult;

export interface LimePolicy {
  /** Asks the user for an optional permission the manifest declares. */
  requestPermission(args: PolicyRequestPermissionArgs, opts?: CallOptions): Promise<PermissionResult>;
}

/** A tool the user granted the app, from an MCP server the host brokers (`lime.tools.list`). */
export interface ToolDescriptor {
  /** `<server>/<tool>`, as `invoke` takes it. */
  tool: string;
  server: string;
  name: string;
  description?: string;
  /** The tool's JSON Schema for its arguments. */
  inputSchema: unknown;
  /** Destructive (by the server's annotation or the admin's policy): `invoke` asks the user first. */
  needsApproval: boolean;
}

/** An MCP `tools/call` result as the host hands it back. */
export interface ToolResult {
  content: unknown[];
  structuredContent?: unknown;
  /** The tool itself reported an error (the call ran). */
  isError?: boolean;
}

export interface LimeTools {
  /** The tools the app declares in `toolRefs[]` that the user granted it. */
  list(opts?: CallOptions): Promise<{ tools: ToolDescriptor[] }>;
  /**
   * Runs a granted tool. A destructive one waits for the user's answer in a prompt the host
   * draws; a refusal is `APP_E002` with causeCode `tools.denied`.
   */
  invoke(args: { tool: string; arguments?: Record<string, unknown> }, opts?: CallOptions): Promise<ToolResult>;
}

/** Every typed handle. */
export interface LimeHandles {
  readonly ui: LimeUi;
  readonly storage: LimeStorage;
  readonly artifacts: LimeArtifacts;
  readonly evidence: LimeEvidence;
  readonly secrets: LimeSecrets;
  readonly knowledge: LimeKnowledge;
  readonly events: LimeEvents;
  readonly policy: LimePolicy;
  readonly agent: LimeAgent;
  readonly files: LimeFiles;
  readonly tools: LimeTools;
  readonly workflow: LimeWorkflow;
  readonly modelSettings: LimeModelSettings;
  readonly capabilities: LimeCapabilities;
  readonly workspace: LimeWorkspace;
  readonly services: LimeServices;
}

/** Listeners of app events, per topic. */
export interface EventHub {
  /** Delivers one `host:event` payload; returns whether it was an app event. */
  deliver(payload: unknown): boolean;
  clear(): void;
}

function isAppEvent(p: unknown): p is LimeAppEvent {
  return typeof p === "object" && p !== null && typeof (p as { topic?: unknown }).topic === "string";
}

/** The UI calls that are bridge messages rather than capability calls. */
export type UiMessages = Pick<LimeUi, "navigate" | "toast" | "openExternal" | "download">;

export function buildHandles(invoke: Invoke, ui: UiMessages): LimeHandles & { hub: EventHub; launches: LaunchHub } {
  const uiRoutes = buildUiRoutes(invoke);
  const listeners = new Map<string, Set<(e: LimeAppEvent) => void>>();
  const agent = buildAgent(invoke);
  const workflow = buildWorkflow(invoke);
  const hub: EventHub = {
    deliver(payload) {
      if (agent.hub.deliver(payload)) return true;
      if (workflow.hub.deliver(payload)) return true;
      if (!isAppEvent(payload)) return false;
      const set = listeners.get(payload.topic);
      if (!set) return true;
      for (const l of [...set]) {
        try {
          l(payload);
        } catch (e) {
          // One failing listener must not starve the others.
          queueMicrotask(() => {
            throw e;
          });
        }
      }
      return true;
    },
    clear: () => {
      listeners.clear();
      agent.hub.clear();
      workflow.hub.clear();
    },
  };
  const call = <T = unknown>(capability: string, method: string) => (args?: unknown, opts?: CallOptions) =>
    invoke<T>(capability, method, args ?? {}, opts);
  const table = <R extends TableRow>(name: string): LimeStorageTable<R> => {
    const t = <T>(method: string) => (args?: object, opts?: CallOptions) => invoke<T>("lime.storage", method, { ...(args ?? {}), table: name }, opts);
    // The standard's `get(id)` / `delete(id)`: a bare id is `{ id }`.
    const byId = <T>(method: string) => (args: RowId | object, opts?: CallOptions) =>
      t<T>(method)(typeof args === "object" && args !== null ? args : { id: args }, opts);
    return {
      name,
      query: t<{ rows: R[] }>("tableQuery"),
      get: byId<R | null>("tableGet"),
      insert: t<{ id: RowId }>("tableInsert"),
      update: t<{ updated: boolean }>("tableUpdate"),
      delete: byId<{ deleted: boolean }>("tableDelete"),
    };
  };
  // The standard's object forms (`get({ key })`, `set({ key, value })`) beside the positional ones.
  const keyArgs = (key: StorageKeyArg) => (typeof key === "object" && key !== null ? { ...key } : { key });
  const setArgs = (key: string | { key: string; value: unknown }, value: unknown, o?: CallOptions): [object, CallOptions | undefined] =>
    typeof key === "object" && key !== null ? [{ ...key }, value as CallOptions | undefined] : [{ key, value }, o];
  return {
    hub,
    launches: uiRoutes.launches,
    ui: {
      ...uiRoutes.routes,
      getSnapshot: (o) => invoke<HostSnapshot>("lime.ui", "getSnapshot", {}, o),
      getLocale: (o) => invoke<LocaleInfo>("lime.ui", "getLocale", {}, o),
      getTheme: (o) => invoke<ThemeSnapshot>("lime.ui", "getTheme", {}, o),
      ...ui,
    },
    storage: {
      get: <T>(key: StorageKeyArg, o?: CallOptions) => invoke<T | null>("lime.storage", "get", keyArgs(key), o),
      set: ((key: string | { key: string; value: unknown }, value?: unknown, o?: CallOptions) => {
        const [args, opts] = setArgs(key, value, o);
        return invoke<void>("lime.storage", "set", args, opts);
      }) as LimeStorage["set"],
      delete: (key, o) => invoke<{ deleted: boolean }>("lime.storage", "delete", keyArgs(key), o),
      list: <T>(q: { prefix?: string; cursor?: string; limit?: number } = {}, o?: CallOptions) =>
        invoke<StorageListPage<T>>("lime.storage", "list", q, o),
      table,
    },
    artifacts: {
      create: call<ArtifactMetadata>("lime.artifacts", "create"),
      read: call<ArtifactContent>("lime.artifacts", "read"),
      list: call<Page<ArtifactMetadata>>("lime.artifacts", "list"),
      delete: call<{ deleted: boolean }>("lime.artifacts", "delete"),
    },
    evidence: {
      record: call<EvidenceRecord>("lime.evidence", "record"),
      list: call<Page<EvidenceRecord>>("lime.evidence", "list"),
      export: call<EvidencePack>("lime.evidence", "export"),
    },
    secrets: { getRef: call<SecretRef>("lime.secrets", "getRef") },
    knowledge: { search: call<KnowledgeSearchResult>("lime.knowledge", "search") },
    events: {
      publish: (topic, payload, o) =>
        invoke<{ delivered: number }>("lime.events", "publish", payload === undefined ? { topic } : { topic, payload }, o),
      async subscribe(topic, listener, o) {
        let set = listeners.get(topic);
        if (!set) {
          await invoke("lime.events", "subscribe", { topic }, o);
          set = listeners.get(topic) ?? new Set();
          listeners.set(topic, set);
        }
        set.add(listener);
        const s = set;
        return async () => {
          if (!s.delete(listener) || s.size > 0 || listeners.get(topic) !== s) return;
          listeners.delete(topic);
          await invoke("lime.events", "unsubscribe", { topic });
        };
      },
      async unsubscribe(topic, o) {
        listeners.delete(topic);
        await invoke("lime.events", "unsubscribe", { topic }, o);
      },
    },
    policy: { requestPermission: call<PermissionResult>("lime.policy", "requestPermission") },
    agent: agent.agent,
    files: buildFiles(invoke),
    tools: {
      list: (o) => invoke<{ tools: ToolDescriptor[] }>("lime.tools", "list", {}, o),
      invoke: call<ToolResult>("lime.tools", "invoke"),
    },
    workflow: workflow.workflow,
    ...buildProjections(invoke),
    services: buildServices(invoke),
  };
}
