//! RuntimeCore as a service: sessions, turns and their queue, the effect executor, recovery.
//!
//! Each session has one thread (App Server v0) and at most one active turn; further turns are
//! queued (`queueIfBusy`) or refused. Every fact goes through [`Runtime::append`], which appends
//! to the log and folds the appended events into the session's read model under the session's
//! lock (so the in-memory model is always the fold of the log's prefix). Every fact is built by
//! a constructor of [`crate::event::facts`], recovery's included.
//!
//! The parts: `sessions` (create, load, evict, read), `turns` (submit, queue, cancel, answer,
//! spawn), `executor` (drives a turn machine's effects), `recovery` (what a restart closes and
//! the queue it restores), `dir_lock` (one process per data directory).

pub(crate) mod dir_lock;
mod executor;
mod recovery;
mod session_meta;
pub use session_meta::{ArchivedFilter, ListedSession, SessionChange, SessionFilter, SessionPage};
mod sessions;
mod turns;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::mpsc;

use crate::app_data::AppDataStore;
use crate::backend::{ChatMessage, ExecutionBackend};
use crate::event::{Event, EventDraft};
use crate::ids::*;
use crate::log::{EventLog, LogError};
use crate::read_model::{SessionReadModel, TurnView};
use crate::session_cache::{LimitScope, Resident, SessionLimits};
use crate::tools::{DefaultToolPolicy, HostTools, ToolPolicy};
use crate::turn::{Decision, TurnLimits};

/// A runtime failure with a stable code (mapped to JSON-RPC codes by the App Server).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("session not found: {0}")]
    SessionNotFound(String),
    #[error("session already exists: {0}")]
    SessionAlreadyExists(String),
    #[error("turn not found: {0}")]
    TurnNotFound(String),
    #[error("a turn is already active in this session: {0}")]
    TurnAlreadyActive(String),
    #[error("queued turns restored after a restart wait for agentSession/thread/resume: {0}")]
    QueuePaused(String),
    #[error("no pending action {0}")]
    ActionNotFound(String),
    #[error("no model provider is configured (run `apphost model set`)")]
    NeedsSetup,
    #[error("invalid params: {0}")]
    InvalidParams(String),
    /// A new session would break a session cap ([`SessionLimits`]): nothing was recorded.
    #[error("the {} session limit ({limit}) is reached", scope.as_str())]
    SessionLimit { scope: LimitScope, limit: u64 },
    #[error("the runtime must be opened inside a tokio runtime")]
    NoAsyncRuntime,
    /// Another process (or another `Runtime` in this one) has the runtime's data directory open:
    /// two writers would each recover the other's live turns as crashed and race for sequence
    /// numbers, so the second one is refused.
    #[error("another AppHost process is running agent work on {0} (stop it, or use another data directory)")]
    Busy(String),
    #[error(transparent)]
    Log(#[from] LogError),
}

/// Runtime settings.
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// The runtime's data directory: `events.db` and `outputs/` live here.
    pub data_dir: PathBuf,
    /// Where apps' own data lives (host tools are scoped to `apps_dir/<app>`).
    pub apps_dir: PathBuf,
    pub limits: TurnLimits,
    /// Session caps and the LRU bound on idle sessions held in memory.
    pub sessions: SessionLimits,
    pub system_prompt: Option<String>,
    /// The host's decisions for the agent's host tools (quota, approval, provenance).
    pub tool_policy: Arc<dyn ToolPolicy>,
    /// The host's external (MCP) tools, offered to tasks that declared them; none by default.
    pub tool_source: Option<Arc<dyn crate::tools::external::ToolSource>>,
}

impl RuntimeConfig {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        let data_dir = data_dir.into();
        RuntimeConfig {
            apps_dir: data_dir.join("apps"),
            data_dir,
            limits: TurnLimits::default(),
            sessions: SessionLimits::default(),
            system_prompt: None,
            tool_policy: Arc::new(DefaultToolPolicy),
            tool_source: None,
        }
    }
}

enum Control {
    Cancel,
    Action(ActionId, Decision),
    ActionWithInput(ActionId, Value),
}

struct QueuedTurn {
    turn_id: TurnId,
    input: String,
    output_schema: Option<Value>,
    trace: TurnTrace,
    /// This turn's own token budget (a task's `budget.maxTokens`); it only ever lowers the
    /// runtime's and the app's ([`Runtime::turn_limits`]).
    max_tokens: Option<u64>,
}

/// The correlation ids every event of a turn carries.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnTrace {
    /// Default `trace_<turnId>_0`; a `lime.agent` task's runs carry the task's `traceId`.
    pub trace_id: Option<TraceId>,
    /// The request that caused the turn (a bridge call's `requestId`).
    pub request_id: Option<RequestId>,
}

impl TurnTrace {
    /// The trace id of `turn`'s events.
    pub fn trace_of(&self, turn: &TurnId) -> TraceId {
        self.trace_id
            .clone()
            .unwrap_or_else(|| TraceId::derived(turn.as_str(), 0))
    }
}

/// What a turn carries beside its text: kept in `turn.submitted` as given, and its trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnContext {
    pub given: crate::event::facts::TurnGiven,
    pub trace: TurnTrace,
    /// The turn's own token budget (`runtimeOptions.maxTokens`), below the app's.
    pub max_tokens: Option<u64>,
}

