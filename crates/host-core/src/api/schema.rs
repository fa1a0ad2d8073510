//! Generates the host API's contract from the Rust types of its commands:
//!
//! - `schemas/host-api/host-api.schema.json`: per command (every name of the areas' `COMMANDS`
//!   tables, plus the raw-body `upload_package`) the schema of its arguments and of its answer,
//!   the payload of every outbox event kind, and the shared definitions (`$defs`);
//! - `ui-host/src/generated/host-api.ts`: the same types for TypeScript (through the shared
//!   emitter, [`crate::foundation::typescript`]), with a `HostCommands` map from command name to
//!   `{args, answer}` and a `HostEventPayloads` map from event kind to payload.
//!
//! [`catalog`] lists each command's argument and answer types; `tests/host_api_schemas.rs` fails
//! when a command of the tables is missing from it, when the committed files differ from what
//! this produces, or when real answers do not validate.

use schemars::generate::{Contract, SchemaGenerator, SchemaSettings};
use schemars::JsonSchema;
use serde_json::{json, Map, Value};

use super::agent::ModelSet;
use super::bridge::SessionDiagnostics;
use super::center::{SecretBound, ThemeSet, Uninstalled};
use super::external::OpenedUrl;
use super::outbox::Batch;
use super::session::LaunchTarget;
use super::watch::{EndedMount, SyncReport};
use super::NoArgs;
use super::{agent, apps, bridge, center, events, external, knowledge, tasks, workflow};
use crate::center::detail::AppDetail;
use crate::center::dev::DevStatus;
use crate::center::diagnostics::Bundle;
use crate::center::grants::GrantRow;
use crate::center::lifecycle::LifecyclePlan;
use crate::center::review::InstallReview;
use crate::center::settings::{HostSettings, TrustedKeyRow};
use crate::center::UploadInfo;
use crate::foundation::typescript::{declarations, ts_type};
use crate::hosting::bridge::host::Outgoing;
use crate::hosting::model_settings::{ModelStatus, TestReport};
use crate::install::store::{AppSummary, AuditRow, VerifyReport};

/// Where each generated file lives, relative to the repository root.
pub const SCHEMA_PATH: &str = "schemas/host-api/host-api.schema.json";
pub const TYPESCRIPT_PATH: &str = "ui-host/src/generated/host-api.ts";
/// How to regenerate them (printed by the drift test).
pub const REGENERATE: &str = "APPHOST_BLESS=1 cargo test -p host-core --test host_api_schemas";

/// One command: its name, what it does, and the schemas of its arguments and answer.
pub struct CommandSpec {
    pub name: &'static str,
    pub doc: &'static str,
    args: fn(&mut SchemaGenerator) -> Value,
    answer: fn(&mut SchemaGenerator) -> Value,
}

/// One outbox event kind and its payload.
pub struct EventSpec {
    pub kind: &'static str,
    pub doc: &'static str,
    payload: fn(&mut SchemaGenerator) -> Value,
}

fn sub<T: JsonSchema>(g: &mut SchemaGenerator) -> Value {
    serde_json::to_value(g.subschema_for::<T>()).expect("schemas serialize")
}

/// An answer of `null`.
type Null = ();

macro_rules! cmd {
    ($name:literal, $args:ty, $answer:ty, $doc:literal) => {
        CommandSpec {
            name: $name,
            doc: $doc,
            args: sub::<$args>,
            answer: sub::<$answer>,
        }
    };
}

