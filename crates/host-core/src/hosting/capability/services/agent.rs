//! `lime.agent`: app agent tasks (RuntimeCore's `agent_task`) behind the choke point. The app
//! id always comes from the [`Allowed`] proof; a task of another app is answered exactly like a
//! missing one (`APP_E904`, `agent.task_not_found`).
//!
//! The runtime runs on its own tokio runtime (two worker threads, `apphost-agent`), owned by
//! this service and so by the host session: `startTask` records the task and submits its first
//! run, then answers; the model streams on those threads. Task events reach the calling frame
//! through [`Effect::WatchTask`] (the bridge forwards them as `host:event`s).
//!
//! Without a configured model, `startTask` and `retryTask` fail with `APP_E012`
//! (`agent.needs_setup`); reading existing tasks still works. The model is read from the host
//! settings when the runtime is opened; the runtime is reopened once settings appear.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use runtime_core::agent_task::projection::AgentTaskEvent;
use runtime_core::agent_task::{
    approval, AgentTaskError, AgentTasks, Responder, Response, SessionPolicy, StartTask, UserOnly,
};
use runtime_core::backend::ExecutionBackend;
use runtime_core::ids::AppId;
use runtime_core::runtime::{Runtime, RuntimeConfig};
use serde_json::{json, Map, Value};

use super::args::{invalid, object, opt_str};
use super::start_task_shape::{
    check_standard_fields, expected_output, OutputSchema, START_TASK_FIELDS,
};
use super::{err, Effect, Reply};
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{Allowed, CallError};
use crate::hosting::capability::method::AgentMethod;
use crate::hosting::model_settings;
use crate::install::store::Store;

/// Largest JSON `input` (serialized) a task accepts; the runtime's own bound.
pub const MAX_INPUT_BYTES: usize = runtime_core::agent_task::MAX_INPUT_BYTES;

struct AgentHost {
    tokio: Option<tokio::runtime::Runtime>,
    tasks: AgentTasks,
    with_model: AtomicBool,
}

impl Drop for AgentHost {
    fn drop(&mut self) {
        // Outside an async context, waits (bounded) for the worker threads to drop their turns,
        // so the runtime's data-directory lock is released when the host session is gone and a
        // new session over the same data can open it. Inside one (a host may drop its bridge
        // from an async context) it never blocks.
        if let Some(rt) = self.tokio.take() {
            if tokio::runtime::Handle::try_current().is_err() {
                rt.shutdown_timeout(std::time::Duration::from_secs(5));
            } else {
                rt.shutdown_background();
            }
        }
    }
}

/// Forwards one task event to a frame; `Err(event)` when the frame's outbox is full (the
/// forwarder waits and tries again: nothing is dropped).
pub type TaskEventSink = Arc<dyn Fn(Value) -> Result<(), Value> + Send + Sync>;

pub(super) struct AgentService {
    runtime_dir: PathBuf,
    apps_data: PathBuf,
    /// The process's one agent runtime, shared by every `Services` of the host session (the
    /// bridge's and the workflow driver's, [`AgentService::sharing`]): the runtime holds its
    /// directory's lock, so there is never a second one.
    shared: Arc<Mutex<SharedAgent>>,
}

#[derive(Default)]
struct SharedAgent {
    backend_override: Option<Arc<dyn ExecutionBackend>>,
    host: Option<Arc<AgentHost>>,
}

impl AgentService {
    pub(super) fn new(apps_data: PathBuf) -> Self {
        let runtime_dir = apps_data
            .parent()
            .map(|p| p.join("runtime"))
            .unwrap_or_else(|| apps_data.join("..").join("runtime"));
        AgentService {
            runtime_dir,
            apps_data,
            shared: Arc::default(),
        }
    }

    /// A service over the same agent runtime (opened once, by whichever uses it first).
    pub(super) fn sharing(&self) -> Self {
        AgentService {
            runtime_dir: self.runtime_dir.clone(),
            apps_data: self.apps_data.clone(),
            shared: self.shared.clone(),
        }
    }

    fn shared(&self) -> MutexGuard<'_, SharedAgent> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Uses `backend` instead of the configured provider (tests and embedders); the host's
    /// model settings still decide whether tasks may start.
    pub(super) fn set_backend(&mut self, backend: Arc<dyn ExecutionBackend>) {
        let mut shared = self.shared();
        shared.backend_override = Some(backend);
        shared.host = None;
    }

