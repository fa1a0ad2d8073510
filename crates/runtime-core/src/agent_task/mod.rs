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
//!
//! Files: `starting.rs` (start, idempotency, caps), `reading.rs` (views, listings),
//! `control.rs` (cancel, retry, pending actions), `events.rs` (task events and the live stream),
//! `store.rs`, `projection.rs`, `approval.rs`.

pub mod approval;
pub mod bindings;
mod control;
mod correlation;
mod events;
pub mod projection;
mod reading;
mod starting;
pub mod store;

use std::sync::Arc;

use serde_json::Value;

use crate::app_server::calls::{self, MethodError};
use crate::app_server::protocol::SessionRef;
use crate::ids::*;
use crate::read_model::{SessionReadModel, TurnStatus};
use crate::runtime::{Runtime, RuntimeError};
pub use approval::{Responder, UserOnly};
pub use events::TaskEventStream;
use store::TaskStore;

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

impl From<MethodError> for AgentTaskError {
    fn from(e: MethodError) -> Self {
        match e {
            MethodError::Runtime(e) => e.into(),
            MethodError::Params(e) => AgentTaskError::Invalid(e.message),
        }
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
    /// The request that started the task (the bridge call's `requestId`): on its run's events,
    /// beside the task's `traceId`.
    pub request_id: Option<String>,
    /// The task's token budget per run (`startTask({budget: {maxTokens}})`): below the app's;
    /// kept with the task, so a retry has it too.
    pub max_tokens: Option<u64>,
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
        bindings::restore(&store, runtime.tools())?;
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

    /// The session's read models, through the App Server's `agentSession/read`.
    fn read_session(&self, session: &SessionId) -> Result<SessionReadModel, MethodError> {
        let r = SessionRef {
            session_id: session.clone(),
            workspace_id: None,
        };
        Ok(calls::read_session(&self.runtime, &r)?.detail)
    }

    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// `ready`, or `needs-setup` while no model provider is configured.
    pub fn status(&self) -> &'static str {
        self.runtime.status()
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
