//! The one choke point: every capability call, from any transport, goes through [`dispatch`].
//!
//! The facts come from the store (never from the message or from mount time): the app's active
//! version and manifest, whether it is enabled, the calling entry's readiness, the user's
//! grants. [`dispatch_with`] reuses them from a [`FactsCache`] until the store changes (any
//! commit, from any process), so a grant, revoke, disable or update takes effect on the next
//! call; [`dispatch`] reads them afresh. [`decide`](super::decision::decide) turns them into
//! Allow / Ask / Deny; every decision is written to the audit log with the app, version, entry,
//! capability, method, decision, reason, request id, trace id and package provenance. Only an
//! Allow mints the [`Allowed`] proof that the service functions require, so no service can be
//! reached around this function.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{json, Value};

use super::call::{Call, Caller};
use super::code::ErrorCode;
use super::decision::{
    decide, AskReason, CallFacts, Decision, DenyReason, EntryState, GrantState, PermissionFact,
};
use super::facts::FactsCache;
use super::method::{ArtifactsMethod, Capability, Method};
use super::registry::{self, MethodSpec};
use crate::foundation::profile::HostProfile;
use crate::install::manifest::Permission;
use crate::install::readiness::Outcome;
use crate::install::store::{ActiveApp, Store};

/// The proof that one call was allowed. Its fields are private and it can only be made here.
#[derive(Debug, Clone)]
pub struct Allowed {
    app: String,
    version: String,
    entry: String,
    method: Method,
    request_id: String,
    trace_id: String,
    package_hash: String,
    manifest_hash: String,
    /// The store facts the call was allowed on (the app's active version and manifest).
    facts: Arc<ActiveApp>,
    /// Whether the same entry may read the app's artifacts right now (`lime.artifacts` declared,
    /// its `artifact` permission granted, not denied in this session; an allow-once answer is
    /// not counted). Services that would otherwise show artifact data (evidence export and
    /// record) check it.
    artifacts_readable: bool,
    /// The call's `options.idempotencyKey` (a non-string key is kept as `""`, which the
    /// services that honour keys refuse as invalid).
    idempotency_key: Option<String>,
}

impl Allowed {
    pub fn app(&self) -> &str {
        &self.app
    }
    pub fn version(&self) -> &str {
        &self.version
    }
    pub fn entry(&self) -> &str {
        &self.entry
    }
    pub fn capability(&self) -> Capability {
        self.method.capability()
    }
    pub fn method(&self) -> Method {
        self.method
    }
    /// The call's idempotency key, if it gave one (`lime.artifacts.create` and
    /// `lime.evidence.record` honour it: `runtime_core::idempotency`).
    pub fn idempotency_key(&self) -> Option<&str> {
        self.idempotency_key.as_deref()
    }
    pub fn request_id(&self) -> &str {
        &self.request_id
    }
    pub fn trace_id(&self) -> &str {
        &self.trace_id
    }
    /// The calling app's manifest, as the store had it when the call was allowed (never from
    /// the message).
    pub fn manifest(&self) -> &crate::install::manifest::Manifest {
        &self.facts.manifest
    }
    /// See the field: whether this call may show the app's artifact data.
    pub fn artifacts_readable(&self) -> bool {
        self.artifacts_readable
    }
    /// Package provenance to stamp on anything the call creates.
    pub fn provenance(&self) -> Value {
        json!({
            "appId": self.app, "appVersion": self.version, "entryKey": self.entry,
            "packageHash": self.package_hash, "manifestHash": self.manifest_hash,
            "traceId": self.trace_id,
        })
    }
}

/// A `host:error` payload.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallError {
    pub code: ErrorCode,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause_code: Option<&'static str>,
    pub capability: String,
    pub method: String,
    pub retryable: bool,
    /// Structured facts about the refusal (`{"binding": "knowledge"}` for
    /// `agent.binding_unsupported`); absent for most errors. (Boxed: a `CallError` is the `Err`
    /// of every call, kept small.)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Box<Value>>,
}

