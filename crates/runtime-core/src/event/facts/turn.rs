//! Turn and task lifecycle facts: one turn is one task, each execution attempt a run.

use serde_json::Value;

use super::{draft, some, AttemptStatus, TaskStatus, TurnEnd, TurnFactStatus, TurnOutcome};
use crate::event::*;
use crate::ids::RunId;

/// What `agentSession/turn/cancel` records as the reason of a cancellation.
pub const CANCEL_REASON: &str = "agentSession/turn/cancel";

/// `turn.started` (running).
pub fn turn_started(scope: Scope) -> EventDraft {
    draft(
        scope,
        EventBody::TurnStarted(
            EventType::TurnStarted,
            TurnStarted {
                status: some(TurnFactStatus::Running),
                ..Default::default()
            },
        ),
    )
}

/// `turn.completed`: with `structured` the turn's answer is that JSON value, else prose of
/// `output_chars` characters.
pub fn turn_completed(scope: Scope, output_chars: u64, structured: Option<Value>) -> EventDraft {
    let outcome = if structured.is_some() {
        TurnOutcome::StructuredOutput
    } else {
        TurnOutcome::AssistantMessage
    };
    draft(
        scope,
        EventBody::TurnCompleted(
            EventType::TurnCompleted,
            TurnCompleted {
                status: some(TurnFactStatus::Completed),
                outcome: some(outcome),
                output_chars: Some(output_chars),
                structured_output: structured,
                ..Default::default()
            },
        ),
    )
}

/// `turn.failed` that ends a started turn as failed or cancelled.
pub fn turn_failed(
    scope: Scope,
    end: TurnEnd,
    code: &str,
    message: &str,
    retryable: bool,
) -> EventDraft {
    draft(
        scope,
        EventBody::TurnFailed(
            EventType::TurnFailed,
            TurnFailed {
                status: some(end),
                code: some(code),
                message: some(message),
                retryable: Some(retryable),
                ..Default::default()
            },
        ),
    )
}

/// `turn.failed {status: cancelled}` for a turn that never started (queued or not yet begun):
/// intent and terminal at once.
pub fn turn_cancelled_unstarted(scope: Scope, message: &str) -> EventDraft {
    draft(
        scope,
        EventBody::TurnFailed(
            EventType::TurnFailed,
            TurnFailed {
                status: some(TurnEnd::Cancelled),
                code: some("cancelled"),
                message: some(message),
                reason: some(CANCEL_REASON),
                ..Default::default()
            },
        ),
    )
}

/// `task.created` (accepted) for a turn's task.
pub fn task_created(scope: Scope) -> EventDraft {
    draft(
        scope,
        EventBody::Task(
            EventType::TaskCreated,
            TaskPayload {
                status: some(TaskStatus::Accepted),
                title: some("turn"),
                ..Default::default()
            },
        ),
    )
}

/// `task.started` (running).
pub fn task_started(scope: Scope) -> EventDraft {
    task(scope, EventType::TaskStarted, TaskStatus::Running)
}

/// `task.completed`.
pub fn task_completed(scope: Scope) -> EventDraft {
    task(scope, EventType::TaskCompleted, TaskStatus::Completed)
}

fn task(scope: Scope, kind: EventType, status: TaskStatus) -> EventDraft {
    draft(
        scope,
        EventBody::Task(
            kind,
            TaskPayload {
                status: some(status),
                ..Default::default()
            },
        ),
    )
}

/// `task.failed` or `task.cancelled`, as the turn ends.
pub fn task_ended(scope: Scope, end: TurnEnd, code: &str, message: &str) -> EventDraft {
    let (kind, status) = match end {
        TurnEnd::Failed => (EventType::TaskFailed, TaskStatus::Failed),
        TurnEnd::Cancelled => (EventType::TaskCancelled, TaskStatus::Cancelled),
    };
    draft(
        scope,
        EventBody::Task(
            kind,
            TaskPayload {
                status: some(status),
                code: some(code),
                message: some(message),
                ..Default::default()
            },
        ),
    )
}

/// `task.cancel_requested` (cancelling): the cancel intent, before what it closes.
pub fn task_cancel_requested(scope: Scope) -> EventDraft {
    draft(
        scope,
        EventBody::Task(
            EventType::TaskCancelRequested,
            TaskPayload {
                status: some(TaskStatus::Cancelling),
                reason: some(CANCEL_REASON),
                ..Default::default()
            },
        ),
    )
}

/// `task.retrying`: `failed_run` failed retryably (`reason`: its code); attempt
/// `next_attempt_index` follows.
pub fn task_retrying(
    scope: Scope,
    failed_run: RunId,
    next_attempt_index: u64,
    reason: String,
) -> EventDraft {
    draft(
        scope,
        EventBody::Task(
            EventType::TaskRetrying,
            TaskPayload {
                status: some(TaskStatus::Retrying),
                failed_run_id: Some(failed_run.into_string()),
                next_attempt_index: Some(next_attempt_index),
                reason: Some(reason),
                ..Default::default()
            },
        ),
    )
}

/// `task.attempt.started` (running) for attempt `attempt_index`.
pub fn attempt_started(scope: Scope, attempt_index: u64) -> EventDraft {
    draft(
        scope,
        EventBody::TaskAttempt(
            EventType::TaskAttemptStarted,
            TaskAttemptPayload {
                status: some(AttemptStatus::Running),
                attempt_index: Some(attempt_index),
                ..Default::default()
            },
        ),
    )
}

/// `task.attempt.completed`.
pub fn attempt_completed(scope: Scope) -> EventDraft {
    draft(
        scope,
        EventBody::TaskAttempt(
            EventType::TaskAttemptCompleted,
            TaskAttemptPayload {
                status: some(AttemptStatus::Completed),
                ..Default::default()
            },
        ),
    )
}

/// `task.attempt.failed` that ends the turn's last run (`failure_category`: the failure's code,
/// or `cancelled`).
pub fn attempt_failed(scope: Scope, retryable: bool, failure_category: &str) -> EventDraft {
    draft(
        scope,
        EventBody::TaskAttempt(
            EventType::TaskAttemptFailed,
            TaskAttemptPayload {
                status: some(AttemptStatus::Failed),
                retryable: Some(retryable),
                failure_category: some(failure_category),
                ..Default::default()
            },
        ),
    )
}

/// `task.attempt.failed` of a run a retryable provider failure ended; a new run follows
/// automatically.
pub fn attempt_failed_retrying(scope: Scope, provider_code: &str) -> EventDraft {
    draft(
        scope,
        EventBody::TaskAttempt(
            EventType::TaskAttemptFailed,
            TaskAttemptPayload {
                status: some(AttemptStatus::Failed),
                retryable: Some(true),
                failure_category: some("provider_error"),
                message: some(provider_code),
                next_attempt_policy: some("automatic_retry"),
                ..Default::default()
            },
        ),
    )
}

/// `routing.single_candidate`: the configured model is the only candidate.
pub fn routing_single_candidate(scope: Scope, model_name: &str) -> EventDraft {
    draft(
        scope,
        EventBody::Routing(
            EventType::RoutingSingleCandidate,
            Routing {
                task_kind: some("chat"),
                candidate_count: Some(1),
                selected_model: some(model_name),
                decision_source: some("settings"),
                capability_gap: some("none"),
                ..Default::default()
            },
        ),
    )
}