    fn backend(
        store: &Store,
        over: Option<&Arc<dyn ExecutionBackend>>,
    ) -> Option<Arc<dyn ExecutionBackend>> {
        if !configured(store) {
            return None;
        }
        if let Some(b) = over {
            return Some(b.clone());
        }
        model_settings::backend(store).unwrap_or_else(|e| {
            tracing::warn!("the model backend cannot start: {}", e.message);
            None
        })
    }

    fn host(&mut self, store: &Store, a: &Allowed) -> Result<Arc<AgentHost>, CallError> {
        self.open(store).map_err(|m| host_failed(a, &m))
    }

    /// The tasks of every app, over the same runtime the bridge uses (the host UI's task
    /// activity, `api/tasks.rs`): opened like for an app's first call. `Err` is a message.
    pub(super) fn tasks(&mut self, store: &Store) -> Result<AgentTasks, String> {
        self.open(store).map(|h| h.tasks.clone())
    }

    /// The host session's runtime and the tokio runtime it runs on (the App Server door
    /// serves it): opened like for an app's first call. `Err` is a message.
    pub(super) fn runtime(
        &mut self,
        store: &Store,
    ) -> Result<(Runtime, tokio::runtime::Handle), String> {
        let h = self.open(store)?;
        let handle = h
            .tokio
            .as_ref()
            .map(|t| t.handle().clone())
            .ok_or("the agent runtime is shutting down")?;
        Ok((h.tasks.runtime().clone(), handle))
    }

    fn open(&mut self, store: &Store) -> Result<Arc<AgentHost>, String> {
        let mut shared = self.shared();
        if let Some(h) = shared.host.clone() {
            // A model configured since the runtime opened without one: the same runtime (and
            // every App Server client on it) gets the backend, never a second runtime.
            if !h.with_model.load(Ordering::Acquire) && configured(store) {
                if let Some(b) = Self::backend(store, shared.backend_override.as_ref()) {
                    h.tasks.runtime().set_backend(b);
                    h.with_model.store(true, Ordering::Release);
                }
            }
            return Ok(h);
        }
        // First use.
        let backend = Self::backend(store, shared.backend_override.as_ref());
        let tokio = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("apphost-agent")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the agent runtime: {e}"))?;
        let mut config = RuntimeConfig::new(self.runtime_dir.clone());
        config.apps_dir = self.apps_data.clone();
        config.tool_policy = std::sync::Arc::new(
            crate::hosting::agent_tool_policy::StoreToolPolicy::new(store.data_dir().clone()),
        );
        config.tool_source = Some(std::sync::Arc::new(
            crate::hosting::agent_tool_source::BrokerToolSource::new(store.data_dir().clone()),
        ));
        let with_model = backend.is_some();
        let tasks = {
            let _enter = tokio.enter();
            let rt = Runtime::open(config, backend)
                .map_err(|e| format!("cannot open the agent runtime: {e}"))?;
            AgentTasks::open(rt).map_err(|e| format!("cannot open the task store: {e}"))?
        };
        let host = Arc::new(AgentHost {
            tokio: Some(tokio),
            tasks,
            with_model: AtomicBool::new(with_model),
        });
        shared.host = Some(host.clone());
        Ok(host)
    }

