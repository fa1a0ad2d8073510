//! The host process's workflow driver: [`HostRuns`], owned (lazily) by the host session's
//! `Services` (the window, `apphost serve`), holds the data directory's [`WorkflowRuns`] (their
//! `runtime.lock`: while it lives, `apphost workflow start|respond|cancel` get `runtime.busy`)
//! and a few background threads, `apphost-workflow-<n>`, that drive them:
//!
//! - every unfinished run is driven until it waits for a person or a timer, or ends: the runs
//!   replayed at open first, then each run that is started, answered or cancelled (a wake-up);
//!   a thread takes one run at a time, so a long step (an agent task) holds up only its own run
//!   while fewer than [`DRIVER_THREADS`] such steps are in flight;
//! - between wake-ups the threads sleep until the earliest due timer (`wait`, retry backoff,
//!   review/input deadlines) and use no CPU otherwise;
//! - steps are made by [`HostSteps`] over each thread's OWN `Store` connection and its own
//!   [`StepServices`] (the session's services share their one agent runtime with them: the
//!   runtime has a per-directory lock, there is never a second one; and their one tool broker:
//!   an MCP server runs once in the process), so a step never re-enters the session's
//!   `Services`; the threads run on the expression stack, so a step's expressions need no
//!   thread of their own;
//! - a step's call is made without the runs' lock (`WorkflowRuns::drive`), so reading,
//!   starting, answering and cancelling never wait for a step; a cancel interrupts an
//!   in-flight agent step, which cancels its task at once.
//!
//! Who may do what is not decided here: `lime.workflow` (`capability::services::workflow`)
//! checks the caller's app against each run; the host UI and the CLI act as the user.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use runtime_core::workflow::runs::{Answer, AnswerSource, RunError, RunView, WorkflowRuns};
use serde_json::{json, Value};

use super::executor::{HostSteps, Interrupt, StepServices};
use crate::foundation::paths::DataDir;
use crate::foundation::profile::HostProfile;
use crate::install::store::Store;

/// Most runs of one app that may be unfinished at once; a start beyond it is refused with
/// `workflow.too_many_runs` (a re-start with an existing idempotency key still answers).
pub const MAX_UNFINISHED_RUNS_PER_APP: usize = 16;

/// The code of a start refused by [`MAX_UNFINISHED_RUNS_PER_APP`].
pub const TOO_MANY_RUNS: &str = "workflow.too_many_runs";

/// How many threads drive runs (each takes one run at a time).
pub const DRIVER_THREADS: usize = 4;

/// Makes one driver thread's own services (sharing the session's agent runtime).
pub type MakeStepServices = Arc<dyn Fn() -> Box<dyn StepServices + Send> + Send + Sync>;

/// Forwards one run event to a frame; `Err(event)` when the frame's outbox is full (the
/// forwarder waits and tries again: nothing is dropped).
pub type RunEventSink = Arc<dyn Fn(Value) -> Result<(), Value> + Send + Sync>;

/// The shortest sleep between passes when a due time has already passed (no hot loop).
const MIN_SLEEP: Duration = Duration::from_millis(5);
/// How long the driver waits before it tries to open its store again.
const STORE_RETRY: Duration = Duration::from_secs(1);

#[derive(Default)]
struct Signal {
    /// Runs to drive (each taken by one thread).
    dirty: BTreeSet<String>,
    /// Apps closing (disable, update, uninstall), with their closing's number and how many
    /// threads have yet to close their handles of it: their in-flight steps stop meanwhile.
    closing: BTreeMap<String, (u64, usize)>,
    /// Numbers the closings.
    closings: u64,
    stop: bool,
}

struct Shared {
    runs: WorkflowRuns,
    signal: Mutex<Signal>,
    wake: Condvar,
}

impl Shared {
    fn signal(&self) -> MutexGuard<'_, Signal> {
        self.signal.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn poke(&self, f: impl FnOnce(&mut Signal)) {
        f(&mut self.signal());
        self.wake.notify_all();
    }
}

/// The data directory's workflow runs, driven by this process (see the module doc).
pub struct HostRuns {
    shared: Arc<Shared>,
    events: Option<tokio::runtime::Runtime>,
    threads: Vec<JoinHandle<()>>,
}