/// Every command of the `COMMANDS` tables, with its argument and answer types (table order).
pub fn catalog() -> Vec<CommandSpec> {
    vec![
        // agent.rs
        cmd!("model_settings", NoArgs, ModelStatus, "The model the runtime talks to; the API key is write-only (only whether one is set)."),
        cmd!("set_model", agent::SetModel, ModelSet, "Sets the model endpoint and name, and the API key (write-only)."),
        cmd!("test_model", NoArgs, TestReport, "One tiny request to the configured model."),
        // apps.rs
        cmd!("list_apps", NoArgs, Vec<AppSummary>, "The installed apps."),
        cmd!("mount_entry", apps::MountArgs, crate::hosting::bridge::mounts::Mount, "Mounts an entry: Rust checks the app, the entry and its readiness and answers the frame's URL, origin and sandbox."),
        cmd!("unmount", apps::MountId, bool, "The frame went away; answers whether the mount existed."),
        cmd!("launch_target", NoArgs, Option<LaunchTarget>, "The entry the host UI was started to open, or null."),
        cmd!("sync_mounts", NoArgs, SyncReport, "Ends the mounts whose app another process changed."),
        // bridge.rs
        cmd!("bridge_message", bridge::Message, Vec<Outgoing>, "Relays what a frame posted (with the origin the host UI observed)."),
        cmd!("bridge_refused", bridge::Refused, Null, "A message the host UI refused itself: counted, never acted on."),
        cmd!("answer_prompt", bridge::PromptAnswer, Vec<Outgoing>, "The user's answer to a permission prompt."),
        cmd!("answer_download", bridge::DownloadAnswer, Vec<Outgoing>, "The user's answer to a download."),
        cmd!("set_visibility", bridge::Visibility, Vec<Outgoing>, "The host UI showed or hid a frame."),
        cmd!("bridge_diagnostics", NoArgs, SessionDiagnostics, "What the bridge and the file server refused, and how many service calls ran."),
        // catalog.rs
        cmd!("catalog_list", NoArgs, Vec<crate::install::remote::catalogs::CatalogInfo>, "The remote catalogs with their freshness (last good refresh, stale since, last error); no network."),
        cmd!("catalog_refresh", super::catalog::RefreshArgs, super::catalog::Refreshed, "Refreshes one catalog or all; a refusal is recorded (stale) and never changes an installed app."),
        cmd!("browse_catalog", super::catalog::BrowseArgs, crate::center::catalog::Browse, "Catalog apps (publisher, trust, permissions, readiness preview) and per installed app the update offered with its permission diff, channel and revocation; no network."),
        cmd!("catalog_review_install", super::catalog::ReviewArgs, InstallReview, "Downloads a catalog release and reviews it like a local package; `install` with consent installs it."),
        cmd!("catalog_set_channel", super::catalog::ChannelArgs, crate::center::catalog::Browse, "Makes an installed app follow a channel of a catalog for its updates."),
        // center.rs
        cmd!("review_install", center::ReviewArgs, InstallReview, "Stages a package and describes it for the review sheet; nothing is stored."),
        cmd!("install", center::InstallArgsWire, AppSummary, "Installs what a review showed, after the user's consent."),
        cmd!("cancel_review", center::ReviewId, Null, "Forgets a review."),
        cmd!("app_detail", center::AppId, AppDetail, "Everything the app detail page shows."),
        cmd!("list_grants", center::MaybeApp, Vec<GrantRow>, "Grants of one app or of every app."),
        cmd!("grant", center::Scope, GrantRow, "Grants a declared permission."),
        cmd!("revoke", center::Scope, GrantRow, "Revokes a permission."),
        cmd!("set_enabled", center::Enabled, AppSummary, "Enables or disables an app."),
        cmd!("uninstall_plan", center::Mode, LifecyclePlan, "What an uninstall mode (or \"Disable only\") would remove and keep; nothing changes."),
        cmd!("uninstall", center::Uninstall, Uninstalled, "Uninstalls an app in one of the three uninstall modes."),
        cmd!("rollback", center::AppId, AppSummary, "Switches the active version to the previous one."),
        cmd!("audit", center::Audit, Vec<AuditRow>, "Audit records, newest first, filtered."),
        cmd!("verify_store", center::Verify, VerifyReport, "Verifies the store (quick: without rehashing blobs)."),
        cmd!("diagnostics_bundle", NoArgs, Bundle, "Writes a diagnostics zip without secrets."),
        cmd!("trusted_keys", NoArgs, Vec<TrustedKeyRow>, "The publisher keys this host trusts."),
        cmd!("add_trusted_key", center::AddKey, Vec<TrustedKeyRow>, "Trusts a publisher key."),
        cmd!("remove_trusted_key", center::KeyId, Vec<TrustedKeyRow>, "Stops trusting a publisher key."),
        cmd!("host_settings", NoArgs, HostSettings, "The host's data directory, limits, theme and version."),
        cmd!("set_theme", center::Theme, ThemeSet, "Keeps the theme choice; with `effective`, tells every ready frame."),
        cmd!("dev_status", NoArgs, Vec<DevStatus>, "The last result of every `apphost dev` app."),
        cmd!("dev_consent", center::DevConsent, DevStatus, "Installs the change a dev app holds if it is still the one shown."),
        cmd!("bind_secret", center::BindSecret, SecretBound, "Binds a declared secret slot (the value is write-only)."),
        // dev_console.rs
        cmd!("dev_diagnostic", super::dev_console::Report, super::dev_console::DevDiagnosticAnswer, "A dev install's frame reports an error, a rejection, a CSP violation or a refused form (dev installs only; bounded, rate-limited, text)."),
        // events.rs
        cmd!("next_events", events::NextEvents, Batch, "The outbox events after `after`, waiting up to `timeoutMs` (at most 25 s)."),
        // external.rs
        cmd!("open_external", external::Link, Option<OpenedUrl>, "Opens a confirmed http(s) link: null when the host opened it, `{url}` for the page to open."),
        // files.rs
        cmd!("file_refs", super::files::AppArg, Vec<crate::install::store::FileRef>, "An app's lime.files refs (with their paths, for the user)."),
        cmd!("file_ref_revoke", super::files::RevokeArgs, super::files::FileRefRevoked, "Revokes a lime.files ref: the app's next read of it is files.ref_not_found."),
        cmd!("file_grant_path", super::files::GrantArgs, crate::install::store::FileRef, "Grants a file or folder the user named to an app as a lime.files ref."),
        cmd!("file_upload", super::files::UploadArgs, crate::install::store::FileRef, "Keeps a file the user uploaded (≤ 3 MiB, base64) and grants it to an app as a lime.files ref."),
        cmd!("answer_file_pick", super::files::PickAnswer, Vec<Outgoing>, "The user's choice in a lime.files.requestFiles picker (the refs granted from it), or a cancel."),
        // host_update.rs
        cmd!("check_update", NoArgs, crate::center::host_update::UpdateStatus, "Whether a newer AppHost exists, from the signed update feed (a notice; nothing is downloaded)."),
        // launch_package.rs
        cmd!("launch_package", NoArgs, Option<super::launch_package::LaunchPackage>, "The package file the window was started to review (answered once), or null."),
        // knowledge.rs
        cmd!("bind_knowledge", knowledge::BindKnowledge, crate::hosting::app_knowledge::Indexed, "Binds a folder to a knowledge template the app declares and indexes it (the app page's Bind knowledge)."),
        cmd!("unbind_knowledge", knowledge::UnbindKnowledge, bool, "Removes a knowledge template's binding and its index."),
        cmd!("knowledge_status", knowledge::StatusArgs, Vec<crate::hosting::app_knowledge::BindingStatus>, "Every knowledge binding (or one app's) with its index: files, chunks, last indexed, problems."),
        // app_material.rs
        cmd!("app_material", super::app_material::AppArg, super::app_material::AppMaterial, "An app's declared tool refs and knowledge templates with their state: server present, listed, granted, destructive; bound folder and index."),
        cmd!("grant_tool", super::app_material::ToolArg, bool, "Grants a tool the app declares in toolRefs[] (as apphost tools grant)."),
        cmd!("revoke_tool", super::app_material::ToolArg, bool, "Revokes an app's tool grant: its next call and its agent tasks' next turn lose the tool."),
        // services.rs
        cmd!("app_services", super::services::AppArg, Vec<crate::hosting::services::ServiceStatus>, "An app's declared backend services: state, restarts, last exit, why one cannot run."),
        cmd!("service_logs", super::services::ServiceArg, super::services::ServiceLog, "The tail (64 KiB) of a service's log: its stderr, kept in apps/<app>/services/.logs/."),
        cmd!("service_start", super::services::ServiceArg, bool, "Starts a service now (a user stop or start also clears a crash loop)."),
        cmd!("service_stop", super::services::ServiceArg, bool, "Stops a service; true when it was running."),
        cmd!("service_call", super::services::CallArg, serde_json::Value, "Calls a method of an app's service as the host's user (audited service.call, by host-user)."),
        cmd!("service_allow_remote", super::services::ServiceArg, super::services::RemoteAllowed, "Allows a server-assisted remote service to be called at its declared endpoint's origin (audited service.remote_allow)."),
        cmd!("service_revoke_remote", super::services::ServiceArg, bool, "Revokes a remote service's allowance (audited service.remote_revoke); true when it was allowed."),
        // tasks.rs
        cmd!("list_tasks", tasks::ListArgs, Vec<AgentTaskView>, "Every app's agent tasks, newest first."),
        cmd!("task_detail", tasks::DetailArgs, TaskDetail, "One task with its input and a page of its events."),
        cmd!("task_cancel", tasks::TaskArgs, AgentTaskView, "Cancels a task as the host's user."),
        cmd!("task_retry", tasks::TaskArgs, AgentTaskView, "Runs a failed or cancelled task again."),
        cmd!("task_respond", tasks::RespondArgs, Responded, "Answers a pending action of a task."),
        // ui.rs
        cmd!("ui_palette", NoArgs, super::ui::Palette, "The command palette's app items: every enabled app's `command` entries (with readiness and the UI entry that runs them) and the routes apps registered with `lime.ui.registerRoute`."),
        cmd!("artifact_viewers", super::ui::ViewersArgs, Vec<crate::hosting::bridge::host::ui_launch::catalog::ArtifactViewer>, "The UI entries of enabled apps that declare an artifact type in `artifactTypes[]`."),
        cmd!("ui_launch", super::ui::LaunchArgs, Vec<Outgoing>, "Opens a mounted frame for a route, a command entry or an artifact of its own app (`ui.launch_refused` otherwise): `ui:launch` now, or after the frame's `app:ready`."),
        // workflow.rs
        cmd!("workflow_runs", workflow::ListArgs, Vec<workflow::RunSummary>, "Every app's workflow runs (or one app's), newest first."),
        cmd!("workflow_run", workflow::RunArgs, workflow::RunDetail, "One run: step timeline, pending review or input, outputs, evidence."),
        cmd!("workflow_start", workflow::StartArgs, workflow::RunSummary, "Runs a `workflow` entry (the Run action) until it waits or ends."),
        cmd!("workflow_respond", workflow::RespondArgs, workflow::RunSummary, "Answers a run's review, input or retry decision as the host's user."),
        cmd!("workflow_cancel", workflow::RunArgs, workflow::RunSummary, "Cancels a run as the host's user."),
        cmd!("workflow_schedules", NoArgs, Vec<crate::hosting::workflow::schedule::ScheduleRecord>, "The scheduled starts: next due time, last start, missed slots."),
    ]
}