/// A question for the user, turned into a prompt by the shell.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionQuestion {
    pub app_id: String,
    pub entry_key: String,
    pub capability: String,
    pub method: String,
    /// The permission asked for (`None` for a policy confirmation).
    pub permission: Option<String>,
    pub reason: Option<String>,
    pub ask_reason: AskReason,
}

/// What the dispatcher concluded.
#[derive(Debug, Clone)]
pub enum Verdict {
    Allowed(Allowed),
    Ask(PermissionQuestion),
    Denied(CallError),
}

/// The key of a policy confirmation for `method` in [`SessionAnswers::confirmed_once`].
pub fn confirmation_key(method: Method) -> String {
    format!("{}.{}", method.capability(), method.as_str())
}

/// Per-session answers the user gave to prompts (allow once, deny): kept by the caller for the
/// life of a mount, never persisted. "Allow always" is a grant in the store instead.
#[derive(Debug, Clone, Default)]
pub struct SessionAnswers {
    /// Permissions allowed for exactly one next call.
    pub allow_once: BTreeSet<String>,
    /// Permissions the user denied for this mount.
    pub denied: BTreeSet<String>,
    /// Policy confirmations given for one call (`capability.method`).
    pub confirmed_once: BTreeSet<String>,
}

/// Decides one call and records the decision, reading every fact from the store. `Verdict::Allowed`
/// consumes a matching allow-once answer.
pub fn dispatch(
    store: &Store,
    profile: &HostProfile,
    caller: &Caller,
    call: &Call,
    trace_id: &str,
    answers: &mut SessionAnswers,
) -> Verdict {
    dispatch_with(
        &FactsCache::new(),
        store,
        profile,
        caller,
        call,
        trace_id,
        answers,
    )
}

