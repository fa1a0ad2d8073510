//! The `lime.*` services behind the choke point. Every entry point takes an [`Allowed`] proof,
//! which only [`dispatch`](super::dispatch::dispatch) can mint, so no transport can call a
//! service around the decision. App data lives in RuntimeCore's per-app area; the services here
//! only adapt arguments and errors to the Host Bridge contract.
//!
//! One module per capability (`storage.rs`, `artifacts.rs`, `evidence.rs`, ...); [`Services::call_with`]
//! routes by the proof's typed [`Method`], exhaustively, and each service matches its own
//! method enum. Services never see mounts: what only the bridge can do (deliver an
//! event to other frames, change a frame's subscriptions, show a prompt) a service asks for with an
//! [`Effect`] in its [`Reply`], which `bridge/host.rs` carries out.

mod agent;
mod agent_tool_refs;
mod app_services;
mod args;
mod artifacts;
mod attachments;
mod events;
mod evidence;
mod evidence_correlation;
mod files;
mod knowledge;
mod policy;
mod secrets;
mod shapes;
mod start_task_shape;
mod storage;
mod task_budget;
mod tools;
mod workflow;

pub use agent::TaskEventSink;
pub use app_services::{back_calls, host_of as service_host, REFUSED};
pub use artifacts::{MAX_BRIDGE_CONTENT_BYTES, MAX_BRIDGE_READ_BYTES};
pub use files::{
    describe as describe_file_ref, PickRequest, MAX_READ_BYTES as MAX_FILES_READ_BYTES,
};

use std::path::PathBuf;

use serde_json::Value;

use super::code::ErrorCode;
use super::dispatch::{Allowed, CallError};
use super::method::Method;
use crate::hosting::workflow::driver::{HostRuns, MakeStepServices};
use crate::hosting::workflow::executor::StepServices;
use crate::install::store::Store;

pub use events::{MAX_PAYLOAD_BYTES, MAX_TOPIC_BYTES};
pub use evidence_correlation::CORRELATION_IDS;

/// What an allowed call asks the bridge to do beyond answering.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// `lime.events.subscribe`: add the topic to the calling frame's subscriptions.
    Subscribe { topic: String },
    /// `lime.events.unsubscribe`.
    Unsubscribe { topic: String },
    /// `lime.events.publish`: deliver to the other subscribed frames of the same app.
    Publish { topic: String, payload: Value },
    /// `lime.policy.requestPermission`: ask the user for an optional, declared, not granted
    /// permission; the answer becomes the call's value.
    AskPermission {
        permission: String,
        reason: Option<String>,
    },
    /// `lime.files.requestFiles`: ask the user to pick files (or a folder) for the app; the refs
    /// granted from the choice become the call's value (`bridge/host/pick_files.rs`).
    PickFiles(PickRequest),
    /// `lime.agent.startTask` / `watchTask`: forward the task's events after `after` to the
    /// calling frame as asynchronous `host:event`s ([`Services::watch_agent_task`]).
    WatchTask {
        task_id: String,
        after: u64,
        /// The call's value (`host:response`).
        value: Value,
    },
    /// `lime.tools.invoke` of a destructive tool: ask the user in the host's prompt; only
    /// "allow" runs it ([`Services::invoke_tool_approved`]), anything else is `tools.denied`.
    AskToolApproval {
        tool: String,
        arguments_sha256: String,
    },
    /// `lime.workflow.start` / `watch`: forward the run's events after `after` to the calling
    /// frame as asynchronous `host:event`s ([`Services::watch_workflow_run`]).
    WatchRun {
        run_id: String,
        after: u64,
        /// The call's value (`host:response`).
        value: Value,
    },
    /// `lime.services.call` from a session that waits on services outside its bridge lock
    /// ([`Services::defer_service_calls`]): the bridge runs the work once its lock is released,
    /// then records the answer (`api/session.rs`).
    CallService(ServiceWork),
}

type ServiceJob = Box<dyn FnOnce(&service_sandbox::CancelToken) -> Result<Value, CallError> + Send>;

