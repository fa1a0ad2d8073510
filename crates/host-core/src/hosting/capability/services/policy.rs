//! `lime.policy.requestPermission {permission}`: the app asks, at a moment of its choosing, for
//! one of its OPTIONAL declared permissions. Already granted: answered at once. Otherwise the
//! bridge shows the same prompt a call needing it would (allow once, allow always, deny) and the
//! answer is the value: `{granted, persistence: "once" | "always" | "denied"}`. Required
//! permissions are granted by install consent and cannot be requested; undeclared ones never, nor
//! ones whose `entries` list leaves out the calling entry.

use serde_json::{json, Value};

use super::{err, Effect, Reply};
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{Allowed, CallError};
use crate::hosting::capability::method::PolicyMethod;
use crate::install::manifest::Permission;
use crate::install::store::Store;

pub(super) fn call(
    store: &Store,
    a: &Allowed,
    method: PolicyMethod,
    args: &Value,
) -> Result<Reply, CallError> {
    match method {
        PolicyMethod::RequestPermission => request_permission(store, a, args),
    }
}

fn request_permission(store: &Store, a: &Allowed, args: &Value) -> Result<Reply, CallError> {
    let permission = args
        .get("permission")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty() && p.len() <= 256)
        .ok_or_else(|| {
            err(
                a,
                ErrorCode::InvalidArgument,
                "args.permission must be the key of a declared permission",
                Some("policy.invalid_argument"),
            )
        })?;
    let app = store.active_app(a.app()).map_err(|e| {
        tracing::warn!(error = %e.message, "lime.policy cannot read the app");
        let mut out = err(
            a,
            ErrorCode::UnknownError,
            "the host could not read the app's state",
            None,
        );
        out.retryable = true;
        out
    })?;
    let declared: Vec<Permission> = app
        .manifest
        .view()
        .permissions()
        .filter(|p| p.key() == Some(permission))
        .collect();
    if declared.is_empty() {
        return Err(err(
            a,
            ErrorCode::PermissionDenied,
            "the app declares no permission with this key",
            Some("permission.not_declared"),
        ));
    }
    if declared.iter().any(|p| p.required()) {
        return Err(err(
            a,
            ErrorCode::InvalidArgument,
            "this permission is required: install consent grants it, so it cannot be requested",
            Some("policy.permission_required"),
        ));
    }
    // A permission limited to some entries (`entries: [...]`) covers only those: another entry
    // may not make the user answer for it (the prompt would name a frame it does not serve).
    let for_entry = declared.iter().any(|p| match p.entries() {
        None => true,
        Some(es) => es.iter().any(|e| e.as_str() == Some(a.entry())),
    });
    if !for_entry {
        return Err(err(
            a,
            ErrorCode::PermissionDenied,
            "this permission does not apply to the calling entry",
            Some("policy.permission_not_for_entry"),
        ));
    }
    if app.grants.contains(permission) {
        return Ok(Reply::value(
            json!({ "granted": true, "persistence": "always" }),
        ));
    }
    let reason = declared.iter().find_map(|p| p.reason()).map(str::to_owned);
    Ok(Reply {
        value: Value::Null,
        effect: Some(Effect::AskPermission {
            permission: permission.to_owned(),
            reason,
        }),
    })
}
