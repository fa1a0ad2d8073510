// lime.policy in memory (crates/host-core/src/capability/services/policy.rs): the permission
// prompt for a declared optional permission, answered as `options.permissions` says.
import { ErrorCodes } from "../errors.js";
import type { PermissionResult } from "../handles.js";
import { bytes, invalid, refuse, type MockContext, type Service } from "./common.js";

export function createPolicy(ctx: MockContext) {
  const permissions = ctx.options.permissions ?? {};
  const answered = new Map<string, "once" | "denied">();
  /** Permissions the mock user was asked for, in order. */
  const permissionPrompts: string[] = [];
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

  const service: Service = {
    requestPermission(a) {
      const perm = a["permission"];
      if (typeof perm !== "string" || perm.length === 0 || bytes(perm) > 256) {
        throw invalid("args.permission must be the key of a declared permission", "policy.invalid_argument");
      }
      return permissionAnswer(perm);
    },
  };
  const notAnObject = invalid("args.permission must be the key of a declared permission", "policy.invalid_argument");
  return { permissionPrompts, service, notAnObject };
}