    pub(super) fn call(
        &mut self,
        store: &Store,
        a: &Allowed,
        method: AgentMethod,
        args: &Value,
    ) -> Result<Reply, CallError> {
        let app = AppId::new(a.app()).map_err(|_| host_failed(a, "the app id is not valid"))?;
        match method {
            AgentMethod::StartTask => {
                let o = object(a, args, START_TASK_FIELDS)?;
                check_standard_fields(a, o)?;
                let knowledge = super::knowledge::task_templates(store, a, o)?;
                let tools = super::agent_tool_refs::task_tool_refs(store, a, o.get("tools"))?;
                let req = start_request(store, a, o)?;
                let h = self.host(store, a)?;
                let started = h
                    .tasks
                    .start_with_bindings(&app, req, &knowledge, &tools)
                    .map_err(|e| task_err(a, e))?;
                let value = json!({
                    "taskId": started.task_id, "traceId": started.trace_id,
                    "sessionId": started.session_id, "created": started.created,
                });
                Ok(Reply {
                    value: value.clone(),
                    effect: Some(Effect::WatchTask {
                        task_id: started.task_id,
                        after: 0,
                        value,
                    }),
                })
            }
            AgentMethod::GetTask => {
                let o = object(a, args, &["taskId"])?;
                let id = task_id(a, o)?;
                let h = self.host(store, a)?;
                h.tasks
                    .get(&app, id)
                    .map(Reply::value)
                    .map_err(|e| task_err(a, e))
            }
            AgentMethod::ListTasks => {
                let o = object(a, args, &["cursor", "limit"])?;
                let cursor = opt_str(a, o, "cursor")?;
                let limit = opt_u64(a, o, "limit")?.unwrap_or(50).clamp(1, 100) as usize;
                let h = self.host(store, a)?;
                let (items, next) = h
                    .tasks
                    .list(&app, cursor, limit)
                    .map_err(|e| task_err(a, e))?;
                Ok(Reply::value(json!({ "items": items, "nextCursor": next })))
            }
            AgentMethod::CancelTask => {
                let o = object(a, args, &["taskId"])?;
                let id = task_id(a, o)?;
                let h = self.host(store, a)?;
                h.tasks
                    .cancel(&app, id)
                    .map(Reply::value)
                    .map_err(|e| task_err(a, e))
            }
            AgentMethod::RetryTask => {
                let o = object(a, args, &["taskId"])?;
                let id = task_id(a, o)?;
                let h = self.host(store, a)?;
                h.tasks
                    .retry(&app, id)
                    .map(Reply::value)
                    .map_err(|e| task_err(a, e))
            }
            AgentMethod::RespondAction => {
                let o = object(
                    a,
                    args,
                    &["taskId", "actionId", "decision", "updatedInput", "remember"],
                )?;
                let id = task_id(a, o)?;
                let action = req_str(a, o, "actionId")?;
                let answer = app_answer(a, o)?;
                let h = self.host(store, a)?;
                // Approval belongs to the user: re-derived from the runtime's record of the
                // pending action, never from the message (ARCHITECTURE.md).
                let pending = h
                    .tasks
                    .pending_action(&app, id, action)
                    .map_err(|e| task_err(a, e))?;
                let response = match answer {
                    AppAnswer::Respond(r) => r,
                    AppAnswer::Refused(why) if approval::user_only(&pending) => {
                        return Err(task_err(a, AgentTaskError::UserOnly(why)))
                    }
                    // No action kind an app may answer exists yet (approval::APP_ANSWERABLE_ACTIONS).
                    AppAnswer::Refused(_) => {
                        return Err(invalid(a, "this action takes no answer with an input"))
                    }
                };
                h.tasks
                    .respond(&app, id, action, response, Responder::App)
                    .map_err(|e| task_err(a, e))?;
                Ok(Reply::value(json!({ "responded": true })))
            }
            AgentMethod::GetTaskEvents => {
                let o = object(a, args, &["taskId", "afterSequence", "limit"])?;
                let id = task_id(a, o)?;
                let after = opt_u64(a, o, "afterSequence")?.unwrap_or(0);
                let limit = opt_u64(a, o, "limit")?.unwrap_or(200).clamp(1, 1000) as usize;
                let h = self.host(store, a)?;
                let (events, next) = h
                    .tasks
                    .events(&app, id, after, limit)
                    .map_err(|e| task_err(a, e))?;
                Ok(Reply::value(
                    json!({ "events": events, "nextAfterSequence": next }),
                ))
            }
            AgentMethod::WatchTask => {
                let o = object(a, args, &["taskId", "afterSequence"])?;
                let id = task_id(a, o)?;
                let after = opt_u64(a, o, "afterSequence")?.unwrap_or(0);
                let h = self.host(store, a)?;
                // Checks ownership now, so the answer says whether events will come.
                h.tasks.identity(&app, id).map_err(|e| task_err(a, e))?;
                let value = json!({ "watching": true, "taskId": id, "afterSequence": after });
                Ok(Reply {
                    value: value.clone(),
                    effect: Some(Effect::WatchTask {
                        task_id: id.to_owned(),
                        after,
                        value,
                    }),
                })
            }
        }
    }

