//! Rebuilding runs from the log. Each run: its first fact (identity, pinned definition, input),
//! then only the facts after its latest checkpoint (`checkpoint.rs`), read backwards from the
//! end page by page, applied in order to the checkpoint's state (or to a fresh machine when it
//! has none). Every run is rebuilt on ONE expression thread, and runs pinning the same
//! definition share one parsed copy.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::Value;

use super::checkpoint::{self, CHECKPOINT};
use super::*;
use crate::event::facts::WORKFLOW_FACT;
use crate::event::{Event, EventBody};
use crate::workflow::definition::Definition;
use crate::workflow::machine::Fact;

/// Events read per page while looking back for a run's latest checkpoint.
const TAIL_PAGE: u64 = 128;

/// Parsed definitions by their pinned JSON (runs of one workflow share one).
type Definitions = HashMap<String, Arc<Definition>>;

/// Every run recorded in `log`. A session that is not a run is skipped; a run whose record
/// cannot be read is refused with `workflow.replay_failed` (the log is the runtime's own).
/// `from_checkpoints: false` applies every fact from the start (the property tests compare).
pub(super) fn replay_all(
    log: &EventLog,
    from_checkpoints: bool,
) -> Result<BTreeMap<RunId, Entry>, RunError> {
    crate::workflow::expr::on_expr_stack(|| {
        let mut out = BTreeMap::new();
        let mut defs = Definitions::new();
        for (session, last) in log.sessions()? {
            if !session.as_str().starts_with("sess_wf_") {
                continue;
            }
            if let Some(e) = replay_run(log, session, last, from_checkpoints, &mut defs)? {
                out.insert(e.run_id.clone(), e);
            }
        }
        Ok(out)
    })
    .map_err(|e| RunError::new(code::REPLAY_FAILED, e.message))?
}

fn payload(ev: &Event) -> Option<&serde_json::Map<String, Value>> {
    match &ev.body {
        EventBody::Other(_, m) if m.contains_key(WORKFLOW_FACT) => Some(m),
        _ => None,
    }
}

fn fact_name(ev: &Event) -> &str {
    payload(ev)
        .and_then(|p| p.get(WORKFLOW_FACT))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The facts after the latest readable checkpoint (which is returned too), oldest first;
/// every fact after the first one when there is none.
fn tail(
    log: &EventLog,
    session: &SessionId,
    last: u64,
    from_checkpoints: bool,
) -> Result<(Option<checkpoint::Restored>, Vec<Event>), RunError> {
    if !from_checkpoints {
        return Ok((None, log.read(session, 2, usize::MAX)?));
    }
    let mut newest_first = Vec::new();
    let mut end = last + 1;
    while end > 2 {
        let from = end.saturating_sub(TAIL_PAGE).max(2);
        let page = log.read(session, from, (end - from) as usize)?;
        for ev in page.into_iter().rev() {
            if fact_name(&ev) == CHECKPOINT {
                if let Some(r) = payload(&ev).and_then(checkpoint::read) {
                    newest_first.reverse();
                    return Ok((Some(r), newest_first));
                }
            }
            newest_first.push(ev);
        }
        end = from;
    }
    newest_first.reverse();
    Ok((None, newest_first))
}

fn replay_run(
    log: &EventLog,
    session: SessionId,
    last: u64,
    from_checkpoints: bool,
    defs: &mut Definitions,
) -> Result<Option<Entry>, RunError> {
    let Some(first) = log.read(&session, 1, 1)?.pop() else {
        return Ok(None);
    };
    let (Some(run_id), Some(p)) = (first.scope.run_id.clone(), payload(&first)) else {
        return Ok(None);
    };
    if p.get(WORKFLOW_FACT).and_then(Value::as_str) != Some("run_started") {
        return Ok(None);
    }
    let rid = run_id.to_string();
    let bad = |m: &str| RunError::new(code::REPLAY_FAILED, format!("{rid}: {m}"));
    let text = |k: &str| p.get(k).and_then(Value::as_str).map(str::to_string);
    let definition = p.get("definition").cloned().unwrap_or(Value::Null);
    // The definition was checked when the run started; parse it again (once per content; we
    // are on the expression thread).
    let pinned = definition.to_string();
    let def = match defs.get(&pinned) {
        Some(d) => d.clone(),
        None => {
            let d = Arc::new(
                crate::workflow::definition::parse(&definition)
                    .0
                    .ok_or_else(|| bad("the pinned definition no longer parses"))?,
            );
            defs.insert(pinned, d.clone());
            d
        }
    };
    let input = p.get("input").cloned().unwrap_or(Value::Null);
    let (restored, events) = tail(log, &session, last, from_checkpoints)?;
    let mut marks = BTreeMap::new();
    let machine = match restored {
        Some(r) => {
            marks.extend(r.mark);
            RunMachine::resume(def, r.state)
        }
        None => RunMachine::start(def, run_id.as_str(), input),
    };
    let mut entry = Entry {
        machine,
        run_id,
        session,
        app: text("app").ok_or_else(|| bad("no app"))?,
        workflow: text("workflow").ok_or_else(|| bad("no workflow"))?,
        idempotency_key: text("idempotencyKey"),
        started_by: text("startedBy"),
        started_at: first.timestamp.clone(),
        marks,
        closed: false,
        driving: false,
        since_checkpoint: events.len().min(u32::MAX as usize) as u32,
    };
    for ev in &events {
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
