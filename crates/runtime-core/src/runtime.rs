//! RuntimeCore as a service: sessions, turns and their queue, the effect executor, recovery.
//!
//! Each session has one thread (App Server v0) and at most one active turn; further turns are
//! queued (`queueIfBusy`) or refused. Every fact goes through [`Runtime::append`], which appends
//! to the log and folds the appended events into the session's read model under the session's
//! lock (so the in-memory model is always the fold of the log's prefix).

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::mpsc;
use tracing::Instrument;

use crate::app_data::AppDataStore;
use crate::backend::{cancel_pair, BackendEvent, ChatMessage, ExecutionBackend};
use crate::event::*;
use crate::ids::*;
use crate::log::{is_args_ref, EventLog, LogError};
use crate::read_model::{SessionReadModel, TurnStatus, TurnView};
use crate::session_cache::{LimitScope, Resident, SessionLimits};
use crate::tools::{DefaultToolPolicy, HostTools, ToolCall, ToolPolicy};
use crate::turn::*;

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

/// Takes the exclusive lock of a runtime directory (`runtime.lock`), creating both if needed.
fn lock_dir(dir: &std::path::Path) -> Result<std::fs::File, RuntimeError> {
    let path = dir.join("runtime.lock");
    let io = |e: std::io::Error| {
        RuntimeError::Log(LogError::Io {
            path: path.clone(),
            source: e,
        })
    };
    crate::private_fs::create_private_dir(dir).map_err(io)?;
    let file = std::os::unix::fs::OpenOptionsExt::mode(
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true),
        crate::private_fs::FILE_MODE,
    )
    .open(&path)
    .map_err(io)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {
            Err(RuntimeError::Busy(dir.display().to_string()))
        }
        Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
    }
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
    backend: Option<Arc<dyn ExecutionBackend>>,
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
        let lock = lock_dir(&config.data_dir)?;
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
                    .with_policy(config.tool_policy.clone()),
                log,
                backend,
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
        if self.inner.backend.is_some() {
            "ready"
        } else {
            "needs-setup"
        }
    }

    pub fn backend_info(&self) -> Option<crate::backend::BackendInfo> {
        self.inner.backend.as_ref().map(|b| b.info())
    }

    /// Rebuilds a session's in-memory state from the log (`None`: no such session, or one
    /// without app or thread).
    fn load(&self, sid: &SessionId) -> Result<Option<Arc<SessionHandle>>, RuntimeError> {
        let events = self.inner.log.read_all(sid)?;
        if events.is_empty() {
            return Ok(None);
        }
        let model = SessionReadModel::rebuild(&events);
        drop(events);
        let (Some(app), Some(thread)) = (
            model
                .session
                .app_id
                .as_deref()
                .and_then(|a| AppId::new(a).ok()),
            model.session.thread_ids.first().cloned(),
        ) else {
            return Ok(None);
        };
        let mut history = Vec::new();
        let inputs = self.inner.log.turn_inputs(sid)?;
        if let Some(th) = model.thread(&thread) {
            for t in &th.turns {
                if t.status == TurnStatus::Completed {
                    if let Some((text, _)) = inputs.get(t.turn_id.as_str()) {
                        history.push(ChatMessage::User {
                            content: text.clone(),
                        });
                        history.push(ChatMessage::Assistant {
                            content: t.output_text.clone(),
                            tool_calls: Vec::new(),
                        });
                    }
                }
            }
        }
        Ok(Some(Arc::new(SessionHandle {
            id: sid.clone(),
            app_id: app,
            thread_id: thread,
            state: Mutex::new(SessionState {
                model,
                active: None,
                queue: VecDeque::new(),
                queue_paused: false,
                history,
            }),
        })))
    }

    /// Counts every session of the log (for the caps) and closes what a previous process left
    /// running; only sessions with work left (a paused queue) stay in memory beyond the LRU
    /// bound.
    fn recover(&self) -> Result<(), RuntimeError> {
        for (sid, _) in self.inner.log.sessions()? {
            let Some(handle) = self.load(&sid)? else {
                tracing::warn!(session = %sid, "session without app or thread in the log; not loaded");
                continue;
            };
            lock(&self.inner.sessions).count(&handle.app_id);
            let thread = handle.thread_id.clone();
            // Close what the previous process left running; keep its queue.
            let (unfinished, queued): (Vec<TurnView>, Vec<TurnId>) = {
                let st = lock(&handle.state);
                st.model
                    .thread(&thread)
                    .map(|th| {
                        (
                            th.turns
                                .iter()
                                .filter(|t| {
                                    !t.status.is_terminal() && t.status != TurnStatus::Queued
                                })
                                .cloned()
                                .collect(),
                            th.queued_turns.clone(),
                        )
                    })
                    .unwrap_or_default()
            };
            for t in unfinished {
                let drafts = self.recovery_drafts(&handle, &t)?;
                self.append(&handle, drafts)?;
                tracing::warn!(session = %sid, turn = %t.turn_id, "interrupted turn recorded as failed");
            }
            if !queued.is_empty() {
                let inputs = self.inner.log.turn_inputs(&sid)?;
                self.restore_queue(&handle, queued, &inputs)?;
            }
            let mut sessions = lock(&self.inner.sessions);
            sessions.insert(sid, handle);
            self.evict(&mut sessions);
        }
        Ok(())
    }

    /// Drops idle sessions beyond the LRU bound (and the log's per-session state of each).
    fn evict(&self, sessions: &mut Resident<SessionHandle>) {
        let bound = self.inner.config.sessions.resident;
        for id in sessions.evict(bound, |h| match h.state.try_lock() {
            Ok(st) => st.active.is_none() && st.queue.is_empty() && !st.queue_paused,
            Err(_) => false,
        }) {
            self.inner.log.release(&id);
        }
    }

    /// How many sessions are held in memory now (idle ones are bounded by
    /// `RuntimeConfig::sessions.resident`).
    pub fn resident_sessions(&self) -> usize {
        lock(&self.inner.sessions).len()
    }

    /// `Ok` when `app` may start one more session under the session caps.
    pub fn session_room(&self, app: &AppId) -> Result<(), RuntimeError> {
        lock(&self.inner.sessions)
            .room(app, &self.inner.config.sessions)
            .map_err(|(scope, limit)| RuntimeError::SessionLimit { scope, limit })
    }

    /// Puts the turns a previous process left queued back in the queue, paused (recorded as
    /// `queue.changed {change: restored, status: paused}`); a queued turn whose input is gone
    /// fails with `input_unavailable`.
    fn restore_queue(
        &self,
        h: &SessionHandle,
        queued: Vec<TurnId>,
        inputs: &HashMap<String, (String, Option<Value>)>,
    ) -> Result<(), RuntimeError> {
        let mut queue = VecDeque::new();
        for turn_id in queued {
            match inputs.get(turn_id.as_str()) {
                Some((input, output_schema)) => queue.push_back(QueuedTurn {
                    turn_id,
                    input: input.clone(),
                    output_schema: output_schema.clone(),
                }),
                None => {
                    let ts = Scope::turn(&h.thread_id, &turn_id);
                    self.append(
                        h,
                        vec![EventDraft::new(
                            ts,
                            EventBody::TurnFailed(
                                EventType::TurnFailed,
                                TurnFailed {
                                    status: Some("failed".into()),
                                    code: Some("input_unavailable".into()),
                                    message: Some(
                                        "the queued turn's input was not recorded".into(),
                                    ),
                                    reason: Some("runtime_recovery".into()),
                                    ..Default::default()
                                },
                            ),
                        )],
                    )?;
                }
            }
        }
        if queue.is_empty() {
            return Ok(());
        }
        let head = queue.front().map(|q| q.turn_id.to_string());
        self.append(
            h,
            vec![EventDraft::new(
                Scope {
                    thread_id: Some(h.thread_id.clone()),
                    ..Scope::default()
                },
                EventBody::Queue(
                    EventType::QueueChanged,
                    QueueChanged {
                        change: Some("restored".into()),
                        queued_turn_id: head,
                        queue_length: Some(queue.len() as u64),
                        status: Some("paused".into()),
                        reason: Some("awaiting_resume".into()),
                        ..Default::default()
                    },
                ),
            )],
        )?;
        let mut st = lock(&h.state);
        st.queue = queue;
        st.queue_paused = true;
        Ok(())
    }

    /// Resumes a queue restored after a restart: the head turn starts. False when there was
    /// nothing to resume (idempotent).
    pub fn resume_queue(&self, session: &SessionId) -> Result<bool, RuntimeError> {
        let h = self.session(session)?;
        let mut st = lock(&h.state);
        if !st.queue_paused {
            return Ok(false);
        }
        if self.inner.backend.is_none() {
            return Err(RuntimeError::NeedsSetup);
        }
        st.queue_paused = false;
        if st.active.is_some() {
            return Ok(true);
        }
        let Some(q) = st.queue.pop_front() else {
            return Ok(false);
        };
        let events = self.inner.log.append(
            &h.id,
            vec![EventDraft::new(
                Scope {
                    thread_id: Some(h.thread_id.clone()),
                    ..Scope::default()
                },
                EventBody::Queue(
                    EventType::QueueChanged,
                    QueueChanged {
                        change: Some("resumed".into()),
                        queued_turn_id: Some(q.turn_id.to_string()),
                        queue_length: Some(st.queue.len() as u64),
                        reason: Some("agentSession/thread/resume".into()),
                        ..Default::default()
                    },
                ),
            )],
        )?;
        for e in &events {
            st.model.apply(e);
        }
        let (tx, rx) = mpsc::channel(16);
        st.active = Some((q.turn_id.clone(), tx));
        drop(st);
        self.spawn_turn(h.clone(), q.turn_id, q.input, q.output_schema, rx);
        Ok(true)
    }

    fn recovery_drafts(
        &self,
        h: &SessionHandle,
        t: &TurnView,
    ) -> Result<Vec<EventDraft>, RuntimeError> {
        let ts = Scope::turn(&h.thread_id, &t.turn_id);
        let mut d = vec![EventDraft::new(
            ts.clone(),
            EventBody::Snapshot(
                EventType::SnapshotRepaired,
                SnapshotPayload {
                    source: Some("runtime_recovery".into()),
                    reason: Some("interrupted_by_restart".into()),
                    status: Some("repaired".into()),
                    repaired_turn_ids: Some(vec![t.turn_id.as_str().into()]),
                    ..Default::default()
                },
            ),
        )];
        let (tools, actions) = self.inner.log.open_in_turn(&h.id, &t.turn_id)?;
        let st = lock(&h.state);
        let calls = st
            .model
            .thread(&h.thread_id)
            .map(|th| th.tool_calls.clone())
            .unwrap_or_default();
        let pending = st
            .model
            .thread(&h.thread_id)
            .map(|th| th.pending_actions.clone())
            .unwrap_or_default();
        drop(st);
        for a in actions {
            let tc = pending
                .iter()
                .find(|p| p.action_id == a)
                .and_then(|p| p.tool_call_id.clone());
            let step = tc
                .as_ref()
                .and_then(|id| calls.iter().find(|c| &c.tool_call_id == id))
                .and_then(|c| c.step_id.clone());
            d.push(EventDraft::new(
                Scope {
                    action_id: Some(a),
                    tool_call_id: tc,
                    step_id: step,
                    ..ts.clone()
                },
                EventBody::ActionResolved(
                    EventType::ActionResolved,
                    ActionResolved {
                        decision: Some("cancel".into()),
                        confirmed: Some(false),
                        status: Some("expired".into()),
                        source: Some("runtime_recovery".into()),
                        ..Default::default()
                    },
                ),
            ));
        }
        for id in tools {
            let step = calls
                .iter()
                .find(|c| c.tool_call_id == id)
                .and_then(|c| c.step_id.clone());
            let step = step.unwrap_or_else(|| StepId::derived(t.turn_id.as_str(), 0));
            d.push(EventDraft::new(
                Scope {
                    tool_call_id: Some(id),
                    step_id: Some(step),
                    ..ts.clone()
                },
                EventBody::Failure(
                    EventType::ToolFailed,
                    Failure {
                        status: Some("failed".into()),
                        code: Some("interrupted_by_restart".into()),
                        message: Some("the runtime stopped while the tool ran".into()),
                        ..Default::default()
                    },
                ),
            ));
        }
        if let (Some(task), Some(run)) = (&t.task_id, &t.run_id) {
            let task_scope = Scope {
                task_id: Some(task.clone()),
                run_id: Some(run.clone()),
                ..ts.clone()
            };
            d.push(EventDraft::new(
                task_scope.clone(),
                EventBody::TaskAttempt(
                    EventType::TaskAttemptFailed,
                    TaskAttemptPayload {
                        status: Some("failed".into()),
                        retryable: Some(true),
                        failure_category: Some("interrupted_by_restart".into()),
                        ..Default::default()
                    },
                ),
            ));
            d.push(EventDraft::new(
                Scope {
                    run_id: None,
                    ..task_scope
                },
                EventBody::Task(
                    EventType::TaskFailed,
                    TaskPayload {
                        status: Some("failed".into()),
                        code: Some("interrupted_by_restart".into()),
                        ..Default::default()
                    },
                ),
            ));
        }
        d.push(EventDraft::new(
            ts,
            EventBody::TurnFailed(
                EventType::TurnFailed,
                TurnFailed {
                    status: Some("failed".into()),
                    code: Some("interrupted_by_restart".into()),
                    message: Some("the runtime stopped before the turn finished".into()),
                    retryable: Some(true),
                    reason: Some("runtime_recovery".into()),
                    ..Default::default()
                },
            ),
        ));
        Ok(d)
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

    /// The session's handle: the resident one, or rebuilt from the log (under the cache's lock,
    /// so one session never has two handles).
    fn session(&self, id: &SessionId) -> Result<Arc<SessionHandle>, RuntimeError> {
        let mut sessions = lock(&self.inner.sessions);
        if let Some(h) = sessions.get(id) {
            return Ok(h);
        }
        let h = self
            .load(id)?
            .ok_or_else(|| RuntimeError::SessionNotFound(id.to_string()))?;
        sessions.insert(id.clone(), h.clone());
        self.evict(&mut sessions);
        Ok(h)
    }

    /// Creates a session (one thread) for `app`.
    pub fn start_session(
        &self,
        app: AppId,
        session_id: Option<SessionId>,
        workspace_id: Option<String>,
    ) -> Result<SessionReadModel, RuntimeError> {
        let id = session_id.unwrap_or_else(SessionId::random);
        let mut sessions = lock(&self.inner.sessions);
        if sessions.contains(&id) || self.inner.log.last_sequence(&id)? > 0 {
            return Err(RuntimeError::SessionAlreadyExists(id.to_string()));
        }
        sessions
            .room(&app, &self.inner.config.sessions)
            .map_err(|(scope, limit)| RuntimeError::SessionLimit { scope, limit })?;
        let thread = ThreadId::random();
        let h = Arc::new(SessionHandle {
            id: id.clone(),
            app_id: app.clone(),
            thread_id: thread.clone(),
            state: Mutex::new(SessionState {
                model: SessionReadModel::default(),
                active: None,
                queue: VecDeque::new(),
                queue_paused: false,
                history: Vec::new(),
            }),
        });
        self.append(
            &h,
            vec![
                EventDraft::new(
                    Scope::default(),
                    EventBody::Session(
                        EventType::SessionCreated,
                        SessionPayload {
                            app_id: Some(app.to_string()),
                            status: Some("idle".into()),
                            workspace_id,
                            ..Default::default()
                        },
                    ),
                ),
                EventDraft::new(
                    Scope::thread(&thread),
                    EventBody::Thread(
                        EventType::ThreadStarted,
                        ThreadPayload {
                            status: Some("idle".into()),
                            ..Default::default()
                        },
                    ),
                ),
            ],
        )?;
        let model = lock(&h.state).model.clone();
        sessions.count(&app);
        sessions.insert(id, h);
        self.evict(&mut sessions);
        Ok(model)
    }

    /// The session's read models. A pending action's `arguments` are resolved when the log
    /// keeps them behind a reference (`log::args_ref`: whoever answers sees the whole input);
    /// one that does not resolve keeps the reference with `"error": "<args_ref.* code>"`.
    pub fn read(
        &self,
        id: &SessionId,
    ) -> Result<(AppId, ThreadId, SessionReadModel), RuntimeError> {
        let h = self.session(id)?;
        let mut model = lock(&h.state).model.clone();
        for th in model.threads.values_mut() {
            for a in &mut th.pending_actions {
                let Some(args) = a.arguments.as_mut().filter(|v| is_args_ref(v)) else {
                    continue;
                };
                match self.inner.log.resolve_arguments(id, args) {
                    Ok(v) => *args = v,
                    Err(LogError::ArgsRef(e)) => args["error"] = Value::from(e.code()),
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Ok((h.app_id.clone(), h.thread_id.clone(), model))
    }

    /// Submits a turn: recorded (`turn.submitted`) before any work; started now, queued behind
    /// the active turn (`queue_if_busy`), or refused.
    pub fn start_turn(
        &self,
        session: &SessionId,
        turn_id: Option<TurnId>,
        input: String,
        output_schema: Option<Value>,
        queue_if_busy: bool,
    ) -> Result<TurnStarted, RuntimeError> {
        let h = self.session(session)?;
        // Everything up to the decision happens under the session lock, so two submissions
        // (even with the same caller turnId) cannot both start or both be recorded.
        let mut st = lock(&h.state);
        if let Some(id) = &turn_id {
            if let Some(t) = st.model.turn(id) {
                return Ok(TurnStarted {
                    turn: t.clone(),
                    created: false,
                });
            }
        }
        if self.inner.backend.is_none() {
            return Err(RuntimeError::NeedsSetup);
        }
        if let Some(schema) = &output_schema {
            jsonschema::validator_for(schema).map_err(|e| {
                RuntimeError::InvalidParams(format!("outputSchema is not a valid JSON Schema: {e}"))
            })?;
        }
        if let Some((active, _)) = &st.active {
            if !queue_if_busy {
                return Err(RuntimeError::TurnAlreadyActive(active.to_string()));
            }
        }
        if st.queue_paused && !queue_if_busy {
            let ids: Vec<String> = st.queue.iter().map(|q| q.turn_id.to_string()).collect();
            return Err(RuntimeError::QueuePaused(ids.join(",")));
        }
        let turn_id = turn_id.unwrap_or_else(TurnId::random);
        if !self
            .inner
            .log
            .put_turn_input(session, &turn_id, &input, output_schema.as_ref())?
        {
            return Err(RuntimeError::InvalidParams(format!(
                "turnId {turn_id} was already used in this session"
            )));
        }
        let ts = Scope {
            trace_id: Some(TraceId::derived(turn_id.as_str(), 0)),
            ..Scope::turn(&h.thread_id, &turn_id)
        };
        let submitted = |status: &str| {
            EventDraft::new(
                ts.clone(),
                EventBody::TurnSubmitted(
                    EventType::TurnSubmitted,
                    crate::event::TurnSubmitted {
                        input_ref: Some(format!("input://{}/user", turn_id.as_str())),
                        source: Some("agentSession/turn/start".into()),
                        status: Some(status.into()),
                        input_chars: Some(input.chars().count() as u64),
                        structured_output: Some(output_schema.is_some()),
                        ..Default::default()
                    },
                ),
            )
        };
        if st.active.is_some() || st.queue_paused {
            let drafts = vec![
                submitted("queued"),
                EventDraft::new(
                    ts.clone(),
                    EventBody::Queue(
                        EventType::QueueChanged,
                        QueueChanged {
                            change: Some("added".into()),
                            queued_turn_id: Some(turn_id.to_string()),
                            queue_length: Some(st.queue.len() as u64 + 1),
                            ..Default::default()
                        },
                    ),
                ),
            ];
            let events = self.inner.log.append(&h.id, drafts)?;
            for e in &events {
                st.model.apply(e);
            }
            st.queue.push_back(QueuedTurn {
                turn_id: turn_id.clone(),
                input,
                output_schema,
            });
        } else {
            let events = self.inner.log.append(&h.id, vec![submitted("accepted")])?;
            for e in &events {
                st.model.apply(e);
            }
            let (tx, rx) = mpsc::channel(16);
            st.active = Some((turn_id.clone(), tx));
            drop(st);
            self.spawn_turn(h.clone(), turn_id.clone(), input, output_schema, rx);
            st = lock(&h.state);
        }
        let turn = st.model.turn(&turn_id).cloned().expect("just submitted");
        Ok(TurnStarted {
            turn,
            created: true,
        })
    }

    /// Cancels a turn: an active one stops (provider stream aborted) and ends cancelled; a
    /// queued one is removed and ends cancelled; an ended one is left alone (no-op).
    pub fn cancel_turn(
        &self,
        session: &SessionId,
        turn: &TurnId,
    ) -> Result<TurnStatus, RuntimeError> {
        let h = self.session(session)?;
        let mut st = lock(&h.state);
        let Some(view) = st.model.turn(turn).cloned() else {
            return Err(RuntimeError::TurnNotFound(turn.to_string()));
        };
        if view.status.is_terminal() {
            return Ok(view.status);
        }
        if let Some((active, tx)) = &st.active {
            if active == turn {
                let _ = tx.try_send(Control::Cancel);
                return Ok(view.status);
            }
        }
        if let Some(pos) = st.queue.iter().position(|q| &q.turn_id == turn) {
            st.queue.remove(pos);
            let qlen = st.queue.len() as u64;
            drop(st);
            let ts = Scope::turn(&h.thread_id, turn);
            self.append(
                &h,
                vec![
                    EventDraft::new(
                        ts.clone(),
                        EventBody::Queue(
                            EventType::QueueChanged,
                            QueueChanged {
                                change: Some("removed".into()),
                                queued_turn_id: Some(turn.to_string()),
                                queue_length: Some(qlen),
                                ..Default::default()
                            },
                        ),
                    ),
                    EventDraft::new(
                        ts,
                        EventBody::TurnFailed(
                            EventType::TurnFailed,
                            TurnFailed {
                                status: Some("cancelled".into()),
                                code: Some("cancelled".into()),
                                message: Some("cancelled while queued".into()),
                                reason: Some("agentSession/turn/cancel".into()),
                                ..Default::default()
                            },
                        ),
                    ),
                ],
            )?;
            return Ok(TurnStatus::Cancelled);
        }
        Ok(view.status)
    }

    /// Resolves a pending action. Only this resolves it; an unanswered action is not approval.
    pub fn respond_action(
        &self,
        session: &SessionId,
        action: &ActionId,
        decision: Decision,
    ) -> Result<(), RuntimeError> {
        self.respond(session, action, Control::Action(action.clone(), decision))
    }

    /// Approves a pending tool confirmation once, with `arguments` replacing the model's input
    /// (recorded as a new `tool.args`).
    pub fn respond_action_with_input(
        &self,
        session: &SessionId,
        action: &ActionId,
        arguments: Value,
    ) -> Result<(), RuntimeError> {
        if !arguments.is_object() {
            return Err(RuntimeError::InvalidParams(
                "updated input must be a JSON object".into(),
            ));
        }
        self.respond(
            session,
            action,
            Control::ActionWithInput(action.clone(), arguments),
        )
    }

    fn respond(
        &self,
        session: &SessionId,
        action: &ActionId,
        control: Control,
    ) -> Result<(), RuntimeError> {
        let h = self.session(session)?;
        let st = lock(&h.state);
        let pending = st.model.thread(&h.thread_id).and_then(|t| {
            t.pending_actions
                .iter()
                .find(|a| &a.action_id == action)
                .cloned()
        });
        let Some(p) = pending else {
            return Err(RuntimeError::ActionNotFound(action.to_string()));
        };
        match (&st.active, &p.turn_id) {
            (Some((active, tx)), Some(t)) if active == t => tx
                .try_send(control)
                .map_err(|_| RuntimeError::ActionNotFound(action.to_string())),
            _ => Err(RuntimeError::ActionNotFound(action.to_string())),
        }
    }

    fn spawn_turn(
        &self,
        h: Arc<SessionHandle>,
        turn_id: TurnId,
        input: String,
        output_schema: Option<Value>,
        rx: mpsc::Receiver<Control>,
    ) {
        let rt = self.clone();
        let backend = self.inner.backend.clone().expect("checked by start_turn");
        let (history, session_allowed_tools) = {
            let st = lock(&h.state);
            (
                st.history.clone(),
                st.model.permission_sandbox.session_allowed_tools.clone(),
            )
        };
        let spec = TurnSpec {
            thread_id: h.thread_id.clone(),
            turn_id: turn_id.clone(),
            trace_id: Some(TraceId::derived(turn_id.as_str(), 0)),
            system_prompt: self.inner.config.system_prompt.clone(),
            history,
            input: input.clone(),
            output_schema,
            tools: self.inner.tools.current_specs(),
            backend: backend.info(),
            limits: self.inner.config.limits.clone(),
            session_allowed_tools,
        };
        let span = tracing::info_span!("agent.task", session = %h.id, turn = %turn_id);
        self.inner.tokio.spawn(
            async move {
                let machine = TurnMachine::new(spec);
                let outcome = execute(&rt, &h, machine, backend, rx).await;
                let mut st = lock(&h.state);
                if let Some(answer) = outcome {
                    st.history.push(ChatMessage::User { content: input });
                    st.history.push(ChatMessage::Assistant {
                        content: answer,
                        tool_calls: Vec::new(),
                    });
                }
                st.active = None;
                let next = st.queue.pop_front();
                if let Some(q) = next {
                    let (tx, rx) = mpsc::channel(16);
                    st.active = Some((q.turn_id.clone(), tx));
                    drop(st);
                    rt.spawn_turn(h.clone(), q.turn_id, q.input, q.output_schema, rx);
                }
            }
            .instrument(span),
        );
    }
}

/// The effect executor: drives one turn machine to its end. Returns the answer of a turn that
/// completed with prose (for the next turn's context).
async fn execute(
    rt: &Runtime,
    h: &Arc<SessionHandle>,
    mut machine: TurnMachine,
    backend: Arc<dyn ExecutionBackend>,
    mut control: mpsc::Receiver<Control>,
) -> Option<String> {
    enum Running {
        Nothing,
        Model(
            EffectId,
            mpsc::Receiver<BackendEvent>,
            crate::backend::CancelHandle,
            tracing::Span,
        ),
        Tool(EffectId, tokio::task::JoinHandle<ToolOutcome>),
    }
    let mut running = Running::Nothing;
    let mut step = machine.handle(Input::Start);
    loop {
        if let Err(e) = rt.append(h, std::mem::take(&mut step.events)) {
            // A rejected fact is a runtime bug or a storage failure: end the turn honestly.
            tracing::error!(error = %e, "append failed; ending the turn");
            let mut fail = machine.handle(Input::Cancel);
            if let Some(EventDraft {
                body: EventBody::TurnFailed(_, f),
                ..
            }) = fail.events.last_mut()
            {
                f.status = Some("failed".into());
                f.code = Some("runtime_error".into());
                f.message = Some(e.to_string());
            }
            let _ = rt.append(h, fail.events);
            return None;
        }
        for effect in std::mem::take(&mut step.effects) {
            match effect {
                Effect::CallModel { id, request } => {
                    let span = tracing::info_span!(
                        "llm.request",
                        effect = id,
                        messages = request.messages.len()
                    );
                    let (handle, signal) = cancel_pair();
                    let rx = backend.stream(request, signal);
                    running = Running::Model(id, rx, handle, span);
                }
                Effect::RunTool {
                    id,
                    tool_call_id,
                    name,
                    arguments,
                } => {
                    let tools = rt.inner.tools.clone();
                    let call = ToolCall {
                        app: h.app_id.clone(),
                        session_id: h.id.as_str().to_owned(),
                        turn_id: machine.turn_id().as_str().to_owned(),
                        tool_call_id: tool_call_id.as_str().to_owned(),
                    };
                    let outputs = rt.inner.config.data_dir.join("outputs").join(h.id.as_str());
                    let span = tracing::info_span!("tool.call", tool = %name, call = %tool_call_id);
                    let task = tokio::task::spawn_blocking(move || {
                        let _g = span.enter();
                        match tools.run(&call, &name, &arguments) {
                            Ok((output, artifacts)) => {
                                match store_output(&outputs, &tool_call_id, &output) {
                                    Ok(output_ref) => ToolOutcome::Ok {
                                        output,
                                        output_ref,
                                        artifacts,
                                    },
                                    Err(e) => ToolOutcome::Err {
                                        code: "storage_error".into(),
                                        message: e.to_string(),
                                    },
                                }
                            }
                            Err(e) => ToolOutcome::Err {
                                code: e.code,
                                message: e.message,
                            },
                        }
                    });
                    running = Running::Tool(id, task);
                }
                Effect::Abort { id } => match &running {
                    Running::Model(mid, _, handle, _) if *mid == id => {
                        handle.cancel();
                        running = Running::Nothing;
                    }
                    Running::Tool(tid, task) if *tid == id => {
                        task.abort();
                        running = Running::Nothing;
                    }
                    _ => {}
                },
            }
        }
        if machine.is_finished() {
            if let Running::Model(_, _, handle, _) = &running {
                handle.cancel();
            }
            let cp = machine.checkpoint();
            let completed = lock(&h.state)
                .model
                .turn(machine.turn_id())
                .map(|t| t.status == TurnStatus::Completed)
                .unwrap_or(false);
            return (completed && cp.spec.output_schema.is_none()).then(|| cp.text.clone());
        }
        let input = tokio::select! {
            ctl = control.recv() => match ctl {
                Some(Control::Cancel) | None => Input::Cancel,
                Some(Control::Action(action_id, decision)) => {
                    let _span = tracing::info_span!("approval.request", action = %action_id).entered();
                    Input::Action { action_id, decision }
                }
                Some(Control::ActionWithInput(action_id, arguments)) => {
                    let _span = tracing::info_span!("approval.request", action = %action_id).entered();
                    Input::ActionWithInput { action_id, arguments }
                }
            },
            ev = async {
                match &mut running {
                    Running::Model(id, rx, _, span) => {
                        match rx.recv().instrument(span.clone()).await {
                            Some(ev) => Input::Model(*id, ev),
                            None => Input::ModelStreamEnded(*id),
                        }
                    }
                    Running::Tool(id, task) => {
                        let out = match task.await {
                            Ok(o) => o,
                            Err(e) => ToolOutcome::Err { code: "tool_crashed".into(), message: e.to_string() },
                        };
                        Input::ToolDone(*id, out)
                    }
                    Running::Nothing => std::future::pending().await,
                }
            } => ev,
        };
        if let Input::ToolDone(..)
        | Input::Model(_, BackendEvent::Finished { .. } | BackendEvent::Failed(_))
        | Input::ModelStreamEnded(_) = &input
        {
            running = Running::Nothing;
        }
        step = machine.handle(input);
    }
}

/// Keeps a tool's whole output under `outputs/<session>/<toolCallId>.txt`; returns its ref.
fn store_output(dir: &std::path::Path, call: &ToolCallId, output: &str) -> std::io::Result<String> {
    crate::private_fs::create_private_dir(dir)?;
    let path = dir.join(format!("{}.txt", call.as_str()));
    std::io::Write::write_all(
        &mut crate::private_fs::create_private_file(&path)?,
        output.as_bytes(),
    )?;
    let session = dir.file_name().and_then(|s| s.to_str()).unwrap_or("");
    Ok(format!("output://{session}/{}", call.as_str()))
}
