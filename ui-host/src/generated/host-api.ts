// GENERATED from crates/host-core/src/api/ by api/schema.rs. DO NOT EDIT.
// Regenerate: APPHOST_BLESS=1 cargo test -p host-core --test host_api_schemas
// Schema: schemas/host-api/host-api.schema.json

export interface AddTrustedKeyArgs {
  publicKey: string;
  label?: string | null;
}

/**
 * A task as runtime-core's `AgentTasks` answers it (docs/host-api.md, "Agent tasks"; the UI's
 * reading of it is `ui-host/src/tasks.ts`).
 */
export type AgentTaskView = Record<string, unknown>;

/** The user's answer to a permission prompt. */
export type Answer =

  | "allow-once" | "allow-always" | "deny"
  /** Closed without answering: not an allow. */
  | "dismissed";

export interface AnswerDownloadArgs {
  downloadId: string;
  save: boolean;
}

export interface AnswerFilePickArgs {
  promptId: string;
  /** The refs granted from the user's choice; absent or `null`: the user cancelled. */
  refs?: Array<string> | null;
}

export interface AnswerPromptArgs {
  promptId: string;
  answer: Answer;
}

export interface ApiKeyStatus {
  set: boolean;
  /** `keyring` or `encrypted-file`. */
  store: string | null;
  /** Where it is kept, for people. */
  location: string | null;
  /**
   * `false` when the ref is recorded but the store does not have the key (or cannot be
   * asked: then `problem` says why).
   */
  present: boolean | null;
  problem: string | null;
}

/** `AppDetail` in `docs/host-api.md`. */
export interface AppDetail {
  summary: AppSummary;
  /** The APP.md body (markdown), when it has one. */
  readme?: string | null;
  entries: Array<DetailEntry>;
  permissions: Array<PermissionRow>;
  data: DataUsage;
  versions: Array<VersionInfo>;
  readiness: Report;
  /** The manifest's `storage.uninstallPolicy`, as written. */
  uninstallPolicy: string | null;
  /**
   * The uninstall state the danger zone preselects (`lifecycle::default_mode`); none for
   * `ask` (or no policy): the user picks.
   */
  uninstallDefault: UninstallMode | null;
}

export interface AppIdArgs {
  appId: string;
}

export interface AppMaterial {
  tools: Array<ToolRefState>;
  knowledge: Array<TemplateState>;
}

export interface AppMaterialArgs {
  appId: string;
}

export interface AppServicesArgs {
  appId: string;
}

/** One installed app as lists show it. */
export interface AppSummary {
  name: string;
  displayName: string | null;
  description: string;
  activeVersion: string;
  previousVersion: string | null;
  versions: Array<string>;
  enabled: boolean;
  trust: string;
  sideloaded: boolean;
  readiness: string;
  packageHash: string;
  installedAt: string;
  updatedAt: string;
  /**
   * Problems after the commit point of the operation that produced this summary (it did
   * happen): `store.cleanup_incomplete` warnings. Empty, and not serialized, otherwise.
   */
  warnings?: Array<HostError>;
  /** The active version's entries, in manifest order (what the host UI offers to open). */
  entries: Array<EntrySummary>;
  /** An `apphost dev` install (a folder being developed; shown as DEV, never as signed). */
  dev: boolean;
  /** The manifest's `publisher.name` (a claim: `trust` says whether a key vouches for it). */
  publisher?: string | null;
  /** The icon as a bounded `data:` URL (`store/icon.rs`); none: the UI draws the initial. */
  icon?: string | null;
  /**
   * Why the app is not simply ready, in words (readiness checks that block, need setup or
   * degrade it; at most [`MAX_READINESS_REASONS`]).
   */
  readinessReasons: Array<string>;
  /**
   * What the user can do about it (readiness setup actions: grant a permission, bind a
   * secret, set up a model, ...).
   */
  setupActions: Array<SetupAction>;
}

/** An entry that views an artifact type. */
export interface ArtifactViewer {
  appId: string;
  appTitle: string;
  entryKey: string;
  title: string;
}

export interface ArtifactViewersArgs {
  artifactType: string;
}

/** Why the user is asked. */
export type AskReason =
  /** The permission is declared but not granted (optional, or revoked). */
  | "permission-not-granted"
  /** Policy wants a confirmation for this call. */
  | "policy-confirmation";

export interface AuditArgs {
  appId?: string | null;
  capability?: string | null;
  decision?: string | null;
  limit?: number | null;
  before?: number | null;
}

/** One audit log row. */
export interface AuditRow {
  id: number;
  at: string;
  action: string;
  app: string | null;
  version: string | null;
  details: unknown;
}

/** One answer of `next_events`. */
export interface Batch {
  events: Array<Event>;
  /** The `after` of the next call. */
  next: number;
  /** Events after `after` that were dropped before this reader saw them. */
  missed: number;
}

export interface BindKnowledgeArgs {
  appId: string;
  template: string;
  /** An absolute path to a folder. */
  folder: string;
}

export interface BindSecretArgs {
  appId: string;
  slot: string;
  value: string;
}

/** One binding's state (`apphost knowledge status`). */
export interface BindingStatus {
  app: string;
  template: string;
  folder: string;
  boundAt: string;
  /** The template is still declared by the app's active manifest. */
  declared: boolean;
  files: number;
  chunks: number;
  lastIndexed: string | null;
  problems: Array<Problem2>;
  problemsDropped: number;
  /** Why the index could not be read, if it could not. */
  error: string | null;
}

export interface BlobRemoval {
  blob: string;
  size: number;
  /** The package paths (`version:path`) this blob holds. */
  paths: Array<string>;
}

export interface BridgeMessageArgs {
  mountId: string;
  origin: string;
  data: string;
}

export interface BridgeRefusedArgs {
  mountId?: string | null;
  reason: string;
  bytes: number;
}

/** What `browse_catalog` answers: every catalog's freshness and the apps they offer. */
export interface Browse {
  catalogs: Array<CatalogInfo>;
  apps: Array<BrowseApp>;
  /** More apps matched than [`MAX_BROWSE_APPS`]. */
  truncated: boolean;
}

/** One catalog app as a Browse card shows it. */
export interface BrowseApp {
  catalog: string;
  appId: string;
  displayName: string;
  description: string;
  publisher: string | null;
  /**
   * `pinned` (signed by a key this host trusts and, for an installed app, by the publisher
   * key pinned for it), `signed` (signed by another key: the review shows it as a sideload),
   * `unknown` (unsigned) or `changed` (the app is installed with a pinned publisher key and
   * this release is signed by another key or unsigned: installing it needs the user's
   * explicit acceptance of the new publisher, `install.publisher_changed` without it).
   */
  trust: string;
  /** The permission keys the offered release declares. */
  permissions: Array<string>;
  readiness: ReadinessPreview;
  /**
   * The release Install gets (the newest not revoked of the followed or `stable` channel;
   * null when every release of that channel is revoked).
   */
  offered: ReleaseRow | null;
  /** Every release, newest first. */
  releases: Array<ReleaseRow>;
  channels: Array<string>;
  /**
   * The catalog's metadata is expired or its last refresh failed: nothing can be installed
   * from it until a refresh passes (installed apps are not affected).
   */
  stale: boolean;
  installed: InstalledState | null;
}

