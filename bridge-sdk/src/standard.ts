// The Agent App standard's SDK entry points (`@limecloud/agent-app-runtime`), over this SDK's
// runtime: `createLimeHostBridgeCapabilityInvoker` and `syncLimeHostTheme`. (`getLimeRuntime`,
// `applyLimeHostTheme` and `createMockLimeRuntime` are this SDK's own and keep their names.)
import type { CallOptions } from "./handles.js";
import type { HostSnapshot } from "./protocol.js";
import { createLimeRuntime, type LimeRuntime, type RuntimeOptions } from "./runtime.js";
import { applyLimeHostTheme, type ThemeTarget } from "./theme.js";

/** The standard's call options (`method(input, options)`): passed to the host as the call's `options`. */
export type LimeInvokeOptions = Record<string, unknown> & {
  /** SDK-side only (never sent): cancels the call. */
  signal?: AbortSignal;
  /** SDK-side only (never sent): the call's deadline in milliseconds. */
  timeoutMs?: number;
};

/** What `createLimeHostBridgeCapabilityInvoker` returns. */
export interface LimeHostBridgeCapabilityInvoker {
  /** `capability:invoke` of `capability.method` with `input` as the args. */
  invoke<T = unknown>(capability: string, method: string, input?: unknown, options?: LimeInvokeOptions): Promise<T>;
  /** Sends `app:ready` (once); resolves with the first `host:snapshot`. */
  sendReady(): Promise<HostSnapshot>;
  /** Called with every snapshot (and theme update); returns an unsubscribe function. */
  onHostSnapshot(cb: (s: HostSnapshot) => void): () => void;
  /** The runtime underneath, with every typed `lime.*` handle. */
  readonly runtime: LimeRuntime;
}

/** The standard's bridge invoker for `{appId, entryKey}` (defaults: the frame's `?app=&entry=`). */
export function createLimeHostBridgeCapabilityInvoker(options: RuntimeOptions = {}): LimeHostBridgeCapabilityInvoker {
  const runtime = createLimeRuntime(options);
  return {
    runtime,
    invoke<T>(capability: string, method: string, input?: unknown, opts?: LimeInvokeOptions) {
      const { signal, timeoutMs, ...wire } = opts ?? {};
      const call: CallOptions = {};
      if (signal) call.signal = signal;
      if (typeof timeoutMs === "number") call.timeoutMs = timeoutMs;
      if (Object.keys(wire).length > 0) call.options = wire;
      return runtime.invoke<T>(capability, method, input ?? {}, call);
    },
    sendReady: () => runtime.ready(),
    onHostSnapshot: (cb) => runtime.onSnapshot(cb),
  };
}

/** What `syncLimeHostTheme` follows: a runtime (or anything with snapshots). */
export interface ThemeSource {
  snapshot(): HostSnapshot | undefined;
  onSnapshot(cb: (s: HostSnapshot) => void): () => void;
}

/**
 * Keeps the app's root element on the host's theme: applies the current snapshot's theme (if one
 * arrived) and every later snapshot or `theme:update` (`applyLimeHostTheme`). Returns a function
 * that stops following.
 */
export function syncLimeHostTheme(source: ThemeSource | LimeHostBridgeCapabilityInvoker, target?: ThemeTarget): () => void {
  // The standard's own example passes the invoker (`syncLimeHostTheme(invoker)`): follow its runtime.
  const from: ThemeSource = "runtime" in source && source.runtime ? source.runtime : (source as ThemeSource);
  const apply = (s: HostSnapshot) => {
    if (s.theme) applyLimeHostTheme(s.theme, target);
  };
  const now = from.snapshot();
  if (now) apply(now);
  return from.onSnapshot(apply);
}