/// A backend-service call taken out of the bridge: everything it needs, run at most once, and
/// the token that cancels it while it runs (a frame's `capability:cancel`: the service gets
/// `$/cancelRequest`).
#[derive(Clone)]
pub struct ServiceWork {
    job: std::sync::Arc<std::sync::Mutex<Option<ServiceJob>>>,
    cancel: service_sandbox::CancelToken,
}

impl ServiceWork {
    pub fn new(job: ServiceJob) -> Self {
        ServiceWork {
            job: std::sync::Arc::new(std::sync::Mutex::new(Some(job))),
            cancel: service_sandbox::CancelToken::new(),
        }
    }

    /// Runs the call, waiting on the service (or until [`ServiceWork::cancel_token`] is
    /// cancelled); `None` when it already ran.
    pub fn run(&self) -> Option<Result<Value, CallError>> {
        let job = self.job.lock().unwrap_or_else(|p| p.into_inner()).take();
        job.map(|j| j(&self.cancel))
    }

    /// Cancels this call while it runs (or before it starts).
    pub fn cancel_token(&self) -> service_sandbox::CancelToken {
        self.cancel.clone()
    }
}

impl std::fmt::Debug for ServiceWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServiceWork")
    }
}

impl PartialEq for ServiceWork {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.job, &other.job)
    }
}

/// A service's answer: the value for `host:response`, and possibly an [`Effect`].
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub value: Value,
    pub effect: Option<Effect>,
}

impl Reply {
    pub fn value(value: Value) -> Reply {
        Reply {
            value,
            effect: None,
        }
    }
}

/// Long-lived service state for one host process (open per-app files, ...).
pub struct Services {
    apps_data: PathBuf,
    storage: storage::StorageService,
    artifacts: artifacts::ArtifactsService,
    evidence: evidence::EvidenceService,
    agent: agent::AgentService,
    tools: tools::ToolsService,
    /// The host process's workflow runs and their driver, opened on first use
    /// ([`Services::workflow_runs`]); `None` in the driver's own services.
    workflow: Option<HostRuns>,
    /// This is the workflow driver's own services: `lime.workflow` is not served to steps.
    driver_side: bool,
    knowledge: knowledge::KnowledgeService,
    /// The data directory's backend services, held by this session from its first
    /// `lime.services` call (`app_services.rs`); dropped with the session, which stops them.
    service_host: Option<std::sync::Arc<crate::hosting::services::ServiceHost>>,
    /// `lime.services.call` answers [`Effect::CallService`] instead of waiting here.
    defer_service_calls: bool,
    /// Cancels the `lime.services.call` this thread waits on (a workflow step's run cancelled);
    /// never cancelled outside [`StepServices::step_call`].
    service_call_cancel: service_sandbox::CancelToken,
}

impl Services {
    /// `apps_data` is the root of the per-app data areas (`<data>/apps`).
    pub fn new(apps_data: PathBuf) -> Self {
        Services {
            storage: storage::StorageService::default(),
            artifacts: artifacts::ArtifactsService::default(),
            evidence: evidence::EvidenceService::default(),
            agent: agent::AgentService::new(apps_data.clone()),
            tools: tools::ToolsService::new(&apps_data),
            knowledge: knowledge::KnowledgeService::default(),
            apps_data,
            workflow: None,
            driver_side: false,
            service_host: None,
            defer_service_calls: false,
            service_call_cancel: service_sandbox::CancelToken::default(),
        }
    }

    /// From now on `lime.services.call` takes what it needs and answers
    /// [`Effect::CallService`]: the caller waits on the service after releasing its locks.
    pub fn defer_service_calls(&mut self) {
        self.defer_service_calls = true;
    }

    pub(crate) fn defers_service_calls(&self) -> bool {
        self.defer_service_calls
    }

    /// What cancels a `lime.services.call` waited on here (a workflow run's cancel).
    pub(crate) fn service_call_cancel(&self) -> &service_sandbox::CancelToken {
        &self.service_call_cancel
    }