/// `upload_package`'s answer (the command takes the raw package bytes as its body, through the
/// transports' raw-body paths, so it is not in [`catalog`]).
pub fn raw_commands() -> Vec<CommandSpec> {
    vec![CommandSpec {
        name: "upload_package",
        doc: "Keeps raw package bytes (a .zip, the request body) for a later review.",
        args: |_| json!({"description": "The package bytes as the request body (not JSON)."}),
        answer: sub::<UploadInfo>,
    }]
}

/// The outbox's event kinds (`next_events`).
pub fn events() -> Vec<EventSpec> {
    vec![
        EventSpec {
            kind: super::center::INSTALL_PROGRESS,
            doc: "Bytes verified while a catalog download streams, or a review or an install reads the package.",
            payload: sub::<InstallProgress>,
        },
        EventSpec {
            kind: super::watch::STORE_CHANGED,
            doc: "Another process (or the bridge's own grant) changed the store: reload.",
            payload: sub::<Null>,
        },
        EventSpec {
            kind: super::watch::MOUNTS_ENDED,
            doc: "Mounts Rust ended because their app changed.",
            payload: sub::<Vec<EndedMount>>,
        },
        EventSpec {
            kind: super::tasks::TASKS_CHANGED,
            doc: "A task changed its status or approvals.",
            payload: sub::<TasksChanged>,
        },
        EventSpec {
            kind: super::workflow_host::WORKFLOW_CHANGED,
            doc: "A workflow run changed (started, answered, driven, cancelled), or a schedule missed slots.",
            payload: sub::<WorkflowChanged>,
        },
        EventSpec {
            kind: super::outbox::OUTGOING,
            doc: "Bridge actions produced off the request path, executed like a `bridge_message` answer.",
            payload: sub::<Vec<Outgoing>>,
        },
    ]
}

