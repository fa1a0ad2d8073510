//! Errors are data: a stable [`ErrorCode`], a human message and structured details.
//!
//! The codes are part of AppHost's public contract (documented in `docs/cli.md`): they are
//! serialized as dotted snake_case strings and never change meaning once published.

use serde::Serialize;
use serde_json::Value;

macro_rules! error_codes {
    ($( $(#[$doc:meta])* $variant:ident = $text:literal => $class:ident, )*) => {
        /// Every error AppHost can report, with its stable wire string.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode { $( $(#[$doc])* $variant, )* }

        impl ErrorCode {
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $text,)* }
            }

            pub fn class(self) -> ErrorClass {
                match self { $(ErrorCode::$variant => ErrorClass::$class,)* }
            }
        }
    };
}

error_codes! {
    // --- where the package comes from -------------------------------------------------------
    SourceNotFound = "source.not_found" => Input,
    SourceUnsupported = "source.unsupported" => Input,
    SourceIo = "source.io" => Input,
    SourceChanged = "source.changed" => Input,
    // --- catalog files --------------------------------------------------------------------
    CatalogInvalid = "catalog.invalid" => Input,
    CatalogReleaseNotFound = "catalog.release_not_found" => NotFound,
    CatalogAmbiguous = "catalog.ambiguous" => Usage,
    CatalogUnsupportedUrl = "catalog.unsupported_url" => Input,
    CatalogReleaseMismatch = "catalog.release_mismatch" => Rejected,
    // --- remote catalogs (install/remote/, docs/cli.md "apphost catalog") ----------------
    /// `catalog add` with a name already in use.
    CatalogExists = "catalog.exists" => Conflict,
    /// No remote catalog of that name.
    CatalogNotFound = "catalog.not_found" => NotFound,
    /// A catalog name that is not `[a-z0-9][a-z0-9._-]{0,63}`.
    CatalogBadName = "catalog.bad_name" => Usage,
    /// A catalog URL that is not https (plain http only for loopback hosts).
    CatalogInsecureUrl = "catalog.insecure_url" => Usage,
    /// The catalog server could not be reached or answered an HTTP error.
    CatalogFetchFailed = "catalog.fetch_failed" => Input,
    /// A download stalled or ran past its total time bound.
    CatalogTimeout = "catalog.timeout" => Input,
    /// Metadata is not JSON of TUF's shape, or a role file is not what it claims to be.
    CatalogMetadataInvalid = "catalog.metadata_invalid" => Rejected,
    /// Metadata is larger than its bound (the signed length, or the role's fixed limit).
    CatalogMetadataTooLarge = "catalog.metadata_too_large" => Rejected,
    /// Metadata not signed by the threshold of keys its role names in the trusted root.
    CatalogSignatureInvalid = "catalog.signature_invalid" => Rejected,
    /// A new root not signed by the threshold of both the trusted root's and its own root keys,
    /// or not the next version.
    CatalogRootRotationRefused = "catalog.root_rotation_refused" => Rejected,
    /// Metadata older than what this host already trusts (rollback).
    CatalogRollback = "catalog.rollback" => Rejected,
    /// Metadata past its expiry (freeze).
    CatalogMetadataExpired = "catalog.metadata_expired" => Rejected,
    /// Snapshot or targets metadata that is not the version, length or hash the signed
    /// timestamp or snapshot names (mix-and-match).
    CatalogMetadataMismatch = "catalog.metadata_mismatch" => Rejected,
    /// A file the signed targets do not list.
    CatalogTargetUnknown = "catalog.target_unknown" => Rejected,
    /// A downloaded file whose length or SHA-256 differs from the signed targets.
    CatalogTargetMismatch = "catalog.target_mismatch" => Rejected,
    /// A server sent more bytes than the signed length (endless data).
    CatalogTargetTooLarge = "catalog.target_too_large" => Rejected,
    /// The release is revoked by its publisher.
    CatalogReleaseRevoked = "catalog.release_revoked" => Rejected,
    /// The catalog state on disk is unreadable.
    CatalogStateInvalid = "catalog.state_invalid" => Internal,
    /// The user cancelled the review while its catalog download streamed (nothing kept).
    CatalogDownloadCancelled = "catalog.download_cancelled" => Declined,
    // --- package contents (folder or zip) -------------------------------------------------
    ArchiveInvalid = "archive.invalid" => Rejected,
    ArchivePathTraversal = "archive.path_traversal" => Rejected,
    ArchiveAbsolutePath = "archive.absolute_path" => Rejected,
    ArchiveInvalidName = "archive.invalid_name" => Rejected,
    ArchiveNonUtf8Name = "archive.non_utf8_name" => Rejected,
    ArchiveSymlink = "archive.symlink" => Rejected,
    ArchiveHardlink = "archive.hardlink" => Rejected,
    ArchiveSpecialFile = "archive.special_file" => Rejected,
    ArchiveDuplicateEntry = "archive.duplicate_entry" => Rejected,
    ArchiveCaseCollision = "archive.case_collision" => Rejected,
    ArchiveTooManyFiles = "archive.too_many_files" => Rejected,
    ArchiveTooLarge = "archive.too_large" => Rejected,
    ArchiveCompressionRatio = "archive.compression_ratio" => Rejected,
    ArchiveSizeMismatch = "archive.size_mismatch" => Rejected,
    ArchiveEncrypted = "archive.encrypted" => Rejected,
    ArchiveUnsupportedCompression = "archive.unsupported_compression" => Rejected,
    ArchiveNoRoot = "archive.no_root" => Rejected,
    /// A zip entry's local header names another file than its central-directory record.
    ArchiveLocalNameMismatch = "archive.local_name_mismatch" => Rejected,
    /// Two zip entries share bytes, or an entry runs into the central directory.
    ArchiveOverlappingEntries = "archive.overlapping_entries" => Rejected,
    // --- APP.md and layered files ---------------------------------------------------------
    ManifestMissing = "manifest.missing" => Rejected,
    ManifestTooLarge = "manifest.too_large" => Rejected,
    ManifestMetadataTooLarge = "manifest.metadata_too_large" => Rejected,
    ManifestNotUtf8 = "manifest.not_utf8" => Rejected,
    ManifestNoFrontmatter = "manifest.no_frontmatter" => Rejected,
    ManifestYamlSyntax = "manifest.yaml_syntax" => Rejected,
    ManifestYamlNodeLimit = "manifest.yaml_node_limit" => Rejected,
    ManifestYamlAliasLimit = "manifest.yaml_alias_limit" => Rejected,
    ManifestYamlExpansionLimit = "manifest.yaml_expansion_limit" => Rejected,
    ManifestYamlDepthLimit = "manifest.yaml_depth_limit" => Rejected,
    ManifestYamlDuplicateKey = "manifest.yaml_duplicate_key" => Rejected,
    ManifestNotAMapping = "manifest.not_a_mapping" => Rejected,
    ManifestMissingField = "manifest.missing_field" => Rejected,
    ManifestInvalidField = "manifest.invalid_field" => Rejected,
    ManifestUnknownStatus = "manifest.unknown_status" => Rejected,
    ManifestUnknownAppType = "manifest.unknown_app_type" => Rejected,
    ManifestUnknownEntryKind = "manifest.unknown_entry_kind" => Rejected,
    ManifestDuplicateKey = "manifest.duplicate_key" => Rejected,
    ManifestUnsupportedVersion = "manifest.unsupported_version" => Rejected,
    /// A manifest field that names a package file is not a safe package path.
    ManifestInvalidPackagePath = "manifest.invalid_package_path" => Rejected,
    // --- verification -----------------------------------------------------------------------
    VerifyPackageHashMismatch = "verify.package_hash_mismatch" => Rejected,
    VerifyManifestHashMismatch = "verify.manifest_hash_mismatch" => Rejected,
    VerifyLockInvalid = "verify.lock_invalid" => Rejected,
    VerifyLockMismatch = "verify.lock_mismatch" => Rejected,
    VerifySignatureMalformed = "verify.signature_malformed" => Rejected,
    VerifySignatureInvalid = "verify.signature_invalid" => Rejected,
    VerifyUntrustedKey = "verify.untrusted_key" => Rejected,
    VerifyUnsigned = "verify.unsigned" => Rejected,
    // --- compatibility ----------------------------------------------------------------------
    CompatRequiresUnsatisfied = "compat.requires_unsatisfied" => Rejected,
    CompatInvalidRange = "compat.invalid_range" => Rejected,
    CompatEndOfLife = "compat.end_of_life" => Rejected,
    // --- lifecycle --------------------------------------------------------------------------
    InstallConsentDeclined = "install.consent_declined" => Declined,
    InstallConsentRequired = "install.consent_required" => Declined,
    InstallAlreadyInstalled = "install.already_installed" => Conflict,
    InstallVersionConflict = "install.version_conflict" => Conflict,
    InstallNotNewer = "install.not_newer" => Conflict,
    /// Signed by another key than the pinned publisher (or unsigned over signed), not accepted.
    InstallPublisherChanged = "install.publisher_changed" => Conflict,
    /// `commit` was handed a plan that is not the one the staged package and store give now.
    InstallPlanMismatch = "install.plan_mismatch" => Conflict,
    AppNotInstalled = "app.not_installed" => NotFound,
    AppNoRollbackTarget = "app.no_rollback_target" => Conflict,
    /// The app declares no permission with that key (grant, revoke).
    PermissionUnknown = "permission.unknown" => NotFound,
    /// The installed state changed between the plan and the commit (another process).
    InstallPlanStale = "install.plan_stale" => Conflict,
    // --- the store --------------------------------------------------------------------------
    StoreIo = "store.io" => Internal,
    StoreDb = "store.db" => Internal,
    StoreCorrupt = "store.corrupt" => Internal,
    StoreSchemaMismatch = "store.schema_mismatch" => Internal,
    ExportFailed = "export.failed" => Internal,
    /// An app's artifact or evidence records (in its data area) could not be read.
    AppDataUnreadable = "app_data.unreadable" => Internal,
    /// A warning, never a failed command: the operation committed, a step after it did not.
    StoreCleanupIncomplete = "store.cleanup_incomplete" => Internal,
    // --- trust configuration and keys -------------------------------------------------------
    KeyInvalid = "key.invalid" => Input,
    KeyNotFound = "key.not_found" => NotFound,
    KeyAmbiguous = "key.ambiguous" => Usage,
    // --- command line -------------------------------------------------------------------------
    CliUsage = "cli.usage" => Usage,
    SettingInvalid = "setting.invalid" => Usage,
    /// A settings key under a prefix the store writes only through its own audited path
    /// (`app-secret/`, `app-network/`, ...: `store::RESERVED_SETTING_PREFIXES`); nothing written.
    SettingReserved = "setting.reserved" => Usage,
    // --- app surfaces -----------------------------------------------------------------------
    /// The app is disabled: it cannot be mounted.
    MountAppDisabled = "mount.app_disabled" => Conflict,
    /// The app has no entry with that key.
    MountUnknownEntry = "mount.unknown_entry" => NotFound,
    /// The entry is not a UI surface (or the app ships no UI).
    MountNotASurface = "mount.not_a_surface" => Conflict,
    /// The entry is not ready (needs setup, blocked); details carry the setup actions.
    MountNotReady = "mount.not_ready" => Conflict,
    /// The host UI asked to open a frame for a route, command or artifact its app does not
    /// declare or register (`details.reason`); nothing was posted.
    UiLaunchRefused = "ui.launch_refused" => Conflict,
    // --- model settings and the secret store ----------------------------------------------
    ModelNotConfigured = "model.not_configured" => NotFound,
    ModelInvalidBaseUrl = "model.invalid_base_url" => Usage,
    ModelInvalidName = "model.invalid_name" => Usage,
    ModelApiKeyEnvUnset = "model.api_key_env_unset" => Usage,
    ModelApiKeyMissing = "model.api_key_missing" => NotFound,
    SecretInvalidName = "secret.invalid_name" => Usage,
    SecretStoreUnavailable = "secret.store_unavailable" => Internal,
    SecretKeyUnavailable = "secret.key_unavailable" => Internal,
    SecretUndecryptable = "secret.undecryptable" => Internal,
    /// The app's active manifest declares no secret slot with that key (`apphost secrets`).
    SecretSlotUnknown = "secret.slot_unknown" => NotFound,
    /// A value for a secret slot is empty, too large or not UTF-8 text.
    SecretInvalidValue = "secret.invalid_value" => Usage,
    // --- the model provider (mirrors runtime_core::provider::ErrorKind) ---------------------
    ProviderInvalidConfig = "provider.invalid_config" => ProviderRefused,
    ProviderUnreachable = "provider.unreachable" => ProviderUnavailable,
    ProviderTimeout = "provider.timeout" => ProviderUnavailable,
    ProviderAuth = "provider.auth" => ProviderRefused,
    ProviderRateLimited = "provider.rate_limited" => ProviderUnavailable,
    ProviderServerError = "provider.server_error" => ProviderUnavailable,
    ProviderHttpStatus = "provider.http_status" => ProviderRefused,
    ProviderStreamError = "provider.stream_error" => ProviderRefused,
    ProviderStreamDropped = "provider.stream_dropped" => ProviderUnavailable,
    ProviderMalformedStream = "provider.malformed_stream" => ProviderRefused,
    ProviderResponseTooLarge = "provider.response_too_large" => ProviderRefused,
    ProviderCancelled = "provider.cancelled" => ProviderUnavailable,
    // --- the app center (host UI operations) -------------------------------------------------
    /// No such install review: never made, already used, cancelled or expired.
    ReviewNotFound = "review.not_found" => NotFound,
    /// No such upload: never made, already reviewed, or expired.
    UploadNotFound = "upload.not_found" => NotFound,
    /// An uploaded package is larger than the package size limit.
    UploadTooLarge = "upload.too_large" => Rejected,
    /// `apphost dev` on a folder whose app is installed normally (not as a dev install).
    DevNotADevInstall = "dev.not_a_dev_install" => Conflict,
    /// The folder's app name changed while `apphost dev` watched it (a finding, not an error).
    DevAppRenamed = "dev.app_renamed" => Rejected,
    /// `dev_consent`: the change a dev app holds is no longer the one the host UI showed.
    DevConsentStale = "dev.consent_stale" => Conflict,
    // --- agent tasks in the host UI (docs/host-api.md, "Agent tasks") ------------------------
    /// No task with that id in that app (another app's task is answered the same way).
    TaskNotFound = "task.not_found" => NotFound,
    /// No pending approval with that id in the task's latest run.
    TaskActionNotFound = "task.action_not_found" => NotFound,
    /// `task_retry`: the task's latest run has not ended.
    TaskBusy = "task.busy" => Conflict,
    /// The agent runtime or its task storage could not be opened or failed.
    TaskRuntimeFailed = "task.runtime_failed" => Internal,
    /// Another AppHost process (the desktop, or `apphost app-server`) has the data directory's
    /// agent runtime open: one process owns `runtime/` at a time.
    RuntimeBusy = "runtime.busy" => Conflict,
    // --- workflow runs (docs/cli.md, "apphost workflow") ---------------------------------------
    /// The app declares no workflow with that key.
    WorkflowNotDeclared = "workflow.not_declared" => NotFound,
    /// No `workflow` entry of the app runs that workflow (a run's steps are that entry's calls).
    WorkflowNoEntry = "workflow.no_entry" => NotFound,
    /// The workflow's definition has an error finding (see `apphost readiness`).
    WorkflowInvalidDefinition = "workflow.invalid_definition" => Rejected,
    /// `--input` is not JSON, or the idempotency key is empty or too long.
    WorkflowInvalidInput = "workflow.invalid_input" => Usage,
    /// No run with that id.
    WorkflowRunNotFound = "workflow.run_not_found" => NotFound,
    /// The run has ended (succeeded, failed or cancelled).
    WorkflowRunFinished = "workflow.run_finished" => Conflict,
    /// The run does not wait for this kind of answer (or no `--approve` / `--reject` was given).
    WorkflowNotWaiting = "workflow.not_waiting_for_answer" => Conflict,
    /// A review, input or retry decision answered by the app instead of the user.
    WorkflowAnswerNotByUser = "workflow.answer_not_by_user" => Rejected,
    /// The runs' event log could not be read or written.
    WorkflowRunFailed = "workflow.run_failed" => Internal,
    // --- lime.tools: MCP servers and tool calls (docs/cli.md, "apphost tools") ------------------
    /// The app has no grant of this tool (`apphost tools grant <app> <server>/<tool>`), or the
    /// grant is another app's.
    ToolsNotGranted = "tools.not_granted" => Rejected,
    /// The server could not be started or reached, died, or is waiting out its restart backoff.
    ToolsServerUnavailable = "tools.server_unavailable" => Internal,
    /// The tool call did not answer within its timeout (the server was sent a cancel).
    ToolsTimeout = "tools.timeout" => Internal,
    /// The server answered something that is not a valid MCP result, or one over the size cap.
    ToolsBadResponse = "tools.bad_response" => Internal,
    /// Denied by the admin policy, or a destructive call the user did not approve.
    ToolsDenied = "tools.denied" => Declined,
    /// The app's manifest declares no `toolRefs[]` item for this tool.
    ToolsNotDeclared = "tools.not_declared" => Rejected,
    /// No MCP server with that name, or the server lists no tool with that name.
    ToolsNotFound = "tools.not_found" => NotFound,
    /// `apphost tools add`: a server with that name exists already (remove it first).
    ToolsServerExists = "tools.server_exists" => Conflict,
    /// A server definition, a `<server>/<tool>` reference or call arguments are malformed.
    ToolsInvalid = "tools.invalid" => Usage,
    /// The agent task's turn ended (cancelled) while its tool call ran: the server was sent a
    /// cancel and the result is not used.
    ToolsCancelled = "tools.cancelled" => Declined,
    /// The app has the most unfinished runs it may have (`MAX_UNFINISHED_RUNS_PER_APP`).
    WorkflowTooManyRuns = "workflow.too_many_runs" => Conflict,
    /// A start reused an idempotency key with another input.
    WorkflowIdempotencyConflict = "workflow.idempotency_conflict" => Conflict,
    // --- lime.files refs (docs/cli.md, "apphost files"; docs/bridge-protocol.md) ---------------
    /// No live file ref with that id for that app (unknown, revoked and other apps' refs alike).
    FilesRefNotFound = "files.ref_not_found" => NotFound,
    /// A path was handed in where a ref belongs, a relative path leaves its folder, or a path
    /// granted is not a regular file or directory (a link, a device, a FIFO, a socket).
    FilesPathNotAllowed = "files.path_not_allowed" => Rejected,
    /// `apphost files grant`: nothing at that path.
    FilesPathNotFound = "files.path_not_found" => NotFound,
    /// A read or an upload larger than its limit.
    FilesTooLarge = "files.too_large" => Rejected,
    /// The granted file was replaced by a link or a special file, or has other hard links
    /// inside a granted folder: it is not read.
    FilesChanged = "files.changed" => Conflict,
    /// The file could not be read (I/O).
    FilesReadFailed = "files.read_failed" => Internal,
    /// The app holds the most refs it may (`store::file_refs::MAX_REFS_PER_APP`).
    FilesTooManyRefs = "files.too_many_refs" => Rejected,
    // --- knowledge bindings (docs/cli.md, "apphost knowledge") -----------------------------
    /// The app's active manifest declares no knowledge template with that key.
    KnowledgeTemplateNotDeclared = "knowledge.template_not_declared" => NotFound,
    /// The template is declared but no folder is bound to it.
    KnowledgeNotBound = "knowledge.not_bound" => NotFound,
    /// The folder to bind is not an absolute path to a readable directory.
    KnowledgeFolderInvalid = "knowledge.folder_invalid" => Usage,
    /// A search query with no words, over 1024 bytes or 32 words, or a top-K outside 1-50.
    KnowledgeQueryInvalid = "knowledge.query_invalid" => Usage,
    /// The template's index could not be opened, read or written.
    KnowledgeIndexFailed = "knowledge.index_failed" => Internal,
    // --- backend services (docs/services.md, "apphost services") ---------------------------------
    /// The app's active manifest declares no service with that key.
    ServiceNotDeclared = "service.not_declared" => NotFound,
    /// The service cannot run here or now (`details.cause`: `service.sandbox_unavailable`,
    /// `service.runtime_unavailable`, `service.invalid_spec`, `service.remote_not_allowed`,
    /// `service.remote_address_refused` (an endpoint outside the public internet),
    /// `service.crash_loop`, `service.backoff`, `service.app_disabled`, …).
    ServiceCannotRun = "service.cannot_run" => Conflict,
    /// The service was started but the call failed (`details.cause`: `service.timeout`,
    /// `service.exited`, `service.protocol`, `service.error`, `service.start_failed`).
    ServiceCallFailed = "service.call_failed" => Internal,
    // --- desktop IPC ---------------------------------------------------------------------------
    /// A Tauri command was called from a page that is not the host UI (e.g. an escaped app frame).
    IpcForbiddenOrigin = "ipc.forbidden_origin" => Rejected,
    /// `apphost` (no arguments) or `apphost open` could not start `apphost-desktop` beside it.
    DesktopUnavailable = "desktop.unavailable" => Internal,
    /// `open_external` was given something that is not an absolute http(s) URL.
    ExternalInvalidUrl = "external.invalid_url" => Rejected,
    /// No program to open links with (`xdg-open`) is installed, or it could not be started.
    ExternalUnavailable = "external.unavailable" => Internal,
    // --- the host API (docs/host-api.md) ---------------------------------------------------
    /// The host UI called a command the command layer does not know.
    ApiUnknownCommand = "api.unknown_command" => Usage,
    /// A command's arguments are not a JSON object of the documented shape.
    ApiBadArguments = "api.bad_arguments" => Usage,
    /// `apphost serve`: no valid session cookie, or a launch token that is wrong or used already.
    ApiUnauthorized = "api.unauthorized" => Rejected,
    /// `apphost serve`: a foreign `Host` header, an `Origin` other than the host UI's, or an app
    /// origin asking for the host API (`details.reason`).
    ApiForbidden = "api.forbidden" => Rejected,
    /// `apphost serve`: a request body over the limit (`details.limit`).
    ApiBodyTooLarge = "api.body_too_large" => Rejected,
    /// `apphost serve`: wrong method or `Content-Type`, or an unreadable body.
    ApiBadRequest = "api.bad_request" => Usage,
    /// `apphost serve`: no host UI file at that path.
    ApiNotFound = "api.not_found" => NotFound,
    /// `apphost serve` cannot listen on the address and port asked for.
    ServerBindFailed = "server.bind_failed" => Internal,
    /// This `apphost` was built before the host UI (`ui-host/dist`), so `serve` has nothing to serve.
    ServerUiMissing = "server.ui_missing" => Internal,
    /// `host:download`: the file an app offered is larger than the download limit (64 MiB).
    DownloadTooLarge = "download.too_large" => Rejected,
    /// `host:download`: the user's download folder could not be created or written.
    DownloadIo = "download.io" => Internal,
    /// `host:download`: the name and its 999 numbered variants all exist in the download folder.
    DownloadNameTaken = "download.name_taken" => Conflict,
    /// `host:download`: no pending download with that id (answered already, or its frame went away).
    DownloadUnknown = "download.unknown" => NotFound,
    // --- app authoring: `apphost new`, `apphost sdk` -----------------------------------------
    /// `apphost new`: the name does not make a valid app id (`^[a-z0-9][a-z0-9-_.]*$`, ≤ 64).
    AuthorInvalidName = "author.invalid_name" => Usage,
    /// `apphost new` / `apphost sdk`: the target folder exists and is not empty.
    AuthorTargetExists = "author.target_exists" => Conflict,
    /// `apphost new` / `apphost sdk`: the files could not be written (nothing is left behind).
    AuthorWriteFailed = "author.write_failed" => Internal,
    /// This `apphost` was built before the SDK (`bridge-sdk/dist`, or its `npm pack` tarball).
    AuthorSdkMissing = "author.sdk_missing" => Internal,
    // --- the host's own update check (center/host_update.rs, docs/shipping.md) ---------------
    /// The update feed's signature does not verify with the key built into this AppHost (the
    /// feed or its signature was changed, or the signature is not one).
    UpdateBadSignature = "update.bad_signature" => Rejected,
    /// The update feed is signed by another key than the one built into this AppHost.
    UpdateWrongKey = "update.wrong_key" => Rejected,
    /// The signed update feed names an older version than the running one (a replayed feed).
    UpdateDowngrade = "update.downgrade" => Rejected,
    /// The update feed is not one: over 64 KiB, not JSON, no valid version, no download link.
    UpdateBadFeed = "update.bad_feed" => Rejected,
    /// The update feed could not be fetched: network, HTTP status, timeout, not https.
    UpdateUnreachable = "update.unreachable" => Input,
    Internal = "internal" => Internal,
}