    /// Starts forwarding the app's task events after `after` to `sink`, on the agent runtime;
    /// abort the handle to stop. `None` when the task is not the app's or no runtime is open.
    pub(super) fn watch(
        &self,
        app: &str,
        task_id: &str,
        after: u64,
        sink: TaskEventSink,
    ) -> Option<tokio::task::AbortHandle> {
        let h = self.shared().host.clone()?;
        let app = AppId::new(app).ok()?;
        let mut stream = h.tasks.subscribe(&app, task_id, after).ok()?;
        let rt = h.tokio.as_ref()?;
        let join = rt.spawn(async move {
            loop {
                let e: AgentTaskEvent = match stream.next().await {
                    Ok(e) => e,
                    Err(e) => {
                        tracing::warn!("task event stream ended: {e}");
                        return;
                    }
                };
                let mut v = json!({ "capability": "lime.agent", "event": e });
                while let Err(back) = sink(v) {
                    v = back;
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
            }
        });
        Some(join.abort_handle())
    }

    /// Stops the app's unfinished task runs (disable, update, rollback, uninstall).
    pub(super) fn close_app(&mut self, app: &str) {
        let host = self.shared().host.clone();
        let (Some(h), Ok(app)) = (host, AppId::new(app)) else {
            return;
        };
        if let Err(e) = h.tasks.cancel_app(&app) {
            tracing::warn!("cannot cancel the tasks of {app}: {e}");
        }
    }

    /// Readiness of the service for `store`'s settings: `ready` or `needs-setup`.
    pub(super) fn status(&self, store: &Store) -> &'static str {
        if configured(store) {
            "ready"
        } else {
            "needs-setup"
        }
    }
}

/// A model is set up in the host settings.
fn configured(store: &Store) -> bool {
    model_settings::load(store).ok().flatten().is_some()
}

fn start_request(
    store: &Store,
    a: &Allowed,
    o: &Map<String, Value>,
) -> Result<StartTask, CallError> {
    let input = match o.get("input") {
        None | Some(Value::Null) => return Err(invalid(a, "args.input is required")),
        Some(v) => match super::attachments::attach(store, a, o.get("files"), v)? {
            Some(with_files) => with_files,
            None => match v {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            },
        },
    };
    if input.len() > MAX_INPUT_BYTES {
        return Err(err(
            a,
            ErrorCode::InvalidArgument,
            &format!("args.input is over {MAX_INPUT_BYTES} bytes"),
            Some("agent.too_large"),
        ));
    }
    let idempotency_key = opt_str(a, o, "idempotencyKey")?.map(str::to_owned);
    let session = session_policy(a, o.get("sessionPolicy"))?;
    let max_tokens = super::task_budget::parse(a, o.get("budget"))?;
    match o.get("options") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) if m.is_empty() => {}
        Some(_) => return Err(invalid(a, "args.options: no option is supported yet")),
    }
    let output_schema = match o.get("expectedOutput") {
        None | Some(Value::Null) => None,
        Some(Value::Object(e)) => match expected_output(a, e)? {
            OutputSchema::Inline(s) => Some(s.clone()),
            OutputSchema::Ref(r) => Some(schema_ref(store, a, r)?),
        },
        Some(_) => return Err(invalid(a, "args.expectedOutput must be an object")),
    };
    Ok(StartTask {
        input,
        idempotency_key,
        output_schema,
        session,
        // One trace: the bridge call that started the task is on its run's events.
        request_id: Some(a.request_id().to_owned()),
        max_tokens,
    })
}

/// What an app asked `respondAction` for, once its arguments are well formed.
enum AppAnswer {
    Respond(Response),
    /// An answer no app gives to an action that needs the user: any `updatedInput` (the app
    /// would choose what the tool runs with) or `answer` (an edited input).
    Refused(UserOnly),
}

