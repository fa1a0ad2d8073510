//! App agent tasks (`lime.agent`): a task is one runtime session owned by one app; each run
//! (the first, then one per retry) is one turn of that session. Ownership, idempotency keys and
//! runs are durable in `agent-tasks.sqlite` ([`store`]); everything a task *did* is the
//! session's event log, projected into `lime.agent-task-event.v1` ([`projection`]).
//!
//! Every method takes the calling app: a task of another app is answered exactly like a
//! missing one (`task_not_found`), so an app can neither read, cancel nor answer it.
//!
//! Sessions (standard §8.6, conversation history only): a task starts a new session, or
//! (`resume`) runs its first turn in a session of an earlier task of the same app, named by that
//! task's id or by an app-chosen business object ref, so the model sees that conversation. A
//! session whose latest turn has not ended is refused (`session_busy`). Once sessions are shared,
//! a task's events are the facts of its own runs' turns only; the session-level facts (without a
//! turn, like `system:init`) belong to the task that created the session ([`belongs`]).

pub mod approval;
pub mod projection;
pub mod store;

use std::sync::Arc;

use serde_json::{json, Value};

use crate::event::format_timestamp;
use crate::ids::*;
use crate::read_model::{PendingAction, TurnStatus, TurnView};
use crate::runtime::{Runtime, RuntimeError};
use crate::turn::Decision;
pub use approval::{Responder, UserOnly};
use projection::{project, AgentTaskEvent, TaskIdentity};
use store::{TaskRow, TaskStore};

/// Bounds on what an app may send.
pub const MAX_INPUT_BYTES: usize = 256 * 1024;
pub const MAX_IDEMPOTENCY_KEY_BYTES: usize = 200;
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;
pub const MAX_LIST: usize = 100;
pub const MAX_EVENTS_PAGE: usize = 1000;
/// Characters of a task's input shown in the host's task list.
pub const INPUT_PREVIEW_CHARS: usize = 200;
/// Bytes of an app's `businessObjectRef`.
pub const MAX_BUSINESS_REF_BYTES: usize = 200;
/// Default cap on one app's tasks.
pub const DEFAULT_TASKS_PER_APP: u64 = 10_000;
/// Default cap on the tasks of every app together.
pub const DEFAULT_TASKS_TOTAL: u64 = 100_000;

/// Caps on stored tasks (a new task past one is `task_limit`, nothing recorded). A task that
/// starts a new session also counts against the runtime's session caps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskLimits {
    pub per_app: u64,
    pub total: u64,
}

impl Default for TaskLimits {
    fn default() -> Self {
        TaskLimits {
            per_app: DEFAULT_TASKS_PER_APP,
            total: DEFAULT_TASKS_TOTAL,
        }
    }
}

/// A task failure with a stable code (the host maps these to `APP_E…` codes).
#[derive(Debug, thiserror::Error)]
pub enum AgentTaskError {
    #[error("no such task")]
    NotFound,
    #[error("no model provider is configured")]
    NeedsSetup,
    #[error("invalid request: {0}")]
    Invalid(String),
    #[error("the task's latest run has not ended")]
    Busy,
    #[error("the session's latest turn has not ended")]
    SessionBusy,
    #[error("no pending approval {0} in this task")]
    ActionNotFound(String),
    /// An app's answer only the user may give ([`approval`]); the action stays pending.
    #[error("only the user may answer this action: {}", .0.code())]
    UserOnly(UserOnly),
    /// A task cap ([`TaskLimits`], `scope` `app` or `workspace`) or a session cap of the runtime
    /// is reached.
    #[error("the {scope} {what} limit ({limit}) is reached")]
    Limit {
        what: &'static str,
        scope: &'static str,
        limit: u64,
    },
    #[error("task storage failed: {0}")]
    Storage(String),
}

impl AgentTaskError {
    /// The stable code.
    pub fn code(&self) -> &'static str {
        match self {
            AgentTaskError::NotFound => "task_not_found",
            AgentTaskError::NeedsSetup => "needs_setup",
            AgentTaskError::Invalid(_) => "invalid_request",
            AgentTaskError::Busy => "task_busy",
            AgentTaskError::SessionBusy => "session_busy",
            AgentTaskError::ActionNotFound(_) => "action_not_found",
            AgentTaskError::UserOnly(why) => why.code(),
            AgentTaskError::Limit { .. } => "task_limit",
            AgentTaskError::Storage(_) => "storage_error",
        }
    }
}

