// The mock's one `invoke`: records the call, waits as `latencyMs` / deadlines / abort signals
// say, refuses what the host would not offer or the user denied, hands the arguments over as JSON
// (as they cross the bridge) and turns a service's `Refusal` into the host's error.
import { ErrorCodes, LimeCapabilityError } from "../errors.js";
import type { CallOptions, Invoke } from "../handles.js";
import type { ErrorCode } from "../protocol.js";
import { invalid, isRecord, Refusal, type MockContext, type Service } from "./common.js";
import type { MockCall } from "./types.js";

/** The host's error for one call. */
export const fail = (code: ErrorCode, message: string, capability: string, method: string, causeCode?: string, retryable = false, details?: unknown) =>
  new LimeCapabilityError(details === undefined ? { code, message, capability, method, retryable, causeCode } : { code, message, capability, method, retryable, causeCode, details });

/** Resolves after the mock's latency; rejects on the call's deadline or abort. */
export type Wait = (capability: string, method: string, opts: CallOptions) => Promise<void>;

export interface InvokeParts {
  ctx: MockContext;
  services: Record<string, Service>;
  /** What the host answers for `args` that are not an object, per capability. */
  notAnObject: Record<string, Refusal>;
  calls: MockCall[];
  /** Called with a fresh trace id before each service call (stamped in provenance). */
  newTrace: () => void;
}

export function createWait(ctx: MockContext): Wait {
  const latency = ctx.options.latencyMs ?? 0;
  const defaultTimeout = ctx.options.timeoutMs ?? 30_000;
  return function wait(capability, method, opts) {
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
  };
}

export function createInvoke({ ctx, services, notAnObject, calls, newTrace }: InvokeParts, wait: Wait): Invoke {
  const { offered, denied } = ctx;
  return async function invoke<T>(capability: string, method: string, args: unknown = {}, opts: CallOptions = {}): Promise<T> {
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
      newTrace();
      // Arguments cross the bridge as JSON: the mock sees them as the host would.
      return fn(JSON.parse(JSON.stringify(a)) as Record<string, unknown>) as T;
    } catch (e) {
      if (e instanceof Refusal) throw fail(e.code, e.message, capability, method, e.causeCode, e.retryable, e.details);
      throw e;
    }
  };
}
