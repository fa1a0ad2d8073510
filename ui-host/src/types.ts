// Wire types of the host commands (mirrors host-core's serde output, camelCase).

export type Trust = "trusted" | "unsigned" | "unknown-key";

export type Readiness = "ready" | "ready-degraded" | "needs-setup" | "blocked" | "disabled";

/** One installed app, as `list_apps` returns it (`host_core::store::AppSummary`). */
export interface AppSummary {
  name: string;
  displayName: string | null;
  description: string;
  activeVersion: string;
  previousVersion?: string | null;
  versions: string[];
  enabled: boolean;
  trust: Trust;
  sideloaded?: boolean;
  readiness: Readiness;
  packageHash?: string;
  installedAt?: string;
  updatedAt?: string;
  /** The active version's entries, in manifest order (absent from older hosts). */
  entries?: EntrySummary[];
  /** An `apphost dev` install: marked DEV everywhere, never trusted as signed. */
  dev?: boolean;
  /** The manifest's `publisher.name` (a claim: `trust` says whether a key vouches for it). */
  publisher?: string | null;
  /** A bounded `data:image/...;base64,` URL read from the verified store; absent: draw the initial. */
  icon?: string | null;
  /** Why the app is not simply ready, in words. */
  readinessReasons?: string[];
  /** What fixes it: `grant-permission`, `configure-secret`, `bind-knowledge`, `model`, `external`. */
  setupActions?: SetupAction[];
}

/** One entry of an app (`host_core::store::EntrySummary`). */
export interface EntrySummary {
  key: string;
  kind: string;
  title: string | null;
  /** A UI surface the window can mount. */
  mountable: boolean;
}

/** A mounted entry, as `mount_entry` returns it (`host_core::bridge::mounts::Mount`). */
export interface Mount {
  mountId: string;
  appId: string;
  entryKey: string;
  entryKind: string;
  version: string;
  packageHash: string;
  manifestHash: string;
  /** The app's own origin, e.g. `agentapp://hello-app`: the only target origin for posts. */
  origin: string;
  url: string;
  /** The iframe `sandbox` attribute, decided in Rust. */
  sandbox: string;
}

/** The question of a permission prompt (`capability::dispatch::PermissionQuestion`). */
export interface PermissionQuestion {
  appId: string;
  entryKey: string;
  capability: string;
  method: string;
  /** The permission asked for; null for a policy confirmation. */
  permission: string | null;
  /** The manifest's reason for the permission. */
  reason: string | null;
  askReason: string;
}

export type ToastLevel = "info" | "success" | "warning" | "error";

/** What Rust asks the host UI to do (`host_core::bridge::host::Outgoing`). */
export type Outgoing =
  | { kind: "post"; mountId: string; message: unknown }
  | { kind: "prompt"; promptId: string; mountId: string; question: PermissionQuestion }
  | { kind: "toast"; mountId: string; appId: string; message: string; level: ToastLevel }
  | {
      kind: "confirmExternal";
      mountId: string;
      appId: string;
      url: string;
      declaredDomains: string[];
    }
  | { kind: "navigate"; mountId: string; route: string };

/** The user's answer to a prompt (`host_core::bridge::host::Answer`). */
export type Answer = "allow-once" | "allow-always" | "deny" | "dismissed";

/** The entry the window was started to open (`apphost open <app> [--entry <key>]`). */
export interface LaunchTarget {
  appId: string;
  entryKey: string;
}

/** A mount Rust ended because the store changed under the window (`desktop::watch::EndedMount`). */
export interface EndedMount {
  mountId: string;
  appId: string;
  entryKey: string;
  reason: "uninstalled" | "disabled" | "version-changed";
}

/** One `sync_mounts` poll: whether the store changed, and the mounts that ended. */
export interface SyncReport {
  changed: boolean;
  ended: EndedMount[];
}

/** `{code, message, details}`: the one error shape every AppHost surface reports. */
export interface HostError {
  code: string;
  message: string;
  details?: unknown;
}

// ---------------------------------------------------------------------------------------------
// App center wire types (docs/host-api.md). Optional fields are ones the contract leaves open or
// that older hosts do not send: the UI shows what it gets and never invents the rest.

/** A setup action of a readiness report (`readiness::SetupAction`). */
export interface SetupAction {
  key: string;
  title: string;
  /** `secret`, `knowledge`, `tool`, `permission`, `model`, … */
  kind: string;
  target?: string | null;
  description?: string | null;
}

/**
 * Readiness with its reasons in words and what the user can do about it. Reviews send
 * `{status, reasons, warnings, setupActions}`; `app_detail` sends the full readiness report
 * (`{status, blockers, warnings, setupActions, checks, …}`): `readinessReasons` reads both.
 */
export interface ReadinessInfo {
  status: Readiness | string;
  reasons?: string[];
  blockers?: string[];
  warnings?: string[];
  setupActions?: SetupAction[];
}

export type ReviewTrustState = "trusted" | "untrusted-signature" | "unsigned" | "dev";

/** `added`, `changed`, `unchanged`, `removed` (docs/host-api.md); older drafts: `widened`, `narrowed`. */
export type PermissionChange = "added" | "changed" | "unchanged" | "removed" | "widened" | "narrowed";

/** A permission as the review shows it (`store::install::PermissionChange`). */
export interface ReviewPermission {
  /** The permission's key: what `grant`/`revoke` take (as `scope`). */
  key?: string;
  scope: unknown;
  access?: unknown;
  reason?: unknown;
  required: boolean;
  domains?: unknown;
  paths?: unknown;
  change?: PermissionChange | string;
  /** For `changed`: every field that differs. */
  fields?: Array<{ field: string; old: unknown; new: unknown }>;
  /** What happens to the grant: `kept`, `asked`, `at-first-use`, `dropped`, `none`. */
  grant?: string;
}