/// Coarse classes of error, each with one CLI exit code (see `docs/cli.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Bad command-line usage.
    Usage,
    /// The input could not be read at all (missing path, unreadable catalog).
    Input,
    /// The package was read and rejected (malformed, malicious, unverifiable, incompatible).
    Rejected,
    /// The user declined, or consent was needed and not given.
    Declined,
    /// The operation conflicts with the installed state.
    Conflict,
    /// The named app, release or key does not exist.
    NotFound,
    /// AppHost itself failed (I/O, database).
    Internal,
    /// The model provider could not be reached or did not finish (network, timeout, rate limit,
    /// server error, dropped stream): trying again later may work.
    ProviderUnavailable,
    /// The model provider refused the request or answered nonsense (bad key, unknown model,
    /// bad request, malformed stream): the settings need fixing.
    ProviderRefused,
}

impl ErrorClass {
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorClass::Usage => 2,
            ErrorClass::Input => 3,
            ErrorClass::Rejected => 4,
            ErrorClass::Declined => 5,
            ErrorClass::Conflict => 6,
            ErrorClass::NotFound => 7,
            ErrorClass::ProviderUnavailable => 8,
            ErrorClass::ProviderRefused => 9,
            ErrorClass::Internal => 10,
        }
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// On the wire an error code is its dotted string (the list is in `docs/cli.md`; it grows, so the
/// schema says `string`).
impl schemars::JsonSchema for ErrorCode {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ErrorCode".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A stable error code, e.g. `install.consent_required` (docs/cli.md).",
        })
    }
}

