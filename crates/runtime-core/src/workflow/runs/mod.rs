//! Durable workflow runs: a [`WorkflowRuns`] service records each run's facts in RuntimeCore's
//! event log (one log session per run, built by `event::facts::workflow_*`), drives the
//! sans-IO [`RunMachine`] and, on open, rebuilds every run from its first fact and the facts
//! after its latest checkpoint (`replay.rs`, `checkpoint.rs`).
//!
//! - A step's result is a fact; a step with a result is never made again. Its `step_started`
//!   is appended with the result in one commit (an agent step's, minutes long, before the
//!   call). A step started without a result (a crash between the call and its fact) is
//!   re-issued with the SAME idempotency key (derived from the run, state, visit and
//!   attempt), so the capability layer can deduplicate it.
//! - Timers (`wait`, retry backoff, review/input deadlines) are facts with a due time read from
//!   the log's [`Clock`](crate::clock::Clock); a reopened service re-arms them from the log.
//! - A run waiting for a person or a timer holds no thread: it is data until
//!   [`WorkflowRuns::respond`] or [`WorkflowRuns::drive_due`].
//! - Steps run through a [`StepExecutor`] the host implements: runtime-core knows no
//!   capability.

mod checkpoint;
mod drive;
pub mod history;
mod input_check;
mod replay;

pub use checkpoint::{CHECKPOINT_EVERY, MAX_CHECKPOINT_BYTES};
pub use input_check::{check_input, InputRefusal};

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::machine::{Call, Effect, Pending, RunMachine, RunState, RunStatus};
use crate::event::facts::{self, RunStart};
use crate::ids::{RunId, SessionId};
use crate::log::EventLog;

/// Stable refusal codes of the run service.
pub mod code {
    pub const RUN_NOT_FOUND: &str = "workflow.run_not_found";
    pub const RUN_FINISHED: &str = "workflow.run_finished";
    pub const NOT_WAITING: &str = "workflow.not_waiting_for_answer";
    pub const ANSWER_NOT_BY_USER: &str = "workflow.answer_not_by_user";
    pub const INVALID_DEFINITION: &str = "workflow.invalid_definition";
    pub const INVALID_IDEMPOTENCY_KEY: &str = "workflow.invalid_idempotency_key";
    /// The run's input is over `limits::MAX_RUN_INPUT_BYTES` (refused before it is recorded).
    pub const INPUT_TOO_LARGE: &str = "workflow.input_too_large";
    pub const LOG_FAILED: &str = "workflow.log_failed";
    pub const REPLAY_FAILED: &str = "workflow.replay_failed";
    /// A [`StepError`] with this code is not a result: the host abandoned the call (its process
    /// is stopping, the run's app is closing, the run was cancelled). Nothing is recorded; the
    /// step stays started without a result and the next drive re-issues it with the same key.
    pub const STEP_ABANDONED: &str = "workflow.step_abandoned";
    /// A `user-input` answer that does not satisfy the state's `schema` (nothing recorded).
    pub const INPUT_INVALID: &str = "workflow.input_invalid";
    /// A start reused an idempotency key with another input (nothing recorded).
    pub const IDEMPOTENCY_CONFLICT: &str = "workflow.idempotency_conflict";
    /// Another process holds the runs' directory ([`WorkflowRuns::open_dir`]).
    pub const RUNTIME_BUSY: &str = "runtime.busy";
}

/// The longest idempotency key a start accepts.
pub const MAX_START_KEY_LEN: usize = 200;

/// A refusal: a stable code and a message. A refused call changed nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct RunError {
    pub code: &'static str,
    pub message: String,
}

impl RunError {
    pub fn new(code: &'static str, message: impl Into<String>) -> RunError {
        RunError {
            code,
            message: message.into(),
        }
    }
}

impl From<crate::log::LogError> for RunError {
    fn from(e: crate::log::LogError) -> RunError {
        RunError::new(code::LOG_FAILED, e.to_string())
    }
}

/// One step's capability call, as the host's executor receives it.
#[derive(Debug)]
pub struct StepCall<'a> {
    pub run_id: &'a str,
    pub app: &'a str,
    /// The workflow key (the app's workflow entry).
    pub workflow: &'a str,
    pub call: &'a Call,
}

/// A step's failure: the capability's own stable code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepError {
    pub code: String,
    pub message: String,
    pub retryable: bool,
    /// The step ran out of time (recovery's `onTimeout` applies).
    pub timed_out: bool,
}

