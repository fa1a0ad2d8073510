import { ErrorCodes, LimeCapabilityError } from "./errors.js";
import type { LaunchHub } from "./ui.js";
import { buildHandles, type CallOptions, type DownloadResult, type EventHub, type LimeHandles } from "./handles.js";
import {
  BRIDGE_PROTOCOL,
  BRIDGE_VERSION,
  type AppMessagePayloads,
  type AppMessageType,
  type BridgeEnvelope,
  type ErrorCode,
  type ErrorPayload,
  type HostSnapshot,
  type ResponsePayload,
  type ThemeSnapshot,
} from "./protocol.js";

/** Default deadline of `lime.ui.download`: the user answers a save dialog. */
export const DOWNLOAD_TIMEOUT_MS = 5 * 60_000;

export type { CallOptions } from "./handles.js";

/** How the SDK reaches the host: `window.parent` in a real frame, anything in tests. */
export interface BridgeEndpoint {
  post(message: BridgeEnvelope, targetOrigin: string): void;
  /** `fromHost` must be true only when the message came from the host window itself. */
  subscribe(listener: (data: unknown, origin: string, fromHost: boolean) => void): () => void;
}

interface MessageEventLike {
  data: unknown;
  origin: string;
  source: unknown;
}
interface WindowLike {
  parent: { postMessage(message: unknown, targetOrigin: string): void };
  addEventListener(type: "message", l: (e: MessageEventLike) => void): void;
  removeEventListener(type: "message", l: (e: MessageEventLike) => void): void;
}

/** The endpoint of a real frame: posts to `window.parent`, listens to messages from it only. */
export function windowEndpoint(win?: WindowLike): BridgeEndpoint {
  const w = win ?? (globalThis as unknown as WindowLike);
  return {
    post: (message, targetOrigin) => w.parent.postMessage(message, targetOrigin),
    subscribe(listener) {
      const l = (e: MessageEventLike) => listener(e.data, e.origin, e.source === w.parent);
      w.addEventListener("message", l);
      return () => w.removeEventListener("message", l);
    },
  };
}

export interface LimeRuntime extends LimeHandles {
  readonly appId: string;
  readonly entryKey: string;
  /** Sends `app:ready` (once) and resolves with the first snapshot. */
  ready(): Promise<HostSnapshot>;
  /** The latest snapshot, once one arrived. */
  snapshot(): HostSnapshot | undefined;
  /** Called with every snapshot and theme update; returns an unsubscribe function. */
  onSnapshot(cb: (s: HostSnapshot) => void): () => void;
  onVisibility(cb: (visible: boolean) => void): () => void;
  /** Any `lime.*` call; the typed handles are built on it. */
  invoke<T = unknown>(capability: string, method: string, args?: unknown, opts?: CallOptions): Promise<T>;
  /** Stops listening; pending calls reject with `HOST_E_CANCELLED`. */
  close(): void;
}

export interface RuntimeOptions {
  appId?: string;
  entryKey?: string;
  endpoint?: BridgeEndpoint;
  timeoutMs?: number;
}

interface Pending {
  capability: string;
  method: string;
  resolve(v: unknown): void;
  reject(e: unknown): void;
  cleanup(): void;
  onEvent: ((p: unknown) => void) | undefined;
}

function fromLocation(key: string): string | undefined {
  const loc = (globalThis as { location?: { search?: string } }).location;
  if (!loc?.search) return undefined;
  return new URLSearchParams(loc.search).get(key) ?? undefined;
}

function isMessage(d: unknown): d is BridgeEnvelope {
  if (typeof d !== "object" || d === null) return false;
  const m = d as Record<string, unknown>;
  return m["protocol"] === BRIDGE_PROTOCOL && m["version"] === BRIDGE_VERSION && typeof m["type"] === "string";
}

let instance: LimeRuntime | undefined;

/**
 * The `lime.*` runtime of this frame. `appId` and `entryKey` default to the `app` and `entry`
 * query parameters the host puts on the frame's URL. The first call creates it.
 */
