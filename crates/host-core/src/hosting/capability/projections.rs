//! The platform projections of issue 19 §2, transport-free: what `lime.modelSettings.get`,
//! `lime.capabilities.list` and `lime.workspace.get` answer. Each is a read of host facts
//! re-derived on the call (the store, the choke point's own decision table), never a copy kept
//! by the transport.
//!
//! `lime.modelSettings` carries the model's name, provider kind, setup status, the calling
//! app's token limits and the setup action, and NEVER the API key, its secret-store ref, the
//! secret store's location or the endpoint URL (a URL may carry credentials or internal host
//! names): [`model_settings`] builds its answer from [`ModelSettings`]'s name only and a
//! yes/no for the key (`tests/projections.rs` scans the JSON for key material).

use serde::Serialize;
use serde_json::{json, Value};

use super::call::Caller;
use super::code::ErrorCode;
use super::decision::{decide, AskReason, Decision, DenyReason};
use super::dispatch::{gather, Allowed, CallError, SessionAnswers};
use super::facts::FactsCache;
use super::registry;
use crate::foundation::budget_keys;
use crate::foundation::profile::{HostProfile, KNOWN_CAPABILITIES};
use crate::hosting::model_settings::{self, ModelSettings};
use crate::install::store::{ActiveApp, Store};

/// `args` of a projection: absent, `null` or `{}`; anything else is `APP_E900` with the
/// capability's own cause (`modelSettings.invalid_argument`, …).
pub fn check_no_args(a: &Allowed, args: &Value) -> Result<(), CallError> {
    let ok = match args {
        Value::Null => true,
        Value::Object(o) => o.is_empty(),
        _ => false,
    };
    if ok {
        return Ok(());
    }
    let cause = match a.capability().as_str() {
        "lime.modelSettings" => "modelSettings.invalid_argument",
        "lime.capabilities" => "capabilities.invalid_argument",
        _ => "workspace.invalid_argument",
    };
    Err(CallError {
        code: ErrorCode::InvalidArgument,
        message: "this method takes no arguments".to_owned(),
        cause_code: Some(cause),
        capability: a.capability().as_str().to_owned(),
        method: a.method().as_str().to_owned(),
        retryable: false,
        details: None,
    })
}

/// The model's setup status for snapshots and `lime.modelSettings`: `ready` when a model is
/// configured in the host settings, else `needs-setup` (the rule readiness and `lime.agent`
/// use; the secret store is not asked, so a snapshot never waits on a keyring).
pub fn model_status(store: &Store) -> &'static str {
    match model_settings::load(store) {
        Ok(Some(_)) => "ready",
        Ok(None) | Err(_) => "needs-setup",
    }
}

/// `lime.modelSettings.get` for `app`.
pub fn model_settings(store: &Store, app: &str) -> Value {
    let settings: Option<ModelSettings> = model_settings::load(store).ok().flatten();
    let status = if settings.is_some() {
        "ready"
    } else {
        "needs-setup"
    };
    let app_budget = store
        .settings()
        .ok()
        .and_then(|s| budget_keys::app_budget(&s, app));
    let profile = settings.as_ref().map(|s| {
        json!({
            "provider": "openai-compatible",
            "model": s.model,
            "apiKeyConfigured": s.api_key_ref.is_some(),
        })
    });
    let setup_action = (status != "ready").then(|| {
        json!({
            "key": "model", "title": "Set up a model", "kind": "model",
            "description": "The user sets the model in the host's settings; an app never does.",
        })
    });
    json!({
        "status": status,
        "profile": profile,
        "limits": {
            "maxTokensPerTask": app_budget,
            "maxTokensPerTaskCeiling": budget_keys::MAX_TOKEN_BUDGET,
        },
        "setupAction": setup_action,
    })
}

/// The workspace facts a transport knows (the bridge: its `Environment`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceFacts {
    pub workspace_id: String,
    pub tenant_id: String,
    pub display_name: String,
    pub locale: String,
    pub timezone: String,
}

/// `lime.workspace.get`.
pub fn workspace(facts: &WorkspaceFacts) -> Value {
    serde_json::to_value(facts).unwrap_or(Value::Null)
}

/// A method's standing for the calling entry, and why when it cannot be called now.
fn standing(d: Decision) -> (&'static str, Option<&'static str>, Option<&'static str>) {
    match d {
        Decision::Allow => ("available", None, None),
        Decision::Ask(AskReason::PermissionNotGranted) => {
            ("ask", Some("not-granted"), Some("permission.not_granted"))
        }
        Decision::Ask(AskReason::PolicyConfirmation) => (
            "ask",
            Some("policy-confirmation"),
            Some("policy.confirmation"),
        ),
        Decision::Deny(r) => {
            let why = match r {
                DenyReason::CapabilityNotAvailable => "not-available",
                DenyReason::CapabilityNotDeclared => "undeclared",
                DenyReason::EntryNotReady => "not-ready",
                DenyReason::PermissionNotDeclared => "permission-undeclared",
                DenyReason::PermissionDenied => "denied",
                DenyReason::PolicyDenied => "policy",
            };
            ("blocked", Some(why), Some(r.as_str()))
        }
    }
}

/// `lime.capabilities.list`: every namespace the standard names, each with its methods'
/// standing for `caller` (the same decision table the choke point applies, with the session's
/// answers; nothing is audited or executed). A capability is `available` when one of its methods
/// is, `ask` when one would ask the user, else `blocked` with the first method's reason.
pub fn entry_capabilities(
    cache: &FactsCache,
    store: &Store,
    profile: &HostProfile,
    caller: &Caller,
    app: Option<&ActiveApp>,
    answers: &SessionAnswers,
) -> Value {
    let mut available = Vec::new();
    let mut rows = Vec::new();
    for name in KNOWN_CAPABILITIES {
        let specs: Vec<_> = registry::METHODS
            .iter()
            .filter(|s| s.capability().as_str() == *name)
            .collect();
        let mut methods = Vec::new();
        let mut decisions = Vec::new();
        if specs.is_empty() {
            let (f, _) = gather(profile, caller, name, None, app, (cache, store), answers);
            decisions.push(decide(&f));
        }
        for s in &specs {
            let (f, _) = gather(
                profile,
                caller,
                name,
                Some(*s),
                app,
                (cache, store),
                answers,
            );
            let d = decide(&f);
            let (status, reason, cause) = standing(d);
            methods.push(json!({
                "method": s.method.as_str(), "status": status,
                "reason": reason, "causeCode": cause,
            }));
            decisions.push(d);
        }
        let best = decisions
            .iter()
            .copied()
            .find(|d| *d == Decision::Allow)
            .or_else(|| {
                decisions
                    .iter()
                    .copied()
                    .find(|d| matches!(d, Decision::Ask(_)))
            })
            .or_else(|| decisions.first().copied())
            .unwrap_or(Decision::Deny(DenyReason::CapabilityNotAvailable));
        let (status, reason, cause) = standing(best);
        if status == "available" {
            available.push(*name);
        }
        let code = match best {
            Decision::Deny(r) => Some(r.app_code()),
            Decision::Allow | Decision::Ask(_) => None,
        };
        rows.push(json!({
            "capability": name, "status": status, "reason": reason, "causeCode": cause,
            "code": code, "methods": methods,
        }));
    }
    json!({
        "appId": caller.app_id,
        "entryKey": caller.entry_key,
        "available": available,
        "capabilities": rows,
    })
}