export interface BrowseCatalogArgs {
  text?: string;
}

/** Where a bundle was written. */
export interface Bundle {
  path: string;
  bytes: number;
}

/** What `catalog list` shows of one catalog. */
export interface CatalogInfo {
  name: string;
  url: string;
  addedAt: string;
  rootVersion: number | null;
  targetsVersion: number | null;
  apps: number;
  releases: number;
  refreshedAt: string | null;
  /** The earliest expiry of the trusted metadata: the catalog is stale after it. */
  expires: string | null;
  stale: boolean;
  staleSince: string | null;
  staleReason: string | null;
  lastAttemptAt: string | null;
  lastError: StatusError | null;
}

export interface CatalogRefreshArgs {
  /** One catalog; absent: every catalog. */
  name?: string | null;
}

export interface CatalogReviewInstallArgs {
  appId: string;
  /** A version; absent: the newest not revoked of `channel`. */
  version?: string | null;
  /** Absent: `stable`. */
  channel?: string | null;
  /** The catalog; absent: the one that offers the app (`catalog.ambiguous` when several). */
  catalog?: string | null;
  /**
   * Echoed in the `install:progress` events of this review (`phase: download` while the
   * package streams in, then `phase: review`); `cancel_review {reviewId: <progressId>}`
   * during the download stops it (`catalog.download_cancelled`, the partial file removed).
   */
  progressId?: string | null;
}

export interface CatalogSetChannelArgs {
  appId: string;
  catalog: string;
  channel: string;
}

export interface Check {
  severity: string;
  kind: string;
  key: string;
  required: boolean;
  outcome: Outcome;
  message: string;
  code?: string | null;
  version?: string | null;
  tier?: string | null;
  entry?: string | null;
  setupAction?: SetupAction | null;
  remediation?: string | null;
}

export interface CleanupPlan {
  app: string;
  mode: DataMode;
  versions: Array<string>;
  rows: Array<RowGroup>;
  blobsRemoved: Array<BlobRemoval>;
  blobBytesRemoved: number;
  /** Blobs this app shares with other installed apps: they stay. */
  blobsShared: number;
  /**
   * Pack files deleted because nothing else lives in them (`packs/<id>.pack`). Packs that
   * keep other apps' blobs stay (and are compacted when mostly garbage).
   */
  packFilesRemoved: Array<PackRemoval>;
  dataDir: string;
  dataFilesRemoved: Array<DataFile>;
  dataFilesKept: Array<DataFile>;
  /**
   * Entries of the app's data that are not regular files (links, FIFOs, sockets, devices),
   * too deep or unreadable: not listed above, never exported, removed with the folder
   * (links themselves, never what they point to).
   */
  dataEntriesSkipped: Array<SkippedEntry>;
  /**
   * Every regular file in the app's data and their bytes (the lists above stop at
   * `runtime_core::app_data::MAX_LISTED_FILES`; `dataListingTruncated` says so).
   */
  dataFileCount: number;
  dataBytes: number;
  dataListingTruncated: boolean;
  /** What stays on purpose. */
  retained: Array<string>;
}

/**
 * The host API schema of `runtime_core::app_data::DataFile` (runtime-core has no schemars
 * derives on it; `tests/host_api_schemas.rs` validates real plans against this).
 */
export interface DataFile {
  /** Relative to the app's directory, '/' separated. */
  path: string;
  size: number;
}

export type DataMode =
  /** Remove the package and projection; keep the app's data. */
  | "keep-data"
  /** Remove everything the app owns. */
  | "delete-data"
  /** Zip the app's data to a file, then remove everything. */
  | "export-then-delete";

/** What the app keeps in its own data area. */
export interface DataUsage {
  /** Bytes of every regular file under `apps/<app>/`. */
  storageBytes: number;
  files: number;
  artifacts: number;
  evidence: number;
}

/** One entry of an installed app, as the app list shows it. */
export interface DetailEntry {
  key: string;
  kind: string;
  title: string | null;
  /** Whether the entry is a UI surface the window can mount (`EntryKind::is_ui_surface`). */
  mountable: boolean;
  readiness: string;
}

export interface DevConsentArgs {
  appId: string;
  digest: string;
  consent: boolean;
}

/** `dev_diagnostic`'s answer: taken, or the stable reason it was not. */
export interface DevDiagnosticAnswer {
  accepted: boolean;
  /**
   * `dev_console.unknown_mount`, `dev_console.wrong_origin`, `dev_console.not_dev`,
   * `dev_console.too_large`, `dev_console.bad_report` or `dev_console.rate_limited`.
   */
  refused: string | null;
}

export interface DevDiagnosticArgs {
  mountId: string;
  origin: string;
  /** The frame's message as JSON text (what the relay would relay as a bridge message). */
  data: string;
}

/** One problem found in the folder. */
export interface DevFinding {
  severity: string;
  code: string;
  path: string;
  message: string;
}

/** The last result of a dev app, as `dev_status` answers it. */
export interface DevStatus {
  appId: string;
  folder: string;
  /**
   * `installed`, `updated`, `unchanged` (valid again, same as running), `invalid` (the last
   * good version keeps running) or
   * `awaiting-consent` (the change widens permissions).
   */
  status: string;
  /** The version running (the last good one). */
  version: string | null;
  at: string;
  findings: Array<DevFinding>;
  /** `awaiting-consent`: the permissions added or changed. */
  pending?: Array<PermissionChange>;
  /**
   * `awaiting-consent`: the digest of the held change (its package hash and `pending`), the
   * one `dev_consent` accepts.
   */
  pendingDigest?: string;
  /** How many saves were installed. */
  updates: number;
}

/** What "Disable only" does: the entries hidden, everything else kept. */
export interface DisablePlan {
  app: string;
  /** Always `disable`. */
  mode: string;
  /** The entries no longer offered (and any open frame of them closed). */
  entriesHidden: Array<string>;
  /** The installed versions: all kept. */
  versionsKept: Array<string>;
  dataDir: string;
  dataFileCount: number;
  dataBytes: number;
  /** Nothing is removed. */
  retained: Array<string>;
  alreadyDisabled: boolean;
}

/** One mount the watcher ended, for the host UI. */
export interface EndedMount {
  mountId: string;
  appId: string;
  /** The entry it showed (the host UI reopens it after an update or rollback). */
  entryKey: string;
  reason: StaleReason;
}

export interface EntryReadiness {
  entryKey: string;
  status: Status;
  /**
   * Keys of this entry's own checks that keep it from `ready`. App-wide checks count in
   * `status` but are listed once, in the report's checks, not again for every entry (that
   * would make the report entries x checks long).
   */
  missing: Array<string>;
}

/** One entry of an installed app, as the app list shows it. */
export interface EntrySummary {
  key: string;
  kind: string;
  title: string | null;
  /** Whether the entry is a UI surface the window can mount (`EntryKind::is_ui_surface`). */
  mountable: boolean;
}

/** A stable error code, e.g. `install.consent_required` (docs/cli.md). */
export type ErrorCode = string;

