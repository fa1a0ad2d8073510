//! Session, thread, turn submission and queue facts.

use super::{draft, some, QueueChange, QueueStatus, SessionStatus, SubmitStatus, ThreadStatus};
use crate::event::*;
use crate::ids::TurnId;

/// `session.created` (an idle session of `app_id`).
pub fn session_created(
    app_id: &str,
    workspace_id: Option<String>,
    business_object_ref: Option<serde_json::Value>,
) -> EventDraft {
    draft(
        Scope::default(),
        EventBody::Session(
            EventType::SessionCreated,
            SessionPayload {
                app_id: some(app_id),
                status: some(SessionStatus::Idle),
                workspace_id,
                business_object_ref,
                ..Default::default()
            },
        ),
    )
}

/// `session.updated`: what `agentSession/update` changed, and only that (a partial fact): a
/// `title` (`""` clears it) and/or `archived`.
pub fn session_updated(title: Option<String>, archived: Option<bool>) -> EventDraft {
    draft(
        Scope::default(),
        EventBody::Session(
            EventType::SessionUpdated,
            SessionPayload {
                title,
                archived,
                ..Default::default()
            },
        ),
    )
}

/// `thread.started` (idle).
pub fn thread_started(scope: Scope) -> EventDraft {
    draft(
        scope,
        EventBody::Thread(
            EventType::ThreadStarted,
            ThreadPayload {
                status: some(ThreadStatus::Idle),
                ..Default::default()
            },
        ),
    )
}

/// `thread.updated {status}`: the thread's status changed (a turn started or ended).
pub fn thread_updated(scope: Scope, status: ThreadStatus) -> EventDraft {
    draft(
        scope,
        EventBody::Thread(
            EventType::ThreadUpdated,
            ThreadPayload {
                status: some(status),
                ..Default::default()
            },
        ),
    )
}

/// What a client gave with a turn beside its text, kept in `turn.submitted` as given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnGiven {
    pub attachments: Vec<serde_json::Value>,
    pub capability_id: Option<String>,
    pub metadata: Option<serde_json::Value>,
}

/// `turn.submitted`: the turn is recorded (accepted or queued) before any work; the input is a
/// ref, never the text.
pub fn turn_submitted(
    scope: Scope,
    turn: &TurnId,
    status: SubmitStatus,
    input_chars: u64,
    structured_output: bool,
    given: &TurnGiven,
) -> EventDraft {
    draft(
        scope,
        EventBody::TurnSubmitted(
            EventType::TurnSubmitted,
            TurnSubmitted {
                input_ref: Some(format!("input://{}/user", turn.as_str())),
                source: some("agentSession/turn/start"),
                status: some(status),
                input_chars: Some(input_chars),
                structured_output: Some(structured_output),
                attachments: (!given.attachments.is_empty()).then(|| given.attachments.clone()),
                capability_id: given.capability_id.clone(),
                metadata: given.metadata.clone(),
                ..Default::default()
            },
        ),
    )
}

/// `queue.changed` for a turn added to or removed from the queue (`queue_length` after it).
pub fn queue_changed(
    scope: Scope,
    change: QueueChange,
    turn: &TurnId,
    queue_length: u64,
) -> EventDraft {
    draft(
        scope,
        EventBody::Queue(
            EventType::QueueChanged,
            QueueChanged {
                change: some(change),
                queued_turn_id: Some(turn.to_string()),
                queue_length: Some(queue_length),
                ..Default::default()
            },
        ),
    )
}

/// `queue.changed {change: restored, status: paused}`: a queue a previous process left is back,
/// waiting for `agentSession/thread/resume`.
pub fn queue_restored(scope: Scope, head: Option<&TurnId>, queue_length: u64) -> EventDraft {
    draft(
        scope,
        EventBody::Queue(
            EventType::QueueChanged,
            QueueChanged {
                change: some(QueueChange::Restored),
                queued_turn_id: head.map(|t| t.to_string()),
                queue_length: Some(queue_length),
                status: some(QueueStatus::Paused),
                reason: some("awaiting_resume"),
                ..Default::default()
            },
        ),
    )
}

/// `queue.changed {change: resumed}`: the restored queue's head starts.
pub fn queue_resumed(scope: Scope, head: &TurnId, queue_length: u64) -> EventDraft {
    draft(
        scope,
        EventBody::Queue(
            EventType::QueueChanged,
            QueueChanged {
                change: some(QueueChange::Resumed),
                queued_turn_id: Some(head.to_string()),
                queue_length: Some(queue_length),
                reason: some("agentSession/thread/resume"),
                ..Default::default()
            },
        ),
    )
}