/// [`dispatch`] with the store facts taken from `cache` while the store is unchanged. The cache
/// must only ever be used with one `profile`.
pub fn dispatch_with(
    cache: &FactsCache,
    store: &Store,
    profile: &HostProfile,
    caller: &Caller,
    call: &Call,
    trace_id: &str,
    answers: &mut SessionAnswers,
) -> Verdict {
    let spec = registry::lookup(&call.capability, &call.method);
    let stamp = cache.validate(store);
    let app = cache.active_app(store, &caller.app_id).ok();
    let facts = gather(
        profile,
        caller,
        &call.capability,
        spec,
        app.as_deref(),
        (cache, store),
        answers,
    );
    let (facts, permission) = facts;
    let decision = decide(&facts);
    let (decision_str, reason_str) = match decision {
        Decision::Allow => ("allow", None),
        Decision::Ask(r) => (
            "ask",
            Some(match r {
                AskReason::PermissionNotGranted => "permission.not_granted",
                AskReason::PolicyConfirmation => "policy.confirmation",
            }),
        ),
        Decision::Deny(r) => ("deny", Some(r.as_str())),
    };
    let version = app.as_ref().map_or(caller.version.as_str(), |a| &a.version);
    let details = json!({
        "entryKey": caller.entry_key, "capability": call.capability, "method": call.method,
        "decision": decision_str, "reason": reason_str, "requestId": call.request_id,
        "traceId": trace_id, "mountId": caller.session_id,
        "packageHash": app.as_ref().map(|a| a.package_hash.as_str()),
        "manifestHash": app.as_ref().map(|a| a.manifest_hash.as_str()),
        "permission": permission,
    });
    // The bridge's connection commits audit records with synchronous=NORMAL; the record of an
    // allowed call whose effect is fsynced is fsynced too (`store::durability`).
    let audit = if decision == Decision::Allow && spec.is_some_and(|s| s.fsynced_effect) {
        Store::record_audit_durably
    } else {
        Store::record_audit
    };
    if let Err(e) = audit(
        store,
        "capability.call",
        Some(&caller.app_id),
        Some(version),
        &details,
    ) {
        // A decision that cannot be recorded is not executed.
        tracing::warn!(error = %e.message, "cannot write the audit log; refusing the call");
        return Verdict::Denied(error(
            call,
            ErrorCode::UnknownError,
            "the host could not record this call",
            None,
            true,
        ));
    }
    if let Some(stamp) = stamp {
        // The audit record changes no fact: the cached ones stay valid.
        cache.after_own_write(store, stamp);
    }
    match (decision, app, spec) {
        (Decision::Allow, Some(app), Some(spec)) => {
            let artifacts_readable = match spec.capability() {
                Capability::Artifacts => true,
                Capability::Evidence => {
                    artifacts_readable(profile, caller, &app, (cache, store), answers)
                }
                Capability::Ui
                | Capability::Storage
                | Capability::Secrets
                | Capability::Events
                | Capability::Policy
                | Capability::Agent
                | Capability::Files
                | Capability::Tools
                | Capability::Workflow
                | Capability::Knowledge
                | Capability::ModelSettings
                | Capability::Capabilities
                | Capability::Workspace
                | Capability::Services => false,
            };
            if let Some(p) = &permission {
                answers.allow_once.remove(p);
            }
            answers
                .confirmed_once
                .remove(&confirmation_key(spec.method));
            Verdict::Allowed(Allowed {
                app: app.name.clone(),
                version: app.version.clone(),
                entry: caller.entry_key.clone(),
                method: spec.method,
                request_id: call.request_id.clone(),
                trace_id: trace_id.to_owned(),
                package_hash: app.package_hash.clone(),
                manifest_hash: app.manifest_hash.clone(),
                facts: app,
                artifacts_readable,
                idempotency_key: call
                    .options
                    .get("idempotencyKey")
                    .map(|k| k.as_str().map(str::to_owned).unwrap_or_default()),
            })
        }
        // An allow needs an app and an implemented method (`decide` denies without them).
        (Decision::Allow, _, _) => Verdict::Denied(error(
            call,
            DenyReason::EntryNotReady.app_code(),
            "the app is not installed",
            Some(DenyReason::EntryNotReady.as_str()),
            false,
        )),
        (Decision::Ask(ask_reason), app, _) => {
            let reason = app
                .as_ref()
                .zip(permission.as_ref())
                .and_then(|(a, p)| permission_reason(a, p));
            Verdict::Ask(PermissionQuestion {
                app_id: caller.app_id.clone(),
                entry_key: caller.entry_key.clone(),
                capability: call.capability.clone(),
                method: call.method.clone(),
                permission,
                reason,
                ask_reason,
            })
        }
        (Decision::Deny(DenyReason::EntryNotReady), Some(app), _) => Verdict::Denied(error(
            call,
            DenyReason::EntryNotReady.app_code(),
            &not_ready_message(store, profile, &app, caller),
            Some(DenyReason::EntryNotReady.as_str()),
            false,
        )),
        (Decision::Deny(r), _, _) => Verdict::Denied(error(
            call,
            r.app_code(),
            &deny_message(r, call),
            Some(r.as_str()),
            false,
        )),
    }
}