export interface Event {
  seq: number;
  kind: string;
  payload: unknown;
}

/** One field of a permission that differs between the installed and the new version. */
export interface FieldChange {
  field: string;
  old: unknown;
  new: unknown;
}

export interface FileGrantPathArgs {
  appId: string;
  /** An absolute path (a file or a folder) on this machine. */
  path: string;
}

/** One ref, as the host (never the app) sees it: with its path. */
export interface FileRef {
  app: string;
  ref: string;
  kind: FileRefKind;
  path: string;
  displayName: string;
  size: number;
  mtime: number;
  origin: FileRefOrigin;
  createdAt: string;
}

/** What a ref names. */
export type FileRefKind = "file" | "folder";

/** Where the granted bytes live. */
export type FileRefOrigin =
  /** A path on this machine the user named (CLI, the desktop's dialog). */
  | "path"
  /** A copy the user uploaded to `apphost serve`, kept under `uploads/files/<ref>`. */
  | "upload";

export interface FileRefRevokeArgs {
  appId: string;
  ref: string;
}

/** What `file_ref_revoke` answers. */
export interface FileRefRevoked {
  appId: string;
  ref: string;
  revoked: boolean;
}

export interface FileRefsArgs {
  appId: string;
}

export interface FileUploadArgs {
  appId: string;
  /** The file's name as the user's browser gave it (shown only). */
  name: string;
  /** The bytes, base64 (standard alphabet, padded). */
  base64: string;
}

/** `GrantRow` in `docs/host-api.md`. */
export interface GrantRow {
  appId: string;
  key: string;
  scope: unknown;
  access: unknown;
  reason: unknown;
  required: boolean;
  domains: unknown;
  granted: boolean;
}

/** `{code, message, details}`: the one error shape every AppHost surface reports. */
export interface HostError {
  code: ErrorCode;
  message: string;
  details: unknown;
}

/** What the settings page shows. */
export interface HostSettings {
  dataDir: string;
  limits: Record<string, unknown>;
  theme: string;
  version: string;
}

/** What one indexing run did. */
export interface IndexReport {
  /** Files in the index after the run. */
  files: number;
  chunks: number;
  /** Files read and (re-)chunked this run. */
  indexed: number;
  /** Files whose size and mtime, or content hash, matched. */
  unchanged: number;
  /** Files that left the index (gone from the folder, now too large, ...). */
  removed: number;
  problems: Array<Problem2>;
  problemsDropped: number;
}

/** What a bind or reindex did. */
export interface Indexed {
  app: string;
  template: string;
  folder: string;
  report: IndexReport;
}

export interface InstallArgs {
  reviewId: string;
  consent: boolean;
  acceptPublisherChange?: boolean;
  reattachData?: boolean;
}

export type InstallMode = "install" | "update";

/** The payload of `install:progress` (built in `api/center.rs`). */
export interface InstallProgress {
  /**
   * `download` (a catalog release streaming in) or `review` (then `progressId` echoes the
   * review's), or `install` (then `reviewId`).
   */
  phase: string;
  progressId?: string | null;
  reviewId?: string | null;
  bytesVerified: number;
  bytesTotal: number;
}

/** What the review sheet shows (`InstallReview` in `docs/host-api.md`). */
export interface InstallReview {
  reviewId: string;
  mode: InstallMode;
  app: ReviewApp;
  trust: ReviewTrust;
  publisherChange?: ReviewPublisherChange | null;
  packageHash: string;
  bytes: number;
  files: number;
  entries: Array<ReviewEntry>;
  /**
   * Every permission, with its change against the active version (field by field) and what
   * happens to its grant.
   */
  permissions: Array<PermissionChange>;
  network: unknown;
  storage: unknown;
  services: unknown;
  /** `server-assisted` remote services: endpoint, auth and data boundary (docs/services.md). */
  remoteServices: Array<RemoteSummary>;
  readiness: unknown;
  findings: unknown;
  blockers: Array<HostError>;
  fromVersion?: string | null;
  existingData: boolean;
  needsConsent: Array<string>;
  /** Installed versions an update removes (two stay side by side). */
  prunes: Array<string>;
}

/** The installed app behind a catalog card. */
export interface InstalledState {
  version: string;
  /** The version "Roll back" returns to. */
  previousVersion: string | null;
  /** The installed app's own readiness (never changed by a catalog). */
  readiness: string;
  /** The channel the app follows (`stable` when it was installed otherwise). */
  channel: string;
  /** Whether the app was installed from this catalog (it follows it for updates). */
  follows: boolean;
  /** The publisher's reason when the installed version is revoked in this catalog. */
  revoked: string | null;
  /**
   * The signer of the offered (or shown) release against the publisher pinned for the
   * installed app, as the install review will judge it: `same`, `signed` (the installed
   * versions are unsigned), `changed` (another key, or unsigned over signed) or `unknown`
   * (no publisher recorded). `changed`/`unknown` need the user's acceptance at install.
   */
  publisher: string;
  update: UpdateOffer | null;
}

/** What happened to the key. */
export type KeyOutcome =

  | "stored" | "kept" | "none"
  /** Removed on request. */
  | "removed"
  /** Dropped because the base URL changed. */
  | "dropped-for-new-url";

export interface KnowledgeStatusArgs {
  appId?: string | null;
}

/** The answer of `launch_package`. */
export interface LaunchPackage {
  /** Absolute path of the package file. */
  path: string;
}

/** The entry the host UI mounts at start. */
export interface LaunchTarget {
  appId: string;
  entryKey: string;
}

/** The plan of one uninstall state, as `uninstall_plan` answers it. */
export type LifecyclePlan = DisablePlan | CleanupPlan;

export interface ListGrantsArgs {
  appId?: string | null;
}

export interface ListTasksArgs {
  appId?: string | null;
  status?: string | null;
  limit?: number | null;
}

/** Slots that passed while no host ran, reported when the host next looked. */
export interface MissedSlots {
  app: string;
  entry: string;
  missed: number;
  /** The first missed slot and when the host noticed (RFC 3339). */
  first: string;
  noticedAt: string;
}

/** What `set_model` answers: the settings as stored, what happened to the key, and the status. */
export interface ModelSet {
  baseUrl: string;
  model: string;
  apiKeyChange: KeyOutcome;
  status: ModelStatus;
}

/** What `model show` prints: never the key. */
export interface ModelStatus {
  /** `ready` or `needs-setup`. */
  status: string;
  baseUrl: string | null;
  model: string | null;
  apiKey: ApiKeyStatus;
}

/** What a mount shows and where it came from. */
export interface Mount {
  mountId: string;
  appId: string;
  entryKey: string;
  entryKind: string;
  version: string;
  packageHash: string;
  manifestHash: string;
  origin: string;
  url: string;
  sandbox: string;
}

export interface MountEntryArgs {
  appId: string;
  entryKey: string;
}

export interface MountIdArgs {
  mountId: string;
}

export interface NextEventsArgs {
  after?: number;
  timeoutMs?: number;
}

/** Argument type of commands without arguments: refuses unknown keys like every other command. */
export type NoArgs = Record<string, never>;