/// Makes a step's capability call. The host implements it through its one choke point.
pub trait StepExecutor {
    fn call(&self, step: &StepCall<'_>) -> Result<Value, StepError>;

    /// Whether making `call` again with its idempotency key finds its first effect (or
    /// repeats it harmlessly: a read, the same write). Its result is then committed without
    /// an fsync of its own ([`EventLog::append_unsynced`]): a power loss that loses the result
    /// re-issues the call, which costs nothing twice. Otherwise (an MCP tool, an event
    /// published to frames) the result is synced before the run moves on. Default: no.
    fn reissue_is_safe(&self, _call: &Call) -> bool {
        false
    }
}

/// Who answers a review, an input request or a retry decision. Only the user answers a review
/// or a retry decision: an app answering its own review would approve itself. A `user-input`
/// state asks for data, which the app's own frame may give (checked against the state's schema).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerSource {
    User,
    App,
}

/// A person's answer to what a run waits for.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    Review { approved: bool, data: Option<Value> },
    Input { data: Value },
    Decision { retry: bool },
}

/// What starting a run needs. The definition is checked against `declared` (the app's
/// declared capabilities) and pinned in the run's record.
#[derive(Clone, Debug)]
pub struct StartRun {
    pub app: String,
    pub workflow: String,
    pub definition: Value,
    pub declared: BTreeSet<String>,
    pub input: Value,
    /// A second start with the same app, workflow and key returns the first run.
    pub idempotency_key: Option<String>,
    /// The app entry that started it (a frame), recorded in the run's first fact.
    pub started_by: Option<String>,
}

/// A run as clients see it (and as the CLI reads it back from the running host's door).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunView {
    pub run_id: String,
    pub app: String,
    pub workflow: String,
    pub idempotency_key: Option<String>,
    /// The app entry whose frame started the run (none: the user, the CLI, a schedule).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_by: Option<String>,
    /// When the run started (RFC 3339, the log's clock).
    pub started_at: String,
    pub state: RunState,
    /// What a running run waits for.
    pub waiting: Option<Pending>,
    /// When its timer or deadline is due (RFC 3339).
    pub due_at: Option<String>,
    pub finished: bool,
}

/// What replay and the driver know about one pending key beyond the machine's state.
#[derive(Clone, Debug, Default)]
struct Mark {
    due_at: Option<jiff::Timestamp>,
}

struct Entry {
    run_id: RunId,
    session: SessionId,
    app: String,
    workflow: String,
    idempotency_key: Option<String>,
    started_by: Option<String>,
    started_at: String,
    machine: RunMachine,
    /// Keys whose request (`step_started`, `*_requested`, `*_scheduled`) is recorded.
    marks: BTreeMap<String, Mark>,
    /// The run's end (`ended` or `cancelled`) is recorded.
    closed: bool,
    /// A step of the run is in flight ([`WorkflowRuns::drive`] made its call without the lock).
    driving: bool,
    /// Facts appended since the run's latest checkpoint (about: `checkpoint.rs`).
    since_checkpoint: u32,
}

impl Entry {
    fn view(&self) -> RunView {
        let (waiting, finished) = match self.machine.next_effect() {
            Effect::Wait(p) => (Some(p), false),
            Effect::Done(_) => (None, true),
        };
        let due_at = waiting
            .as_ref()
            .and_then(|p| self.marks.get(p.key()))
            .and_then(|m| m.due_at)
            .map(crate::event::format_timestamp);
        RunView {
            run_id: self.run_id.to_string(),
            app: self.app.clone(),
            workflow: self.workflow.clone(),
            idempotency_key: self.idempotency_key.clone(),
            started_by: self.started_by.clone(),
            started_at: self.started_at.clone(),
            state: self.machine.state().clone(),
            waiting,
            due_at,
            finished,
        }
    }
}

/// The durable run service over one event log.
pub struct WorkflowRuns {
    log: EventLog,
    runs: Mutex<BTreeMap<RunId, Entry>>,
    /// The directory lock ([`WorkflowRuns::open_dir`]), held while the service lives.
    _lock: Option<std::fs::File>,
    /// Facts between two checkpoints of a run ([`CHECKPOINT_EVERY`]; tests lower it).
    checkpoint_every: u32,
    #[cfg(test)]
    failpoint: Arc<std::sync::atomic::AtomicI64>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The log session holding a run's facts.
pub fn run_session(run: &RunId) -> SessionId {
    SessionId::new(format!("sess_wf_{}", run.as_str()))
        .unwrap_or_else(|_| SessionId::derived("wf", 0))
}

impl WorkflowRuns {
    /// Opens the service over `log`, replaying every run recorded there.
    pub fn open(log: EventLog) -> Result<WorkflowRuns, RunError> {
        WorkflowRuns::open_locked(log, None)
    }