    /// Makes services for each workflow driver thread: their own per-app handles, the same
    /// agent runtime and the same tool broker as these (one per process: an MCP server runs
    /// once however many threads call it), no workflow runs of their own.
    fn for_workflow_driver(&self) -> MakeStepServices {
        let agent = self.agent.sharing();
        let tools = self.tools.sharing();
        let apps_data = self.apps_data.clone();
        std::sync::Arc::new(move || {
            Box::new(Services {
                storage: storage::StorageService::default(),
                artifacts: artifacts::ArtifactsService::default(),
                evidence: evidence::EvidenceService::default(),
                agent: agent.sharing(),
                tools: tools.sharing(),
                knowledge: knowledge::KnowledgeService::default(),
                apps_data: apps_data.clone(),
                workflow: None,
                driver_side: true,
                service_host: None,
                defer_service_calls: false,
                service_call_cancel: service_sandbox::CancelToken::default(),
            }) as Box<dyn StepServices + Send>
        })
    }

    /// Opens the data directory's workflow runs now when it has any (a host session's start:
    /// runs replayed at open continue, due timers fire, with no app calling first). `Err` is a
    /// message (another process drives them).
    pub fn resume_workflow_runs(
        &mut self,
        data: &crate::foundation::paths::DataDir,
    ) -> Result<(), String> {
        let log = crate::hosting::workflow::runs_dir(data).join("events.db");
        if self.driver_side || self.workflow.is_some() || !log.exists() {
            return Ok(());
        }
        let driver = self.for_workflow_driver();
        let runs =
            HostRuns::open(data, driver).map_err(|e| format!("{}: {}", e.code, e.message))?;
        self.workflow = Some(runs);
        Ok(())
    }

    /// The data directory's workflow runs, driven by this process (opened, replayed and their
    /// driver started on first use). `Err` is a message: the runs could not be opened (another
    /// process drives them: `runtime.busy`).
    pub fn workflow_runs(&mut self, store: &Store) -> Result<&HostRuns, String> {
        if self.driver_side {
            return Err("workflow runs are not reachable from a workflow step".into());
        }
        if self.workflow.is_none() {
            let driver = self.for_workflow_driver();
            let runs = HostRuns::open(store.data_dir(), driver)
                .map_err(|e| format!("{}: {}", e.code, e.message))?;
            self.workflow = Some(runs);
        }
        Ok(self.workflow.as_ref().expect("opened above"))
    }

    /// The services that answer one backend service's own `lime.*` requests: its own per-app
    /// handles; like a workflow step's, no workflow runs and no prompts.
    fn for_backend_service(apps_data: PathBuf) -> Self {
        Services {
            driver_side: true,
            ..Services::new(apps_data)
        }
    }

    /// The data directory's backend services, held by this session from now on.
    pub fn service_host(
        &mut self,
        store: &Store,
    ) -> std::sync::Arc<crate::hosting::services::ServiceHost> {
        self.service_host
            .get_or_insert_with(|| app_services::host_of(store))
            .clone()
    }

    /// Closes everything open for an app (before uninstall deletes its data, on disable).
    pub fn close_app(&mut self, app: &str) {
        if let Some(root) = self.apps_data.parent() {
            if let Some(host) = crate::hosting::services::ServiceHost::existing(root) {
                host.close_app(app);
            }
        }
        self.storage.close_app(app);
        self.artifacts.close_app(app);
        self.evidence.close_app(app);
        self.agent.close_app(app);
        if let Some(w) = &self.workflow {
            w.close_app(app);
        }
        self.knowledge.close_app(app);
    }

    /// Runs `lime.agent` tasks on `backend` instead of the configured model provider (tests
    /// and embedders; readiness still follows the host's model settings).
    pub fn set_agent_backend(
        &mut self,
        backend: std::sync::Arc<dyn runtime_core::backend::ExecutionBackend>,
    ) {
        self.agent.set_backend(backend);
    }

    /// Forwards the app's task events after `after` to `sink` until the handle is aborted
    /// (see [`Effect::WatchTask`]); `None` when the task is not the app's.
    pub fn watch_agent_task(
        &self,
        app: &str,
        task_id: &str,
        after: u64,
        sink: TaskEventSink,
    ) -> Option<tokio::task::AbortHandle> {
        self.agent.watch(app, task_id, after, sink)
    }

