// Host Bridge v1 wire types (see docs/bridge-protocol.md). They are GENERATED from the Rust
// types (crates/host-core/src/bridge/wire.rs) into ./generated/bridge.ts; nothing here
// redefines them.

export * from "./generated/bridge.js";

import type { BridgeEnvelope } from "./generated/bridge.js";

/** @deprecated Use `BridgeEnvelope`. */
export type LimeAgentAppBridgeMessage<TPayload = unknown> = BridgeEnvelope<string, TPayload>;