    /// Opens the runs of a directory (`<dir>/events.db`), holding its `runtime.lock`: one
    /// process drives a directory's runs; another is refused with `runtime.busy`.
    pub fn open_dir(dir: &std::path::Path) -> Result<WorkflowRuns, RunError> {
        let lock = crate::runtime::dir_lock::lock_dir(dir).map_err(|e| match e {
            crate::runtime::RuntimeError::Busy(d) => RunError::new(
                code::RUNTIME_BUSY,
                format!("another process drives the workflow runs in {d}"),
            ),
            other => RunError::new(code::LOG_FAILED, other.to_string()),
        })?;
        let log = EventLog::open(&dir.join("events.db"))?;
        WorkflowRuns::open_locked(log, Some(lock))
    }

    fn open_locked(log: EventLog, lock: Option<std::fs::File>) -> Result<WorkflowRuns, RunError> {
        let runs = replay::replay_all(&log, true)?;
        Ok(WorkflowRuns {
            log,
            runs: Mutex::new(runs),
            _lock: lock,
            checkpoint_every: CHECKPOINT_EVERY,
            #[cfg(test)]
            failpoint: Arc::new(std::sync::atomic::AtomicI64::new(-1)),
        })
    }

    /// Starts a run (or returns the run an earlier start with the same idempotency key made).
    /// The run is recorded but not driven: call [`WorkflowRuns::drive`].
    pub fn start(&self, req: StartRun) -> Result<RunView, RunError> {
        if let Some(k) = &req.idempotency_key {
            if k.is_empty() || k.len() > MAX_START_KEY_LEN {
                return Err(RunError::new(
                    code::INVALID_IDEMPOTENCY_KEY,
                    format!("1 to {MAX_START_KEY_LEN} bytes"),
                ));
            }
        }
        let size = serde_json::to_vec(&req.input).map_or(usize::MAX, |b| b.len());
        if size > super::limits::MAX_RUN_INPUT_BYTES {
            return Err(RunError::new(
                code::INPUT_TOO_LARGE,
                format!(
                    "{size} bytes; at most {}",
                    super::limits::MAX_RUN_INPUT_BYTES
                ),
            ));
        }
        let checked = super::check(&req.definition, &req.declared);
        let Some(def) = checked.definition else {
            let first = checked
                .findings
                .iter()
                .find(|f| f.severity == super::Severity::Error)
                .map(|f| format!("{}: {}", f.code, f.message))
                .unwrap_or_default();
            return Err(RunError::new(code::INVALID_DEFINITION, first));
        };
        let mut runs = lock(&self.runs);
        if let Some(k) = &req.idempotency_key {
            if let Some(e) = runs.values().find(|e| {
                e.app == req.app
                    && e.workflow == req.workflow
                    && e.idempotency_key.as_deref() == Some(k)
            }) {
                if e.machine.state().input != req.input {
                    return Err(RunError::new(
                        code::IDEMPOTENCY_CONFLICT,
                        "this idempotency key started a run with another input",
                    ));
                }
                return Ok(e.view());
            }
        }
        let run_id = RunId::random();
        let session = run_session(&run_id);
        let started = facts::workflow_run_started(
            &run_id,
            RunStart {
                app: &req.app,
                workflow: &req.workflow,
                definition: &req.definition,
                input: &req.input,
                idempotency_key: req.idempotency_key.as_deref(),
                started_by: req.started_by.as_deref(),
            },
        );
        // The run's start time is its first fact's, as replay reads it.
        let started_at = self
            .append_stamped(&session, started)?
            .map(|e| e.timestamp)
            .unwrap_or_default();
        let machine = RunMachine::start(Arc::new(def), run_id.as_str(), req.input);
        let entry = Entry {
            run_id: run_id.clone(),
            session,
            app: req.app,
            workflow: req.workflow,
            idempotency_key: req.idempotency_key,
            started_by: req.started_by,
            started_at,
            machine,
            marks: BTreeMap::new(),
            closed: false,
            driving: false,
            since_checkpoint: 1,
        };
        let view = entry.view();
        runs.insert(run_id, entry);
        Ok(view)
    }

    pub fn show(&self, run_id: &str) -> Result<RunView, RunError> {
        let runs = lock(&self.runs);
        find(&runs, run_id).map(Entry::view)
    }