/// The payload of `install:progress` (built in `api/center.rs`).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct InstallProgress {
    /// `download` (a catalog release streaming in) or `review` (then `progressId` echoes the
    /// review's), or `install` (then `reviewId`).
    phase: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    progress_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    review_id: Option<String>,
    bytes_verified: u64,
    bytes_total: u64,
}

/// The payload of `tasks:changed` (built in `api/tasks.rs`).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct TasksChanged {
    app_id: Option<String>,
    task_id: Option<String>,
    /// The task event type, or the host action (`task.cancel`, ...).
    reason: String,
}

/// The payload of `workflow:changed` (built in `api/workflow_host.rs`).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct WorkflowChanged {
    app_id: String,
    run_id: Option<String>,
    /// For `schedule_missed`: the entry and how many slots passed while no host ran.
    entry_key: Option<String>,
    missed: Option<u64>,
    /// `workflow.start`, `workflow.respond`, `driven`, `schedule_missed`.
    reason: String,
}

/// A task as runtime-core's `AgentTasks` answers it (docs/host-api.md, "Agent tasks"; the UI's
/// reading of it is `ui-host/src/tasks.ts`).
#[derive(JsonSchema)]
#[allow(dead_code)]
struct AgentTaskView(Map<String, Value>);

/// What `task_detail` answers.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct TaskDetail {
    /// The task, with its `appId` and full `input`.
    task: AgentTaskView,
    /// `lime.agent-task-event.v1` events after `afterSequence`.
    events: Vec<Map<String, Value>>,
    next_after_sequence: u64,
}

