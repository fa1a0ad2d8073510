// lime.secrets in memory (crates/host-core/src/capability/services/secrets.rs): declared slots,
// bound or not; an app only ever gets an opaque ref, new on every bind.
import { ErrorCodes } from "../errors.js";
import { bytes, invalid, MAX_SLOT_BYTES, randomHex, refuse, type MockContext, type Service } from "./common.js";

export function createSecrets(ctx: MockContext) {
  const secrets = new Map(Object.entries(ctx.options.secrets ?? {}));
  const secretRefs = new Map<string, string>();
  const service: Service = {
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
  };
  const notAnObject = invalid("args.key must be a slot key (a non-empty string)", "secrets.invalid_argument");
  /** Binds (new ref, the old one stops working) or unbinds a declared slot, as the user would. */
  const setBound = (key: string, bound: boolean) => {
    secrets.set(key, bound);
    secretRefs.delete(key);
  };
  return { service, notAnObject, setBound };
}
