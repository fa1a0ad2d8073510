//! The host process's workflow runs as the host UI's commands see them: the session's one
//! [`HostRuns`] (owned by the bridge's services, `BridgeHost::workflow_runs`: its driver thread
//! moves the runs, records each ended run's evidence, and holds the runs' `runtime.lock`, so
//! the CLI gets `runtime.busy` while a window or `apphost serve` runs), the run events of what
//! the UI started or answered turned into `workflow:changed`, and the scheduled starts fired by
//! [`tick`], which the session's own thread calls ([`tick_in_background`]: the window and
//! `apphost serve` start it, so schedules fire with no host UI open) as well as `next_events`.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use runtime_core::workflow::runs::RunView;
use serde_json::{json, Value};

use super::Session;
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::hosting::workflow::driver::{HostRuns, RunEventSink};
use crate::hosting::workflow::{self, schedule};
use crate::install::store::Store;

/// The outbox event telling the UI a run changed (`{appId, runId, reason}`).
pub const WORKFLOW_CHANGED: &str = "workflow:changed";
/// How often [`tick`] looks for due schedules.
pub const TICK_EVERY: Duration = Duration::from_secs(1);
/// Most runs whose events the session follows for the UI at once (older follows end first).
pub const MAX_FOLLOWED: usize = 64;

/// When [`tick`] last looked, and the runs the UI follows.
#[derive(Default)]
pub struct WorkflowHost {
    ticked: Mutex<Option<Instant>>,
    /// Held while a tick runs: a tick that finds it held is skipped (never two at once).
    ticking: Mutex<()>,
    followed: Mutex<Vec<(String, tokio::task::AbortHandle)>>,
}