    /// Every run (of `app` when given), oldest id first.
    pub fn list(&self, app: Option<&str>) -> Vec<RunView> {
        lock(&self.runs)
            .values()
            .filter(|e| app.is_none_or(|a| a == e.app))
            .map(Entry::view)
            .collect()
    }

    /// The run's facts with `sequence > after`, in order, as they are appended (the run's log
    /// session; resumable from any position).
    pub fn subscribe(
        &self,
        run_id: &str,
        after: u64,
    ) -> Result<crate::log::Subscription, RunError> {
        let runs = lock(&self.runs);
        let e = find(&runs, run_id)?;
        Ok(self.log.subscribe(&e.session, after))
    }

    /// The log's clock (the one source of "now" for due times).
    pub fn clock(&self) -> &Arc<dyn crate::clock::Clock> {
        self.log.clock()
    }

    /// Cancels a running run. A finished run is refused with `workflow.run_finished`.
    pub fn cancel(&self, run_id: &str) -> Result<RunView, RunError> {
        let mut runs = lock(&self.runs);
        let e = find_mut(&mut runs, run_id)?;
        if matches!(e.machine.next_effect(), Effect::Done(_)) {
            return Err(RunError::new(code::RUN_FINISHED, run_id.to_string()));
        }
        let d = facts::workflow_cancelled(&e.run_id);
        self.append(&e.session, d)?;
        let _ = e.machine.apply(super::machine::Fact::Cancelled);
        e.closed = true;
        Ok(e.view())
    }

    /// The earliest due time of a running run's timer or deadline (a host sleeps until then
    /// and calls [`WorkflowRuns::drive_due`]).
    pub fn next_due(&self) -> Option<jiff::Timestamp> {
        lock(&self.runs)
            .values()
            .filter_map(|e| match e.machine.next_effect() {
                Effect::Wait(p) => e.marks.get(p.key()).and_then(|m| m.due_at),
                Effect::Done(_) => None,
            })
            .min()
    }

    fn append(&self, session: &SessionId, d: crate::event::EventDraft) -> Result<(), RunError> {
        self.append_stamped(session, d).map(|_| ())
    }

    /// Appends several facts in one commit (all or none), fsynced unless `synced` is false.
    fn append_batch(
        &self,
        session: &SessionId,
        drafts: Vec<crate::event::EventDraft>,
        synced: bool,
    ) -> Result<(), RunError> {
        if synced {
            self.log.append(session, drafts)?;
        } else {
            self.log.append_unsynced(session, drafts)?;
        }
        #[cfg(test)]
        self.hit_failpoint();
        Ok(())
    }

    /// [`WorkflowRuns::append`], answering the event as the log stamped it.
    fn append_stamped(
        &self,
        session: &SessionId,
        d: crate::event::EventDraft,
    ) -> Result<Option<crate::event::Event>, RunError> {
        let stamped = self.log.append(session, vec![d])?.pop();
        #[cfg(test)]
        self.hit_failpoint();
        Ok(stamped)
    }

    /// Test failpoint: panic right after the `n`-th append from now (a crash between a fact
    /// and the next effect).
    #[cfg(test)]
    fn crash_after_appends(&self, n: i64) {
        self.failpoint.store(n, std::sync::atomic::Ordering::SeqCst);
    }

    #[cfg(test)]
    fn hit_failpoint(&self) {
        let left = self
            .failpoint
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        if left == 1 {
            panic!("failpoint: crash after append");
        }
    }
}

fn find<'a>(runs: &'a BTreeMap<RunId, Entry>, run_id: &str) -> Result<&'a Entry, RunError> {
    RunId::new(run_id)
        .ok()
        .and_then(|id| runs.get(&id))
        .ok_or_else(|| {
            RunError::new(
                code::RUN_NOT_FOUND,
                run_id.chars().take(128).collect::<String>(),
            )
        })
}

fn find_mut<'a>(
    runs: &'a mut BTreeMap<RunId, Entry>,
    run_id: &str,
) -> Result<&'a mut Entry, RunError> {
    RunId::new(run_id)
        .ok()
        .and_then(|id| runs.get_mut(&id))
        .ok_or_else(|| {
            RunError::new(
                code::RUN_NOT_FOUND,
                run_id.chars().take(128).collect::<String>(),
            )
        })
}

/// The run's final status, when it has one.
pub fn final_status(view: &RunView) -> Option<&RunStatus> {
    view.finished.then_some(&view.state.status)
}

#[cfg(test)]
mod checkpoint_tests;
#[cfg(test)]
mod tests;