/// Decodes `respondAction`'s `decision`, `remember` and `updatedInput` (shapes only: whether the
/// app may give this answer is decided against the pending action).
fn app_answer(a: &Allowed, o: &Map<String, Value>) -> Result<AppAnswer, CallError> {
    let remember = opt_str(a, o, "remember")?;
    let decision = req_str(a, o, "decision")?;
    if !matches!(decision, "approve" | "reject" | "answer") {
        return Err(invalid(
            a,
            "args.decision must be \"approve\", \"reject\" or \"answer\"",
        ));
    }
    let session = match remember {
        None | Some("call") => false,
        Some("session") => true,
        Some(_) => return Err(invalid(a, "args.remember must be \"call\" or \"session\"")),
    };
    match o.get("updatedInput") {
        None | Some(Value::Null) => {}
        Some(v @ Value::Object(_)) if v.to_string().len() <= MAX_INPUT_BYTES => {
            return Ok(AppAnswer::Refused(UserOnly::UpdatedInput))
        }
        Some(_) => {
            return Err(invalid(
                a,
                "args.updatedInput must be a JSON object (the tool's input) of at most 256 KiB",
            ))
        }
    }
    Ok(AppAnswer::Respond(match (decision, session) {
        ("approve", false) => Response::Approve,
        ("approve", true) => Response::ApproveForSession,
        ("reject", false) => Response::Reject,
        // Allowing for the session, and an answer (an edited input), are the user's to give.
        _ => return Ok(AppAnswer::Refused(UserOnly::Approval)),
    }))
}

/// `startTask`'s `sessionPolicy` (standard §8.6): `"new"` (or absent, or `{mode: "new"}`),
/// `{mode: "resume", taskId | businessObjectRef}`; `continue` and `fork` are refused
/// (`agent.session_policy_unsupported`, see docs/bridge-protocol.md). Any mode but `new` must be
/// declared in the installed manifest's `agentRuntime.sessionPolicy.modes` (the [`Allowed`]
/// proof's facts, never the message): else `APP_E002` `agent.session_policy_not_declared`.
fn session_policy(a: &Allowed, p: Option<&Value>) -> Result<SessionPolicy, CallError> {
    const SHAPE: &str = "args.sessionPolicy must be \"new\", {mode: \"new\"} or {mode: \"resume\", taskId | businessObjectRef}";
    let (mode, o) = match p {
        None | Some(Value::Null) => return Ok(SessionPolicy::New),
        Some(Value::String(m)) => (m.as_str(), None),
        Some(Value::Object(o)) => match o.get("mode") {
            Some(Value::String(m)) => (m.as_str(), Some(o)),
            _ => return Err(invalid(a, SHAPE)),
        },
        Some(_) => return Err(invalid(a, SHAPE)),
    };
    if !matches!(mode, "new" | "resume" | "continue" | "fork") {
        return Err(invalid(a, SHAPE));
    }
    if mode != "new" && !declared_modes(a).contains(&mode) {
        return Err(err(
            a,
            ErrorCode::PermissionDenied,
            &format!("sessionPolicy mode {mode:?} is not declared in the app's agentRuntime.sessionPolicy.modes"),
            Some("agent.session_policy_not_declared"),
        ));
    }
    let target = |key: &str| o.and_then(|o| o.get(key));
    let extra = o.and_then(|o| {
        o.keys()
            .find(|k| !matches!(k.as_str(), "mode" | "taskId" | "businessObjectRef"))
    });
    if let Some(k) = extra {
        let shown: String = k.chars().take(64).collect();
        return Err(invalid(
            a,
            &format!("unknown sessionPolicy field {shown:?}"),
        ));
    }
    match (mode, target("taskId"), target("businessObjectRef")) {
        ("new", None, None) => Ok(SessionPolicy::New),
        ("resume", Some(Value::String(id)), None) => {
            if id.is_empty() || id.len() > 128 {
                return Err(not_found(a));
            }
            Ok(SessionPolicy::ResumeTask(id.clone()))
        }
        ("resume", None, Some(Value::String(r))) => Ok(SessionPolicy::ResumeRef(r.clone())),
        ("continue" | "fork", _, _) => Err(err(
            a,
            ErrorCode::InvalidArgument,
            &format!("sessionPolicy mode {mode:?} is not supported: start a task with {{mode: \"resume\", taskId}} to continue a conversation"),
            Some("agent.session_policy_unsupported"),
        )),
        _ => Err(invalid(a, SHAPE)),
    }
}