export interface OpenExternalArgs {
  url: string;
}

/**
 * `open_external`'s answer in the browser: the checked URL, for the page to open itself (the
 * desktop answers `null`: it opened the link).
 */
export interface OpenedUrl {
  url: string;
}

/** What one check concluded. */
export type Outcome =

  | "pass" | "degraded" | "needs-setup" | "blocked"
  /** Worth showing; changes nothing. */
  | "notice"
  /**
   * AppHost cannot evaluate this check (an unknown check type). Shown; a required check
   * with this outcome keeps the app from launching (`blocked`), an optional one does not.
   */
  | "unknown";

/** What the transport must do. */
export type Outgoing =
  /** Post `message` to the frame of `mount_id` (target origin: the mount's origin). */
  | {
    kind: "post";
    mountId: string;
    message: unknown;
  }
  /** Show a permission prompt; answer with [`BridgeHost::answer`]. */
  | {
    kind: "prompt";
    promptId: string;
    mountId: string;
    question: PermissionQuestion;
  }

  | {
    kind: "toast";
    mountId: string;
    appId: string;
    message: string;
    level: ToastLevel;
  }
  /** Ask the user to confirm opening an external URL; the app's declared domains are shown. */
  | {
    kind: "confirmExternal";
    mountId: string;
    appId: string;
    url: string;
    declaredDomains: Array<string>;
  }

  | {
    kind: "navigate";
    mountId: string;
    route: string;
  }
  /**
   * Ask the user whether to save a file the app offers (`host:download`): the sanitized
   * file name, its size in bytes and its MIME type; answer with
   * [`BridgeHost::answer_download`].
   */
  | {
    kind: "confirmDownload";
    downloadId: string;
    mountId: string;
    appId: string;
    fileName: string;
    size: number;
    mimeType: string;
  }
  /**
   * `lime.files.requestFiles`: draw the file picker for the app; answer with
   * [`BridgeHost::answer_file_pick`] (the refs granted from the user's choice, or cancel).
   */
  | {
    kind: "pickFiles";
    promptId: string;
    mountId: string;
    appId: string;
    entryKey: string;
    request: PickRequest;
  };

export interface PackRemoval {
  pack: string;
  file: string;
  size: number;
}

/** What the command palette lists besides the host's own actions. */
export interface Palette {
  commands: Array<PaletteCommand>;
  routes: Array<RegisteredRoute>;
}

/** A `command` entry the palette lists, and the UI entry that runs it. */
export interface PaletteCommand {
  appId: string;
  appTitle: string;
  entryKey: string;
  title: string;
  command: string | null;
  /** The app's first UI entry: it is mounted and receives `ui:launch {kind: "command"}`. */
  surfaceEntry: string;
  /** The command entry's readiness (`ready`, `needs-setup`, ...). */
  status: string;
}

/** What a run waits for from a person, as the host draws it. */
export interface PendingView {
  /** `review`, `input` or `decision`. */
  kind: string;
  key: string;
  state: string;
  prompt: string;
  /** A review's data to show (JSON), at most [`MAX_SHOW_BYTES`]. */
  show: unknown;
  /** The show data as bounded text when it was larger. */
  showTruncated: string | null;
  /** An input request's JSON Schema. */
  schema: unknown;
  dueAt: string | null;
}

export interface PermissionChange {
  key: string;
  /** `added`, `changed`, `unchanged` or `removed` (relative to the active version). */
  change: string;
  required: boolean;
  scope: unknown;
  access: unknown;
  reason: unknown;
  domains: unknown;
  paths: unknown;
  /** For `changed`: every field that differs, old and new value. */
  fields?: Array<FieldChange>;
  /**
   * What happens to the grant: `kept` (unchanged and granted), `asked` (required: consent
   * is asked now; a changed permission's old grant is dropped first), `at-first-use`
   * (optional: not granted now, asked when first used), `dropped` (removed, and its grant
   * with it) or `none` (removed, never granted).
   */
  grant: string;
}

/** A question for the user, turned into a prompt by the shell. */
export interface PermissionQuestion {
  appId: string;
  entryKey: string;
  capability: string;
  method: string;
  /** The permission asked for (`None` for a policy confirmation). */
  permission: string | null;
  reason: string | null;
  askReason: AskReason;
}

/** One declared permission of the active version and whether it is granted. */
export interface PermissionRow {
  key: string;
  scope: unknown;
  access: unknown;
  reason: unknown;
  required: boolean;
  domains: unknown;
  granted: boolean;
}

/** What `requestFiles` asks the user for (shown by the host's picker). */
export interface PickRequest {
  /** More than one file may be chosen. */
  multiple: boolean;
  /** A folder is asked for instead of files. */
  folder: boolean;
  /**
   * File name suffixes or MIME types the app would like (`.md`, `text/plain`): a hint
   * shown to the user, never enforced on what they choose.
   */
  accept: Array<string>;
}

export interface Problem {
  code: string;
  message: string;
  app?: string | null;
  path?: string | null;
}

/** Something in the folder that was not indexed, with a stable code. */
export interface Problem2 {
  code: string;
  path: string;
  message: string;
}

/** Data recovery kept in `<data>/quarantine/<op>/` instead of restoring it. */
export interface Quarantined {
  /** Where the data was before the operation set it aside. */
  original: string;
  /** Where it is now. */
  path: string;
  reason: string;
}

/** What the compatibility a release declares means on this host, before download. */
export interface ReadinessPreview {
  /** `compatible`, `incompatible` or `unknown` (the full readiness is in the review sheet). */
  status: string;
  reasons: Array<string>;
}

export interface Recovered {
  opId: string;
  kind: string;
  app: string | null;
  /** `rolled-forward` (it had committed) or `rolled-back`. */
  action: string;
  /** Data the operation had set aside that could not be put back: kept, never deleted. */
  quarantined: Array<Quarantined>;
}

/** What `catalog_refresh` answers: every catalog afterwards, and the refusals of this refresh. */
export interface Refreshed {
  catalogs: Array<CatalogInfo>;
  errors: Array<HostError>;
}

export interface RefusedMessage {
  mountId: string | null;
  appId: string | null;
  reason: string;
  messageType: string | null;
  bytes: number;
}

/** One registered route. */
export interface RegisteredRoute {
  appId: string;
  /** The entry whose frame registered it (the one a deep link opens). */
  entryKey: string;
  path: string;
  title: string;
}

/** One release of a catalog app. */
export interface ReleaseRow {
  version: string;
  channel: string;
  /** The publisher's reason when the release is revoked (it cannot be installed). */
  revoked: string | null;
  rollbackTarget: string | null;
}

/** The answer of `service_allow_remote`. */
export interface RemoteAllowed {
  /** The origin the service may now be called at. */
  origin: string;
  /** `false`: it already was. */
  changed: boolean;
}

/** What the detail page and `apphost services list` show of a remote service. */
export interface RemoteInfo {
  /** The URL the host POSTs to. */
  endpoint: string;
  /** The only origin the host contacts for it. */
  origin: string;
  /** `none`, `bearer` or `header`. */
  auth: string;
  /** The `secrets[]` slot whose value the host sends (never the value). */
  secret?: string | null;
  /** What the remote service receives and keeps, in the author's words. */
  dataBoundary: string;
  /** The user allowed it for this origin. */
  allowed: boolean;
}