/// Why the caller's entry cannot run, for a person (a frame's error, a workflow step's
/// decision, the CLI): disabled, a stale version, or the entry's readiness with the checks that
/// keep it from `ready` (kind and key) and the setup the user can do. It says no more than the
/// frame's snapshot already does (status, check keys, setup titles): a check's message can name
/// host paths (the admin policy file, a bound folder), so it is never sent to the app. Computed
/// only on this refusal.
fn not_ready_message(
    store: &Store,
    profile: &HostProfile,
    app: &ActiveApp,
    caller: &Caller,
) -> String {
    let key = caller.entry_key.as_str();
    if !app.enabled {
        return format!("{} is disabled: enable it to run entry {key}", app.name);
    }
    if app.version != caller.version {
        return format!(
            "entry {key} is of version {}, but {} {} is active now: open it again",
            caller.version, app.name, app.version
        );
    }
    let Ok(r) = store.readiness(&app.name, profile) else {
        return format!("entry {key} is not ready to run");
    };
    let status = r
        .entries
        .iter()
        .find(|e| e.entry_key == key)
        .map_or(r.status, |e| e.status);
    let mut why: Vec<String> = Vec::new();
    let own = format!("{key}:");
    // An app-wide check and the entry's own (`<entry>:<key>`) often name the same: each once.
    for c in r.checks.iter().filter(|c| {
        matches!(
            c.outcome,
            Outcome::NeedsSetup | Outcome::Blocked | Outcome::Unknown
        ) && c.entry.as_deref().is_none_or(|e| e == key)
    }) {
        let item = format!("{} {}", c.kind, c.key.strip_prefix(&own).unwrap_or(&c.key));
        if why.len() < 3 && !why.contains(&item) {
            why.push(item);
        }
    }
    let mut text = format!("entry {key} is {}", status.as_str());
    if !why.is_empty() {
        text.push_str(&format!(": not ready: {}", why.join(", ")));
    }
    if !r.setup_actions.is_empty() {
        let setup: Vec<&str> = r.setup_actions.iter().map(|a| a.title.as_str()).collect();
        text.push_str(&format!(" (setup: {})", setup.join(", ")));
    }
    text
}

/// Whether `lime.artifacts.read` from this mount would be allowed without asking: the same
/// decision table, with the session's denials but without its allow-once answers (those are
/// for exactly one artifacts call). Not audited: it executes nothing by itself.
fn artifacts_readable(
    profile: &HostProfile,
    caller: &Caller,
    app: &ActiveApp,
    facts: (&FactsCache, &Store),
    answers: &SessionAnswers,
) -> bool {
    let read = Method::Artifacts(ArtifactsMethod::Read);
    let only_denials = SessionAnswers {
        denied: answers.denied.clone(),
        ..SessionAnswers::default()
    };
    let (facts, _) = gather(
        profile,
        caller,
        read.capability().as_str(),
        registry::spec(read),
        Some(app),
        facts,
        &only_denials,
    );
    decide(&facts) == Decision::Allow
}

/// Turns an unanswered or refused prompt into the call's `host:error`.
pub fn prompt_refused(call: &Call) -> CallError {
    error(
        call,
        ErrorCode::PermissionDenied,
        "the user did not allow this",
        Some(DenyReason::PermissionDenied.as_str()),
        false,
    )
}

fn error(
    call: &Call,
    code: ErrorCode,
    message: &str,
    cause: Option<&'static str>,
    retryable: bool,
) -> CallError {
    CallError {
        code,
        message: message.to_owned(),
        cause_code: cause,
        capability: call.capability.clone(),
        method: call.method.clone(),
        retryable,
        details: None,
    }
}

fn deny_message(r: DenyReason, call: &Call) -> String {
    let what = format!("{}.{}", call.capability, call.method);
    match r {
        DenyReason::CapabilityNotAvailable => format!("{what} is not available in this host"),
        DenyReason::CapabilityNotDeclared => {
            format!(
                "the app does not declare {} in its manifest",
                call.capability
            )
        }
        DenyReason::EntryNotReady => "this entry is not ready to run".to_owned(), // no app
        DenyReason::PermissionNotDeclared => {
            format!("the app declares no permission that covers {what}")
        }
        DenyReason::PermissionDenied => format!("the user denied {what}"),
        DenyReason::PolicyDenied => format!("host policy does not allow {what}"),
    }
}

