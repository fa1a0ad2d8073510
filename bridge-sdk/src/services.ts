// `lime.services`: the app's own backend services (`services[]`), run by the host in its
// sandbox. A frame calls their methods through the host; no other app can reach them.
import type { CallOptions, Invoke } from "./handles.js";

/** One declared service as the host sees it. */
export interface ServiceStatus {
  key: string;
  required: boolean;
  /** `blocked`: a crash loop, or it cannot run here (`code`, `reason` say why). */
  state: "running" | "stopped" | "degraded" | "blocked";
  code?: string;
  reason?: string;
  pid?: number;
  restarts: number;
  lastExit?: string;
  lastStop?: string;
  protocol: string;
  /** The durable crash record (host.db, any process): the last crash (RFC 3339). */
  lastCrashAt?: string;
  /** Crashes inside the crash-loop window (5 within 300 s is a crash loop). */
  crashesInWindow?: number;
  /** The last crash's error. */
  lastError?: string;
}

export interface LimeServices {
  /**
   * Calls `method` of the app's declared service `service` (started on demand) and answers its
   * JSON-RPC result. Undeclared service: `APP_E904` (`service.not_declared`); a timeout:
   * `HOST_E_TIMEOUT` (`service.timeout`); the service's own error: `APP_E900` (`service.error`).
   */
  call<T = unknown>(args: { service: string; method: string; params?: unknown }, opts?: CallOptions): Promise<T>;
  /** The app's declared services and their state. */
  list(opts?: CallOptions): Promise<{ services: ServiceStatus[] }>;
}

export function buildServices(invoke: Invoke): LimeServices {
  return {
    call: <T>(args: { service: string; method: string; params?: unknown }, o?: CallOptions) =>
      invoke<T>("lime.services", "call", args, o),
    list: (o?: CallOptions) => invoke<{ services: ServiceStatus[] }>("lime.services", "list", {}, o),
  };
}
