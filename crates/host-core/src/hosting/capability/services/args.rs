//! The argument helpers the artifacts, evidence and agent services (and the standard's call
//! shapes) share: an object with only the allowed keys, string fields, and `APP_E900` with the
//! calling capability's own cause.

use serde_json::{Map, Value};

use super::err;
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{Allowed, CallError};
use crate::hosting::capability::method::Capability;

/// `APP_E900` with the calling capability's own cause (`artifacts.`, `evidence.`, `agent.`
/// `invalid_argument`): the argument helpers below are shared by those services.
pub(super) fn invalid(a: &Allowed, message: &str) -> CallError {
    let cause = match a.capability() {
        Capability::Evidence => "evidence.invalid_argument",
        Capability::Agent => "agent.invalid_argument",
        Capability::Files => "files.invalid_argument",
        Capability::Tools => "tools.invalid",
        Capability::Workflow => "workflow.invalid_argument",
        Capability::Knowledge => "knowledge.invalid_argument",
        Capability::ModelSettings => "modelSettings.invalid_argument",
        Capability::Capabilities => "capabilities.invalid_argument",
        Capability::Workspace => "workspace.invalid_argument",
        Capability::Services => "services.invalid_argument",
        Capability::Artifacts
        | Capability::Ui
        | Capability::Storage
        | Capability::Secrets
        | Capability::Events
        | Capability::Policy => "artifacts.invalid_argument",
    };
    err(a, ErrorCode::InvalidArgument, message, Some(cause))
}

/// `args` as an object with only `allowed` keys (`null`/absent args = no keys).
pub(super) fn object<'v>(
    a: &Allowed,
    args: &'v Value,
    allowed: &[&str],
) -> Result<&'v Map<String, Value>, CallError> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    let o = match args {
        Value::Null => EMPTY.get_or_init(Map::new),
        Value::Object(o) => o,
        _ => return Err(invalid(a, "args must be an object")),
    };
    if let Some(k) = o.keys().find(|k| !allowed.contains(&k.as_str())) {
        let shown: String = k.chars().take(64).collect();
        return Err(invalid(a, &format!("unknown argument {shown:?}")));
    }
    Ok(o)
}

pub(super) fn opt_str<'v>(
    a: &Allowed,
    o: &'v Map<String, Value>,
    key: &str,
) -> Result<Option<&'v str>, CallError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(invalid(a, &format!("args.{key} must be a string"))),
    }
}

pub(super) fn req_str<'v>(
    a: &Allowed,
    o: &'v Map<String, Value>,
    key: &str,
) -> Result<&'v str, CallError> {
    opt_str(a, o, key)?.ok_or_else(|| invalid(a, &format!("args.{key} is required")))
}
