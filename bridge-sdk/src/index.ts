// Host Bridge SDK: what an Agent App imports to talk to AppHost from its sandboxed frame.
// See docs/bridge-protocol.md for the wire contract.

export * from "./protocol.js";
export { ErrorCodes, LimeCapabilityError } from "./errors.js";
export { applyLimeHostTheme, type ThemeTarget } from "./theme.js";
export {
  createLimeRuntime,
  getLimeRuntime,
  windowEndpoint,
  type BridgeEndpoint,
  type CallOptions,
  type LimeRuntime,
  type LimeStorage,
  type LimeUi,
  type RuntimeOptions,
} from "./runtime.js";
export { createMockLimeRuntime, type MockCall, type MockLimeRuntime, type MockOptions } from "./mock.js";
