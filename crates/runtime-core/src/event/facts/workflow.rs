//! Workflow run facts: one stream (log session) per run. The profile has no `workflow.*` types,
//! so a run's facts use the `job.*` family (no scope ids required beyond `runId`): the run is
//! the job, each state visit an item. Every payload names its fact in `workflowFact`; a fact
//! the run machine consumes carries it, serialized, in `fact` (replay applies exactly those).

use serde_json::{json, Map, Value};

use super::draft;
use crate::event::*;
use crate::ids::RunId;
use crate::workflow::machine::{Fact, RunStatus};

/// The payload key naming a workflow fact.
pub const WORKFLOW_FACT: &str = "workflowFact";

fn body(run: &RunId, kind: EventType, name: &str, fields: Value) -> EventDraft {
    let mut m = match fields {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    m.insert(WORKFLOW_FACT.into(), json!(name));
    let scope = Scope {
        run_id: Some(run.clone()),
        ..Scope::default()
    };
    draft(scope, EventBody::Other(kind, m))
}

fn with_fact(
    run: &RunId,
    kind: EventType,
    name: &str,
    fact: &Fact,
    mut extra: Value,
) -> EventDraft {
    if let Value::Object(m) = &mut extra {
        m.insert(
            "fact".into(),
            serde_json::to_value(fact).unwrap_or(Value::Null),
        );
    }
    body(run, kind, name, extra)
}

/// What a run was started with (`job.created`): the definition is pinned in the run's record
/// so replay reads the machine it ran; authority is re-derived by the host at every call.
pub struct RunStart<'a> {
    pub app: &'a str,
    pub workflow: &'a str,
    pub definition: &'a Value,
    pub input: &'a Value,
    pub idempotency_key: Option<&'a str>,
    /// The app entry that started the run (a frame's `lime.workflow.start`), when one did;
    /// recorded only when present.
    pub started_by: Option<&'a str>,
}

/// `job.created` (`workflowFact: run_started`).
pub fn workflow_run_started(run: &RunId, s: RunStart<'_>) -> EventDraft {
    let mut extra = json!({"app": s.app, "workflow": s.workflow, "definition": s.definition,
               "input": s.input, "idempotencyKey": s.idempotency_key});
    if let Some(entry) = s.started_by {
        extra["startedBy"] = json!(entry);
    }
    body(run, EventType::JobCreated, "run_started", extra)
}

/// `job.item.started` (`step_started`): the call with this idempotency key may now happen.
pub fn workflow_step_started(
    run: &RunId,
    key: &str,
    state: &str,
    capability: &str,
    method: &str,
) -> EventDraft {
    body(
        run,
        EventType::JobItemStarted,
        "step_started",
        json!({"key": key, "state": state, "capability": capability, "method": method}),
    )
}

/// [`workflow_step_started`] appended with the step's result (one commit) rather than before
/// the call: `startedAt` is when the call began (the event's own time is the commit's).
pub fn workflow_step_started_at(
    run: &RunId,
    key: &str,
    state: &str,
    capability: &str,
    method: &str,
    started_at: &str,
) -> EventDraft {
    body(
        run,
        EventType::JobItemStarted,
        "step_started",
        json!({"key": key, "state": state, "capability": capability, "method": method,
               "startedAt": started_at}),
    )
}

/// `job.progress` (`checkpoint`): the run's whole state (`RunState`) after the fact appended
/// with it, and the key it waits for when that key's request is recorded (with its due time); replay starts from the latest one
/// (`workflow::runs::checkpoint`). Not a machine fact: it carries no `fact`.
pub fn workflow_checkpoint(
    run: &RunId,
    state: &Value,
    pending_key: Option<&str>,
    pending_due: Option<&str>,
) -> EventDraft {
    body(
        run,
        EventType::JobProgress,
        "checkpoint",
        json!({"state": state, "pendingKey": pending_key, "pendingDueAt": pending_due}),
    )
}

/// `job.item.completed` / `job.item.failed` (`step_result`): a `Succeeded`, `Failed` or
/// `TimedOut` fact of a call.
pub fn workflow_step_result(run: &RunId, fact: &Fact) -> EventDraft {
    let (kind, name) = match fact {
        Fact::Succeeded { .. } => (EventType::JobItemCompleted, "step_result"),
        Fact::TimedOut { .. } => (EventType::JobItemFailed, "timed_out"),
        _ => (EventType::JobItemFailed, "step_result"),
    };
    with_fact(run, kind, name, fact, json!({}))
}

/// `job.progress` (`retry_scheduled` / `wait_scheduled`): a timer with its due time.
pub fn workflow_timer_scheduled(run: &RunId, key: &str, retry: bool, due_at: &str) -> EventDraft {
    let name = if retry {
        "retry_scheduled"
    } else {
        "wait_scheduled"
    };
    body(
        run,
        EventType::JobProgress,
        name,
        json!({"key": key, "dueAt": due_at}),
    )
}

/// `job.progress` (`timer_fired`).
pub fn workflow_timer_fired(run: &RunId, fact: &Fact) -> EventDraft {
    with_fact(run, EventType::JobProgress, "timer_fired", fact, json!({}))
}

/// `job.progress` (`review_requested` / `input_requested` / `decision_requested`): the run
/// waits for a person; `due_at` is the deadline when the step has a timeout.
pub fn workflow_person_requested(
    run: &RunId,
    what: PersonWait,
    key: &str,
    due_at: Option<&str>,
) -> EventDraft {
    body(
        run,
        EventType::JobProgress,
        what.requested(),
        json!({"key": key, "dueAt": due_at}),
    )
}

/// `job.progress` (`review_answered` / `input_answered` / `decision_answered`), `by` the user,
/// or (an input only) by the app's own frame (`"app"`).
pub fn workflow_person_answered(
    run: &RunId,
    what: PersonWait,
    fact: &Fact,
    by_app: bool,
) -> EventDraft {
    let by = if by_app { "app" } else { "user" };
    with_fact(
        run,
        EventType::JobProgress,
        what.answered(),
        fact,
        json!({ "by": by }),
    )
}

/// What kind of answer a run waits for from a person.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PersonWait {
    Review,
    Input,
    Decision,
}

impl PersonWait {
    fn requested(self) -> &'static str {
        match self {
            PersonWait::Review => "review_requested",
            PersonWait::Input => "input_requested",
            PersonWait::Decision => "decision_requested",
        }
    }
    fn answered(self) -> &'static str {
        match self {
            PersonWait::Review => "review_answered",
            PersonWait::Input => "input_answered",
            PersonWait::Decision => "decision_answered",
        }
    }
}

/// `job.cancelled` (`cancelled`): carries the machine's `Cancelled` fact.
pub fn workflow_cancelled(run: &RunId) -> EventDraft {
    with_fact(
        run,
        EventType::JobCancelled,
        "cancelled",
        &Fact::Cancelled,
        json!({}),
    )
}

/// `job.completed` / `job.failed` (`ended`): the run's final status (a cancelled run ends with
/// its `job.cancelled`).
pub fn workflow_ended(run: &RunId, status: &RunStatus) -> EventDraft {
    let kind = match status {
        RunStatus::Succeeded { .. } => EventType::JobCompleted,
        _ => EventType::JobFailed,
    };
    body(
        run,
        kind,
        "ended",
        json!({"status": serde_json::to_value(status).unwrap_or(Value::Null)}),
    )
}
