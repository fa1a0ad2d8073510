//! Run and snapshot facts of the Agent Runtime profile: `run.status` on each transition of a
//! turn's run (an attempt), `snapshot.updated` once a turn's thread read model is final.

use super::{draft, some, RunPhase};
use crate::event::*;

/// `run.status {phase, title, detail}` for the run in `scope` (task, run and attempt ids).
/// `detail` is the failure code when the run ends otherwise than completed.
pub fn run_status(scope: Scope, phase: RunPhase, attempt: u64, detail: Option<&str>) -> EventDraft {
    draft(
        scope,
        EventBody::RunStatus(
            EventType::RunStatus,
            RunStatus {
                phase: some(phase),
                title: Some(format!("attempt {attempt}")),
                detail: detail.map(str::to_owned),
                ..Default::default()
            },
        ),
    )
}

/// `snapshot.updated {source: "thread_read_model", status}`: the turn in `scope` ended with
/// `status`, so the thread read model a client reads for it is final.
pub fn snapshot_updated(scope: Scope, status: &str) -> EventDraft {
    draft(
        scope,
        EventBody::Snapshot(
            EventType::SnapshotUpdated,
            SnapshotPayload {
                source: some("thread_read_model"),
                status: some(status),
                ..Default::default()
            },
        ),
    )
}