export function getLimeRuntime(options: RuntimeOptions = {}): LimeRuntime {
  if (!instance || options.endpoint) {
    instance = createLimeRuntime(options);
  }
  return instance;
}

export function createLimeRuntime(options: RuntimeOptions = {}): LimeRuntime {
  const appId = options.appId ?? fromLocation("app");
  const entryKey = options.entryKey ?? fromLocation("entry");
  if (!appId || !entryKey) {
    throw new Error("getLimeRuntime: appId and entryKey are required (the host passes ?app=&entry=)");
  }
  const endpoint = options.endpoint ?? windowEndpoint();
  const defaultTimeout = options.timeoutMs ?? 30_000;
  const prefix = Math.random().toString(36).slice(2, 10);
  let counter = 0;
  let hostOrigin = "*";
  let latest: HostSnapshot | undefined;
  let readyPromise: Promise<HostSnapshot> | undefined;
  const pending = new Map<string, Pending>();
  const snapshotListeners = new Set<(s: HostSnapshot) => void>();
  const visibilityListeners = new Set<(v: boolean) => void>();
  const firstSnapshot: Array<(s: HostSnapshot) => void> = [];
  let hub: EventHub | undefined;
  let launches: LaunchHub | undefined;

  const send = <K extends AppMessageType>(type: K, payload: AppMessagePayloads[K], requestId?: string) => {
    const msg: BridgeEnvelope<K, AppMessagePayloads[K]> = { protocol: BRIDGE_PROTOCOL, version: BRIDGE_VERSION, type, appId, entryKey, payload };
    if (requestId !== undefined) msg.requestId = requestId;
    endpoint.post(msg, hostOrigin);
  };

  const unsubscribe = endpoint.subscribe((data, origin, fromHost) => {
    if (!fromHost || !isMessage(data) || data.appId !== appId) return;
    if (hostOrigin !== "*" && origin !== hostOrigin) return;
    const payload = data.payload;
    switch (data.type) {
      case "host:snapshot":
      case "theme:update": {
        if (hostOrigin === "*" && origin && origin !== "null") hostOrigin = origin;
        const next = data.type === "host:snapshot" ? (payload as HostSnapshot) : latest && { ...latest, ...(payload as ThemeSnapshot), theme: payload as ThemeSnapshot };
        if (!next) return;
        latest = next;
        if (data.type === "host:snapshot") firstSnapshot.splice(0).forEach((f) => f(next));
        snapshotListeners.forEach((cb) => cb(next));
        if (data.requestId) settle(data.requestId, { value: next });
        return;
      }
      case "host:visibility":
        visibilityListeners.forEach((cb) => cb(Boolean((payload as { visible?: unknown })?.visible)));
        return;
      case "host:event": {
        const call = data.requestId ? pending.get(data.requestId) : undefined;
        if (call) call.onEvent?.(payload);
        else hub?.deliver(payload);
        return;
      }
      case "ui:launch":
        launches?.deliver(payload);
        return;
      case "host:response":
        if (data.requestId) settle(data.requestId, payload as ResponsePayload);
        return;
      case "host:error":
        if (data.requestId) fail(data.requestId, payload as ErrorPayload);
        return;
    }
  });

  function settle(id: string, p: ResponsePayload | undefined) {
    const call = pending.get(id);
    if (!call) return;
    pending.delete(id);
    call.cleanup();
    call.resolve(p?.value ?? null);
  }
  function fail(id: string, p: ErrorPayload) {
    const call = pending.get(id);
    if (!call) return;
    pending.delete(id);
    call.cleanup();
    call.reject(
      new LimeCapabilityError({
        code: p?.code ?? ErrorCodes.UNKNOWN_ERROR,
        message: p?.message ?? "the host reported an error",
        causeCode: p?.causeCode,
        capability: p?.capability ?? call.capability,
        method: p?.method ?? call.method,
        retryable: p?.retryable ?? false,
        details: p?.details,
      }),
    );
  }

  function request<T, K extends "capability:invoke" | "host:navigate" | "host:download">(
    type: K,
    payload: AppMessagePayloads[K],
    capability: string,
    method: string,
    opts: CallOptions = {},
  ): Promise<T> {
    const id = `${prefix}-${++counter}`;
    return new Promise<T>((resolve, reject) => {
      const local = (code: ErrorCode, message: string, retryable: boolean) => {
        if (!pending.has(id)) return;
        pending.delete(id);
        cleanup();
        if (type === "capability:invoke") send("capability:cancel", { requestId: id });
        reject(new LimeCapabilityError({ code, message, capability, method, retryable }));
      };
      const timer = setTimeout(() => local(ErrorCodes.TIMEOUT, `no answer within ${opts.timeoutMs ?? defaultTimeout} ms`, true), opts.timeoutMs ?? defaultTimeout);
      const onAbort = () => local(ErrorCodes.CANCELLED, "cancelled by the app", false);
      const cleanup = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener("abort", onAbort);
      };
      if (opts.signal?.aborted) {
        cleanup();
        reject(new LimeCapabilityError({ code: ErrorCodes.CANCELLED, message: "cancelled by the app", capability, method, retryable: false }));
        return;
      }
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      pending.set(id, { capability, method, resolve: resolve as (v: unknown) => void, reject, cleanup, onEvent: opts.onEvent });
      send(type, payload, id);
    });
  }

  const invoke = <T>(capability: string, method: string, args?: unknown, opts?: CallOptions) => {
    const payload: AppMessagePayloads["capability:invoke"] = { capability, method, args: args ?? {} };
    if (opts?.options) payload.options = opts.options;
    return request<T, "capability:invoke">("capability:invoke", payload, capability, method, opts);
  };
  const handles = buildHandles(invoke, {
    navigate: (route, o) => request<void, "host:navigate">("host:navigate", { route }, "lime.ui", "navigate", o),
    toast: (message, level = "info") => send("host:toast", { message, level }),
    openExternal: (url) => send("host:openExternal", { url }),
    // The user answers a save dialog: a longer default deadline than a call's.
    download: (what, o) =>
      request<DownloadResult, "host:download">("host:download", what, "lime.ui", "download", { timeoutMs: DOWNLOAD_TIMEOUT_MS, ...o }),
  });
  hub = handles.hub;
  launches = handles.launches;

  const runtime: LimeRuntime = {
    appId,
    entryKey,
    ready() {
      if (!readyPromise) {
        readyPromise = new Promise<HostSnapshot>((resolve) => firstSnapshot.push(resolve));
        send("app:ready", {});
      }
      return readyPromise;
    },
    snapshot: () => latest,
    onSnapshot(cb) {
      snapshotListeners.add(cb);
      return () => snapshotListeners.delete(cb);
    },
    onVisibility(cb) {
      visibilityListeners.add(cb);
      return () => visibilityListeners.delete(cb);
    },
    invoke,
    services: handles.services,
    ui: handles.ui,
    storage: handles.storage,
    artifacts: handles.artifacts,
    evidence: handles.evidence,
    secrets: handles.secrets,
    tools: handles.tools,
    knowledge: handles.knowledge,
    events: handles.events,
    policy: handles.policy,
    files: handles.files,
    agent: handles.agent,
    workflow: handles.workflow,
    modelSettings: handles.modelSettings,
    capabilities: handles.capabilities,
    workspace: handles.workspace,
    close() {
      unsubscribe();
      handles.hub.clear();
      handles.launches.clear();
      for (const [id, call] of pending) {
        pending.delete(id);
        call.cleanup();
        call.reject(new LimeCapabilityError({ code: ErrorCodes.CANCELLED, message: "the runtime was closed", capability: call.capability, method: call.method, retryable: false }));
      }
      if (instance === runtime) instance = undefined;
    },
  };
  return runtime;
}
