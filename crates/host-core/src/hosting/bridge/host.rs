//! The host side of the bridge as one state machine, independent of any transport.
//!
//! The shell (Tauri commands) and the browser mode (HTTP) both feed it the same inputs: "mount
//! this entry", "this frame sent these bytes (seen from this origin)", "the user answered this
//! prompt", "the frame went away". It answers with [`Outgoing`] actions: messages to post to a
//! frame, prompts to show, toasts, external links to confirm. All decisions are made here and in
//! [`dispatch`](crate::hosting::capability::dispatch): the transports only carry bytes.
//!
//! Refused messages are counted per reason and the most recent ones kept (bounded) for the
//! diagnostics page; `executions` counts service executions, so tests can prove that spoofed
//! messages executed nothing.

mod calls;
mod download;
mod effects;
mod outbox;
mod outgoing;
mod pick_files;
mod projections;
mod service_calls;
mod snapshot;
pub mod ui_launch;

pub use service_calls::{DeferredServiceCall, ServiceCallDone};

pub use outbox::{AsyncOutbox, OUTBOX_CAPACITY};
pub use outgoing::{Answer, Diagnostics, Environment, Outgoing, RefusedMessage};
use snapshot::{app_routes, declared_domains, is_http_url, route_matches};

pub use download::MAX_PENDING_DOWNLOADS;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use serde_json::{json, Value};

use super::message::{self, AppMessage, Call, FrameIdentity, Refusal, PROTOCOL, VERSION};
use super::mounting::mount_entry;
use super::mounts::{CallRefused, Mount, MountTable};
use super::wire::{
    BlockedCapability, CapabilitySummary, ErrorCode, HostSnapshot, LocaleInfo, SnapshotModel,
    SnapshotReadiness, SnapshotSetupAction, ThemeSnapshot,
};
use crate::foundation::error::HostResult;
use crate::foundation::profile::HostProfile;
use crate::hosting::capability::dispatch::{
    confirmation_key, dispatch_with, prompt_refused, CallError, SessionAnswers, Verdict,
};
use crate::hosting::capability::facts::FactsCache;
use crate::hosting::capability::method::{Method, UiMethod};
use crate::hosting::capability::registry;
use crate::hosting::capability::services::{Reply, Services};
use crate::hosting::surface::origin::OriginStyle;
use crate::install::manifest::Entry;
use crate::install::store::{ActiveApp, Store};

/// How many refused messages are kept for diagnostics.
pub const REFUSAL_LOG: usize = 200;
/// Most prompts waiting for an answer at once; beyond it a call is refused as rate limited.
pub const MAX_PENDING_PROMPTS: usize = 16;

struct PendingPrompt {
    mount_id: String,
    call: Call,
    permission: Option<String>,
    trace_id: String,
    kind: PromptKind,
}

/// What a prompt's answer finishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PromptKind {
    /// A call that needs the permission: on allow it is dispatched again.
    Call,
    /// `lime.policy.requestPermission`: the answer is the call's value.
    RequestPermission,
    /// `lime.files.requestFiles`: the user's choice is the call's value (`pick_files.rs`).
    PickFiles { multiple: bool },
    /// `lime.tools.invoke` of a destructive tool: only "allow" runs it (once; never
    /// remembered), anything else is `tools.denied`.
    ToolApproval,
}

pub struct BridgeHost {
    table: MountTable,
    answers: HashMap<String, SessionAnswers>,
    prompts: BTreeMap<String, PendingPrompt>,
    services: Services,
    profile: HostProfile,
    style: OriginStyle,
    env: Environment,
    refused: VecDeque<RefusedMessage>,
    refused_by_reason: BTreeMap<&'static str, u64>,
    executions: u64,
    next_id: u64,
    /// Store facts of the mounted apps, reused until the store changes (`capability::facts`).
    facts: FactsCache,
    /// Asynchronous outgoings (task events), drained by the transport.
    outbox: Arc<AsyncOutbox>,
    /// Per mount: the tasks whose events are forwarded to it, and the forwarder to stop.
    watches: HashMap<String, Vec<(String, tokio::task::AbortHandle)>>,
    /// `host:download`s waiting for the user (`host/download.rs`).
    downloads: BTreeMap<String, download::PendingDownload>,
    /// `lime.ui` routes per app and launches waiting for a handshake (`host/ui_launch.rs`).
    ui: ui_launch::UiState,
    /// `lime.services.call`s waiting to run outside the caller's lock (`host/service_calls.rs`).
    service_calls: Vec<DeferredServiceCall>,
    /// Those running now, by (mount, request id): what `capability:cancel` cancels.
    running_service_calls: service_calls::Running,
}