/// `{code, message, details}`: the one error shape every AppHost surface reports.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct HostError {
    pub code: ErrorCode,
    pub message: String,
    pub details: Value,
    /// Set when the error is SQLite refusing because another connection holds a lock
    /// (`SQLITE_BUSY` / `SQLITE_LOCKED`, classified by result code): not reported, only asked
    /// in-process by [`HostError::is_sqlite_busy`].
    #[serde(skip)]
    #[schemars(skip)]
    sqlite_busy: bool,
}

impl HostError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        HostError {
            code,
            message: message.into(),
            details: Value::Object(Default::default()),
            sqlite_busy: false,
        }
    }

    /// A `store.db` error for the SQLite error `e`, with `message`; remembers whether `e` was
    /// SQLite's "busy" ([`runtime_core::sqlite::is_busy`]).
    pub fn from_sqlite(e: &rusqlite::Error, message: impl Into<String>) -> Self {
        let mut err = HostError::new(ErrorCode::StoreDb, message);
        err.sqlite_busy = runtime_core::sqlite::is_busy(e);
        err
    }

    /// Whether this error is SQLite's "busy" (another connection holds a lock): worth trying
    /// again after a moment.
    pub fn is_sqlite_busy(&self) -> bool {
        self.sqlite_busy
    }

    /// Adds one detail field (details is always a JSON object).
    pub fn with(mut self, key: &str, value: impl Serialize) -> Self {
        if let Value::Object(map) = &mut self.details {
            map.insert(
                key.to_owned(),
                serde_json::to_value(value).unwrap_or(Value::Null),
            );
        }
        self
    }

    pub fn io(code: ErrorCode, what: &str, path: &std::path::Path, err: std::io::Error) -> Self {
        HostError::new(code, format!("{what} {}: {err}", path.display()))
            .with("path", path.display().to_string())
            .with("ioError", err.to_string())
    }
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for HostError {}

impl From<rusqlite::Error> for HostError {
    fn from(e: rusqlite::Error) -> Self {
        HostError::from_sqlite(&e, format!("database error: {e}"))
    }
}

pub type HostResult<T> = Result<T, HostError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_dotted_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "duplicate code {s}");
            assert!(
                s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.'),
                "{s} is not dotted snake_case"
            );
        }
    }

    #[test]
    fn serializes_as_code_message_details() {
        let e = HostError::new(ErrorCode::ArchivePathTraversal, "bad path").with("path", "../x");
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"code": "archive.path_traversal", "message": "bad path", "details": {"path": "../x"}})
        );
    }
}
