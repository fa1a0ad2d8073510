// Host Bridge v1 wire types (see docs/bridge-protocol.md).

/** The `protocol` field of every bridge message. */
export const BRIDGE_PROTOCOL = "lime.agentApp.bridge" as const;

/** The bridge protocol version this SDK speaks. */
export const BRIDGE_VERSION = 1 as const;

/** The envelope of every message between an app frame and the host (postMessage). */
export interface LimeAgentAppBridgeMessage<TPayload = unknown> {
  protocol: typeof BRIDGE_PROTOCOL;
  version: typeof BRIDGE_VERSION;
  type: string;
  requestId?: string;
  appId: string;
  entryKey?: string;
  payload?: TPayload;
}

/** Message types an app sends. */
export type AppMessageType =
  | "app:ready"
  | "host:getSnapshot"
  | "host:navigate"
  | "host:toast"
  | "host:openExternal"
  | "host:download"
  | "capability:invoke"
  | "capability:cancel";

/** Message types the host sends. */
export type HostMessageType =
  | "host:snapshot"
  | "theme:update"
  | "host:visibility"
  | "host:response"
  | "host:error"
  | "host:event";

export type ThemeMode = "system" | "light" | "dark";

export interface ThemeSnapshot {
  themeMode: ThemeMode | string;
  effectiveThemeMode: "light" | "dark" | string;
  colorSchemeId: string;
  /** Only `--lime-*` and `--app-*` CSS variables. */
  tokens: Record<string, string>;
}

export interface BlockedCapability {
  capability: string;
  reason: string;
  code: string;
}

/** `host:snapshot` payload. */
export interface HostSnapshot extends ThemeSnapshot {
  appId: string;
  entryKey: string;
  entryKind: string;
  route: string;
  origin: string;
  locale: string;
  timezone: string;
  workspaceId: string;
  tenantId: string;
  theme: ThemeSnapshot;
  capabilities: { available: string[]; blocked: BlockedCapability[] };
}

/** `capability:invoke` payload. */
export interface InvokePayload {
  capability: string;
  method: string;
  args?: unknown;
  options?: Record<string, unknown>;
}

/** `host:response` payload. */
export interface ResponsePayload<T = unknown> {
  value: T;
  traceId?: string;
  evidenceId?: string;
}

/** `host:error` payload. */
export interface ErrorPayload {
  code: string;
  message: string;
  causeCode?: string;
  capability: string;
  method: string;
  retryable?: boolean;
}

export type ToastLevel = "info" | "success" | "warning" | "error";

export interface StorageListPage<T = unknown> {
  items: { key: string; value: T }[];
  nextCursor: string | null;
}