impl HostRuns {
    /// Opens (replaying) the data directory's runs and starts the driver threads, each making
    /// steps through its own services from `services` (sharing the session's agent runtime).
    /// `runtime.busy` when another process drives them.
    pub fn open(data: &DataDir, services: MakeStepServices) -> Result<HostRuns, RunError> {
        let runs = super::open_runs(data)?;
        let events = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("apphost-workflow-events")
            .enable_all()
            .build()
            .map_err(|e| RunError::new("workflow.host_failed", e.to_string()))?;
        // Every unfinished run replayed at open continues.
        let signal = Signal {
            dirty: runs
                .list(None)
                .into_iter()
                .filter(|v| !v.finished)
                .map(|v| v.run_id)
                .collect(),
            ..Signal::default()
        };
        let shared = Arc::new(Shared {
            runs,
            signal: Mutex::new(signal),
            wake: Condvar::new(),
        });
        let mut out = HostRuns {
            shared,
            events: Some(events),
            threads: Vec::new(),
        };
        for n in 0..DRIVER_THREADS {
            let shared = out.shared.clone();
            let data = data.clone();
            let own = services();
            // On the expression stack: a step's expressions run inline, no thread per fact.
            let t = runtime_core::workflow::expr::spawn_expr_thread(
                format!("apphost-workflow-{n}"),
                move || drive_loop(&shared, &data, own),
            )
            .map_err(|e| RunError::new("workflow.host_failed", e.to_string()))?;
            out.threads.push(t);
        }
        Ok(out)
    }

    /// Starts `workflow` of `app` (read from the store's active manifest, never from the
    /// caller) and wakes the driver. `started_by_entry`: the app entry whose frame started it.
    pub fn start(
        &self,
        store: &Store,
        app: &str,
        workflow: &str,
        input: Value,
        idempotency_key: Option<String>,
        started_by_entry: Option<&str>,
    ) -> Result<RunView, RunError> {
        let runs = &self.shared.runs;
        let mine = runs.list(Some(app));
        let restart = idempotency_key.as_deref().is_some_and(|k| {
            mine.iter()
                .any(|v| v.workflow == workflow && v.idempotency_key.as_deref() == Some(k))
        });
        let unfinished = mine.iter().filter(|v| !v.finished).count();
        if !restart && unfinished >= MAX_UNFINISHED_RUNS_PER_APP {
            return Err(RunError::new(
                TOO_MANY_RUNS,
                format!(
                    "{app} has {unfinished} unfinished runs (at most {MAX_UNFINISHED_RUNS_PER_APP}): cancel one or wait for it to end"
                ),
            ));
        }
        let view = super::start_by(
            store,
            runs,
            app,
            workflow,
            input,
            idempotency_key,
            started_by_entry,
        )?;
        if !view.finished {
            let id = view.run_id.clone();
            self.shared.poke(|s| {
                s.dirty.insert(id);
            });
        }
        Ok(view)
    }

    /// The runs themselves, for reading (a run's facts for the host UI's timeline).
    pub fn runs(&self) -> &WorkflowRuns {
        &self.shared.runs
    }

    pub fn get(&self, run_id: &str) -> Result<RunView, RunError> {
        self.shared.runs.show(run_id)
    }

    /// Every run (of `app` when given), oldest id first.
    pub fn list(&self, app: Option<&str>) -> Vec<RunView> {
        self.shared.runs.list(app)
    }

    /// Cancels a run: its end is recorded now, and a step in flight stops (an agent step
    /// cancels its task); the step's result is not recorded.
    pub fn cancel(&self, run_id: &str) -> Result<RunView, RunError> {
        let view = self.shared.runs.cancel(run_id)?;
        // An in-flight step of the run sees it has ended (its interrupt) and stops; driven once
        // more, the run's end gets its evidence (`run_evidence::after_drive`).
        let id = run_id.to_owned();
        self.shared.poke(|s| {
            s.dirty.insert(id);
        });
        Ok(view)
    }

    /// Answers what the run waits for (only [`AnswerSource::User`] is accepted: an app's
    /// answer is `workflow.answer_not_by_user`, recording nothing) and wakes the driver.
    pub fn respond(
        &self,
        run_id: &str,
        answer: Answer,
        source: AnswerSource,
    ) -> Result<RunView, RunError> {
        let view = self.shared.runs.respond(run_id, answer, source)?;
        let id = run_id.to_owned();
        self.shared.poke(|s| {
            s.dirty.insert(id);
        });
        Ok(view)
    }

