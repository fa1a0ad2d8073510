//! Recovery facts: what a restart closes in a turn the previous process left running, and a
//! queued turn whose input is gone.

use super::{draft, some, SnapshotStatus, TaskStatus, TurnEnd};
use crate::event::*;
use crate::ids::TurnId;

/// The `source` / `reason` of facts recovery records.
pub const RECOVERY_SOURCE: &str = "runtime_recovery";
/// The code of what a restart interrupted.
pub const INTERRUPTED: &str = "interrupted_by_restart";

/// `snapshot.repaired`: `turn` was interrupted by a restart and is closed below.
pub fn snapshot_repaired(scope: Scope, turn: &TurnId) -> EventDraft {
    draft(
        scope,
        EventBody::Snapshot(
            EventType::SnapshotRepaired,
            SnapshotPayload {
                source: some(RECOVERY_SOURCE),
                reason: some(INTERRUPTED),
                status: some(SnapshotStatus::Repaired),
                repaired_turn_ids: Some(vec![turn.as_str().into()]),
                ..Default::default()
            },
        ),
    )
}

/// `tool.failed` for a tool that was running when the runtime stopped.
pub fn tool_interrupted(scope: Scope) -> EventDraft {
    super::tool_failed(scope, INTERRUPTED, "the runtime stopped while the tool ran")
}

/// `task.attempt.failed` (retryable) for the run a restart interrupted.
pub fn attempt_interrupted(scope: Scope) -> EventDraft {
    super::attempt_failed(scope, true, INTERRUPTED)
}

/// `task.failed` for the task a restart interrupted.
pub fn task_interrupted(scope: Scope) -> EventDraft {
    draft(
        scope,
        EventBody::Task(
            EventType::TaskFailed,
            TaskPayload {
                status: some(TaskStatus::Failed),
                code: some(INTERRUPTED),
                ..Default::default()
            },
        ),
    )
}

/// `turn.failed` (retryable) for a turn a restart interrupted.
pub fn turn_interrupted(scope: Scope) -> EventDraft {
    draft(
        scope,
        EventBody::TurnFailed(
            EventType::TurnFailed,
            TurnFailed {
                status: some(TurnEnd::Failed),
                code: some(INTERRUPTED),
                message: some("the runtime stopped before the turn finished"),
                retryable: Some(true),
                reason: some(RECOVERY_SOURCE),
                ..Default::default()
            },
        ),
    )
}

/// `turn.failed {code: input_unavailable}` for a queued turn whose input was not recorded.
pub fn queued_input_unavailable(scope: Scope) -> EventDraft {
    draft(
        scope,
        EventBody::TurnFailed(
            EventType::TurnFailed,
            TurnFailed {
                status: some(TurnEnd::Failed),
                code: some("input_unavailable"),
                message: some("the queued turn's input was not recorded"),
                reason: some(RECOVERY_SOURCE),
                ..Default::default()
            },
        ),
    )
}