impl BridgeHost {
    pub fn new(services: Services, profile: HostProfile, style: OriginStyle) -> Self {
        BridgeHost {
            table: MountTable::new(),
            answers: HashMap::new(),
            prompts: BTreeMap::new(),
            services,
            profile,
            style,
            env: Environment::default(),
            refused: VecDeque::new(),
            refused_by_reason: BTreeMap::new(),
            executions: 0,
            next_id: 0,
            facts: FactsCache::new(),
            outbox: Arc::new(AsyncOutbox::new()),
            watches: HashMap::new(),
            downloads: BTreeMap::new(),
            ui: ui_launch::UiState::default(),
            service_calls: Vec::new(),
            running_service_calls: Default::default(),
        }
    }

    /// The queue of asynchronous outgoings: a transport waits on it (`AsyncOutbox::wait`)
    /// without holding this host.
    pub fn async_outbox(&self) -> Arc<AsyncOutbox> {
        self.outbox.clone()
    }

    /// Runs `lime.agent` tasks on `backend` instead of the configured provider (tests and
    /// embedders; the host's model settings still decide readiness and whether tasks start).
    pub fn set_agent_backend(
        &mut self,
        backend: std::sync::Arc<dyn runtime_core::backend::ExecutionBackend>,
    ) {
        self.services.set_agent_backend(backend);
    }

    /// The agent tasks of every app over the one runtime the bridge's `lime.agent` uses (the
    /// host UI acts on them as the user, `api/tasks.rs`). `Err` is a message.
    pub fn agent_tasks(
        &mut self,
        store: &Store,
    ) -> Result<runtime_core::agent_task::AgentTasks, String> {
        self.services.agent_tasks(store)
    }

    /// The one runtime of the bridge's `lime.agent` and its tokio runtime (the App Server door
    /// serves it, `api/door.rs`). `Err` is a message.
    pub fn agent_runtime(
        &mut self,
        store: &Store,
    ) -> Result<(runtime_core::runtime::Runtime, tokio::runtime::Handle), String> {
        self.services.agent_runtime(store)
    }

    /// The data directory's workflow runs, driven by this host session (opened on first use;
    /// the host UI acts on them as the user). `Err` is a message (`runtime.busy`: another
    /// process drives them).
    pub fn workflow_runs(
        &mut self,
        store: &Store,
    ) -> Result<&crate::hosting::workflow::driver::HostRuns, String> {
        self.services.workflow_runs(store)
    }

    /// The session's backend services (`hosting/services/`), held for the session's life.
    pub fn service_host(
        &mut self,
        store: &Store,
    ) -> std::sync::Arc<crate::hosting::services::ServiceHost> {
        self.services.service_host(store)
    }

    /// Opens the data directory's workflow runs at the session's start when it has any, so
    /// replayed runs continue and due timers fire without waiting for a call; `Err` is a message.
    pub fn resume_workflow_runs(
        &mut self,
        data: &crate::foundation::paths::DataDir,
    ) -> Result<(), String> {
        self.services.resume_workflow_runs(data)
    }

    /// Everything asynchronous queued so far (task events), oldest first.
    pub fn take_async_outgoing(&self) -> Vec<Outgoing> {
        self.outbox.take()
    }

    /// Stops forwarding task events to `mount_id` and drops what is queued for it.
    fn stop_watches(&mut self, mount_id: &str) {
        for (_, h) in self.watches.remove(mount_id).unwrap_or_default() {
            h.abort();
        }
        self.outbox.forget_mount(mount_id);
    }

    pub fn mounts(&self) -> &MountTable {
        &self.table
    }

    pub fn mount(&mut self, store: &Store, app_id: &str, entry_key: &str) -> HostResult<Mount> {
        mount_entry(
            store,
            &self.profile,
            &mut self.table,
            &self.style,
            app_id,
            entry_key,
        )
    }

    pub fn unmount(&mut self, mount_id: &str) -> Option<Mount> {
        self.stop_watches(mount_id);
        self.answers.remove(mount_id);
        self.prompts.retain(|_, p| p.mount_id != mount_id);
        self.drop_downloads(mount_id);
        self.ui.forget_mount(mount_id);
        self.cancel_service_calls_of(mount_id);
        self.table.remove(mount_id)
    }

    /// Removes every mount of an app and closes its services (disable, uninstall, update,
    /// rollback). Returns the removed mounts so the UI can tear their frames down.
    pub fn unmount_app(&mut self, app_id: &str) -> Vec<Mount> {
        let removed = self.table.remove_app(app_id);
        for m in &removed {
            self.stop_watches(&m.mount_id);
            self.answers.remove(&m.mount_id);
            self.prompts.retain(|_, p| p.mount_id != m.mount_id);
            self.drop_downloads(&m.mount_id);
            self.ui.forget_mount(&m.mount_id);
            self.cancel_service_calls_of(&m.mount_id);
        }
        self.ui.forget_app(app_id);
        self.services.close_app(app_id);
        removed
    }