    /// Forwards the app's run events after `after` to `sink` until the run ends or the handle
    /// is aborted (see [`Effect::WatchRun`]); `None` when the run is not the app's or the runs
    /// are not open.
    pub fn watch_workflow_run(
        &self,
        app: &str,
        run_id: &str,
        after: u64,
        sink: TaskEventSink,
    ) -> Option<tokio::task::AbortHandle> {
        let runs = self.workflow.as_ref()?;
        if runs.get(run_id).ok()?.app != app {
            return None;
        }
        runs.subscribe(run_id, after, sink).ok()
    }

    /// Every app's agent tasks, over the runtime `lime.agent` uses (the host UI's own view;
    /// `api/tasks.rs`). `Err` is a message: the runtime could not be opened.
    pub fn agent_tasks(
        &mut self,
        store: &Store,
    ) -> Result<runtime_core::agent_task::AgentTasks, String> {
        self.agent.tasks(store)
    }

    /// The runtime `lime.agent` uses and the tokio runtime it runs on (the App Server door
    /// serves the same one, `api/door.rs`). `Err` is a message.
    pub fn agent_runtime(
        &mut self,
        store: &Store,
    ) -> Result<(runtime_core::runtime::Runtime, tokio::runtime::Handle), String> {
        self.agent.runtime(store)
    }

    /// `lime.agent`'s status for the store's model settings: `ready` or `needs-setup`.
    pub fn agent_status(&self, store: &Store) -> &'static str {
        self.agent.status(store)
    }

    /// Runs an allowed call of any capability, including those that read host state from the
    /// store or answer with an [`Effect`] for the bridge.
    pub fn call_with(
        &mut self,
        store: &Store,
        allowed: &Allowed,
        args: &Value,
    ) -> Result<Reply, CallError> {
        match allowed.method() {
            Method::Secrets(m) => secrets::call(store, allowed, m, args).map(Reply::value),
            Method::Events(m) => events::call(allowed, m, args),
            Method::Policy(m) => policy::call(store, allowed, m, args),
            Method::Agent(m) => self.agent.call(store, allowed, m, args),
            Method::Files(m) => files::call_with(store, allowed, m, args),
            // A workflow step's tool call cannot wait for a prompt: a destructive tool is
            // refused there (`tools.denied`), never run.
            Method::Tools(m) => self.tools.call(store, allowed, m, args, !self.driver_side),
            Method::Workflow(m) => {
                if self.driver_side {
                    return Err(err(
                        allowed,
                        ErrorCode::CapabilityNotAvailable,
                        "a workflow step cannot start or answer workflow runs",
                        Some("workflow.not_from_a_step"),
                    ));
                }
                let runs = self
                    .workflow_runs(store)
                    .map_err(|m| workflow::host_failed(allowed, &m))?;
                workflow::call(store, runs, allowed, m, args)
            }
            Method::Evidence(super::method::EvidenceMethod::Export) => {
                let task = evidence_correlation::task_id(allowed, args)?;
                let correlation =
                    evidence_correlation::correlation(&mut self.agent, store, allowed, task)?;
                let mut pack = self.call(store, allowed, args)?;
                pack["runtimeCorrelation"] = correlation;
                Ok(Reply::value(pack))
            }
            Method::ModelSettings(_) => {
                super::projections::check_no_args(allowed, args)?;
                Ok(Reply::value(super::projections::model_settings(
                    store,
                    allowed.app(),
                )))
            }
            Method::Knowledge(m) => self
                .knowledge
                .call(store, allowed, m, args)
                .map(Reply::value),
            Method::Services(m) => app_services::call(self, store, allowed, m, args),
            Method::Storage(_)
            | Method::Artifacts(_)
            | Method::Evidence(_)
            | Method::Ui(_)
            | Method::Capabilities(_)
            | Method::Workspace(_) => self.call(store, allowed, args).map(Reply::value),
        }
    }

    /// A `lime.tools.invoke` the user allowed in the host's prompt ([`Effect::AskToolApproval`]),
    /// on a fresh proof of the same call.
    pub fn invoke_tool_approved(
        &mut self,
        store: &Store,
        allowed: &Allowed,
        args: &Value,
    ) -> Result<Value, CallError> {
        self.tools.invoke_approved(store, allowed, args)
    }

    /// The user refused a destructive `lime.tools.invoke`: audited, `tools.denied`.
    pub fn tool_refused(&mut self, store: &Store, allowed: &Allowed, args: &Value) -> CallError {
        self.tools.refused(store, allowed, args)
    }

    /// Stops every MCP server this host process started (host exit).
    pub fn shutdown_tools(&mut self) {
        self.tools.close();
    }

    /// `host:download` of one of the app's own artifacts, on the proof of a `lime.artifacts.read`
    /// of it: the metadata, and with `max_bytes` the content.
    pub fn artifact_for_download(
        &mut self,
        allowed: &Allowed,
        id: &str,
        max_bytes: Option<u64>,
    ) -> Result<(runtime_core::app_artifacts::ArtifactMeta, Option<Vec<u8>>), CallError> {
        self.artifacts
            .for_download(&self.apps_data, allowed, id, max_bytes)
    }

    /// Runs an allowed call. `store` is read for what the app version was installed with (its
    /// reviewed storage migrations), and written only to record a failed migration.
    pub fn call(
        &mut self,
        store: &Store,
        allowed: &Allowed,
        args: &Value,
    ) -> Result<Value, CallError> {
        match allowed.method() {
            Method::Storage(m) => self.storage.call(store, &self.apps_data, allowed, m, args),
            Method::Artifacts(m) => self.artifacts.call(&self.apps_data, allowed, m, args),
            Method::Evidence(m) => {
                self.evidence
                    .call(&self.apps_data, &mut self.artifacts, allowed, m, args)
            }
            // `lime.ui`, `lime.capabilities` and `lime.workspace` are answered by the transport
            // from its own state (the bridge's snapshot, session answers and environment); the
            // others need the store or an effect (`call_with`).
            Method::Ui(_)
            | Method::Capabilities(_)
            | Method::Workspace(_)
            | Method::ModelSettings(_)
            | Method::Secrets(_)
            | Method::Events(_)
            | Method::Policy(_)
            | Method::Agent(_)
            | Method::Files(_)
            | Method::Tools(_)
            | Method::Workflow(_)
            | Method::Knowledge(_)
            | Method::Services(_) => Err(err(
                allowed,
                ErrorCode::CapabilityNotAvailable,
                "this capability has no service in this host",
                None,
            )),
        }
    }
}