impl Drop for WorkflowHost {
    fn drop(&mut self) {
        for (_, h) in lock(&self.followed).drain(..) {
            h.abort();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether this data directory has any run (its log exists): without one, listing is empty and
/// nothing is opened or created.
pub fn any_runs(session: &Session) -> bool {
    workflow::runs_dir(&session.data)
        .join("events.db")
        .is_file()
}

/// Runs `f` with the session's runs (opened, with their driver, on first use) and its store.
pub fn with_runs<T>(
    session: &Session,
    f: impl FnOnce(&HostRuns, &Store) -> HostResult<T>,
) -> HostResult<T> {
    session.with_bridge(|host, store| {
        let runs = host.workflow_runs(store).map_err(|m| {
            let code = if m.starts_with("runtime.busy") {
                ErrorCode::RuntimeBusy
            } else {
                ErrorCode::WorkflowRunFailed
            };
            HostError::new(code, m)
        })?;
        f(runs, store)
    })?
}

/// Follows `view`'s run for the UI: each of its facts from now on is a `workflow:changed`
/// event, until the run ends (bounded: [`MAX_FOLLOWED`] runs at once).
pub fn follow(session: &Session, runs: &HostRuns, view: &RunView) {
    if view.finished {
        return;
    }
    let mut followed = lock(&session.workflows.followed);
    followed.retain(|(_, h)| !h.is_finished());
    if followed.iter().any(|(id, _)| id == &view.run_id) {
        return;
    }
    let after = runs
        .runs()
        .history(
            &view.run_id,
            runtime_core::workflow::runs::history::MAX_HISTORY,
        )
        .ok()
        .and_then(|e| e.last().map(|e| e.sequence))
        .unwrap_or(0);
    let outbox = session.outbox.clone();
    let app = view.app.clone();
    let run = view.run_id.clone();
    let sink: RunEventSink = std::sync::Arc::new(move |e: Value| {
        let fact = e["event"]["payload"]["workflowFact"].clone();
        outbox.push(
            WORKFLOW_CHANGED,
            json!({"appId": app, "runId": run, "reason": "driven", "fact": fact}),
        );
        Ok(())
    });
    match runs.subscribe(&view.run_id, after, sink) {
        Ok(h) => {
            if followed.len() >= MAX_FOLLOWED {
                let (_, old) = followed.remove(0);
                old.abort();
            }
            followed.push((view.run_id.clone(), h));
        }
        Err(e) => tracing::debug!(run = %view.run_id, "cannot follow a run: {e}"),
    }
}

/// Tells the UI a run changed.
pub fn changed(session: &Session, view: &RunView, reason: &str) {
    session.outbox.push(
        WORKFLOW_CHANGED,
        json!({"appId": view.app, "runId": view.run_id, "reason": reason}),
    );
}

/// Called by the event loop: at most every [`TICK_EVERY`], starts the scheduled workflows that
/// are due and reports slots missed while no host ran (`hosting::workflow::schedule`). Timers
/// of runs are the driver's. Errors are logged: a tick never fails a caller.
pub fn tick(session: &Session) {
    let Ok(_ticking) = session.workflows.ticking.try_lock() else {
        return;
    };
    {
        let mut t = lock(&session.workflows.ticked);
        if t.is_some_and(|at| at.elapsed() < TICK_EVERY) {
            return;
        }
        *t = Some(Instant::now());
    }
    let due = session
        .with_bridge(|_, store| schedule::due_now(store, &session.data))
        .unwrap_or_else(|e| Err(e.message));
    let due = match due {
        Ok(d) => d,
        Err(e) => {
            tracing::debug!(error = %e, "workflow schedules not readable now");
            return;
        }
    };
    for m in &due.missed {
        session.outbox.push(
            WORKFLOW_CHANGED,
            json!({"appId": m.app, "entryKey": m.entry, "reason": "schedule_missed", "missed": m.missed}),
        );
    }
    for s in &due.start {
        let started = with_runs(session, |runs, store| {
            runs.start(
                store,
                &s.app,
                &s.workflow,
                json!({"scheduledAt": s.slot}),
                Some(format!("schedule:{}:{}", s.entry, s.slot)),
                None,
            )
            .map_err(workflow::host_error)
        });
        match started {
            Ok(v) => {
                audit(
                    session,
                    "workflow.scheduled_start",
                    &s.app,
                    json!({"runId": v.run_id, "entryKey": s.entry, "slot": s.slot}),
                );
                changed(session, &v, "workflow.scheduled_start");
            }
            Err(e) => {
                tracing::warn!(app = %s.app, error = %e.message, "a scheduled start was refused")
            }
        }
    }
}

/// Audits a host action on a run (durably, like `task.*`). The action is done by then: a failed
/// audit is logged, not answered.
pub fn audit(session: &Session, action: &str, app: &str, details: Value) {
    let audited = session
        .with_bridge(|_, store| store.record_audit_durably(action, Some(app), None, &details));
    if let Err(e) | Ok(Err(e)) = audited {
        tracing::warn!(action, app, error = %e.message, "cannot audit a host action on a run");
    }
}

/// The session's schedule ticking on its own thread (`apphost-schedules`): [`tick`] at once,
/// then every [`TICK_EVERY`], whether or not a host UI polls `next_events`. Stops when dropped
/// (or when the session is gone: the thread holds it only during a tick).
pub struct Ticker {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

/// Starts ticking `session`'s schedules in the background (the window, `apphost serve`).
pub fn tick_in_background(session: &Arc<Session>) -> Ticker {
    let stop: Arc<(Mutex<bool>, Condvar)> = Arc::default();
    let weak: Weak<Session> = Arc::downgrade(session);
    let flag = stop.clone();
    let thread = std::thread::Builder::new()
        .name("apphost-schedules".into())
        .spawn(move || loop {
            match weak.upgrade() {
                Some(s) => tick(&s),
                None => return,
            }
            let (m, c) = &*flag;
            let stopped = lock(m);
            if *stopped {
                return;
            }
            let (stopped, _) = c
                .wait_timeout(stopped, TICK_EVERY)
                .unwrap_or_else(|p| p.into_inner());
            if *stopped {
                return;
            }
        })
        .map_err(|e| tracing::warn!("cannot start the schedule thread: {e}"))
        .ok();
    Ticker { stop, thread }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        let (m, c) = &*self.stop;
        *lock(m) = true;
        c.notify_all();
        if let Some(t) = self.thread.take() {
            // Never join from the thread itself (the session's last holder may drop it there).
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }
}
