// The typed `lime.*` handles, built over one `invoke` function: the real runtime's (the bridge)
// and the mock's (in memory) share them, so both have exactly the same surface.
//
// Argument shapes follow docs/bridge-protocol.md §5 (and the standard's capability SDK section).
// Where the host's shape is still settling, a handle passes an `args` object through and types
// its result as `unknown`; `invoke()` stays available for anything not wrapped here.

import type { HostSnapshot, LocaleInfo, ThemeSnapshot, ToastLevel } from "./protocol.js";

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

/** Extra argument fields are passed through unchanged. */
export type Args<T extends object = object> = T & { [field: string]: unknown };

export interface StorageListPage<T = unknown> {
  items: { key: string; value: T }[];
  nextCursor: string | null;
}

export interface LimeUi {
  getSnapshot(opts?: CallOptions): Promise<HostSnapshot>;
  getLocale(opts?: CallOptions): Promise<LocaleInfo>;
  getTheme(opts?: CallOptions): Promise<ThemeSnapshot>;
  /** Navigates within the app's own routes. */
  navigate(route: string, opts?: CallOptions): Promise<void>;
  toast(message: string, level?: ToastLevel): void;
  /** Asks the host to open an http(s) URL; the user confirms. */
  openExternal(url: string): void;
}

/** A table declared in the app's `storage/schema.json` (rows addressed by the table's key). */
export interface LimeStorageTable {
  readonly name: string;
  query(args?: Args, opts?: CallOptions): Promise<unknown>;
  get(args: Args, opts?: CallOptions): Promise<unknown>;
  insert(args: Args, opts?: CallOptions): Promise<unknown>;
  update(args: Args, opts?: CallOptions): Promise<unknown>;
  delete(args: Args, opts?: CallOptions): Promise<unknown>;
}

export interface LimeStorage {
  get<T = unknown>(key: string, opts?: CallOptions): Promise<T | null>;
  set(key: string, value: unknown, opts?: CallOptions): Promise<void>;
  delete(key: string, opts?: CallOptions): Promise<{ deleted: boolean }>;
  list<T = unknown>(query?: { prefix?: string; cursor?: string; limit?: number }, opts?: CallOptions): Promise<StorageListPage<T>>;
  /** Table calls: `lime.storage.table<Query|Get|Insert|Update|Delete>` with `{ table: name, ...args }`. */
  table(name: string): LimeStorageTable;
}

export interface ArtifactCreateArgs {
  name?: string;
  mimeType?: string;
  kind?: string;
  title?: string;
  /** Text, or base64 when `encoding` is `"base64"`. */
  content?: string;
  encoding?: "text" | "base64";
}

export interface LimeArtifacts {
  create(args: Args<ArtifactCreateArgs>, opts?: CallOptions): Promise<unknown>;
  read(args: Args<{ artifactId: string }>, opts?: CallOptions): Promise<unknown>;
  list(args?: Args<{ cursor?: string; limit?: number }>, opts?: CallOptions): Promise<unknown>;
  delete(args: Args<{ artifactId: string }>, opts?: CallOptions): Promise<unknown>;
}

export interface LimeEvidence {
  record(args: Args<{ kind: string; summary?: string; data?: unknown; artifactIds?: string[] }>, opts?: CallOptions): Promise<unknown>;
  list(args?: Args<{ kind?: string; cursor?: string; limit?: number }>, opts?: CallOptions): Promise<unknown>;
  export(args?: Args, opts?: CallOptions): Promise<unknown>;
}

export interface LimeSecrets {
  /** An opaque reference to the value bound to the declared slot `key`; never the value. */
  getRef(args: Args<{ key: string }>, opts?: CallOptions): Promise<unknown>;
}

/** An app event as `host:event` delivers it to a subscription. */
export interface LimeAppEvent {
  topic: string;
  payload?: unknown;
  [field: string]: unknown;
}

export interface LimeEvents {
  publish(topic: string, payload?: unknown, opts?: CallOptions): Promise<unknown>;
  /**
   * Subscribes this frame to `topic` (the first listener of a topic calls
   * `lime.events.subscribe`) and calls `listener` for each event; resolves with a function that
   * removes the listener (the last one calls `lime.events.unsubscribe`).
   */
  subscribe(topic: string, listener: (event: LimeAppEvent) => void, opts?: CallOptions): Promise<() => Promise<void>>;
  /** Removes every listener of `topic` and calls `lime.events.unsubscribe`. */
  unsubscribe(topic: string, opts?: CallOptions): Promise<void>;
}

export interface PermissionResult {
  granted: boolean;
  persistence: "once" | "always" | "denied";
}

export interface LimePolicy {
  /** Asks the user for an optional permission the manifest declares. */
  requestPermission(args: Args<{ permission: string }>, opts?: CallOptions): Promise<PermissionResult>;
}

/** Every typed handle. */
export interface LimeHandles {
  readonly ui: LimeUi;
  readonly storage: LimeStorage;
  readonly artifacts: LimeArtifacts;
  readonly evidence: LimeEvidence;
  readonly secrets: LimeSecrets;
  readonly events: LimeEvents;
  readonly policy: LimePolicy;
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
export type UiMessages = Pick<LimeUi, "navigate" | "toast" | "openExternal">;

export function buildHandles(invoke: Invoke, ui: UiMessages): LimeHandles & { hub: EventHub } {
  const listeners = new Map<string, Set<(e: LimeAppEvent) => void>>();
  const hub: EventHub = {
    deliver(payload) {
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
    clear: () => listeners.clear(),
  };
  const call = <T = unknown>(capability: string, method: string) => (args?: unknown, opts?: CallOptions) =>
    invoke<T>(capability, method, args ?? {}, opts);
  const table = (name: string): LimeStorageTable => {
    const t = (method: string) => (args?: Args, opts?: CallOptions) => invoke("lime.storage", method, { ...(args ?? {}), table: name }, opts);
    return { name, query: t("tableQuery"), get: t("tableGet"), insert: t("tableInsert"), update: t("tableUpdate"), delete: t("tableDelete") };
  };
  return {
    hub,
    ui: {
      getSnapshot: (o) => invoke<HostSnapshot>("lime.ui", "getSnapshot", {}, o),
      getLocale: (o) => invoke<LocaleInfo>("lime.ui", "getLocale", {}, o),
      getTheme: (o) => invoke<ThemeSnapshot>("lime.ui", "getTheme", {}, o),
      ...ui,
    },
    storage: {
      get: <T>(key: string, o?: CallOptions) => invoke<T | null>("lime.storage", "get", { key }, o),
      set: (key, value, o) => invoke<void>("lime.storage", "set", { key, value }, o),
      delete: (key, o) => invoke<{ deleted: boolean }>("lime.storage", "delete", { key }, o),
      list: <T>(q: { prefix?: string; cursor?: string; limit?: number } = {}, o?: CallOptions) =>
        invoke<StorageListPage<T>>("lime.storage", "list", q, o),
      table,
    },
    artifacts: {
      create: call("lime.artifacts", "create"),
      read: call("lime.artifacts", "read"),
      list: call("lime.artifacts", "list"),
      delete: call("lime.artifacts", "delete"),
    },
    evidence: {
      record: call("lime.evidence", "record"),
      list: call("lime.evidence", "list"),
      export: call("lime.evidence", "export"),
    },
    secrets: { getRef: call("lime.secrets", "getRef") },
    events: {
      publish: (topic, payload, o) => invoke("lime.events", "publish", payload === undefined ? { topic } : { topic, payload }, o),
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
  };
}
