// GENERATED from crates/host-core/src/bridge/wire.rs by bridge/schema.rs. DO NOT EDIT.
// Regenerate: APPHOST_BLESS=1 cargo test -p host-core --test bridge_schemas
// Schemas: schemas/bridge/app-to-host.schema.json, schemas/bridge/host-to-app.schema.json

/** The `protocol` field of every bridge message. */
export const BRIDGE_PROTOCOL = "lime.agentApp.bridge" as const;

/** The bridge protocol version. */
export const BRIDGE_VERSION = 1 as const;

/** Largest message the host acts on, in bytes of JSON text. */
export const MAX_MESSAGE_BYTES = 1048576;

/** A capability the entry declares but cannot use now, and why. */
export interface BlockedCapability {
  capability: string;
  /** A stable reason (`capability.not_available`, …). */
  reason: string;
  code: ErrorCode;
}

/** `capability:cancel` (AppHost extension): ends the frame's own pending call. */
export interface CancelPayload {
  requestId: RequestId;
}

export interface CapabilitySummary {
  available: Array<string>;
  blocked: Array<BlockedCapability>;
}

/**
 * `host:download`: save a file into the user's download folder after the user confirms it:
 * exactly one of `artifactId` (one of the app's own artifacts; needs its artifact permission),
 * `text` (saved as UTF-8) or `base64` (standard alphabet). `fileName` is a suggestion the host
 * sanitizes; `mimeType` is shown to the user. Answered `host:response {value: {saved,
 * fileName?}}` or `host:error`.
 */
export interface DownloadPayload {
  artifactId?: string;
  text?: string | null;
  base64?: string | null;
  fileName?: string;
  mimeType?: string;
}

/**
 * The value of a `host:download`'s `host:response`: whether the user saved the file, and the
 * file name it got in the download folder (sanitized; ` (1)`… when the name was taken).
 */
export interface DownloadResult {
  saved: boolean;
  fileName?: string | null;
}

/** `app:ready`, `host:getSnapshot`: no fields. */
export type EmptyPayload = Record<string, never>;

/**
 * Every `code` a `host:error` (or the SDK itself) can carry: the standard's `APP_E…`
 * codes AppHost uses and its own bridge-level `HOST_E_…` codes (docs/bridge-protocol.md §6).
 */
export type ErrorCode =
  /** CAPABILITY_NOT_AVAILABLE: not implemented here, or the entry is not ready. */
  | "APP_E001"
  /** PERMISSION_DENIED: not declared, not granted, denied by the user or by policy. */
  | "APP_E002"
  /**
   * KNOWLEDGE_NOT_BOUND: the knowledge template is declared but the user has bound no
   * folder to it (`knowledge.not_bound`).
   */
  | "APP_E003"
  /** SECRET_NOT_BOUND: the secret slot is declared but the user has bound no value to it. */
  | "APP_E011"
  /**
   * MODEL_NOT_CONFIGURED (AppHost extension in the standard's configuration range): no
   * model is set up, so `lime.agent` cannot start or retry a task (`agent.needs_setup`).
   */
  | "APP_E012"
  /** STORAGE_QUOTA_EXCEEDED. */
  | "APP_E201"
  /**
   * STORAGE_MIGRATION_REQUIRED: the version's reviewed migrations could not be applied; the
   * app is blocked until an update or rollback (`causeCode` `storage.migration_*`).
   */
  | "APP_E202"
  /** STORAGE_SCHEMA_MISMATCH: a declared table or a column is not in the app's database. */
  | "APP_E203"
  /**
   * WORKFLOW_INVALID_STATE: the run cannot take this now (it has ended, or it waits for
   * something else: `workflow.run_finished`, `workflow.not_waiting_for_answer`).
   */
  | "APP_E301"
  /** Invalid arguments (`causeCode` says which). */
  | "APP_E900"
  /** NOT_FOUND (AppHost extension): no artifact or evidence record with this id in the app. */
  | "APP_E904"
  /** The host failed (storage I/O, audit log unavailable); retryable. */
  | "APP_E999"
  /** Too many calls in flight on this frame, or too many prompts waiting; retryable. */
  | "HOST_E_RATE_LIMITED"
  /** A call with this `requestId` is already in flight. */
  | "HOST_E_DUPLICATE_REQUEST"
  /** The call's deadline passed (SDK side); retryable. */
  | "HOST_E_TIMEOUT"
  /** The app cancelled the call. */
  | "HOST_E_CANCELLED";

/**
 * `host:error`: how a call failed. Built by `capability::dispatch::CallError`, whose schema
 * this is.
 */
