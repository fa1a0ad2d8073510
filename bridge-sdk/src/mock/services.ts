// lime.services in memory (crates/host-core/src/hosting/capability/services/app_services.rs):
// the app's declared services as handler functions; the host's refusals.
import { ErrorCodes } from "../errors.js";
import { closed, invalid, refuse, type MockContext, type Service } from "./common.js";

/** A mock backend service: answers `method` with `params` (throw to fail the call). */
export type MockServiceHandler = (method: string, params: unknown) => unknown;

const RESERVED = /^(initialize|shutdown|exit|\$\/.*|lime\..*)$/;

export function createServices(ctx: MockContext) {
  const declared = new Map<string, MockServiceHandler>(Object.entries(ctx.options.services ?? {}));
  const started = new Set<string>();
  const service: Service = {
    call(a) {
      closed(a, ["service", "method", "params"], "services.invalid_argument");
      const name = a["service"];
      const method = a["method"];
      if (typeof name !== "string" || name.length === 0) throw invalid("args.service is required", "services.invalid_argument");
      if (typeof method !== "string" || method.length === 0 || method.length > 128) throw invalid("args.method is required", "services.invalid_argument");
      if (RESERVED.test(method)) throw invalid("initialize, shutdown, $/… and lime.* are the host's, not callable", "services.invalid_argument");
      const handler = declared.get(name);
      if (!handler) throw refuse(ErrorCodes.NOT_FOUND, `the app declares no service ${name}`, "service.not_declared");
      started.add(name);
      try {
        return handler(method, a["params"] ?? {});
      } catch (e) {
        throw refuse(ErrorCodes.INVALID_ARGUMENT, `service.error: ${String((e as Error)?.message ?? e).slice(0, 200)}`, "service.error");
      }
    },
    list(a) {
      closed(a, [], "services.invalid_argument");
      return {
        services: [...declared.keys()].map((key) => ({
          key,
          required: true,
          state: started.has(key) ? "running" : "stopped",
          restarts: 0,
          protocol: "stdio-jsonrpc",
        })),
      };
    },
  };
  const notAnObject = invalid("args must be an object", "services.invalid_argument");
  return { service, notAnObject };
}