/// The facts of a call of `capability` (the name as called) with `spec` (`None`: not
/// implemented here) from `caller`.
pub(super) fn gather(
    profile: &HostProfile,
    caller: &Caller,
    capability: &str,
    spec: Option<&MethodSpec>,
    app: Option<&ActiveApp>,
    (cache, store): (&FactsCache, &Store),
    answers: &SessionAnswers,
) -> (CallFacts, Option<String>) {
    let available = spec.is_some()
        && profile
            .capabilities
            .get(capability)
            .is_some_and(|c| c.available);
    let Some(app) = app else {
        return (
            CallFacts {
                available,
                declared: false,
                entry: EntryState::Disabled,
                permission: PermissionFact::Undeclared,
                policy: super::decision::PolicyVerdict::Deny,
            },
            None,
        );
    };
    let declared = declares_capability(app, &caller.entry_key, capability);
    let entry = if !app.enabled {
        EntryState::Disabled
    } else if app.version != caller.version {
        // The mount shows a version that is no longer active (update or rollback): stale.
        EntryState::Blocked
    } else {
        cache.entry_state(store, profile, app, &caller.entry_key)
    };
    let (permission, key) = match spec.and_then(|s| s.scope) {
        None => (PermissionFact::NotNeeded, None),
        Some(scope) => match covering_permission(app, &caller.entry_key, scope) {
            None => (PermissionFact::Undeclared, None),
            Some(key) => {
                let state = if answers.denied.contains(&key) {
                    GrantState::Denied
                } else if app.grants.contains(&key) || answers.allow_once.contains(&key) {
                    GrantState::Granted
                } else {
                    GrantState::NotGranted
                };
                (PermissionFact::Declared(state), Some(key))
            }
        },
    };
    let mut policy = spec.map_or(super::decision::PolicyVerdict::Deny, |s| s.policy);
    if policy == super::decision::PolicyVerdict::Ask
        && spec.is_some_and(|s| answers.confirmed_once.contains(&confirmation_key(s.method)))
    {
        policy = super::decision::PolicyVerdict::Allow;
    }
    (
        CallFacts {
            available,
            declared,
            entry,
            permission,
            policy,
        },
        key,
    )
}

/// `requires.capabilities` (list or map) or the entry's `requiredCapabilities`.
fn declares_capability(app: &ActiveApp, entry_key: &str, capability: &str) -> bool {
    let view = app.manifest.view();
    // A name only in the top-level `capabilities[]` is declared as optional (standard §7.2):
    // readiness degrades without it instead of blocking.
    if let Some(service) = entry_key.strip_prefix(super::facts::SERVICE_CALLER_PREFIX) {
        // A backend service: what the app declares and what the service itself lists.
        return view.requires().has_capability(capability)
            || view
                .services()
                .filter(|s| s.key() == Some(service))
                .any(|s| s.required_capabilities().any(|c| c == capability));
    }
    view.requires().has_capability(capability)
        || view.declared_capabilities().any(|c| c == capability)
        || view
            .entry(entry_key)
            .is_some_and(|e| e.required_capabilities().any(|c| c == capability))
}

/// The first declared permission with `scope` that applies to the entry (no `entries` list, or
/// one naming it), preferring one the entry lists in its own `permissions`.
fn covering_permission(app: &ActiveApp, entry_key: &str, scope: &str) -> Option<String> {
    let view = app.manifest.view();
    let listed: Vec<&str> = view
        .entry(entry_key)
        .map(|e| e.permissions().collect())
        .unwrap_or_default();
    let candidates: Vec<Permission> = view
        .permissions()
        .filter(|p| p.scope() == Some(scope))
        .filter(|p| match p.entries() {
            None => true,
            Some(es) => es.iter().any(|e| e.as_str() == Some(entry_key)),
        })
        .collect();
    candidates
        .iter()
        .find(|p| p.key().is_some_and(|k| listed.contains(&k)))
        .or_else(|| candidates.first())
        .and_then(|p| p.key())
        .map(str::to_owned)
}

/// The `reason` of the first permission declared with `key`.
fn permission_reason(app: &ActiveApp, key: &str) -> Option<String> {
    app.manifest
        .view()
        .permission(key)
        .and_then(Permission::reason)
        .map(str::to_owned)
}