/**
 * A remote service as the review sheet shows it: where its calls go and what the remote side
 * receives and keeps.
 */
export interface RemoteSummary {
  key: string;
  endpoint: string;
  origin: string;
  /** `none`, `bearer` or `header`. */
  auth: string;
  /** The `secrets[]` slot whose value the host sends (the user sets it in the host). */
  secret?: string | null;
  dataBoundary: string;
}

export interface RemoveTrustedKeyArgs {
  keyId: string;
}

export interface Report {
  ok: boolean;
  status: Status;
  app: string;
  checks: Array<Check>;
  blockers: Array<string>;
  warnings: Array<string>;
  setupActions: Array<SetupAction>;
  entries: Array<EntryReadiness>;
}

/** What `task_respond` answers. */
export interface Responded {
  responded: boolean;
}

export interface ReviewApp {
  id: string;
  name: string;
  version: string;
  description: string;
  publisher: string | null;
  icon?: string | null;
}

export interface ReviewEntry {
  key: string;
  kind: string;
  title: string | null;
  readiness: string;
}

export interface ReviewIdArgs {
  reviewId: string;
}

export interface ReviewInstallArgs {
  source: ReviewSourceArg;
  /** Echoed in the `install:progress` events of this review (the review id does not exist yet). */
  progressId?: string | null;
}

export interface ReviewPublisherChange {
  /** `signed`, `changed` or `unknown` (see the CLI's plan). */
  status: string;
  from: ReviewSigner | null;
  to: ReviewSigner;
  /** `install` must pass `acceptPublisherChange: true`. */
  needsAcceptance: boolean;
}

export interface ReviewSigner {
  keyId: string | null;
  fingerprint: string | null;
  name?: string | null;
}

export type ReviewSourceArg = {
  path: string;
} | {
  uploadId: string;
};

export interface ReviewTrust {
  /**
   * `trusted`, `untrusted-signature` (signed by a key this host does not trust) or
   * `unsigned`. (A dev app is never reviewed here: `apphost dev` installs it.)
   */
  state: string;
  /** Installing it is a sideload (shown as a warning; consent covers it). */
  sideload: boolean;
  signer?: ReviewSigner | null;
}

export interface RowGroup {
  table: string;
  rows: number;
  what: string;
}

/** What `workflow_run` answers. */
export interface RunDetail {
  run: RunSummary;
  /** The start input and each named output, as bounded JSON text. */
  input: string;
  outputs: Record<string, unknown>;
  result: string | null;
  error: RunFailure | null;
  pending: PendingView | null;
  timeline: Timeline;
  /** The run's `lime.evidence` record, once it ended. */
  evidence: unknown;
}

export interface RunFailure {
  code: string;
  message: string;
  state: string | null;
}

/** A run in a list. */
export interface RunSummary {
  runId: string;
  appId: string;
  workflow: string;
  /** `running`, `waiting`, `succeeded`, `failed`, `cancelled`. */
  status: string;
  /** What a waiting run waits for: `review`, `input`, `decision`, `timer`, `retry`, `call`. */
  waiting: string | null;
  dueAt: string | null;
  finished: boolean;
  steps: number;
  startedAt: string | null;
}

/** The durable record of one schedule. */
export interface ScheduleRecord {
  app: string;
  entry: string;
  workflow: string;
  everySecs: number;
  /** RFC 3339. */
  nextDue: string;
  lastStarted: string | null;
  /** Slots missed while no host ran, in all. */
  missedTotal: number;
  lastMissed: MissedSlots | null;
}

export interface ScopeArgs {
  appId: string;
  scope: string;
}

/** What `bind_secret` answers: never the value or its ref. */
export interface SecretBound {
  appId: string;
  slot: string;
  /** The secret store's kind (`keyring`, `encrypted-file`, ...). */
  store: string;
  boundAt: string;
}

/** Why a request was refused (stable strings; `tampered` is also logged as a warning). */
export interface ServeRefusal {
  reason: string;
  app: string | null;
  path: string;
}

export interface ServiceArgs {
  appId: string;
  service: string;
}

export interface ServiceCallArgs {
  appId: string;
  service: string;
  method: string;
  params?: unknown;
}

/** A service's log tail. */
export interface ServiceLog {
  text: string;
  /** The log was longer: only its last [`MAX_LOG_BYTES`] are shown. */
  truncated: boolean;
}

/** One service as the CLI and the host UI show it. */
export interface ServiceStatus {
  key: string;
  required: boolean;
  /**
   * `running`, `stopped`, `degraded` (crashed recently), `blocked` (crash loop, or cannot run
   * here: `code` says why).
   */
  state: string;
  code?: string | null;
  reason?: string | null;
  pid?: number | null;
  /** Starts after the first one in this host process. */
  restarts: number;
  lastExit?: string | null;
  lastStop?: string | null;
  protocol: string;
  /**
   * A `server-assisted` remote service: its endpoint, auth kind, data boundary and whether
   * the user allowed it (state `remote` when allowed).
   */
  remote?: RemoteInfo | null;
}

/** What the bridge and the file server refused, and how many service calls ran. */
export interface SessionDiagnostics {
  refusedByReason: Record<string, number>;
  recentRefusals: Array<RefusedMessage>;
  executions: number;
  serveRefusals: Array<ServeRefusal>;
  /** How many frames Rust has mounted now. */
  mounts: number;
}

export interface SetEnabledArgs {
  appId: string;
  enabled: boolean;
}

export interface SetModelArgs {
  baseUrl: string;
  model: string;
  /** A new key; absent or blank keeps the stored one (dropped if the base URL changes). */
  apiKey?: string | null;
  /** Removes the stored key. */
  removeApiKey?: boolean;
}

export interface SetThemeArgs {
  theme: string;
  /** What the page shows now (`light` or `dark`): only the page knows the system's preference. */
  effective?: string | null;
}

export interface SetVisibilityArgs {
  mountId: string;
  visible: boolean;
}

export interface SetupAction {
  key: string;
  title: string;
  kind: string;
  target?: string | null;
  description?: string | null;
}

/** The host API schema of `runtime_core::app_data::SkippedEntry`. */
export interface SkippedEntry {
  path: string;
  /** `symlink`, `fifo`, `socket`, `block-device`, `char-device`, `directory`, `file`, `unknown`. */
  kind: string;
  reason: string;
}

/** Why a mount ended without the user closing it. */
export type StaleReason =

  | "uninstalled" | "disabled"
  /** Another version is active now (update or rollback). */
  | "version-changed";

export type Status = "ready" | "ready-degraded" | "needs-setup" | "blocked" | "disabled";

export interface StatusError {
  code: string;
  message: string;
}

export interface StepFailure {
  code: string;
  message: string;
}

