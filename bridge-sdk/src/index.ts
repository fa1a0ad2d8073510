// Host Bridge SDK: what an Agent App imports to talk to AppHost.
// Today it only fixes the wire envelope; the runtime API (`getLimeRuntime()`) and the mock host
// arrive with the Host Bridge issue.

/** The `protocol` field of every bridge message. */
export const BRIDGE_PROTOCOL = "lime.agentApp.bridge" as const;

/** The bridge protocol version this SDK speaks. */
export const BRIDGE_VERSION = 1 as const;

/** The envelope of every message between an app frame and the host (postMessage). */
export interface LimeAgentAppBridgeMessage<TPayload = unknown> {
  protocol: typeof BRIDGE_PROTOCOL;
  version: typeof BRIDGE_VERSION;
  /** What the message is, e.g. a request name or an event name. */
  type: string;
  /** Pairs a response with its request. */
  requestId?: string;
  /** The app the message belongs to. */
  appId: string;
  /** The manifest entry (page) the frame shows. */
  entryKey?: string;
  payload?: TPayload;
}