/// What `task_respond` answers.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct Responded {
    responded: bool,
}

fn generator(contract: Contract) -> SchemaGenerator {
    let mut s = SchemaSettings::draft2020_12();
    s.contract = contract;
    s.into_generator()
}

fn merge(into: &mut Map<String, Value>, from: Map<String, Value>) {
    for (name, def) in from {
        if let Some(prev) = into.get(&name) {
            assert_eq!(prev, &def, "{name} differs between arguments and answers");
        }
        into.insert(name, def);
    }
}

/// `schemas/host-api/host-api.schema.json`.
pub fn host_api_schema() -> Value {
    let mut de = generator(Contract::Deserialize);
    let mut ser = generator(Contract::Serialize);
    let mut commands = Map::new();
    for c in catalog().iter().chain(raw_commands().iter()) {
        commands.insert(
            c.name.to_owned(),
            json!({"description": c.doc, "args": (c.args)(&mut de), "answer": (c.answer)(&mut ser)}),
        );
    }
    let mut kinds = Map::new();
    for e in events() {
        kinds.insert(
            e.kind.to_owned(),
            json!({"description": e.doc, "payload": (e.payload)(&mut ser)}),
        );
    }
    let event = sub::<super::outbox::Event>(&mut ser);
    let mut defs = de.take_definitions(true);
    merge(&mut defs, ser.take_definitions(true));
    let defs: Map<String, Value> = {
        let mut names: Vec<_> = defs.into_iter().collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        names.into_iter().collect()
    };
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("https://apphost.local/{SCHEMA_PATH}"),
        "title": "AppHost host API",
        "description": format!("Generated from the Rust types of crates/host-core/src/api/ by api/schema.rs ({REGENERATE}). The commands the host UI calls (docs/host-api.md): per command the schema of its arguments (a JSON object; null counts as {{}}) and of its answer; errors are `HostError`. `events`: the payload of each outbox event kind (`next_events`)."),
        "commands": commands,
        "event": event,
        "events": kinds,
        "$defs": defs,
    })
}