/** One step of a run. */
export interface StepRow {
  key: string;
  state: string;
  /** The state's kind in the run's pinned definition (`agent-task`, `human-review`, ...). */
  kind: string;
  /** `step`, `review`, `input`, `decision`, `wait` or `retry`. */
  what: string;
  capability: string | null;
  method: string | null;
  visit: number;
  attempt: number;
  startedAt: string;
  endedAt: string | null;
  /**
   * `running`, `waiting`, `succeeded`, `failed`, `timed-out`, `approved`, `rejected`,
   * `answered`, `fired`.
   */
  status: string;
  error: StepFailure | null;
  /** The output as bounded JSON text (`…` marks a cut). */
  output: string | null;
}

/** What one poll found. */
export interface SyncReport {
  /** The store changed since the previous poll. */
  changed: boolean;
  ended: Array<EndedMount>;
}

export interface TaskArgs {
  appId: string;
  taskId: string;
}

/** What `task_detail` answers. */
export interface TaskDetail {
  /** The task, with its `appId` and full `input`. */
  task: AgentTaskView;
  /** `lime.agent-task-event.v1` events after `afterSequence`. */
  events: Array<Record<string, unknown>>;
  nextAfterSequence: number;
}

export interface TaskDetailArgs {
  appId: string;
  taskId: string;
  afterSequence?: number | null;
  limit?: number | null;
}

export interface TaskRespondArgs {
  appId: string;
  taskId: string;
  actionId: string;
  decision: string;
  updatedInput?: unknown;
  remember?: string | null;
}

/** The payload of `tasks:changed` (built in `api/tasks.rs`). */
export interface TasksChanged {
  appId: string | null;
  taskId: string | null;
  /** The task event type, or the host action (`task.cancel`, ...). */
  reason: string;
}

/** One declared knowledge template and its binding. */
export interface TemplateState {
  template: string;
  required: boolean;
  /** The bound folder, when bound. */
  folder: string | null;
  files: number;
  chunks: number;
  lastIndexed: string | null;
}

/** What `model test` reports. */
export interface TestReport {
  ok: boolean;
  baseUrl: string;
  model: string;
  latencyMs: number;
  firstEventMs: number;
  finishReason: string;
}

/** What `set_theme` answers: the stored choice and the `theme:update` posts to carry out. */
export interface ThemeSet {
  theme: string;
  outgoing: Array<Outgoing>;
}

/** What the whole history says about the run beyond its rows. */
export interface Timeline {
  startedAt: string | null;
  endedAt: string | null;
  steps: Array<StepRow>;
  /** Retries made so far (attempts after the first, over every state). */
  retries: number;
}

export type ToastLevel = "info" | "success" | "warning" | "error";

export interface ToolGrantArgs {
  appId: string;
  /** `<server>/<tool>`, one the app declares in `toolRefs[]`. */
  tool: string;
}

/** One declared tool ref and its state. */
export interface ToolRefState {
  /** `<server>/<tool>`. */
  tool: string;
  server: string;
  required: boolean;
  /** A server with that name is configured (by the user or the admin). */
  serverPresent: boolean;
  /** The server's last listing has the tool. */
  listed: boolean;
  granted: boolean;
  /** Each call needs the user's approval (annotation or policy); known once listed. */
  destructive: boolean;
  /** The admin policy denies it. */
  denied: boolean;
}

/** A trusted key as the settings page lists it. */
export interface TrustedKeyRow {
  keyId: string;
  publicKey: string;
  name: string;
  fingerprint: string;
}

export interface UiLaunchArgs {
  mountId: string;
  launch: UiLaunchPayload;
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

export interface UnbindKnowledgeArgs {
  appId: string;
  template: string;
}

export interface UninstallArgs {
  appId: string;
  mode: UninstallMode;
  exportPath?: string | null;
}

/** The uninstall states the host UI offers (`docs/host-api.md`). */
export type UninstallMode =