export interface ReviewEntry {
  key: string;
  kind: string;
  title?: string | null;
  readiness?: string;
}

export interface ReviewSigner {
  keyId?: string | null;
  fingerprint?: string | null;
  name?: string | null;
}

/** What `review_install` answers: everything the user sees before anything is stored. */
export interface InstallReview {
  reviewId: string;
  mode: "install" | "update";
  app: {
    id: string;
    name?: string | null;
    version: string;
    description?: string | null;
    publisher?: string | null;
    icon?: string | null;
  };
  trust: { state: ReviewTrustState | string; sideload?: boolean; signer?: ReviewSigner | null };
  publisherChange?: { status?: string; from?: ReviewSigner | null; to?: ReviewSigner | null; needsAcceptance?: boolean } | null;
  packageHash: string;
  bytes: number;
  files?: number;
  entries: ReviewEntry[];
  permissions: ReviewPermission[];
  network: { domains?: string[] };
  storage: {
    declared?: boolean;
    quota?: number | string | null;
    schema?: unknown;
    tables?: string[];
    migrations?: Array<{ id: string; path?: string; size?: number; sha256?: string }>;
  };
  services: unknown;
  readiness: ReadinessInfo;
  findings?: unknown;
  blockers: HostError[];
  fromVersion?: string | null;
  existingData: boolean;
  needsConsent: string[];
  prunes?: string[];
}

/** One `install:progress` event payload. */
export interface InstallProgress {
  reviewId: string;
  bytesVerified: number;
  bytesTotal: number;
}

/** One host→UI push read through `next_events`. */
export interface HostEvent {
  seq: number;
  kind: string;
  payload: unknown;
}

export interface EventsPage {
  events: HostEvent[];
  next: number;
}

export interface DetailPermission {
  /** The permission's key: what `grant`/`revoke` take (as `scope`). */
  key?: string;
  scope: unknown;
  access?: unknown;
  reason?: unknown;
  required: boolean;
  domains?: unknown;
  granted: boolean;
}

/** What `app_detail` answers. */
export interface AppDetail {
  summary: AppSummary;
  readme?: string | null;
  entries: Array<EntrySummary & { readiness?: string }>;
  permissions: DetailPermission[];
  data: { storageBytes: number; files?: number; artifacts: number; evidence: number };
  versions: Array<{ version: string; installedAt: string; active: boolean; packageHash?: string; trust?: string }>;
  readiness: ReadinessInfo;
  /** The manifest's `storage.uninstallPolicy`, as written. */
  uninstallPolicy?: string | null;
  /** The uninstall state the danger zone preselects; null (`ask`): the user picks. */
  uninstallDefault?: UninstallMode | null;
}

/** One grant (`grant`, `revoke`, `list_grants`). */
export interface GrantRow extends DetailPermission {
  appId: string;
}

/** The standard's four uninstall states (§9.2); `disable` runs as `set_enabled {enabled: false}`. */
export type UninstallMode = "disable" | "keep-data" | "delete-data" | "export";

/** The plan of "Disable only" (`uninstall_plan {mode: "disable"}`). */
export interface DisablePlan {
  app: string;
  mode: "disable";
  entriesHidden: string[];
  versionsKept: string[];
  dataDir: string;
  dataFileCount: number;
  dataBytes: number;
  retained: string[];
  alreadyDisabled: boolean;
}

/** One permission change a dev app holds (`store::PermissionChange`). */
export interface DevPendingChange {
  key: string;
  scope?: unknown;
  access?: unknown;
  reason?: unknown;
  required?: boolean;
  domains?: unknown;
  change: string;
  fields?: Array<{ field: string; old: unknown; new: unknown }>;
  [key: string]: unknown;
}

/** The last result of an `apphost dev` app (`dev_status`). */
export interface DevStatus {
  appId: string;
  folder: string;
  status: string;
  version: string | null;
  at: string;
  findings: Array<{ severity: string; code: string; path: string; message: string }>;
  pending?: DevPendingChange[];
  pendingDigest?: string;
  updates: number;
}

/** What an uninstall mode would remove and keep (`uninstall_plan`, `store::CleanupPlan`). */
export interface CleanupPlan {
  app?: string;
  mode?: string;
  versions?: string[];
  rows?: Array<{ table: string; rows: number; what: string }>;
  blobBytesRemoved?: number;
  blobsShared?: number;
  dataDir?: string;
  dataFileCount?: number;
  dataBytes?: number;
  dataFilesRemoved?: unknown[];
  dataFilesKept?: unknown[];
  dataListingTruncated?: boolean;
  retained?: string[];
  [key: string]: unknown;
}

export interface UninstallResult {
  removed?: unknown;
  kept?: unknown;
  exportedTo?: string | null;
  [key: string]: unknown;
}

/** One audit record (`store::AuditRow`), newest first. */
export interface AuditRow {
  id: number;
  at: string;
  action: string;
  app?: string | null;
  version?: string | null;
  details?: unknown;
}

export interface TrustedKey {
  keyId: string;
  publicKey?: string;
  name?: string | null;
  fingerprint: string;
}

export type ThemeMode = "system" | "light" | "dark";

export interface HostSettings {
  dataDir: string;
  limits: Record<string, unknown>;
  theme: ThemeMode;
  version: string;
}