impl From<rusqlite::Error> for AgentTaskError {
    fn from(e: rusqlite::Error) -> Self {
        AgentTaskError::Storage(e.to_string())
    }
}

impl From<RuntimeError> for AgentTaskError {
    fn from(e: RuntimeError) -> Self {
        match e {
            RuntimeError::NeedsSetup => AgentTaskError::NeedsSetup,
            RuntimeError::InvalidParams(m) => AgentTaskError::Invalid(m),
            RuntimeError::ActionNotFound(a) => AgentTaskError::ActionNotFound(a),
            RuntimeError::SessionNotFound(_) | RuntimeError::TurnNotFound(_) => {
                AgentTaskError::NotFound
            }
            RuntimeError::SessionLimit { scope, limit } => AgentTaskError::Limit {
                what: "session",
                scope: scope.as_str(),
                limit,
            },
            other => AgentTaskError::Storage(other.to_string()),
        }
    }
}

/// Which session a new task's run is a turn of (standard §8.6; conversation history only,
/// never business state).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum SessionPolicy {
    /// A fresh session.
    #[default]
    New,
    /// The session of this earlier task of the same app.
    ResumeTask(String),
    /// The session of the app's business object ref; the first task with it creates it.
    ResumeRef(String),
}

/// `startTask`'s request (already decoded by the host).
#[derive(Clone, Debug, Default)]
pub struct StartTask {
    pub input: String,
    pub idempotency_key: Option<String>,
    pub output_schema: Option<Value>,
    pub session: SessionPolicy,
}

/// What `startTask` answers at once.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskStarted {
    pub task_id: String,
    pub trace_id: String,
    pub session_id: String,
    /// False when the idempotency key named an existing task.
    pub created: bool,
}

/// An answer to a pending approval.
#[derive(Clone, Debug, PartialEq)]
pub enum Response {
    Approve,
    ApproveForSession,
    Reject,
    /// Approve once, running the tool with this input instead of the model's (a JSON object).
    Answer(Value),
}

/// App agent tasks over one [`Runtime`].
#[derive(Clone)]
pub struct AgentTasks {
    runtime: Runtime,
    store: Arc<TaskStore>,
    /// Serialises choosing a session and submitting its turn (resume, retry), so two callers
    /// cannot both find a shared session idle.
    sessions: Arc<std::sync::Mutex<()>>,
    limits: TaskLimits,
}

impl AgentTasks {
    /// Opens `agent-tasks.sqlite` in the runtime's data directory.
    pub fn open(runtime: Runtime) -> Result<AgentTasks, AgentTaskError> {
        let dir = runtime.config().data_dir.clone();
        crate::private_fs::create_private_dir(&dir)
            .map_err(|e| AgentTaskError::Storage(e.to_string()))?;
        let store = TaskStore::open(&dir.join("agent-tasks.sqlite"))?;
        Ok(AgentTasks {
            runtime,
            store: Arc::new(store),
            sessions: Arc::new(std::sync::Mutex::new(())),
            limits: TaskLimits::default(),
        })
    }

    /// The same tasks under other caps (tests use small ones).
    pub fn with_limits(mut self, limits: TaskLimits) -> Self {
        self.limits = limits;
        self
    }

