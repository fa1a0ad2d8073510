//! `startTask({budget: {maxTokens}})`: the task's own token budget per run (input + output over
//! its model calls), issue 19 §2. RuntimeCore applies the lowest of the runtime's limit, the
//! app's budget (`model.budget.<app>`, set by the user) and this one, so a task can only lower
//! its app's budget, never lift it; a run over it ends `error_max_budget`. Anything but an
//! object with a whole `maxTokens` in `1..=MAX_TOKEN_BUDGET` is `APP_E900`
//! `agent.invalid_budget`.

use serde_json::Value;

use super::err;
use crate::foundation::budget_keys::MAX_TOKEN_BUDGET;
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{Allowed, CallError};

/// The field of `budget` this host reads (call arguments, not a manifest key).
const MAX_TOKENS: &str = "maxTokens";

/// The task's budget in tokens, if it names one.
pub(super) fn parse(a: &Allowed, budget: Option<&Value>) -> Result<Option<u64>, CallError> {
    let bad = || {
        err(
            a,
            ErrorCode::InvalidArgument,
            &format!(
                "args.budget must be {{maxTokens}} with a whole number of tokens from 1 to {MAX_TOKEN_BUDGET}"
            ),
            Some("agent.invalid_budget"),
        )
    };
    let o = match budget {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(o)) => o,
        Some(_) => return Err(bad()),
    };
    if o.keys().any(|k| k != MAX_TOKENS) {
        return Err(bad());
    }
    match o.get(MAX_TOKENS) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=MAX_TOKEN_BUDGET).contains(n))
            .map(Some)
            .ok_or_else(bad),
    }
}
