import { ErrorCodes, LimeCapabilityError } from "./errors.js";
import type { HostSnapshot, StorageListPage, ThemeSnapshot } from "./protocol.js";
import type { CallOptions, LimeRuntime } from "./runtime.js";

export interface MockOptions {
  appId?: string;
  entryKey?: string;
  /** Capabilities the mock host offers (default: lime.ui and lime.storage). */
  capabilities?: string[];
  /** Methods to deny as the host would (`"lime.storage.set"`): APP_E002. */
  denied?: string[];
  /** Storage quota in bytes of keys plus JSON values (default 64 MiB). */
  quotaBytes?: number;
  snapshot?: Partial<HostSnapshot>;
}

/** A recorded call, for assertions in app authors' tests. */
export interface MockCall {
  capability: string;
  method: string;
  args: unknown;
}

export interface MockLimeRuntime extends LimeRuntime {
  readonly calls: MockCall[];
  /** The storage contents, as the real host would keep them. */
  readonly store: Map<string, unknown>;
  /** Pushes a theme update to `onSnapshot` listeners. */
  setTheme(theme: Partial<ThemeSnapshot>): void;
  readonly toasts: { message: string; level: string }[];
  readonly navigations: string[];
}

const MAX_KEY_BYTES = 512;
const MAX_VALUE_BYTES = 1024 * 1024;
const bytes = (s: string) => new TextEncoder().encode(s).length;

/**
 * An in-memory `lime` runtime with the same types and the same errors as the real host, for
 * app authors' unit tests. No network, no frame, no host.
 */
