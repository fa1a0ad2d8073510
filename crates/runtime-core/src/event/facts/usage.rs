//! Usage facts: what one model call cost (`cost.recorded`), so per-task and per-app usage is a
//! fold over the log and a token budget is enforced from recorded facts.

use super::{draft, some};
use crate::event::*;

/// What `cost.recorded` says about one model call.
#[derive(Clone, Debug, PartialEq)]
pub struct UsageFacts {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Tokens the turn used so far, this call included.
    pub used_tokens: u64,
    /// The turn's token budget, when it has one.
    pub max_tokens: Option<u64>,
    /// The price of the call, when the provider reported one.
    pub cost_usd: Option<f64>,
}

/// `cost.recorded {kind: "tokens", status: "within_budget" | "over_budget" | "unbudgeted"}`.
pub fn usage_recorded(scope: Scope, u: UsageFacts) -> EventDraft {
    let status = match u.max_tokens {
        None => "unbudgeted",
        Some(max) if u.used_tokens > max => "over_budget",
        Some(_) => "within_budget",
    };
    draft(
        scope,
        EventBody::Limit(
            EventType::CostRecorded,
            Limit {
                kind: some("tokens"),
                status: some(status),
                amount: Some((u.input_tokens + u.output_tokens) as f64),
                input_tokens: Some(u.input_tokens),
                output_tokens: Some(u.output_tokens),
                used_tokens: Some(u.used_tokens),
                max_tokens: u.max_tokens,
                cost_usd: u.cost_usd,
                ..Default::default()
            },
        ),
    )
}
