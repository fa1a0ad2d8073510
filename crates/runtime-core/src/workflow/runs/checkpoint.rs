//! Checkpoints: every [`CHECKPOINT_EVERY`] facts or so, a step's result is appended (in the
//! same commit, no extra fsync) after a `checkpoint` fact holding the run's whole state (the
//! machine's [`RunState`]) and the mark of the call it waits for. Replay reads the run's first
//! fact (its definition and identity), then only the facts from the latest checkpoint on
//! (`replay.rs`), so reopening a run of any length reads a bounded tail. A checkpoint is plain
//! data the service wrote; a state over [`MAX_CHECKPOINT_BYTES`] gets none (replay then reads
//! further back, to the previous one or the start).

use std::collections::BTreeMap;

use serde_json::Value;

use super::Mark;
use crate::event::facts;
use crate::event::EventDraft;
use crate::ids::RunId;
use crate::workflow::machine::{RunMachine, RunState};

/// Facts between two checkpoints of a run (about; counted by the driver).
pub const CHECKPOINT_EVERY: u32 = 64;

/// The largest state a checkpoint carries (serialized JSON).
pub const MAX_CHECKPOINT_BYTES: usize = 256 * 1024;

/// The payload name of a checkpoint (`workflowFact`).
pub const CHECKPOINT: &str = "checkpoint";

/// A checkpoint of `machine` waiting for `pending` (whose request is recorded when `marks`
/// has it); `None` when its state is too large to carry.
pub(super) fn draft(
    run: &RunId,
    machine: &RunMachine,
    pending: Option<&str>,
    marks: &BTreeMap<String, Mark>,
) -> Option<EventDraft> {
    let state = serde_json::to_value(machine.state()).ok()?;
    let size = serde_json::to_vec(&state).map_or(usize::MAX, |b| b.len());
    if size > MAX_CHECKPOINT_BYTES {
        return None;
    }
    let due = pending
        .and_then(|k| marks.get(k))
        .and_then(|m| m.due_at)
        .map(crate::event::format_timestamp);
    Some(facts::workflow_checkpoint(
        run,
        &state,
        pending,
        due.as_deref(),
    ))
}

/// What a checkpoint restores: the state, and the mark of the key it waits for.
pub(super) struct Restored {
    pub state: RunState,
    pub mark: Option<(String, Mark)>,
}

/// Reads a checkpoint's payload (`None`: not a readable checkpoint; replay goes further back).
pub(super) fn read(payload: &serde_json::Map<String, Value>) -> Option<Restored> {
    let state: RunState = serde_json::from_value(payload.get("state")?.clone()).ok()?;
    let mark = payload.get("pendingKey").and_then(Value::as_str).map(|k| {
        let due_at = payload
            .get("pendingDueAt")
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<jiff::Timestamp>().ok());
        (k.to_string(), Mark { due_at })
    });
    Some(Restored { state, mark })
}
