//! Who may answer a pending action (ARCHITECTURE.md, "Approval belongs to the user"): an app
//! may reject what its task waits on, never approve it, allow it for the session or rewrite the
//! tool's input; only the host's user does (the host-drawn prompt, the Tasks page). The rule is
//! re-derived here, from the runtime's own record of the pending action, never from the request.

use crate::read_model::PendingAction;

use super::{AgentTaskError, Response};

/// Who answers a pending action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Responder {
    /// The app that owns the task (`lime.agent.respondAction` through the bridge).
    App,
    /// The host's user, through a prompt the host draws (`task_respond`).
    User,
}

/// Action kinds an app may approve or answer itself. None today: every action the runtime raises
/// is a risky tool's confirmation (`tool_confirmation`, raised only for a tool whose spec is
/// `risky`, turn/machine/), and a kind not listed here (or none) is the user's.
pub const APP_ANSWERABLE_ACTIONS: &[&str] = &[];

/// Whether only the user may approve `pending` (fails closed on an unknown kind).
pub fn user_only(pending: &PendingAction) -> bool {
    !pending
        .action_type
        .as_deref()
        .is_some_and(|kind| APP_ANSWERABLE_ACTIONS.contains(&kind))
}

/// Refuses what `by` may not answer to `pending`: an app rejects a user-only action, nothing more.
pub fn check(
    pending: &PendingAction,
    response: &Response,
    by: Responder,
) -> Result<(), AgentTaskError> {
    if by == Responder::User || !user_only(pending) {
        return Ok(());
    }
    match response {
        Response::Reject => Ok(()),
        Response::Answer(_) => Err(AgentTaskError::UserOnly(UserOnly::UpdatedInput)),
        Response::Approve | Response::ApproveForSession => {
            Err(AgentTaskError::UserOnly(UserOnly::Approval))
        }
    }
}

/// Why an app's answer was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserOnly {
    /// `approve` (once or for the session) or `answer`: only the user approves.
    Approval,
    /// `updatedInput`: only the user may change what a risky tool runs with.
    UpdatedInput,
}

impl UserOnly {
    /// The stable reason (the bridge prefixes `agent.`).
    pub fn code(self) -> &'static str {
        match self {
            UserOnly::Approval => "approval_requires_user",
            UserOnly::UpdatedInput => "updated_input_unsupported",
        }
    }
}