    /// The host facts snapshots and `theme:update` carry now.
    pub fn environment(&self) -> &Environment {
        &self.env
    }

    pub fn set_environment(&mut self, env: Environment) -> Vec<Outgoing> {
        self.env = env;
        let msgs: Vec<Outgoing> = self
            .table
            .all()
            .filter(|m| self.table.is_ready(&m.mount_id))
            .map(|m| Outgoing::Post {
                mount_id: m.mount_id.clone(),
                message: envelope(m, "theme:update", None, self.theme_payload()),
            })
            .collect();
        msgs
    }

    pub fn set_visibility(&mut self, mount_id: &str, visible: bool) -> Vec<Outgoing> {
        if !self.table.set_visible(mount_id, visible) || !self.table.is_ready(mount_id) {
            return Vec::new();
        }
        let Some(m) = self.table.get(mount_id) else {
            return Vec::new();
        };
        vec![Outgoing::Post {
            mount_id: mount_id.to_owned(),
            message: envelope(m, "host:visibility", None, json!({ "visible": visible })),
        }]
    }

    pub fn diagnostics(&self) -> Diagnostics {
        Diagnostics {
            refused_by_reason: self.refused_by_reason.clone(),
            recent_refusals: self.refused.iter().cloned().collect(),
            executions: self.executions,
        }
    }

    /// Records a refusal decided outside Rust (the host UI's `event.source` check).
    pub fn report_refusal(&mut self, mount_id: Option<&str>, reason: &str, bytes: usize) {
        let reason = Refusal::parse(reason).unwrap_or(Refusal::WrongSource);
        let app = mount_id
            .and_then(|id| self.table.get(id))
            .map(|m| m.app_id.clone());
        self.refuse(mount_id.map(str::to_owned), app, reason, None, bytes);
    }

    /// Handles one message a frame sent, as relayed by the host UI.
    pub fn handle(
        &mut self,
        store: &Store,
        mount_id: &str,
        observed_origin: &str,
        raw: &str,
    ) -> Vec<Outgoing> {
        let Some(mount) = self.table.get(mount_id).cloned() else {
            self.refuse(
                Some(mount_id.to_owned()),
                None,
                Refusal::UnknownMount,
                None,
                raw.len(),
            );
            return Vec::new();
        };
        let frame = FrameIdentity {
            app_id: &mount.app_id,
            entry_key: &mount.entry_key,
            origin: &mount.origin,
        };
        let ready = self.table.is_ready(mount_id);
        let msg = match message::decode(raw, frame, observed_origin, ready) {
            Ok(m) => m,
            Err(r) => {
                let t = peek_type(raw);
                self.refuse(
                    Some(mount.mount_id.clone()),
                    Some(mount.app_id.clone()),
                    r,
                    t,
                    raw.len(),
                );
                return Vec::new();
            }
        };
        match msg {
            AppMessage::Ready { request_id } | AppMessage::GetSnapshot { request_id } => {
                self.table.mark_ready(mount_id);
                let payload = self.snapshot(store, &mount);
                let mut out =
                    vec![self.post(&mount, "host:snapshot", request_id.as_deref(), payload)];
                out.extend(self.take_launches(&mount));
                out
            }
            AppMessage::Navigate { request_id, route } => {
                if app_routes(self.active_app(store, &mount).as_deref(), &mount)
                    .iter()
                    .any(|r| route_matches(r, &route))
                {
                    vec![
                        Outgoing::Navigate {
                            mount_id: mount.mount_id.clone(),
                            route,
                        },
                        self.post(
                            &mount,
                            "host:response",
                            request_id.as_deref(),
                            json!({"value": null}),
                        ),
                    ]
                } else {
                    vec![self.post_error(
                        &mount,
                        request_id.as_deref(),
                        "lime.ui",
                        "navigate",
                        ErrorCode::PermissionDenied,
                        "not one of this app's routes",
                        Some("navigate.foreign_route"),
                    )]
                }
            }
            AppMessage::Toast { message, level, .. } => vec![Outgoing::Toast {
                mount_id: mount.mount_id.clone(),
                app_id: mount.app_id.clone(),
                message,
                level,
            }],
            AppMessage::OpenExternal { request_id, url } => {
                if is_http_url(&url) {
                    vec![Outgoing::ConfirmExternal {
                        mount_id: mount.mount_id.clone(),
                        app_id: mount.app_id.clone(),
                        url,
                        declared_domains: declared_domains(
                            self.active_app(store, &mount).as_deref(),
                        ),
                    }]
                } else {
                    vec![self.post_error(
                        &mount,
                        request_id.as_deref(),
                        "lime.ui",
                        "openExternal",
                        ErrorCode::PermissionDenied,
                        "only http and https links can be opened",
                        Some("external.scheme"),
                    )]
                }
            }
            AppMessage::Download {
                request_id,
                source,
                file_name,
                mime_type,
            } => self.download_request(store, &mount, request_id, source, file_name, mime_type),
            AppMessage::Cancel { target, .. } => {
                // A running `lime.services.call` of this frame: the service gets
                // `$/cancelRequest` (`host/service_calls.rs`).
                if let Some(out) = self.cancel_service_call(&mount, &target) {
                    return out;
                }
                // Otherwise what can be pending is a call waiting for a prompt. Cancelling a
                // finished or unknown call, or another frame's, does nothing.
                let pending = self
                    .prompts
                    .iter()
                    .find(|(_, p)| p.mount_id == mount.mount_id && p.call.request_id == target)
                    .map(|(id, _)| id.clone());
                match pending.and_then(|id| self.prompts.remove(&id)) {
                    Some(p) => {
                        self.table.end_call(mount_id, &target);
                        let e =
                            error_for(&p.call, ErrorCode::Cancelled, "the app cancelled this call");
                        vec![self.call_error(&mount, &target, &e)]
                    }
                    None => Vec::new(),
                }
            }
            AppMessage::Invoke(call) => self.invoke(store, &mount, call),
        }
    }