export function createMockLimeRuntime(options: MockOptions = {}): MockLimeRuntime {
  const appId = options.appId ?? "mock-app";
  const entryKey = options.entryKey ?? "home";
  const offered = new Set(options.capabilities ?? ["lime.ui", "lime.storage"]);
  const denied = new Set(options.denied ?? []);
  const quota = options.quotaBytes ?? 64 * 1024 * 1024;
  const store = new Map<string, unknown>();
  const calls: MockCall[] = [];
  const toasts: { message: string; level: string }[] = [];
  const navigations: string[] = [];
  const listeners = new Set<(s: HostSnapshot) => void>();
  const theme: ThemeSnapshot = { themeMode: "system", effectiveThemeMode: "light", colorSchemeId: "lime-default", tokens: {} };
  let snapshot: HostSnapshot = {
    appId, entryKey, entryKind: "page", route: "/", origin: `agentapp://${appId}`,
    locale: "en-US", timezone: "UTC", workspaceId: "local", tenantId: "local",
    ...theme, theme,
    capabilities: { available: [...offered], blocked: [] },
    ...options.snapshot,
  };

  const fail = (code: string, message: string, capability: string, method: string, causeCode?: string) =>
    Promise.reject(new LimeCapabilityError({ code, message, capability, method, retryable: false, ...(causeCode ? { causeCode } : {}) }));

  const used = () => {
    let n = 0;
    for (const [k, v] of store) n += bytes(k) + bytes(JSON.stringify(v));
    return n;
  };
  const keyError = (key: unknown) =>
    typeof key !== "string" || key.length === 0 || bytes(key) > MAX_KEY_BYTES || /[\u0000-\u001f\u007f]/.test(key);

  async function invoke<T>(capability: string, method: string, args: unknown = {}, opts: CallOptions = {}): Promise<T> {
    calls.push({ capability, method, args });
    if (opts.signal?.aborted) return fail(ErrorCodes.CANCELLED, "cancelled by the app", capability, method);
    if (!offered.has(capability)) return fail(ErrorCodes.CAPABILITY_NOT_AVAILABLE, `${capability}.${method} is not available`, capability, method, "capability.not_available");
    if (denied.has(`${capability}.${method}`)) return fail(ErrorCodes.PERMISSION_DENIED, "the user denied this", capability, method, "permission.denied");
    const a = (args ?? {}) as Record<string, unknown>;
    if (capability === "lime.ui") {
      if (method === "getSnapshot") return snapshot as T;
      if (method === "getLocale") return { locale: snapshot.locale, timezone: snapshot.timezone } as T;
      if (method === "getTheme") return snapshot.theme as T;
    }
    if (capability === "lime.storage") {
      const key = a["key"];
      switch (method) {
        case "get":
          if (keyError(key)) return fail(ErrorCodes.INVALID_ARGUMENT, "invalid key", capability, method, "storage.invalid_key");
          return (store.has(key as string) ? structuredClone(store.get(key as string)) : null) as T;
        case "set": {
          if (keyError(key)) return fail(ErrorCodes.INVALID_ARGUMENT, "invalid key", capability, method, "storage.invalid_key");
          if (!("value" in a)) return fail(ErrorCodes.INVALID_ARGUMENT, "args.value is required", capability, method);
          const text = JSON.stringify(a["value"]);
          if (bytes(text) > MAX_VALUE_BYTES) return fail(ErrorCodes.INVALID_ARGUMENT, "value too large", capability, method, "storage.value_too_large");
          const old = store.has(key as string) ? bytes(key as string) + bytes(JSON.stringify(store.get(key as string))) : 0;
          const add = bytes(key as string) + bytes(text);
          if (add > old && used() - old + add > quota) return fail(ErrorCodes.STORAGE_QUOTA_EXCEEDED, "storage quota exceeded", capability, method, "storage.quota_exceeded");
          store.set(key as string, JSON.parse(text));
          return null as T;
        }
        case "delete":
          if (keyError(key)) return fail(ErrorCodes.INVALID_ARGUMENT, "invalid key", capability, method, "storage.invalid_key");
          return { deleted: store.delete(key as string) } as T;
        case "list": {
          const prefix = typeof a["prefix"] === "string" ? a["prefix"] : "";
          const cursor = typeof a["cursor"] === "string" ? a["cursor"] : undefined;
          const limit = typeof a["limit"] === "number" ? a["limit"] : 100;
          if (!Number.isInteger(limit) || limit < 1 || limit > 1000) return fail(ErrorCodes.INVALID_ARGUMENT, "args.limit must be 1..=1000", capability, method);
          const keys = [...store.keys()].filter((k) => k.startsWith(prefix) && (cursor === undefined || k > cursor)).sort();
          const page = keys.slice(0, limit);
          const out: StorageListPage = { items: page.map((k) => ({ key: k, value: structuredClone(store.get(k)) })), nextCursor: keys.length > limit ? (page[page.length - 1] ?? null) : null };
          return out as T;
        }
      }
    }
    return fail(ErrorCodes.CAPABILITY_NOT_AVAILABLE, `${capability}.${method} is not available`, capability, method, "capability.not_available");
  }

  const rt: MockLimeRuntime = {
    appId,
    entryKey,
    calls,
    store,
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
    ui: {
      getSnapshot: (o) => invoke("lime.ui", "getSnapshot", {}, o),
      getLocale: (o) => invoke("lime.ui", "getLocale", {}, o),
      getTheme: (o) => invoke("lime.ui", "getTheme", {}, o),
      navigate: async (route) => {
        navigations.push(route);
      },
      toast: (message, level = "info") => {
        toasts.push({ message, level });
      },
      openExternal: () => undefined,
    },
    storage: {
      get: (key, o) => invoke("lime.storage", "get", { key }, o),
      set: (key, value, o) => invoke("lime.storage", "set", { key, value }, o),
      delete: (key, o) => invoke("lime.storage", "delete", { key }, o),
      list: (q = {}, o) => invoke("lime.storage", "list", q, o),
    },
    setTheme(t) {
      const th = { ...snapshot.theme, ...t };
      snapshot = { ...snapshot, ...th, theme: th };
      listeners.forEach((cb) => cb(snapshot));
    },
    close: () => listeners.clear(),
  };
  return rt;
}