    /// Forwards the run's facts after `after_seq` to `sink` as they are appended, each as
    /// `{capability: "lime.workflow", runId, event}` (`event`: the profile `job.*` fact), until
    /// the run's end is forwarded or the handle is aborted.
    pub fn subscribe(
        &self,
        run_id: &str,
        after_seq: u64,
        sink: RunEventSink,
    ) -> Result<tokio::task::AbortHandle, RunError> {
        let mut sub = self.shared.runs.subscribe(run_id, after_seq)?;
        let rt = self
            .events
            .as_ref()
            .ok_or_else(|| RunError::new("workflow.host_failed", "the driver has stopped"))?;
        let run = run_id.to_owned();
        let join = rt.spawn(async move {
            loop {
                let e = match sub.next().await {
                    Ok(e) => e,
                    Err(e) => {
                        tracing::warn!("run event stream ended: {e}");
                        return;
                    }
                };
                let end = matches!(
                    e.kind().as_str(),
                    "job.completed" | "job.failed" | "job.cancelled"
                );
                let mut v =
                    json!({ "capability": "lime.workflow", "runId": run, "event": e.to_json() });
                while let Err(back) = sink(v) {
                    v = back;
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                if end {
                    return;
                }
            }
        });
        Ok(join.abort_handle())
    }

    /// An app is going away (disable, update, rollback, uninstall): its in-flight steps stop
    /// (an agent step cancels its task) unrecorded, the driver's open handles of the app
    /// close, and its unfinished runs are driven again after (the step re-issued with its key,
    /// through the choke point, which decides whether the app may still run it).
    pub fn close_app(&self, app: &str) {
        let app = app.to_owned();
        self.shared.poke(|s| {
            s.closings += 1;
            s.closing.insert(app, (s.closings, DRIVER_THREADS));
        });
    }
}

impl Drop for HostRuns {
    fn drop(&mut self) {
        self.shared.poke(|s| s.stop = true);
        // Each thread stops at its next check (an in-flight step is interrupted).
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        if let Some(rt) = self.events.take() {
            rt.shutdown_background();
        }
    }
}

fn drive_loop(shared: &Arc<Shared>, data: &DataDir, mut services: Box<dyn StepServices + Send>) {
    let store = loop {
        match Store::open_for_calls(data) {
            Ok(s) => break s,
            Err(e) => {
                tracing::warn!("the workflow driver cannot open the store: {}", e.message);
                let s = shared.signal();
                if s.stop {
                    return;
                }
                let _ = shared.wake.wait_timeout(s, STORE_RETRY);
            }
        }
    };
    let profile = HostProfile::current();
    let apps_data = data.apps_data();
    super::run_evidence::record_missing(&apps_data, &store, &shared.runs);
    let interrupt: Interrupt = {
        let shared = shared.clone();
        Arc::new(move |run: &str, app: &str| {
            {
                let s = shared.signal();
                if s.stop || s.closing.contains_key(app) {
                    return true;
                }
            }
            // Cancelled (or otherwise ended) meanwhile.
            shared.runs.show(run).map_or(true, |v| v.finished)
        })
    };
    // The closings this thread has closed its handles for.
    let mut closed: BTreeMap<String, u64> = BTreeMap::new();
    loop {
        let (run, closing) = {
            let mut s = shared.signal();
            if s.stop {
                return;
            }
            let run = s.dirty.pop_first();
            let mut mine = Vec::new();
            let mut done = Vec::new();
            for (app, (n, left)) in s.closing.iter_mut() {
                if closed.get(app) != Some(n) {
                    closed.insert(app.clone(), *n);
                    mine.push(app.clone());
                    *left -= 1;
                    if *left == 0 {
                        done.push(app.clone());
                    }
                }
            }
            for app in &done {
                s.closing.remove(app);
                // A step abandoned while its app closed is made again (through the choke
                // point, which re-derives whether the app may still run it).
                let again = shared
                    .runs
                    .list(Some(app))
                    .into_iter()
                    .filter(|v| !v.finished);
                s.dirty.extend(again.map(|v| v.run_id));
            }
            if !done.is_empty() {
                shared.wake.notify_all();
            }
            (run, mine)
        };
        for app in &closing {
            services.step_close_app(app);
        }
        {
            let steps =
                HostSteps::new(&store, &profile, &mut *services).interrupted_by(interrupt.clone());
            let ended =
                |v: &RunView| super::run_evidence::after_drive(&apps_data, &store, &shared.runs, v);
            if let Some(id) = &run {
                match shared.runs.drive(id, &steps) {
                    Ok(v) => ended(&v),
                    Err(e) => tracing::warn!("workflow run {id}: {e}"),
                }
            }
            match shared.runs.drive_due(&steps) {
                Ok(moved) => moved.iter().for_each(ended),
                Err(e) => tracing::warn!("workflow timers: {e}"),
            }
        }
        let s = shared.signal();
        if s.stop {
            return;
        }
        let unclosed = s.closing.iter().any(|(a, (n, _))| closed.get(a) != Some(n));
        if run.is_some() || !s.dirty.is_empty() || unclosed {
            continue;
        }
        let now = shared.runs.clock().now();
        let sleep = shared.runs.next_due().map(|due| {
            let ms = due.as_millisecond().saturating_sub(now.as_millisecond());
            Duration::from_millis(u64::try_from(ms).unwrap_or(0)).max(MIN_SLEEP)
        });
        // Sleeps until a wake-up (start, answer, cancel, close, stop) or the earliest due time.
        match sleep {
            Some(d) => drop(shared.wake.wait_timeout(s, d)),
            None => drop(shared.wake.wait(s)),
        }
    }
}