  | "keep-data" | "delete-data"
  /**
   * Disable only: the entries are hidden; the package, data and grants stay
   * (`set_enabled {enabled: false}` runs it).
   */
  | "disable"
  /** Export the app's data to a zip, then delete everything. */
  | "export";

export interface UninstallPlanArgs {
  appId: string;
  mode: UninstallMode;
}

/** What `uninstall` answers. */
export interface Uninstalled {
  /** The plan that ran. */
  removed: CleanupPlan;
  /** The data folder kept (`keep-data`), else null. */
  kept: string | null;
  exportedTo: string | null;
  /** Entries of the app's data the export left out (links, special files, too deep). */
  exportSkipped: Array<SkippedEntry>;
  /** Problems after the commit point: the app is uninstalled all the same. */
  warnings: Array<HostError>;
}

export interface UpdateError {
  code: string;
  message: string;
}

/** A newer version, from a feed whose signature verified. */
export interface UpdateNotice {
  version: string;
  /** The release notes, at most 2,000 characters. */
  notes: string;
  /** Where to get it: the feed's `downloadPage`, else this install kind's package URL. */
  url: string;
}

/** A newer release of the followed channel. */
export interface UpdateOffer {
  version: string;
  channel: string;
  /** Permission keys the new version declares and the installed one does not. */
  permissionsAdded: Array<string>;
  /** Permission keys the installed version declares and the new one does not. */
  permissionsRemoved: Array<string>;
  /**
   * The new version is not signed by the installed app's pinned publisher key (see
   * [`InstalledState::publisher`]): the review asks to accept a publisher change.
   */
  publisherChanged: boolean;
}

/** What the check found. */
export type UpdateState =
  /** This build has no update key or no feed URL: nothing is checked. */
  | "disabled"
  /** The signed feed names this version. */
  | "upToDate"
  /** The signed feed names a newer version: `notice` says which and where to get it. */
  | "available"
  /** The check was refused or failed: `error` has the code. */
  | "failed";

/** The answer of `check_update`. */
export interface UpdateStatus {
  current: string;
  state: UpdateState;
  notice?: UpdateNotice | null;
  /** The refusal's code and message (`update.*`). */
  error?: UpdateError | null;
}

/** What `upload_package` answers. */
export interface UploadInfo {
  uploadId: string;
  bytes: number;
}

export interface VerifyReport {
  ok: boolean;
  recovered: Array<Recovered>;
  apps: number;
  versions: number;
  blobs: number;
  bytesHashed: number;
  /** Every blob the store holds (SHA-256 hex, sorted) and the number of pack files. */
  storedBlobs: Array<string>;
  packs: number;
  problems: Array<Problem>;
}

export interface VerifyStoreArgs {
  quick?: boolean;
}

/** One installed version of an app. */
export interface VersionInfo {
  version: string;
  installedAt: string;
  active: boolean;
  packageHash: string;
  trust: string;
}

/** The payload of `workflow:changed` (built in `api/workflow_host.rs`). */
export interface WorkflowChanged {
  appId: string;
  runId: string | null;
  /** For `schedule_missed`: the entry and how many slots passed while no host ran. */
  entryKey: string | null;
  missed: number | null;
  /** `workflow.start`, `workflow.respond`, `driven`, `schedule_missed`. */
  reason: string;
}

export interface WorkflowRespondArgs {
  runId: string;
  /**
   * `approve`, `reject`, `edit` (approve with edited `data`), `input` (with `data`), `retry`
   * or `stop` (a failed step's decision).
   */
  decision: string;
  data?: unknown;
}

export interface WorkflowRunArgs {
  runId: string;
}

export interface WorkflowRunsArgs {
  appId?: string | null;
  limit?: number | null;
}

export interface WorkflowStartArgs {
  appId: string;
  /** The `workflow` entry to run (its `workflow` names the workflow). */
  entryKey: string;
  input?: unknown;
}

/** The arguments and answer of each host command (docs/host-api.md). */
export interface HostCommands {
  /** The model the runtime talks to; the API key is write-only (only whether one is set). */
  model_settings: { args: NoArgs; answer: ModelStatus };
  /** Sets the model endpoint and name, and the API key (write-only). */
  set_model: { args: SetModelArgs; answer: ModelSet };
  /** One tiny request to the configured model. */
  test_model: { args: NoArgs; answer: TestReport };
  /** The installed apps. */
  list_apps: { args: NoArgs; answer: Array<AppSummary> };
  /** Mounts an entry: Rust checks the app, the entry and its readiness and answers the frame's URL, origin and sandbox. */
  mount_entry: { args: MountEntryArgs; answer: Mount };
  /** The frame went away; answers whether the mount existed. */
  unmount: { args: MountIdArgs; answer: boolean };
  /** The entry the host UI was started to open, or null. */
  launch_target: { args: NoArgs; answer: LaunchTarget | null };
  /** Ends the mounts whose app another process changed. */
  sync_mounts: { args: NoArgs; answer: SyncReport };
  /** Relays what a frame posted (with the origin the host UI observed). */
  bridge_message: { args: BridgeMessageArgs; answer: Array<Outgoing> };
  /** A message the host UI refused itself: counted, never acted on. */
  bridge_refused: { args: BridgeRefusedArgs; answer: null };
  /** The user's answer to a permission prompt. */
  answer_prompt: { args: AnswerPromptArgs; answer: Array<Outgoing> };
  /** The user's answer to a download. */
  answer_download: { args: AnswerDownloadArgs; answer: Array<Outgoing> };
  /** The host UI showed or hid a frame. */
  set_visibility: { args: SetVisibilityArgs; answer: Array<Outgoing> };
  /** What the bridge and the file server refused, and how many service calls ran. */
  bridge_diagnostics: { args: NoArgs; answer: SessionDiagnostics };
  /** The remote catalogs with their freshness (last good refresh, stale since, last error); no network. */
  catalog_list: { args: NoArgs; answer: Array<CatalogInfo> };
  /** Refreshes one catalog or all; a refusal is recorded (stale) and never changes an installed app. */
  catalog_refresh: { args: CatalogRefreshArgs; answer: Refreshed };
  /** Catalog apps (publisher, trust, permissions, readiness preview) and per installed app the update offered with its permission diff, channel and revocation; no network. */
  browse_catalog: { args: BrowseCatalogArgs; answer: Browse };
  /** Downloads a catalog release and reviews it like a local package; `install` with consent installs it. */
  catalog_review_install: { args: CatalogReviewInstallArgs; answer: InstallReview };
  /** Makes an installed app follow a channel of a catalog for its updates. */
  catalog_set_channel: { args: CatalogSetChannelArgs; answer: Browse };
  /** Stages a package and describes it for the review sheet; nothing is stored. */
  review_install: { args: ReviewInstallArgs; answer: InstallReview };
  /** Installs what a review showed, after the user's consent. */
  install: { args: InstallArgs; answer: AppSummary };
  /** Forgets a review. */
  cancel_review: { args: ReviewIdArgs; answer: null };
  /** Everything the app detail page shows. */
  app_detail: { args: AppIdArgs; answer: AppDetail };
  /** Grants of one app or of every app. */
  list_grants: { args: ListGrantsArgs; answer: Array<GrantRow> };
  /** Grants a declared permission. */
  grant: { args: ScopeArgs; answer: GrantRow };
  /** Revokes a permission. */
  revoke: { args: ScopeArgs; answer: GrantRow };
  /** Enables or disables an app. */
  set_enabled: { args: SetEnabledArgs; answer: AppSummary };
  /** What an uninstall mode (or "Disable only") would remove and keep; nothing changes. */
  uninstall_plan: { args: UninstallPlanArgs; answer: LifecyclePlan };
  /** Uninstalls an app in one of the three uninstall modes. */
  uninstall: { args: UninstallArgs; answer: Uninstalled };
  /** Switches the active version to the previous one. */
  rollback: { args: AppIdArgs; answer: AppSummary };
  /** Audit records, newest first, filtered. */
  audit: { args: AuditArgs; answer: Array<AuditRow> };
  /** Verifies the store (quick: without rehashing blobs). */
  verify_store: { args: VerifyStoreArgs; answer: VerifyReport };
  /** Writes a diagnostics zip without secrets. */
  diagnostics_bundle: { args: NoArgs; answer: Bundle };
  /** The publisher keys this host trusts. */
  trusted_keys: { args: NoArgs; answer: Array<TrustedKeyRow> };
  /** Trusts a publisher key. */
  add_trusted_key: { args: AddTrustedKeyArgs; answer: Array<TrustedKeyRow> };
  /** Stops trusting a publisher key. */
  remove_trusted_key: { args: RemoveTrustedKeyArgs; answer: Array<TrustedKeyRow> };
  /** The host's data directory, limits, theme and version. */
  host_settings: { args: NoArgs; answer: HostSettings };
  /** Keeps the theme choice; with `effective`, tells every ready frame. */
  set_theme: { args: SetThemeArgs; answer: ThemeSet };
  /** The last result of every `apphost dev` app. */
  dev_status: { args: NoArgs; answer: Array<DevStatus> };
  /** Installs the change a dev app holds if it is still the one shown. */
  dev_consent: { args: DevConsentArgs; answer: DevStatus };
  /** Binds a declared secret slot (the value is write-only). */
  bind_secret: { args: BindSecretArgs; answer: SecretBound };
  /** A dev install's frame reports an error, a rejection, a CSP violation or a refused form (dev installs only; bounded, rate-limited, text). */
  dev_diagnostic: { args: DevDiagnosticArgs; answer: DevDiagnosticAnswer };
  /** The outbox events after `after`, waiting up to `timeoutMs` (at most 25 s). */
  next_events: { args: NextEventsArgs; answer: Batch };
  /** Opens a confirmed http(s) link: null when the host opened it, `{url}` for the page to open. */
  open_external: { args: OpenExternalArgs; answer: OpenedUrl | null };
  /** An app's lime.files refs (with their paths, for the user). */
  file_refs: { args: FileRefsArgs; answer: Array<FileRef> };
  /** Revokes a lime.files ref: the app's next read of it is files.ref_not_found. */
  file_ref_revoke: { args: FileRefRevokeArgs; answer: FileRefRevoked };
  /** Grants a file or folder the user named to an app as a lime.files ref. */
  file_grant_path: { args: FileGrantPathArgs; answer: FileRef };
  /** Keeps a file the user uploaded (≤ 3 MiB, base64) and grants it to an app as a lime.files ref. */
  file_upload: { args: FileUploadArgs; answer: FileRef };
  /** The user's choice in a lime.files.requestFiles picker (the refs granted from it), or a cancel. */
  answer_file_pick: { args: AnswerFilePickArgs; answer: Array<Outgoing> };
  /** Whether a newer AppHost exists, from the signed update feed (a notice; nothing is downloaded). */
  check_update: { args: NoArgs; answer: UpdateStatus };
  /** The package file the window was started to review (answered once), or null. */
  launch_package: { args: NoArgs; answer: LaunchPackage | null };
  /** Binds a folder to a knowledge template the app declares and indexes it (the app page's Bind knowledge). */
  bind_knowledge: { args: BindKnowledgeArgs; answer: Indexed };
  /** Removes a knowledge template's binding and its index. */
  unbind_knowledge: { args: UnbindKnowledgeArgs; answer: boolean };
  /** Every knowledge binding (or one app's) with its index: files, chunks, last indexed, problems. */
  knowledge_status: { args: KnowledgeStatusArgs; answer: Array<BindingStatus> };
  /** An app's declared tool refs and knowledge templates with their state: server present, listed, granted, destructive; bound folder and index. */
  app_material: { args: AppMaterialArgs; answer: AppMaterial };
  /** Grants a tool the app declares in toolRefs[] (as apphost tools grant). */
  grant_tool: { args: ToolGrantArgs; answer: boolean };
  /** Revokes an app's tool grant: its next call and its agent tasks' next turn lose the tool. */
  revoke_tool: { args: ToolGrantArgs; answer: boolean };
  /** An app's declared backend services: state, restarts, last exit, why one cannot run. */
  app_services: { args: AppServicesArgs; answer: Array<ServiceStatus> };
  /** The tail (64 KiB) of a service's log: its stderr, kept in apps/<app>/services/.logs/. */
  service_logs: { args: ServiceArgs; answer: ServiceLog };
  /** Starts a service now (a user stop or start also clears a crash loop). */
  service_start: { args: ServiceArgs; answer: boolean };
  /** Stops a service; true when it was running. */
  service_stop: { args: ServiceArgs; answer: boolean };
  /** Calls a method of an app's service as the host's user (audited service.call, by host-user). */
  service_call: { args: ServiceCallArgs; answer: unknown };
  /** Allows a server-assisted remote service to be called at its declared endpoint's origin (audited service.remote_allow). */
  service_allow_remote: { args: ServiceArgs; answer: RemoteAllowed };
  /** Revokes a remote service's allowance (audited service.remote_revoke); true when it was allowed. */
  service_revoke_remote: { args: ServiceArgs; answer: boolean };
  /** Every app's agent tasks, newest first. */
  list_tasks: { args: ListTasksArgs; answer: Array<AgentTaskView> };
  /** One task with its input and a page of its events. */
  task_detail: { args: TaskDetailArgs; answer: TaskDetail };
  /** Cancels a task as the host's user. */
  task_cancel: { args: TaskArgs; answer: AgentTaskView };
  /** Runs a failed or cancelled task again. */
  task_retry: { args: TaskArgs; answer: AgentTaskView };
  /** Answers a pending action of a task. */
  task_respond: { args: TaskRespondArgs; answer: Responded };
  /** The command palette's app items: every enabled app's `command` entries (with readiness and the UI entry that runs them) and the routes apps registered with `lime.ui.registerRoute`. */
  ui_palette: { args: NoArgs; answer: Palette };
  /** The UI entries of enabled apps that declare an artifact type in `artifactTypes[]`. */
  artifact_viewers: { args: ArtifactViewersArgs; answer: Array<ArtifactViewer> };
  /** Opens a mounted frame for a route, a command entry or an artifact of its own app (`ui.launch_refused` otherwise): `ui:launch` now, or after the frame's `app:ready`. */
  ui_launch: { args: UiLaunchArgs; answer: Array<Outgoing> };
  /** Every app's workflow runs (or one app's), newest first. */
  workflow_runs: { args: WorkflowRunsArgs; answer: Array<RunSummary> };
  /** One run: step timeline, pending review or input, outputs, evidence. */
  workflow_run: { args: WorkflowRunArgs; answer: RunDetail };
  /** Runs a `workflow` entry (the Run action) until it waits or ends. */
  workflow_start: { args: WorkflowStartArgs; answer: RunSummary };
  /** Answers a run's review, input or retry decision as the host's user. */
  workflow_respond: { args: WorkflowRespondArgs; answer: RunSummary };
  /** Cancels a run as the host's user. */
  workflow_cancel: { args: WorkflowRunArgs; answer: RunSummary };
  /** The scheduled starts: next due time, last start, missed slots. */
  workflow_schedules: { args: NoArgs; answer: Array<ScheduleRecord> };
}

/** A host command's name. */
export type HostCommandName = keyof HostCommands;

/** Every command name, in table order. */
export const HOST_COMMAND_NAMES = ["model_settings", "set_model", "test_model", "list_apps", "mount_entry", "unmount", "launch_target", "sync_mounts", "bridge_message", "bridge_refused", "answer_prompt", "answer_download", "set_visibility", "bridge_diagnostics", "catalog_list", "catalog_refresh", "browse_catalog", "catalog_review_install", "catalog_set_channel", "review_install", "install", "cancel_review", "app_detail", "list_grants", "grant", "revoke", "set_enabled", "uninstall_plan", "uninstall", "rollback", "audit", "verify_store", "diagnostics_bundle", "trusted_keys", "add_trusted_key", "remove_trusted_key", "host_settings", "set_theme", "dev_status", "dev_consent", "bind_secret", "dev_diagnostic", "next_events", "open_external", "file_refs", "file_ref_revoke", "file_grant_path", "file_upload", "answer_file_pick", "check_update", "launch_package", "bind_knowledge", "unbind_knowledge", "knowledge_status", "app_material", "grant_tool", "revoke_tool", "app_services", "service_logs", "service_start", "service_stop", "service_call", "service_allow_remote", "service_revoke_remote", "list_tasks", "task_detail", "task_cancel", "task_retry", "task_respond", "ui_palette", "artifact_viewers", "ui_launch", "workflow_runs", "workflow_run", "workflow_start", "workflow_respond", "workflow_cancel", "workflow_schedules"] as const satisfies readonly HostCommandName[];

/** `upload_package`'s answer. Keeps raw package bytes (a .zip, the request body) for a later review. */
export type UploadPackageAnswer = UploadInfo;

/** The payload of each outbox event kind. */
export interface HostEventPayloads {
  /** Bytes verified while a catalog download streams, or a review or an install reads the package. */
  "install:progress": InstallProgress;
  /** Another process (or the bridge's own grant) changed the store: reload. */
  "store:changed": null;
  /** Mounts Rust ended because their app changed. */
  "mounts:ended": Array<EndedMount>;
  /** A task changed its status or approvals. */
  "tasks:changed": TasksChanged;
  /** A workflow run changed (started, answered, driven, cancelled), or a schedule missed slots. */
  "workflow:changed": WorkflowChanged;
  /** Bridge actions produced off the request path, executed like a `bridge_message` answer. */
  "outgoing": Array<Outgoing>;
}