/// The installed manifest's `agentRuntime.sessionPolicy.modes` (strings only).
fn declared_modes(a: &Allowed) -> Vec<&str> {
    a.manifest().view().agent_runtime().session_modes()
}

/// A JSON Schema shipped in the app's own package (its active, verified version).
fn schema_ref(store: &Store, a: &Allowed, r: &str) -> Result<Value, CallError> {
    let path = r.strip_prefix("./").unwrap_or(r);
    if path.is_empty() || path.len() > 512 || path.starts_with('/') || path.contains("..") {
        return Err(invalid(
            a,
            "expectedOutput.schemaRef must be a path inside the package",
        ));
    }
    let bytes = store.read_file(a.app(), a.version(), path).map_err(|_| {
        err(
            a,
            ErrorCode::NotFound,
            "expectedOutput.schemaRef names no file of this app's package",
            Some("agent.schema_not_found"),
        )
    })?;
    if bytes.len() > runtime_core::agent_task::MAX_SCHEMA_BYTES {
        return Err(err(
            a,
            ErrorCode::InvalidArgument,
            "the schema file is too large",
            Some("agent.too_large"),
        ));
    }
    serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object)
        .ok_or_else(|| invalid(a, "expectedOutput.schemaRef is not a JSON object"))
}

fn req_str<'v>(a: &Allowed, o: &'v Map<String, Value>, key: &str) -> Result<&'v str, CallError> {
    opt_str(a, o, key)?.ok_or_else(|| invalid(a, &format!("args.{key} is required")))
}

fn opt_u64(a: &Allowed, o: &Map<String, Value>, key: &str) -> Result<Option<u64>, CallError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| invalid(a, &format!("args.{key} must be a non-negative integer"))),
    }
}

fn task_id<'v>(a: &Allowed, o: &'v Map<String, Value>) -> Result<&'v str, CallError> {
    let id = req_str(a, o, "taskId")?;
    if id.is_empty() || id.len() > 128 {
        return Err(not_found(a));
    }
    Ok(id)
}

fn not_found(a: &Allowed) -> CallError {
    err(
        a,
        ErrorCode::NotFound,
        "no task with this id in this app",
        Some("agent.task_not_found"),
    )
}

fn host_failed(a: &Allowed, message: &str) -> CallError {
    let mut e = err(
        a,
        ErrorCode::UnknownError,
        message,
        Some("agent.host_failed"),
    );
    e.retryable = true;
    e
}

fn task_err(a: &Allowed, e: AgentTaskError) -> CallError {
    match e {
        AgentTaskError::NotFound => not_found(a),
        AgentTaskError::NeedsSetup => err(
            a,
            ErrorCode::ModelNotConfigured,
            "no model is set up in AppHost: the user sets one up in Settings → Model",
            Some("agent.needs_setup"),
        ),
        AgentTaskError::Invalid(m) => invalid(a, &m),
        AgentTaskError::Busy => err(
            a,
            ErrorCode::InvalidArgument,
            "the task's latest run has not ended: cancel it or wait for its result",
            Some("agent.task_busy"),
        ),
        AgentTaskError::SessionBusy => err(
            a,
            ErrorCode::InvalidArgument,
            "the session's latest turn has not ended: wait for its result or cancel it",
            Some("agent.session_busy"),
        ),
        AgentTaskError::ActionNotFound(_) => err(
            a,
            ErrorCode::NotFound,
            "no pending approval with this id in this task",
            Some("agent.action_not_found"),
        ),
        AgentTaskError::UserOnly(why) => err(
            a,
            ErrorCode::PermissionDenied,
            match why {
                UserOnly::Approval => "only the user approves this action, in the prompt AppHost shows: an app may reject it or cancel the task",
                UserOnly::UpdatedInput => "an app cannot change the input of a tool that needs the user's approval",
            },
            Some(match why {
                UserOnly::Approval => "agent.approval_requires_user",
                UserOnly::UpdatedInput => "agent.updated_input_unsupported",
            }),
        ),
        AgentTaskError::Limit { .. } => err(
            a,
            ErrorCode::InvalidArgument,
            &format!("{e}: finished tasks of this app count until its data is deleted"),
            Some("agent.too_many_tasks"),
        ),
        AgentTaskError::Storage(m) => host_failed(a, &format!("task storage failed: {m}")),
    }
}
