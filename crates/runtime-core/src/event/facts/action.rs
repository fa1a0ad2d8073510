//! Action (approval) facts: a risky tool call asks, an answer or the runtime resolves.

use serde_json::{json, Value};

use super::{draft, some, ActionStatus, Decision, GrantScope};
use crate::event::*;

/// Where an answer to an action comes from.
pub const RESPOND_SOURCE: &str = "agentSession/action/respond";

/// `action.required` (pending): may `tool_name` run with `arguments`?
pub fn tool_confirmation_required(scope: Scope, tool_name: &str, arguments: Value) -> EventDraft {
    draft(
        scope,
        EventBody::ActionRequired(
            EventType::ActionRequired,
            ActionRequired {
                action_type: some("tool_confirmation"),
                tool_name: some(tool_name),
                decision_kind: some("allow_or_deny"),
                prompt: Some(format!("Allow {tool_name} to run?")),
                arguments: Some(arguments),
                available_decisions: Some(
                    Decision::ALL.iter().map(|d| d.as_str().into()).collect(),
                ),
                status: some(ActionStatus::Pending),
                ..Default::default()
            },
        ),
    )
}

/// `action.resolved` by an answer: `decision` on the call of `tool_name`
/// (`allow_for_session` covers the session's later calls of it).
pub fn action_answered(scope: Scope, decision: Decision, tool_name: String) -> EventDraft {
    let grant = match decision {
        Decision::AllowForSession => GrantScope::Session,
        _ => GrantScope::Call,
    };
    draft(
        scope,
        EventBody::ActionResolved(
            EventType::ActionResolved,
            ActionResolved {
                decision: some(decision),
                confirmed: Some(decision.allows()),
                status: some(ActionStatus::Resolved),
                source: some(RESPOND_SOURCE),
                tool_name: Some(tool_name),
                scope: some(grant),
                ..Default::default()
            },
        ),
    )
}

/// `action.resolved {updatedInput: true}`: allowed once, with the answer's arguments.
pub fn action_answered_with_input(scope: Scope, tool_name: String) -> EventDraft {
    draft(
        scope,
        EventBody::ActionResolved(
            EventType::ActionResolved,
            ActionResolved {
                decision: some(Decision::AllowOnce),
                confirmed: Some(true),
                status: some(ActionStatus::Resolved),
                source: some(RESPOND_SOURCE),
                tool_name: Some(tool_name),
                scope: some(GrantScope::Call),
                extra: [("updatedInput".to_owned(), json!(true))]
                    .into_iter()
                    .collect(),
            },
        ),
    )
}

/// `action.resolved {decision: cancel}` by the runtime, not by an answer: `Cancelled` when its
/// turn ends, `Expired` when recovery finds it open after a restart.
pub fn action_closed_by_runtime(scope: Scope, status: ActionStatus) -> EventDraft {
    let source = match status {
        ActionStatus::Expired => "runtime_recovery",
        _ => "runtime",
    };
    draft(
        scope,
        EventBody::ActionResolved(
            EventType::ActionResolved,
            ActionResolved {
                decision: some(Decision::Cancel),
                confirmed: Some(false),
                status: some(status),
                source: some(source),
                ..Default::default()
            },
        ),
    )
}