    fn post(
        &self,
        mount: &Mount,
        kind: &str,
        request_id: Option<&str>,
        payload: Value,
    ) -> Outgoing {
        Outgoing::Post {
            mount_id: mount.mount_id.clone(),
            message: envelope(mount, kind, request_id, payload),
        }
    }

    fn call_error(&self, mount: &Mount, request_id: &str, e: &CallError) -> Outgoing {
        self.post(
            mount,
            "host:error",
            Some(request_id),
            serde_json::to_value(e).unwrap_or(Value::Null),
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn post_error(
        &self,
        mount: &Mount,
        request_id: Option<&str>,
        capability: &str,
        method: &str,
        code: ErrorCode,
        message: &str,
        cause: Option<&'static str>,
    ) -> Outgoing {
        let e = CallError {
            code,
            message: message.to_owned(),
            cause_code: cause,
            capability: capability.to_owned(),
            method: method.to_owned(),
            retryable: false,
            details: None,
        };
        self.post(
            mount,
            "host:error",
            request_id,
            serde_json::to_value(e).unwrap_or(Value::Null),
        )
    }

    fn refuse(
        &mut self,
        mount_id: Option<String>,
        app_id: Option<String>,
        reason: Refusal,
        message_type: Option<String>,
        bytes: usize,
    ) {
        *self.refused_by_reason.entry(reason.as_str()).or_default() += 1;
        tracing::debug!(reason = reason.as_str(), "refused a bridge message");
        if self.refused.len() == REFUSAL_LOG {
            self.refused.pop_front();
        }
        self.refused.push_back(RefusedMessage {
            mount_id,
            app_id,
            reason: reason.as_str(),
            message_type,
            bytes,
        });
    }

    fn new_id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        let mut bytes = [0u8; 8];
        if getrandom::fill(&mut bytes).is_err() {
            // Ids must be unique, not secret: the counter alone keeps them unique.
            bytes = [0; 8];
        }
        format!("{prefix}_{}{:x}", hex::encode(bytes), self.next_id)
    }
}

fn error_for(call: &Call, code: ErrorCode, message: &str) -> CallError {
    CallError {
        code,
        message: message.to_owned(),
        cause_code: None,
        capability: call.capability.clone(),
        method: call.method.clone(),
        retryable: false,
        details: None,
    }
}

/// A host → app message.
pub fn envelope(mount: &Mount, kind: &str, request_id: Option<&str>, payload: Value) -> Value {
    let mut m = json!({
        "protocol": PROTOCOL, "version": VERSION, "type": kind,
        "appId": mount.app_id, "entryKey": mount.entry_key, "payload": payload,
    });
    if let Some(id) = request_id {
        m["requestId"] = Value::String(id.to_owned());
    }
    m
}

/// The `type` of a refused message, when it has a short string one (for diagnostics only).
fn peek_type(raw: &str) -> Option<String> {
    if raw.len() > message::MAX_MESSAGE_BYTES {
        return None;
    }
    let v: Value = serde_json::from_str(raw).ok()?;
    v.get("type")?
        .as_str()
        .filter(|t| t.len() <= 64)
        .map(str::to_owned)
}