export interface ErrorPayload {
  code: ErrorCode;
  message: string;
  /** A finer, stable reason (`permission.denied`, `storage.invalid_key`, …). */
  causeCode?: string;
  capability: string;
  method: string;
  retryable: boolean;
  /**
   * Structured facts about the refusal, when the code has them: `{"binding": "knowledge"}`
   * for `agent.binding_unsupported`.
   */
  details?: unknown;
}

/**
 * `host:snapshot` (the answer to `app:ready` and `host:getSnapshot`, and `lime.ui.getSnapshot`).
 * Never a token, a secret, a file path, a Tauri command name or an internal type name.
 */
export interface HostSnapshot {
  appId: string;
  entryKey: string;
  /** `page`, `panel`, `settings`, … */
  entryKind: string;
  route: string;
  origin: string;
  locale: string;
  timezone: string;
  workspaceId: string;
  tenantId: string;
  /** `system`, `light` or `dark`. */
  themeMode: string;
  /** `light` or `dark`. */
  effectiveThemeMode: string;
  colorSchemeId: string;
  /** CSS custom properties (`--lime-*`, `--app-*`) and their values. */
  tokens: Record<string, string>;
  theme: ThemeSnapshot;
  capabilities: CapabilitySummary;
  /**
   * How the app came to be installed: `installed` (a verified or trusted package), `dev`
   * (`apphost dev`) or `sideload` (an unsigned or untrusted package the user accepted).
   */
  installMode: string;
  /** The entry's readiness and the app's setup actions (titles and kinds only). */
  readiness: SnapshotReadiness;
  /** The model's setup status (never its endpoint, name of a key or key). */
  model: SnapshotModel;
}

/** `capability:invoke`: one `lime.*` call. */
export interface InvokePayload {
  /** `lime.<name>(.<name>)*`, ASCII letters and digits. */
  capability: string;
  /** A letter, then letters, digits or `_`. */
  method: string;
  /** The method's arguments (absent or `null`: `{}`). */
  args?: unknown;
  /** Per-call options (`idempotencyKey`, …); absent or `null`: none. */
  options?: Record<string, unknown> | null;
}

/** `lime.ui.getLocale`. */
export interface LocaleInfo {
  locale: string;
  timezone: string;
}

/** `host:navigate`: one of the app's own entry routes or a path below one. */
export interface NavigatePayload {
  /** Starts with `/` (not `//`), no control characters, at most 2048 bytes. */
  route: string;
}

/**
 * `host:openExternal`: an `http(s)` URL the user is asked to confirm; other schemes get
 * `host:error` (`APP_E002`, `external.scheme`).
 */
export interface OpenExternalPayload {
  url: string;
}

/** A request id: 1..=128 characters of `[A-Za-z0-9._:-]`, unique per frame while in flight. */
export type RequestId = string;

/** `host:response`: the call's result. */
export interface ResponsePayload {
  value: unknown;
  traceId?: string;
  evidenceId?: string;
}

/** `host:snapshot`'s `model`. */
export interface SnapshotModel {
  /** `ready` or `needs-setup`. */
  status: string;
}

/** `host:snapshot`'s `readiness`. */
export interface SnapshotReadiness {
  /** This entry's status: `ready`, `ready-degraded`, `needs-setup`, `blocked`, `disabled`. */
  status: string;
  /** The whole app's status. */
  appStatus: string;
  /** Keys of the entry's own checks that keep it from `ready`. */
  missing: Array<string>;
  setupActions: Array<SnapshotSetupAction>;
}

/** One thing the user can do in the host to make the app ready. */
export interface SnapshotSetupAction {
  key: string;
  title: string;
  /** `model`, `secret`, `knowledge`, `grant`, … */
  kind: string;
}

/** Theme facts; also the payload of `theme:update`. Only `--lime-*` and `--app-*` variables. */
export interface ThemeSnapshot {
  /** `system`, `light` or `dark`. */
  themeMode: string;
  /** `light` or `dark`. */
  effectiveThemeMode: string;
  colorSchemeId: string;
  /** CSS custom properties (`--lime-*`, `--app-*`) and their values. */
  tokens: Record<string, string>;
}

export type ToastLevel = "info" | "success" | "warning" | "error";

/** `host:toast`: a short, non-technical notification (no answer). */
export interface ToastPayload {
  /** 1..=500 characters, not only white space. */
  message: string;
  /** Default `info`. */
  level?: ToastLevel;
}