struct SessionState {
    model: SessionReadModel,
    active: Option<(TurnId, mpsc::Sender<Control>)>,
    queue: VecDeque<QueuedTurn>,
    /// A queue restored after a restart: nothing starts until `resume_queue` (the standard:
    /// resuming is explicit when the runtime cannot prove the work is still wanted).
    queue_paused: bool,
    /// Completed turns' input and answer, for the next turn's context.
    history: Vec<ChatMessage>,
}

struct SessionHandle {
    id: SessionId,
    app_id: AppId,
    thread_id: ThreadId,
    state: Mutex<SessionState>,
}

struct Inner {
    log: EventLog,
    /// Set at open or later by [`Runtime::set_backend`] (once a model is configured); never
    /// taken away while the runtime lives.
    backend: std::sync::RwLock<Option<Arc<dyn ExecutionBackend>>>,
    tools: HostTools,
    config: RuntimeConfig,
    /// Resident sessions (an LRU cache over the log) and the session counts.
    sessions: Mutex<Resident<SessionHandle>>,
    /// Where turns run (captured at open, so any thread may submit turns).
    tokio: tokio::runtime::Handle,
    /// The exclusive lock on `runtime.lock` in the data directory, held while the runtime lives
    /// ([`Runtime::open`]; `None` for a log handed in with [`Runtime::with_log`]).
    _lock: Option<std::fs::File>,
}

/// The runtime (cheap to clone).
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The result of `start_turn`.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnStarted {
    pub turn: TurnView,
    /// False when the caller's `turnId` named an existing turn (idempotent retry).
    pub created: bool,
}

impl Runtime {
    /// Opens the runtime on `config.data_dir` and recovers every session: read models are
    /// rebuilt from the log, and turns a previous process left unfinished are closed as failed
    /// with a `snapshot.repaired` recovery fact.
    pub fn open(
        config: RuntimeConfig,
        backend: Option<Arc<dyn ExecutionBackend>>,
    ) -> Result<Runtime, RuntimeError> {
        // One process owns a runtime directory: taken before the log is opened, so recovery
        // never runs while another process still has turns in flight.
        let lock = dir_lock::lock_dir(&config.data_dir)?;
        let log = EventLog::open(&config.data_dir.join("events.db"))?;
        Runtime::build(log, config, backend, Some(lock))
    }

    /// A runtime over `log` (no directory lock: the caller owns the log's exclusivity).
    pub fn with_log(
        log: EventLog,
        config: RuntimeConfig,
        backend: Option<Arc<dyn ExecutionBackend>>,
    ) -> Result<Runtime, RuntimeError> {
        Runtime::build(log, config, backend, None)
    }

    fn build(
        log: EventLog,
        config: RuntimeConfig,
        backend: Option<Arc<dyn ExecutionBackend>>,
        lock: Option<std::fs::File>,
    ) -> Result<Runtime, RuntimeError> {
        let rt = Runtime {
            inner: Arc::new(Inner {
                tools: HostTools::new(AppDataStore::new(config.apps_dir.clone()))
                    .with_policy(config.tool_policy.clone())
                    .with_source(config.tool_source.clone()),
                log,
                backend: std::sync::RwLock::new(backend),
                config,
                sessions: Mutex::new(Resident::default()),
                tokio: tokio::runtime::Handle::try_current()
                    .map_err(|_| RuntimeError::NoAsyncRuntime)?,
                _lock: lock,
            }),
        };
        rt.recover()?;
        Ok(rt)
    }

    pub fn log(&self) -> &EventLog {
        &self.inner.log
    }

    pub fn tools(&self) -> &HostTools {
        &self.inner.tools
    }

    pub fn config(&self) -> &RuntimeConfig {
        &self.inner.config
    }

    /// `ready` with a backend, `needs-setup` without one.
    pub fn status(&self) -> &'static str {
        if self.backend().is_some() {
            "ready"
        } else {
            "needs-setup"
        }
    }

    pub fn backend_info(&self) -> Option<crate::backend::BackendInfo> {
        self.backend().map(|b| b.info())
    }

    /// The model backend, if one is set.
    fn backend(&self) -> Option<Arc<dyn ExecutionBackend>> {
        self.inner
            .backend
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Sets the model backend of a runtime opened without one (or replaces it): the host sets
    /// it when a model is configured while its runtime (and the App Server door on it) is
    /// open. Turns already running keep the backend they started with.
    pub fn set_backend(&self, backend: Arc<dyn ExecutionBackend>) {
        *self
            .inner
            .backend
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(backend);
    }

    fn append(
        &self,
        h: &SessionHandle,
        drafts: Vec<EventDraft>,
    ) -> Result<Vec<Event>, RuntimeError> {
        let mut st = lock(&h.state);
        let events = self.inner.log.append(&h.id, drafts)?;
        for e in &events {
            st.model.apply(e);
        }
        Ok(events)
    }

    /// Records facts for a session outside any turn (evidence exports, ...).
    pub fn record(
        &self,
        session: &SessionId,
        drafts: Vec<EventDraft>,
    ) -> Result<Vec<Event>, RuntimeError> {
        let h = self.session(session)?;
        self.append(&h, drafts)
    }
}
