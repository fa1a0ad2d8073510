//! Evidence per run: when a run ends (completed, failed or cancelled) the host records one
//! `lime.evidence` record for the run's app, of the host-only kind [`RUN_EVIDENCE_KIND`], with
//! the package provenance the store has now (version, packageHash, manifestHash) and the run's
//! `runtimeCorrelation` (run id, the log session of its facts, the trace id its steps' calls
//! were audited under).
//!
//! Exactly once, even across a crash and a replay: the app's evidence store is the record of
//! what was recorded, so [`record_once`] looks for the run's record there first (by run id,
//! among records of the reserved kind, which an app's own `lime.evidence.record` is refused:
//! `evidence.reserved_kind`), and the host calls it again for every finished run when it opens
//! the runs ([`record_missing`]).

use std::path::Path;

use runtime_core::app_artifacts::Provenance;
use runtime_core::app_evidence::{AppEvidence, EvidenceInput, EvidenceLimits, EvidenceRecord};
use runtime_core::workflow::machine::RunStatus;
use runtime_core::workflow::runs::{RunView, WorkflowRuns};
use serde_json::{json, Value};

use super::timeline::preview;
use crate::install::store::Store;

/// The evidence kind of the host's run records; kinds under [`RESERVED_KIND_PREFIX`] are the
/// host's alone.
pub const RUN_EVIDENCE_KIND: &str = "apphost.workflow-run";
pub const RESERVED_KIND_PREFIX: &str = "apphost.";
/// Records looked at per page while searching for a run's record.
const PAGE: u32 = 100;

/// One look-then-record at a time in this process (the driver's threads); another process
/// never drives the same runs (their `runtime.lock`).
static RECORDING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The trace id a run's step calls are audited under (the executor's caller session is the run
/// id).
pub fn run_trace(run_id: &str) -> String {
    format!("trace_{run_id}")
}

fn open(apps_data: &Path, app: &str) -> Result<AppEvidence, String> {
    AppEvidence::open(&apps_data.join(app), EvidenceLimits::default()).map_err(|e| e.to_string())
}

fn of_run(r: &EvidenceRecord, run_id: &str) -> bool {
    r.data["runtimeCorrelation"]["runId"] == run_id
}

/// The host's evidence record of `run_id` in `app`'s store, if any. Reads without creating the
/// app's evidence file.
pub fn find(apps_data: &Path, app: &str, run_id: &str) -> Result<Option<EvidenceRecord>, String> {
    let Some(ev) = AppEvidence::open_read_only(&apps_data.join(app)).map_err(|e| e.to_string())?
    else {
        return Ok(None);
    };
    search(&ev, run_id)
}

fn search(ev: &AppEvidence, run_id: &str) -> Result<Option<EvidenceRecord>, String> {
    let mut cursor: Option<String> = None;
    loop {
        let page = ev
            .list(Some(RUN_EVIDENCE_KIND), cursor.as_deref(), PAGE)
            .map_err(|e| e.to_string())?;
        if let Some(r) = page.items.into_iter().find(|r| of_run(r, run_id)) {
            return Ok(Some(r));
        }
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => return Ok(None),
        }
    }
}

/// `(status, summary fields)` of a finished run; `None` while it runs.
fn outcome(view: &RunView) -> Option<(&'static str, Value)> {
    if !view.finished {
        return None;
    }
    Some(match &view.state.status {
        RunStatus::Succeeded { result } => ("succeeded", json!({"result": preview(result)})),
        RunStatus::Failed {
            code,
            message,
            state,
        } => (
            "failed",
            json!({"error": {"code": code, "message": super::timeline::bounded(message, 512), "state": state}}),
        ),
        RunStatus::Cancelled { .. } => ("cancelled", json!({})),
        RunStatus::Running(_) => return None,
    })
}

/// Records the run's evidence unless it is recorded already; returns the record (`None` while
/// the run has not ended). `session_id` is the log session of the run's facts.
pub fn record_once(
    apps_data: &Path,
    store: &Store,
    view: &RunView,
    session_id: &str,
) -> Result<Option<EvidenceRecord>, String> {
    let Some((status, fields)) = outcome(view) else {
        return Ok(None);
    };
    let active = store.active_app(&view.app).map_err(|e| e.message)?;
    let _one_at_a_time = RECORDING.lock().unwrap_or_else(|p| p.into_inner());
    let mut ev = open(apps_data, &view.app)?;
    if let Some(found) = search(&ev, &view.run_id)? {
        return Ok(Some(found));
    }
    let entry = super::entry_of(store, &view.app, &view.workflow).unwrap_or_default();
    let trace = run_trace(&view.run_id);
    let mut data = json!({
        "workflow": view.workflow,
        "status": status,
        "steps": view.state.steps,
        "package": {
            "appVersion": active.version,
            "packageHash": active.package_hash,
            "manifestHash": active.manifest_hash,
        },
        "runtimeCorrelation": {
            "runId": view.run_id,
            "sessionId": session_id,
            "traceId": trace,
        },
    });
    if let (Some(d), Value::Object(extra)) = (data.as_object_mut(), fields) {
        d.extend(extra);
    }
    let input = EvidenceInput {
        kind: RUN_EVIDENCE_KIND.to_owned(),
        summary: format!("workflow {} {status}", view.workflow),
        data,
        artifact_ids: Vec::new(),
    };
    let prov = Provenance {
        app_id: active.name.clone(),
        app_version: active.version.clone(),
        package_hash: active.package_hash.clone(),
        manifest_hash: active.manifest_hash.clone(),
        entry_key: entry,
        trace_id: trace,
        agent: None,
    };
    ev.record(&input, None, &prov)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// After the driver moved a run: records its evidence when it ended (once; failures logged).
pub fn after_drive(apps_data: &Path, store: &Store, runs: &WorkflowRuns, view: &RunView) {
    if !view.finished {
        return;
    }
    let recorded = runs
        .session_of(&view.run_id)
        .map_err(|e| e.message)
        .and_then(|session| record_once(apps_data, store, view, &session));
    if let Err(e) = recorded {
        tracing::warn!(run = %view.run_id, error = %e, "cannot record a run's evidence");
    }
}

/// Records the evidence of every finished run that has none yet (after a crash between a run's
/// end and its record). Returns how many it recorded; failures are logged and skipped.
pub fn record_missing(apps_data: &Path, store: &Store, runs: &WorkflowRuns) -> usize {
    let mut n = 0;
    for view in runs.list(None).into_iter().filter(|v| v.finished) {
        let had = matches!(find(apps_data, &view.app, &view.run_id), Ok(Some(_)));
        if had {
            continue;
        }
        let Ok(session) = runs.session_of(&view.run_id) else {
            continue;
        };
        match record_once(apps_data, store, &view, &session) {
            Ok(Some(_)) => n += 1,
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(run = %view.run_id, error = %e, "cannot record a run's evidence")
            }
        }
    }
    n
}