/// A `host:error` for the call `a`.
pub(crate) fn err(
    a: &Allowed,
    code: ErrorCode,
    message: &str,
    cause: Option<&'static str>,
) -> CallError {
    CallError {
        code,
        message: message.to_owned(),
        cause_code: cause,
        capability: a.capability().as_str().to_owned(),
        method: a.method().as_str().to_owned(),
        retryable: false,
        details: None,
    }
}

/// The `host:error` for a failure of one of the app's own stores (artifacts, evidence): the
/// store's own codes, retryable when the host failed, and a host failure's text never shown to
/// the app (it may name host paths).
pub(crate) fn store_err(
    a: &Allowed,
    store: &str,
    host_failure: bool,
    app_code: &'static str,
    cause: &'static str,
    text: impl FnOnce() -> String,
) -> CallError {
    let message = if host_failure {
        format!("the app's {store} store failed")
    } else {
        text()
    };
    let mut out = err(a, ErrorCode::of_runtime(app_code), &message, Some(cause));
    out.retryable = host_failure;
    out
}

impl StepServices for Services {
    fn step_call(
        &mut self,
        store: &Store,
        allowed: &Allowed,
        args: &Value,
        cancel: &service_sandbox::CancelToken,
    ) -> Result<Value, CallError> {
        self.service_call_cancel = cancel.clone();
        let out = self.call_with(store, allowed, args).map(|r| r.value);
        self.service_call_cancel = service_sandbox::CancelToken::default();
        out
    }

    fn step_agent_tasks(
        &mut self,
        store: &Store,
    ) -> Result<runtime_core::agent_task::AgentTasks, String> {
        self.agent_tasks(store)
    }

    fn step_close_app(&mut self, app: &str) {
        self.storage.close_app(app);
        self.artifacts.close_app(app);
        self.evidence.close_app(app);
    }
}
