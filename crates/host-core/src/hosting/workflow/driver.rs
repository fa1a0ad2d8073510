//! The host process's workflow driver: [`HostRuns`], owned (lazily) by the host session's
//! `Services` (the window, `apphost serve`), holds the data directory's [`WorkflowRuns`] (their
//! `runtime.lock`: while it lives, `apphost workflow start|respond|cancel` get `runtime.busy`)
//! and one background thread, `apphost-workflow`, that drives them:
//!
//! - every unfinished run is driven until it waits for a person or a timer, or ends: the runs
//!   replayed at open first, then each run that is started, answered or cancelled (a wake-up);
//! - between wake-ups the thread sleeps until the earliest due timer (`wait`, retry backoff,
//!   review/input deadlines) and uses no CPU otherwise;
//! - steps are made by [`HostSteps`] over the thread's OWN `Store` connection and its own
//!   [`StepServices`] (the session's services share their one agent runtime with it: the
//!   runtime has a per-directory lock, there is never a second one), so a step never re-enters
//!   the session's `Services`;
//! - a step's call is made without the runs' lock (`WorkflowRuns::drive`), so reading,
//!   starting, answering and cancelling never wait for a step; a cancel interrupts an
//!   in-flight agent step, which cancels its task at once.
//!
//! Who may do what is not decided here: `lime.workflow` (`capability::services::workflow`)
//! checks the caller's app against each run; the host UI and the CLI act as the user.

use std::collections::BTreeSet;
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

/// Forwards one run event to a frame; `Err(event)` when the frame's outbox is full (the
/// forwarder waits and tries again: nothing is dropped).
pub type RunEventSink = Arc<dyn Fn(Value) -> Result<(), Value> + Send + Sync>;

/// The shortest sleep between passes when a due time has already passed (no hot loop).
const MIN_SLEEP: Duration = Duration::from_millis(5);
/// How long the driver waits before it tries to open its store again.
const STORE_RETRY: Duration = Duration::from_secs(1);

#[derive(Default)]
struct Signal {
    /// Runs to drive on the next pass.
    dirty: BTreeSet<String>,
    /// Runs cancelled since the pass began (their in-flight step stops).
    cancelled: BTreeSet<String>,
    /// Apps closing (disable, update, uninstall): their in-flight steps stop, their open
    /// per-app handles in the driver's services close.
    closing: BTreeSet<String>,
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
    thread: Option<JoinHandle<()>>,
}

impl HostRuns {
    /// Opens (replaying) the data directory's runs and starts the driver thread, which makes
    /// steps through `services` (its own; sharing the session's agent runtime).
    /// `runtime.busy` when another process drives them.
    pub fn open(
        data: &DataDir,
        services: Box<dyn StepServices + Send>,
    ) -> Result<HostRuns, RunError> {
        let runs = super::open_runs(data)?;
        let events = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("apphost-workflow-events")
            .enable_all()
            .build()
            .map_err(|e| RunError::new("workflow.host_failed", e.to_string()))?;
        let mut signal = Signal::default();
        signal.dirty = runs
            .list(None)
            .into_iter()
            .filter(|v| !v.finished)
            .map(|v| v.run_id)
            .collect();
        let shared = Arc::new(Shared {
            runs,
            signal: Mutex::new(signal),
            wake: Condvar::new(),
        });
        let for_thread = shared.clone();
        let data = data.clone();
        let thread = std::thread::Builder::new()
            .name("apphost-workflow".into())
            .spawn(move || drive_loop(&for_thread, &data, services))
            .map_err(|e| RunError::new("workflow.host_failed", e.to_string()))?;
        Ok(HostRuns {
            shared,
            events: Some(events),
            thread: Some(thread),
        })
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
        self.shared.runs.show(run_id)?;
        let id = run_id.to_owned();
        self.shared.poke(|s| {
            s.cancelled.insert(id);
        });
        let view = self.shared.runs.cancel(run_id)?;
        // Driven once more: the driver records the ended run's evidence.
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
            s.closing.insert(app);
        });
    }
}

impl Drop for HostRuns {
    fn drop(&mut self) {
        self.shared.poke(|s| s.stop = true);
        if let Some(t) = self.thread.take() {
            // The thread stops at its next check (an in-flight step is interrupted).
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
            let s = shared.signal();
            s.stop || s.cancelled.contains(run) || s.closing.contains(app)
        })
    };
    loop {
        let (dirty, closing) = {
            let mut s = shared.signal();
            if s.stop {
                return;
            }
            (std::mem::take(&mut s.dirty), s.closing.clone())
        };
        for app in &closing {
            services.step_close_app(app);
        }
        {
            let steps =
                HostSteps::new(&store, &profile, &mut *services).interrupted_by(interrupt.clone());
            let ended =
                |v: &RunView| super::run_evidence::after_drive(&apps_data, &store, &shared.runs, v);
            for id in &dirty {
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
        let mut s = shared.signal();
        s.cancelled.clear();
        for app in &closing {
            s.closing.remove(app);
            // A step abandoned while its app closed is made again (through the choke point,
            // which re-derives whether the app may still run it).
            let again = shared
                .runs
                .list(Some(app))
                .into_iter()
                .filter(|v| !v.finished);
            s.dirty.extend(again.map(|v| v.run_id));
        }
        if s.stop {
            return;
        }
        if !s.dirty.is_empty() || !s.closing.is_empty() {
            continue;
        }
        let now = shared.runs.clock().now();
        let sleep = shared.runs.next_due().map(|due| {
            let ms = due.as_millisecond().saturating_sub(now.as_millisecond());
            Duration::from_millis(u64::try_from(ms).unwrap_or(0)).max(MIN_SLEEP)
        });
        let _woken = match sleep {
            Some(d) => drop(shared.wake.wait_timeout(s, d)),
            None => drop(shared.wake.wait(s)),
        };
    }
}
