//! The host process's workflow runs as the host UI's commands see them: the data directory's
//! [`WorkflowRuns`] opened once per session (its `runtime.lock`: while a window or `apphost
//! serve` has them, the CLI gets `runtime.busy`), driven over the bridge's own services and
//! store (a step is a call through the one choke point, like a frame's), the evidence of each
//! ended run recorded once, and the timers and schedules fired by [`tick`].
//!
//! Lock order: the runs first, then the bridge (`Session::with_bridge`); nothing takes them the
//! other way round.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use runtime_core::workflow::runs::{RunView, WorkflowRuns};
use serde_json::json;

use super::Session;
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::hosting::workflow::{self, executor::HostSteps, run_evidence, schedule};

/// The outbox event telling the UI a run changed (`{appId, runId, reason}`).
pub const WORKFLOW_CHANGED: &str = "workflow:changed";
/// How often [`tick`] looks for due timers and schedules.
pub const TICK_EVERY: Duration = Duration::from_secs(1);

/// The session's runs (opened on first use) and when [`tick`] last looked.
#[derive(Default)]
pub struct WorkflowHost {
    runs: Mutex<Option<WorkflowRuns>>,
    ticked: Mutex<Option<Instant>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether this data directory has any run (its log exists): without one, listing is empty and
/// nothing is created.
pub fn any_runs(session: &Session) -> bool {
    workflow::runs_dir(&session.data).join("events.db").is_file()
}

/// Runs `f` with the session's runs, opening (and replaying) them on first use; on open, the
/// evidence of runs that ended without it (a crash) is recorded.
pub fn with_runs<T>(
    session: &Session,
    f: impl FnOnce(&WorkflowRuns) -> HostResult<T>,
) -> HostResult<T> {
    let mut guard = lock(&session.workflows.runs);
    if guard.is_none() {
        let runs = workflow::open_runs(&session.data).map_err(workflow::host_error)?;
        let apps = session.data.apps_data();
        session.with_bridge(|_, store| run_evidence::record_missing(&apps, store, &runs))?;
        *guard = Some(runs);
    }
    match guard.as_ref() {
        Some(runs) => f(runs),
        None => Err(HostError::new(ErrorCode::Internal, "workflow runs not open")),
    }
}

/// Drives `run_id` until it waits or ends, over the bridge's services; records its evidence
/// when it ended; tells the UI.
pub fn drive(session: &Session, runs: &WorkflowRuns, run_id: &str) -> HostResult<RunView> {
    let view = session
        .with_bridge(|host, store| {
            let (services, profile) = host.services_and_profile();
            let steps = HostSteps::new(store, profile, services);
            runs.drive(run_id, &steps)
        })?
        .map_err(workflow::host_error)?;
    ended(session, runs, &view);
    Ok(view)
}

/// Records an ended run's evidence (once) and tells the UI it changed.
pub fn ended(session: &Session, runs: &WorkflowRuns, view: &RunView) {
    if view.finished {
        let apps = session.data.apps_data();
        let recorded = runs.session_of(&view.run_id).map(|sess| {
            session.with_bridge(|_, store| run_evidence::record_once(&apps, store, view, &sess))
        });
        if let Ok(Ok(Err(e))) = recorded {
            tracing::warn!(run = %view.run_id, error = %e, "cannot record a run's evidence");
        }
    }
    changed(session, view, "driven");
}

/// Tells the UI a run changed.
pub fn changed(session: &Session, view: &RunView, reason: &str) {
    session.outbox.push(
        WORKFLOW_CHANGED,
        json!({"appId": view.app, "runId": view.run_id, "reason": reason}),
    );
}

/// Called by the event loop: at most every [`TICK_EVERY`], drives the runs whose timer is due
/// and starts the scheduled workflows that are due (`hosting::workflow::schedule`). Errors are
/// logged: a tick never fails a caller.
pub fn tick(session: &Session) {
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
            schedule::Due::default()
        }
    };
    if due.missed.is_empty() && due.start.is_empty() && !any_runs(session) {
        return;
    }
    for m in &due.missed {
        session.outbox.push(WORKFLOW_CHANGED, json!({"appId": m.app, "entryKey": m.entry, "reason": "schedule_missed", "missed": m.missed}));
    }
    let result = with_runs(session, |runs| {
        for s in &due.start {
            let started = session
                .with_bridge(|_, store| {
                    workflow::start(
                        store,
                        runs,
                        &s.app,
                        &s.workflow,
                        json!({"scheduledAt": s.slot}),
                        Some(format!("schedule:{}:{}", s.entry, s.slot)),
                    )
                })?
                .map_err(workflow::host_error);
            match started {
                Ok(v) => {
                    audit(session, "workflow.scheduled_start", &s.app, json!({"runId": v.run_id, "entryKey": s.entry, "slot": s.slot}));
                    drive(session, runs, &v.run_id)?;
                }
                Err(e) => tracing::warn!(app = %s.app, error = %e.message, "a scheduled start was refused"),
            }
        }
        let moved = session
            .with_bridge(|host, store| {
                let (services, profile) = host.services_and_profile();
                let steps = HostSteps::new(store, profile, services);
                runs.drive_due(&steps)
            })?
            .map_err(workflow::host_error)?;
        for v in &moved {
            ended(session, runs, v);
        }
        Ok(())
    });
    if let Err(e) = result {
        tracing::debug!(code = e.code.as_str(), "workflow tick: {}", e.message);
    }
}

/// Audits a host action on a run (durably, like `task.*`). The action is done by then: a failed
/// audit is logged, not answered.
pub fn audit(session: &Session, action: &str, app: &str, details: serde_json::Value) {
    let audited = session
        .with_bridge(|_, store| store.record_audit_durably(action, Some(app), None, &details));
    if let Err(e) | Ok(Err(e)) = audited {
        tracing::warn!(action, app, error = %e.message, "cannot audit a host action on a run");
    }
}
