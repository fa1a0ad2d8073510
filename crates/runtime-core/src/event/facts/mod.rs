//! One typed constructor per runtime fact RuntimeCore records: the only place outside `event/`
//! that builds an [`EventDraft`] is a call to one of these (a test scans the sources). The turn
//! machine, the runtime service and recovery all use them, so a fact has one shape whoever
//! records it. Statuses and other closed vocabularies are the enums of [`status`]; the
//! payloads keep wire strings, so the log's bytes are what they were before the enums.
//!
//! Families: [`session`] (session, thread, submission, queue), [`turn`] (turn and task
//! lifecycle, routing), [`model`] (model requests and streams), [`tool`] (tool calls, their
//! output and permission), [`action`] (approvals), [`recovery`] (what a restart closes), [`workflow`] (durable workflow runs), [`usage`] (tokens per model call, budgets),
//! [`run`] (`run.status` per run transition, `snapshot.updated` when a turn's read model is final).

mod action;
mod model;
mod recovery;
mod run;
mod session;
pub mod status;
mod tool;
mod turn;
mod usage;
mod workflow;

pub use action::*;
pub use model::*;
pub use recovery::*;
pub use run::*;
pub use session::*;
pub use status::*;
pub use tool::*;
pub use turn::*;
pub use usage::*;
pub use workflow::*;

use super::{EventBody, EventDraft, Scope};

fn draft(scope: Scope, body: EventBody) -> EventDraft {
    EventDraft::new(scope, body)
}

fn some(s: impl Into<String>) -> Option<String> {
    Some(s.into())
}

#[cfg(test)]
mod tests;
