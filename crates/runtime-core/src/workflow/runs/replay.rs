//! Rebuilding every run from the log: a fresh machine per run, its facts applied in order.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::*;
use crate::event::facts::WORKFLOW_FACT;
use crate::event::{Event, EventBody};
use crate::workflow::machine::Fact;

/// Every run recorded in `log`. A session that is not a run is skipped; a run whose record
/// cannot be read is refused with `workflow.replay_failed` (the log is the runtime's own).
pub(super) fn replay_all(log: &EventLog) -> Result<BTreeMap<RunId, Entry>, RunError> {
    let mut out = BTreeMap::new();
    for (session, _) in log.sessions()? {
        if !session.as_str().starts_with("sess_wf_") {
            continue;
        }
        let events = log.read_all(&session)?;
        if let Some(e) = replay_run(session, &events)? {
            out.insert(e.run_id.clone(), e);
        }
    }
    Ok(out)
}

fn payload(ev: &Event) -> Option<&serde_json::Map<String, Value>> {
    match &ev.body {
        EventBody::Other(_, m) if m.contains_key(WORKFLOW_FACT) => Some(m),
        _ => None,
    }
}

fn replay_run(session: SessionId, events: &[Event]) -> Result<Option<Entry>, RunError> {
    let Some(first) = events.first() else {
        return Ok(None);
    };
    let (Some(run_id), Some(p)) = (first.scope.run_id.clone(), payload(first)) else {
        return Ok(None);
    };
    if p.get(WORKFLOW_FACT).and_then(Value::as_str) != Some("run_started") {
        return Ok(None);
    }
    let rid = run_id.to_string();
    let bad = |m: &str| RunError::new(code::REPLAY_FAILED, format!("{rid}: {m}"));
    let text = |k: &str| p.get(k).and_then(Value::as_str).map(str::to_string);
    let definition = p.get("definition").cloned().unwrap_or(Value::Null);
    // The definition was checked when the run started; parse it again on an expression thread.
    let def =
        crate::workflow::expr::on_expr_stack(|| crate::workflow::definition::parse(&definition).0)
            .ok()
            .flatten()
            .ok_or_else(|| bad("the pinned definition no longer parses"))?;
    let input = p.get("input").cloned().unwrap_or(Value::Null);
    let mut entry = Entry {
        machine: RunMachine::start(Arc::new(def), run_id.as_str(), input),
        run_id,
        session,
        app: text("app").ok_or_else(|| bad("no app"))?,
        workflow: text("workflow").ok_or_else(|| bad("no workflow"))?,
        idempotency_key: text("idempotencyKey"),
        started_by: text("startedBy"),
        started_at: first.timestamp.clone(),
        marks: BTreeMap::new(),
        closed: false,
        driving: false,
    };
    for ev in &events[1..] {
        let Some(p) = payload(ev) else { continue };
        let name = p.get(WORKFLOW_FACT).and_then(Value::as_str).unwrap_or("");
        let key = p.get("key").and_then(Value::as_str);
        let due = p
            .get("dueAt")
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<jiff::Timestamp>().ok());
        match name {
            "step_started" | "retry_scheduled" | "wait_scheduled" | "review_requested"
            | "input_requested" | "decision_requested" => {
                if let Some(k) = key {
                    entry.marks.insert(k.to_string(), Mark { due_at: due });
                }
            }
            "ended" | "cancelled" => entry.closed = true,
            _ => {}
        }
        if let Some(f) = p.get("fact") {
            let fact: Fact = serde_json::from_value(f.clone())
                .map_err(|e| bad(&format!("undecodable fact: {e}")))?;
            // A fact the machine refuses (it never should) is skipped: replay is best effort
            // over a log only this service writes.
            let _ = entry.machine.apply(fact);
        }
    }
    Ok(Some(entry))
}