/// The schema of one command's answer (`part` = `answer`) or arguments (`args`), standalone
/// (with the shared `$defs`): what `tests/host_api_schemas.rs` validates real answers against.
pub fn standalone(schema: &Value, command: &str, part: &str) -> Option<Value> {
    let mut s = schema["commands"].get(command)?.get(part)?.clone();
    if let Value::Bool(true) = s {
        s = json!({});
    }
    s["$schema"] = schema["$schema"].clone();
    s["$defs"] = schema["$defs"].clone();
    Some(s)
}

/// `ui-host/src/generated/host-api.ts`.
pub fn typescript() -> String {
    let schema = host_api_schema();
    let defs = schema["$defs"].as_object().expect("defs");
    let mut out = format!(
        "// GENERATED from crates/host-core/src/api/ by api/schema.rs. DO NOT EDIT.\n\
         // Regenerate: {REGENERATE}\n\
         // Schema: {SCHEMA_PATH}\n\n"
    );
    out.push_str(&declarations(defs));
    out.push_str("/** The arguments and answer of each host command (docs/host-api.md). */\nexport interface HostCommands {\n");
    for c in catalog() {
        let cmd = &schema["commands"][c.name];
        out.push_str(&format!(
            "  /** {} */\n  {}: {{ args: {}; answer: {} }};\n",
            c.doc,
            c.name,
            ts_type(&cmd["args"], "  "),
            ts_type(&cmd["answer"], "  ")
        ));
    }
    out.push_str(
        "}\n\n/** A host command's name. */\nexport type HostCommandName = keyof HostCommands;\n\n",
    );
    let names: Vec<Value> = catalog().iter().map(|c| json!(c.name)).collect();
    out.push_str(&format!(
        "/** Every command name, in table order. */\nexport const HOST_COMMAND_NAMES = [{}] as const satisfies readonly HostCommandName[];\n\n",
        crate::foundation::typescript::join(&names)
    ));
    for c in raw_commands() {
        out.push_str(&format!(
            "/** `{}`'s answer. {} */\nexport type UploadPackageAnswer = {};\n\n",
            c.name,
            c.doc,
            ts_type(&schema["commands"][c.name]["answer"], "")
        ));
    }
    out.push_str(
        "/** The payload of each outbox event kind. */\nexport interface HostEventPayloads {\n",
    );
    for e in events() {
        out.push_str(&format!(
            "  /** {} */\n  {}: {};\n",
            e.doc,
            json!(e.kind),
            ts_type(&schema["events"][e.kind]["payload"], "  ")
        ));
    }
    out.push_str("}\n");
    out
}