    /// `Limit` when `app` may not record one more task (or, for a new session, one more
    /// session): checked before anything is recorded.
    fn check_room(&self, app: &AppId, new_session: bool) -> Result<(), AgentTaskError> {
        let (mine, all) = self.store.counts(app.as_str())?;
        if mine >= self.limits.per_app {
            return Err(AgentTaskError::Limit {
                what: "task",
                scope: "app",
                limit: self.limits.per_app,
            });
        }
        if all >= self.limits.total {
            return Err(AgentTaskError::Limit {
                what: "task",
                scope: "workspace",
                limit: self.limits.total,
            });
        }
        if new_session {
            self.runtime.session_room(app)?;
        }
        Ok(())
    }

    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// `ready`, or `needs-setup` while no model provider is configured.
    pub fn status(&self) -> &'static str {
        self.runtime.status()
    }

    /// Starts a task (or returns the app's task with the same idempotency key). Never waits
    /// for the model: the run is submitted to the runtime's own executor.
    pub fn start(&self, app: &AppId, req: StartTask) -> Result<TaskStarted, AgentTaskError> {
        if req.input.len() > MAX_INPUT_BYTES {
            return Err(AgentTaskError::Invalid(format!(
                "input is over {MAX_INPUT_BYTES} bytes"
            )));
        }
        if let Some(k) = &req.idempotency_key {
            if k.is_empty()
                || k.len() > MAX_IDEMPOTENCY_KEY_BYTES
                || k.chars().any(char::is_control)
            {
                return Err(AgentTaskError::Invalid(format!(
                    "idempotencyKey must be 1..={MAX_IDEMPOTENCY_KEY_BYTES} bytes without control characters"
                )));
            }
        }
        if let Some(s) = &req.output_schema {
            if s.to_string().len() > MAX_SCHEMA_BYTES {
                return Err(AgentTaskError::Invalid(format!(
                    "the output schema is over {MAX_SCHEMA_BYTES} bytes"
                )));
            }
            jsonschema::validator_for(s).map_err(|e| {
                AgentTaskError::Invalid(format!(
                    "the output schema is not a valid JSON Schema: {e}"
                ))
            })?;
        }
        match &req.session {
            SessionPolicy::New => {}
            SessionPolicy::ResumeTask(id) => {
                if id.is_empty() || id.len() > 128 {
                    return Err(AgentTaskError::NotFound);
                }
            }
            SessionPolicy::ResumeRef(r) => {
                if r.is_empty()
                    || r.len() > MAX_BUSINESS_REF_BYTES
                    || r.chars().any(char::is_control)
                {
                    return Err(AgentTaskError::Invalid(format!(
                        "businessObjectRef must be 1..={MAX_BUSINESS_REF_BYTES} bytes without control characters"
                    )));
                }
            }
        }
        if self.runtime.status() != "ready" {
            return Err(AgentTaskError::NeedsSetup);
        }
        let _guard = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        // The same key names the same task, whatever its session is doing now.
        if let Some(k) = &req.idempotency_key {
            if let Some(row) = self.store.get_by_key(app.as_str(), k)? {
                self.ensure_started(app, &row)?;
                return Ok(TaskStarted {
                    task_id: row.task_id,
                    trace_id: row.trace_id,
                    session_id: row.session_id,
                    created: false,
                });
            }
        }
        let (session_id, joined, new_ref) = match &req.session {
            SessionPolicy::New => (SessionId::random().into_string(), false, None),
            SessionPolicy::ResumeTask(id) => (self.row(app, id)?.session_id, true, None),
            SessionPolicy::ResumeRef(r) => match self.store.session_for_ref(app.as_str(), r)? {
                Some(s) => (s, true, None),
                None => (SessionId::random().into_string(), false, Some(r.as_str())),
            },
        };
        if joined {
            self.check_session_idle(&session_id)?;
        }
        self.check_room(app, !joined)?;
        let row = TaskRow {
            task_id: TaskId::random().into_string(),
            app_id: app.as_str().to_owned(),
            idempotency_key: req.idempotency_key.clone(),
            session_id,
            trace_id: TraceId::random().into_string(),
            input: req.input,
            output_schema: req.output_schema,
            created_at: format_timestamp(self.runtime.log().clock().now()),
            runs: vec![TurnId::random().into_string()],
            joined,
        };
        let (row, created) = self.store.insert_or_get_with_ref(&row, new_ref)?;
        self.ensure_started(app, &row)?;
        Ok(TaskStarted {
            task_id: row.task_id,
            trace_id: row.trace_id,
            session_id: row.session_id,
            created,
        })
    }

    /// Makes sure the task's session exists and its latest run was submitted (both idempotent;
    /// repairs a crash between recording a run and submitting it).
    fn ensure_started(&self, app: &AppId, row: &TaskRow) -> Result<(), AgentTaskError> {
        let session = sid(&row.session_id)?;
        if self.runtime.read(&session).is_err() {
            match self
                .runtime
                .start_session(app.clone(), Some(session.clone()), None)
            {
                Ok(_) | Err(RuntimeError::SessionAlreadyExists(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let Some(last) = row.runs.last() else {
            return Ok(());
        };
        let turn = TurnId::new(last.clone()).map_err(|e| AgentTaskError::Storage(e.to_string()))?;
        self.runtime.start_turn(
            &session,
            Some(turn),
            row.input.clone(),
            row.output_schema.clone(),
            true,
        )?;
        Ok(())
    }

    /// `SessionBusy` unless every turn of the session has ended (a session that is not loaded
    /// has no running turn).
    fn check_session_idle(&self, session: &str) -> Result<(), AgentTaskError> {
        let Ok((_, _, model)) = self.runtime.read(&sid(session)?) else {
            return Ok(());
        };
        let busy = model
            .threads
            .values()
            .any(|th| th.turns.iter().any(|t| !t.status.is_terminal()));
        if busy {
            return Err(AgentTaskError::SessionBusy);
        }
        Ok(())
    }

    fn row(&self, app: &AppId, task_id: &str) -> Result<TaskRow, AgentTaskError> {
        self.store
            .get(app.as_str(), task_id)?
            .ok_or(AgentTaskError::NotFound)
    }

    fn latest_turn(&self, row: &TaskRow) -> Result<Option<TurnView>, AgentTaskError> {
        let Some(last) = row.runs.last() else {
            return Ok(None);
        };
        let Ok((_, _, model)) = self.runtime.read(&sid(&row.session_id)?) else {
            return Ok(None);
        };
        let turn = TurnId::new(last.clone()).map_err(|e| AgentTaskError::Storage(e.to_string()))?;
        Ok(model.turn(&turn).cloned())
    }

    /// The task's state (`getTask`).
    pub fn get(&self, app: &AppId, task_id: &str) -> Result<Value, AgentTaskError> {
        let row = self.row(app, task_id)?;
        self.view(&row)
    }

    fn view(&self, row: &TaskRow) -> Result<Value, AgentTaskError> {
        let session = sid(&row.session_id)?;
        let model = self.runtime.read(&session).ok().map(|(_, _, m)| m);
        let mut runs = Vec::new();
        let mut pending = Vec::new();
        for (i, t) in row.runs.iter().enumerate() {
            let view = model.as_ref().and_then(|m| {
                TurnId::new(t.clone())
                    .ok()
                    .and_then(|id| m.turn(&id).cloned())
            });
            runs.push(json!({
                "run": i + 1,
                "turnId": t,
                "status": view.as_ref().map_or("submitting", |v| status_name(v.status)),
                "errorCode": view.as_ref().and_then(|v| v.error_code.clone()),
            }));
        }
        if let Some(m) = &model {
            for th in m.threads.values() {
                for a in &th.pending_actions {
                    if a.turn_id.as_ref().map(|t| t.as_str()) == row.runs.last().map(|s| s.as_str())
                    {
                        pending.push(json!({
                            "actionId": a.action_id,
                            "toolName": a.tool_name,
                            "toolCallId": a.tool_call_id,
                            "input": a.arguments,
                            "prompt": a.prompt,
                            "actionType": a.action_type,
                        }));
                    }
                }
            }
        }
        let latest = self.latest_turn(row)?;
        let status = latest
            .as_ref()
            .map_or("submitting", |v| status_name(v.status));
        let result = latest.as_ref().filter(|v| v.status.is_terminal()).map(|v| {
            json!({
                "status": status_name(v.status),
                "text": if v.structured_output.is_some() { Value::Null } else { json!(v.output_text) },
                "structuredOutput": v.structured_output,
                "errorCode": v.error_code,
                "errorMessage": v.error_message,
            })
        });
        Ok(json!({
            "taskId": row.task_id,
            "traceId": row.trace_id,
            "sessionId": row.session_id,
            "idempotencyKey": row.idempotency_key,
            "createdAt": row.created_at,
            "status": status,
            "runs": runs,
            "pendingActions": pending,
            "result": result,
        }))
    }

    /// The app's tasks, oldest first, after `cursor` (the `taskId` of the last one seen).
    pub fn list(
        &self,
        app: &AppId,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<Value>, Option<String>), AgentTaskError> {
        let limit = limit.clamp(1, MAX_LIST);
        let after = match cursor {
            Some(c) => Some(self.row(app, c)?),
            None => None,
        };
        let rows = self.store.list(
            app.as_str(),
            after
                .as_ref()
                .map(|r| (r.created_at.as_str(), r.task_id.as_str())),
            limit,
        )?;
        let next = (rows.len() == limit)
            .then(|| rows.last().map(|r| r.task_id.clone()))
            .flatten();
        let items = rows
            .iter()
            .map(|r| self.view(r))
            .collect::<Result<_, _>>()?;
        Ok((items, next))
    }

    /// The host's own listing (never an app's): up to `limit` tasks, newest first, of `app` or
    /// of every app, each as [`AgentTasks::get`] shows it plus `appId`, `updatedAt` (the latest
    /// run's last change) and `inputPreview` (the input's first [`INPUT_PREVIEW_CHARS`] chars).
    pub fn recent(&self, app: Option<&AppId>, limit: usize) -> Result<Vec<Value>, AgentTaskError> {
        let rows = self
            .store
            .recent(app.map(AppId::as_str), limit.clamp(1, MAX_LIST))?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let mut v = self.view(row)?;
            let latest = self.latest_turn(row)?;
            let updated = latest
                .as_ref()
                .and_then(|t| {
                    t.completed_at
                        .clone()
                        .or_else(|| t.started_at.clone())
                        .or_else(|| t.submitted_at.clone())
                })
                .unwrap_or_else(|| row.created_at.clone());
            v["appId"] = json!(row.app_id);
            v["updatedAt"] = json!(updated);
            v["inputPreview"] = json!(row
                .input
                .chars()
                .take(INPUT_PREVIEW_CHARS)
                .collect::<String>());
            out.push(v);
        }
        Ok(out)
    }

    /// The task's input as the app sent it (the host shows it beside the task's activity).
    pub fn input(&self, app: &AppId, task_id: &str) -> Result<String, AgentTaskError> {
        Ok(self.row(app, task_id)?.input)
    }

    /// Cancels the latest run (`cancelTask`); a run that already ended is left alone.
    pub fn cancel(&self, app: &AppId, task_id: &str) -> Result<Value, AgentTaskError> {
        let row = self.row(app, task_id)?;
        let session = sid(&row.session_id)?;
        if let Some(last) = row.runs.last() {
            let turn =
                TurnId::new(last.clone()).map_err(|e| AgentTaskError::Storage(e.to_string()))?;
            match self.runtime.cancel_turn(&session, &turn) {
                Ok(_) | Err(RuntimeError::TurnNotFound(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        self.view(&row)
    }

    /// Cancels every unfinished run of the app's tasks (the app was disabled, updated or
    /// uninstalled); returns how many were asked to stop.
    pub fn cancel_app(&self, app: &AppId) -> Result<usize, AgentTaskError> {
        let mut n = 0;
        let mut after: Option<(String, String)> = None;
        loop {
            let rows = self.store.list(
                app.as_str(),
                after.as_ref().map(|(c, t)| (c.as_str(), t.as_str())),
                MAX_LIST,
            )?;
            let Some(last) = rows.last() else {
                return Ok(n);
            };
            after = Some((last.created_at.clone(), last.task_id.clone()));
            for row in &rows {
                if let Some(v) = self.latest_turn(row)? {
                    if !v.status.is_terminal() {
                        self.runtime
                            .cancel_turn(&sid(&row.session_id)?, &v.turn_id)?;
                        n += 1;
                    }
                }
            }
        }
    }

    /// Starts a new run of an ended task (`retryTask`): same input, same output schema.
    pub fn retry(&self, app: &AppId, task_id: &str) -> Result<Value, AgentTaskError> {
        let row = self.row(app, task_id)?;
        if self.runtime.status() != "ready" {
            return Err(AgentTaskError::NeedsSetup);
        }
        let last = row.runs.last().cloned().unwrap_or_default();
        let _guard = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        match self.latest_turn(&row)? {
            Some(v) if v.status.is_terminal() => {}
            _ => return Err(AgentTaskError::Busy),
        }
        // Another task's turn in a shared session: refused, never queued behind it.
        self.check_session_idle(&row.session_id)?;
        let turn = TurnId::random().into_string();
        if self.store.add_run(&row.task_id, &last, &turn)?.is_none() {
            return Err(AgentTaskError::Busy);
        }
        let row = self.row(app, task_id)?;
        self.ensure_started(app, &row)?;
        self.view(&row)
    }

    /// The runtime's record of a pending action of this task's own runs. Only an action of the
    /// task's own runs can be named: a session may be shared with other tasks of the app
    /// (`resume`), whose approvals are theirs.
    pub fn pending_action(
        &self,
        app: &AppId,
        task_id: &str,
        action_id: &str,
    ) -> Result<PendingAction, AgentTaskError> {
        let row = self.row(app, task_id)?;
        let session = sid(&row.session_id)?;
        let missing = || AgentTaskError::ActionNotFound(action_id.to_owned());
        let action = ActionId::new(action_id.to_owned()).map_err(|_| missing())?;
        let (_, _, model) = self.runtime.read(&session).map_err(|_| missing())?;
        model
            .threads
            .values()
            .flat_map(|th| th.pending_actions.iter())
            .find(|p| {
                p.action_id == action
                    && match &p.turn_id {
                        Some(t) => row.runs.iter().any(|r| r == t.as_str()),
                        None => !row.joined,
                    }
            })
            .cloned()
            .ok_or_else(missing)
    }

    /// Answers a pending approval of the task's latest run, as `by`: an app may only reject a
    /// user-only action ([`approval::check`], re-derived from the runtime's record of it);
    /// a refused answer changes nothing (the action stays pending).
    pub fn respond(
        &self,
        app: &AppId,
        task_id: &str,
        action_id: &str,
        response: Response,
        by: Responder,
    ) -> Result<(), AgentTaskError> {
        let row = self.row(app, task_id)?;
        let session = sid(&row.session_id)?;
        let pending = self.pending_action(app, task_id, action_id)?;
        approval::check(&pending, &response, by)?;
        let action = pending.action_id;
        let decision = match response {
            Response::Approve => Decision::AllowOnce,
            Response::ApproveForSession => Decision::AllowForSession,
            Response::Reject => Decision::Decline,
            Response::Answer(input) => {
                self.runtime
                    .respond_action_with_input(&session, &action, input)?;
                return Ok(());
            }
        };
        self.runtime.respond_action(&session, &action, decision)?;
        Ok(())
    }

    /// The task's identity for projecting its events.
    pub fn identity(
        &self,
        app: &AppId,
        task_id: &str,
    ) -> Result<(TaskIdentity, SessionId), AgentTaskError> {
        let (ident, session, _) = self.scope(app, task_id)?;
        Ok((ident, session))
    }

    /// The task's identity, session and which of the session's facts are its own.
    fn scope(
        &self,
        app: &AppId,
        task_id: &str,
    ) -> Result<(TaskIdentity, SessionId, TaskFacts), AgentTaskError> {
        let row = self.row(app, task_id)?;
        Ok((
            TaskIdentity {
                app_id: row.app_id.clone(),
                task_id: row.task_id.clone(),
                trace_id: row.trace_id.clone(),
            },
            sid(&row.session_id)?,
            TaskFacts {
                task_id: row.task_id.clone(),
                runs: row.runs.clone(),
                owns_session: !row.joined,
                store: self.store.clone(),
                app_id: row.app_id,
                foreign: Default::default(),
            },
        ))
    }

    /// Up to `limit` task events with `sequence > after`, and the position to resume from
    /// (the last fact read, projected or dropped).
    pub fn events(
        &self,
        app: &AppId,
        task_id: &str,
        after: u64,
        limit: usize,
    ) -> Result<(Vec<AgentTaskEvent>, u64), AgentTaskError> {
        let (ident, session, mut facts) = self.scope(app, task_id)?;
        let limit = limit.clamp(1, MAX_EVENTS_PAGE);
        let mut out = Vec::new();
        let mut pos = after;
        while out.len() < limit {
            let page = self
                .runtime
                .log()
                .read(&session, pos.saturating_add(1), limit)
                .map_err(RuntimeError::from)?;
            if page.is_empty() {
                break;
            }
            for e in page {
                pos = e.sequence;
                if !facts.belongs(&e) {
                    continue;
                }
                if let Some(te) = project(&ident, &e) {
                    out.push(te);
                    if out.len() == limit {
                        break;
                    }
                }
            }
        }
        Ok((out, pos))
    }

    /// A live, resumable stream of the task's events after `after`.
    pub fn subscribe(
        &self,
        app: &AppId,
        task_id: &str,
        after: u64,
    ) -> Result<TaskEventStream, AgentTaskError> {
        let (ident, session, facts) = self.scope(app, task_id)?;
        Ok(TaskEventStream {
            ident,
            facts,
            sub: self.runtime.log().subscribe(&session, after),
        })
    }
}

/// Which facts of a (possibly shared) session are one task's: those of its runs' turns, and the
/// session-level ones (no turn) when the task created the session. A turn the task does not know
/// yet (a retry recorded after the reader started) is looked up again, so a live stream follows
/// new runs.
struct TaskFacts {
    app_id: String,
    task_id: String,
    runs: Vec<String>,
    owns_session: bool,
    store: Arc<TaskStore>,
    /// Turns seen to be another task's: a run's row is recorded before its turn is submitted,
    /// so a turn that is not this task's when its first fact is read never becomes it.
    foreign: std::collections::HashSet<String>,
}

impl TaskFacts {
    fn belongs(&mut self, e: &crate::event::Event) -> bool {
        let Some(turn) = &e.scope.turn_id else {
            return self.owns_session;
        };
        if self.runs.iter().any(|r| r == turn.as_str()) {
            return true;
        }
        if self.foreign.contains(turn.as_str()) {
            return false;
        }
        // A run of this task recorded since (`retryTask`), or another task's turn.
        if let Ok(Some(row)) = self.store.get(&self.app_id, &self.task_id) {
            self.runs = row.runs;
        }
        let mine = self.runs.iter().any(|r| r == turn.as_str());
        if !mine {
            self.foreign.insert(turn.as_str().to_owned());
        }
        mine
    }
}

/// Live task events (see [`AgentTasks::subscribe`]).
pub struct TaskEventStream {
    ident: TaskIdentity,
    facts: TaskFacts,
    sub: crate::log::Subscription,
}

impl TaskEventStream {
    /// The next task event, waiting for it.
    pub async fn next(&mut self) -> Result<AgentTaskEvent, AgentTaskError> {
        loop {
            let e = self.sub.next().await.map_err(RuntimeError::from)?;
            if !self.facts.belongs(&e) {
                continue;
            }
            if let Some(te) = project(&self.ident, &e) {
                return Ok(te);
            }
        }
    }

    /// The next task event if one is ready.
    pub fn try_next(&mut self) -> Result<Option<AgentTaskEvent>, AgentTaskError> {
        while let Some(e) = self.sub.try_next().map_err(RuntimeError::from)? {
            if !self.facts.belongs(&e) {
                continue;
            }
            if let Some(te) = project(&self.ident, &e) {
                return Ok(Some(te));
            }
        }
        Ok(None)
    }

    /// The sequence of the last fact read.
    pub fn position(&self) -> u64 {
        self.sub.position()
    }
}

fn sid(s: &str) -> Result<SessionId, AgentTaskError> {
    SessionId::new(s.to_owned()).map_err(|e| AgentTaskError::Storage(e.to_string()))
}

fn status_name(s: TurnStatus) -> &'static str {
    match s {
        TurnStatus::Accepted => "queued",
        TurnStatus::Queued => "queued",
        TurnStatus::Running => "running",
        TurnStatus::WaitingAction => "waiting_approval",
        TurnStatus::Completed => "succeeded",
        TurnStatus::Failed => "failed",
        TurnStatus::Cancelled => "cancelled",
    }
}