/**
 * `ui:launch` (AppHost extension, `lime.ui`): the host opened this frame for something the user
 * chose outside it: a deep link or palette route (`route`), a `command` entry of the same app
 * (`command`: the entry's key and its `command` text), or an artifact of a type this entry
 * declares in `artifactTypes[]` (`artifact`: the ref only; reading it goes through
 * `lime.artifacts.read` and the choke point). Queued until `app:ready`, then posted once.
 */
export type UiLaunchPayload = {
  kind: "route";
  route: string;
} | {
  kind: "command";
  entryKey: string;
  command?: string | null;
} | {
  kind: "artifact";
  artifactId: string;
  artifactType: string;
  /** The app that owns the artifact. */
  ownerAppId: string;
};

/** `host:visibility`. */
export interface VisibilityPayload {
  visible: boolean;
}

/** Every error code, in documentation order. */
export const ERROR_CODES = ["APP_E001", "APP_E002", "APP_E003", "APP_E011", "APP_E012", "APP_E201", "APP_E202", "APP_E203", "APP_E301", "APP_E900", "APP_E904", "APP_E999", "HOST_E_RATE_LIMITED", "HOST_E_DUPLICATE_REQUEST", "HOST_E_TIMEOUT", "HOST_E_CANCELLED"] as const satisfies readonly ErrorCode[];

/** Message types an app frame sends. */
export const APP_MESSAGE_TYPES = ["app:ready", "host:getSnapshot", "host:navigate", "host:toast", "host:openExternal", "host:download", "capability:invoke", "capability:cancel"] as const;
export type AppMessageType = (typeof APP_MESSAGE_TYPES)[number];

/** The payload of each app → host message type. */
export interface AppMessagePayloads {
  /** Initialisation finished; answered by `host:snapshot`. */
  "app:ready": EmptyPayload;
  /** Pull the current snapshot; answered by `host:snapshot`. */
  "host:getSnapshot": EmptyPayload;
  /** Navigate to one of the app's own routes; `host:response` or `host:error`. */
  "host:navigate": NavigatePayload;
  /** A non-technical notification; no answer. */
  "host:toast": ToastPayload;
  /** Open an http(s) URL after the user confirms. */
  "host:openExternal": OpenExternalPayload;
  /** Save an artifact of the app's own, or bytes, into the user's download folder after the user confirms; `host:response` `{saved, fileName?}` or `host:error`. */
  "host:download": DownloadPayload;
  /** Call a `lime.*` method: zero or more `host:event`, then one `host:response` or `host:error`. */
  "capability:invoke": InvokePayload;
  /** Cancel the frame's own pending call (AppHost extension). */
  "capability:cancel": CancelPayload;
}

/** App message types that must carry a `requestId`. */
export type AppRequestIdRequired = "host:download" | "capability:invoke";

/** Message types the host sends. */
export const HOST_MESSAGE_TYPES = ["host:snapshot", "theme:update", "host:visibility", "ui:launch", "host:response", "host:error", "host:event"] as const;
export type HostMessageType = (typeof HOST_MESSAGE_TYPES)[number];

/** The payload of each host → app message type. */
export interface HostMessagePayloads {
  /** The frame's context; echoes the `requestId` of `app:ready` / `host:getSnapshot`. */
  "host:snapshot": HostSnapshot;
  /** The theme changed. */
  "theme:update": ThemeSnapshot;
  /** The frame was shown or hidden. */
  "host:visibility": VisibilityPayload;
  /** The host opened this frame for a route, a command entry or an artifact (AppHost extension; queued until `app:ready`). */
  "ui:launch": UiLaunchPayload;
  /** A call succeeded (same `requestId`). */
  "host:response": ResponsePayload;
  /** A call failed (same `requestId`). */
  "host:error": ErrorPayload;
  /** A progress event of a pending call (same `requestId`), or an app event delivered to a `lime.events` subscription. */
  "host:event": unknown;
}

/** Host message types that must carry a `requestId`. */
export type HostRequestIdRequired = never;

/** The envelope of every bridge message (postMessage). */
export interface BridgeEnvelope<TType extends string = string, TPayload = unknown> {
  protocol: typeof BRIDGE_PROTOCOL;
  version: typeof BRIDGE_VERSION;
  type: TType;
  requestId?: string;
  appId: string;
  entryKey: string;
  payload?: TPayload;
}

/** A message an app frame sends. */
export type AppMessage = { [K in AppMessageType]: BridgeEnvelope<K, AppMessagePayloads[K]> }[AppMessageType];

/** A message the host sends. */
export type HostMessage = { [K in HostMessageType]: BridgeEnvelope<K, HostMessagePayloads[K]> }[HostMessageType];
