//! `lime.services`: an app's frames and workflows call their own backend services' methods
//! (`call`) and see their state (`list`), through the process's [`ServiceHost`]; the service
//! named must be declared by the calling app's installed manifest (from the `Allowed` proof),
//! so no other app can reach it.
//!
//! [`back_calls`] answers the other direction: a service's own `lime.<ns>.<method>` requests on
//! its channel. Each becomes a [`Call`] from a [`Caller`] built for the service from the store
//! (app, `service/<key>` as the entry, active version and package hashes; nothing from the
//! message) and passes [`dispatch_with`] like a frame's call: the manifest allowlist
//! (`requires.capabilities` or the service's `requiredCapabilities`), readiness, grants, policy
//! and audit apply. A service never answers an approval or a review, never asks the user
//! (a prompt needs a frame: `permission.not_granted`) and never calls `lime.services`.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::{err, Effect, Reply, ServiceWork, Services};
use crate::foundation::paths::DataDir;
use crate::foundation::profile::HostProfile;
use crate::hosting::capability::call::{Call, Caller};
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{
    dispatch_with, Allowed, CallError, SessionAnswers, Verdict,
};
use crate::hosting::capability::facts::{FactsCache, SERVICE_CALLER_PREFIX};
use crate::hosting::capability::method::ServicesMethod;
use crate::hosting::services::{
    reserved_method, BackCalls, ServiceFailure, ServiceHost, ServiceId,
};
use crate::install::store::Store;

/// Largest `params` a frame may send to its service (the channel caps a line at 1 MiB).
const MAX_PARAMS_BYTES: usize = 512 * 1024;

/// The process's service host of `store`'s data directory.
pub fn host_of(store: &Store) -> Arc<ServiceHost> {
    ServiceHost::for_data_dir(store.data_dir(), back_calls())
}

/// The answerer of every service's own `lime.*` requests.
pub fn back_calls() -> BackCalls {
    Arc::new(|data: &DataDir, id: &ServiceId| {
        let mut back = BackCall::new(data.clone(), id.clone());
        Box::new(move |method: &str, params: Value| back.answer(method, params))
    })
}

pub(super) fn call(
    services: &mut Services,
    store: &Store,
    allowed: &Allowed,
    m: ServicesMethod,
    args: &Value,
) -> Result<Reply, CallError> {
    let host = services.service_host(store);
    match m {
        ServicesMethod::List => {
            let o = super::args::object(allowed, args, &[])?;
            let _ = o;
            let list = host
                .list(store, allowed.app())
                .map_err(|f| failure(allowed, &f))?;
            Ok(Reply::value(json!({ "services": list })))
        }
        ServicesMethod::Call => {
            let o = super::args::object(allowed, args, &["service", "method", "params"])?;
            let service = o.get("service").and_then(Value::as_str).unwrap_or_default();
            let method = o.get("method").and_then(Value::as_str).unwrap_or_default();
            let params = o.get("params").cloned().unwrap_or(json!({}));
            if service.is_empty() || method.is_empty() || method.len() > 128 {
                return Err(super::args::invalid(
                    allowed,
                    "service and method must be non-empty strings (method at most 128 bytes)",
                ));
            }
            if reserved_method(method) {
                return Err(super::args::invalid(
                    allowed,
                    "initialize, shutdown, $/… and lime.* are the host's, not callable",
                ));
            }
            if serde_json::to_vec(&params).map_or(true, |b| b.len() > MAX_PARAMS_BYTES) {
                return Err(super::args::invalid(allowed, "params are too large"));
            }
            // Only a service the caller's own installed manifest declares.
            if !allowed
                .manifest()
                .view()
                .services()
                .any(|s| s.key() == Some(service))
            {
                return Err(err(
                    allowed,
                    ErrorCode::NotFound,
                    &format!("the app declares no service {service}"),
                    Some("service.not_declared"),
                ));
            }
            let id = ServiceId {
                app: allowed.app().to_owned(),
                key: service.to_owned(),
            };
            if services.defers_service_calls() {
                // A remote service: the trust decision now, the HTTPS call outside.
                let remote = if declares_remote(allowed, service) {
                    crate::hosting::services::remote::prepare(store, &id)
                        .map_err(|f| failure(allowed, &f))?
                } else {
                    None
                };
                if let Some(remote) = remote {
                    let (a, method) = (allowed.clone(), method.to_owned());
                    // A frame's cancel answers the frame at once and aborts the HTTPS
                    // request in flight (its connection is dropped).
                    let work =
                        ServiceWork::new(Box::new(move |cancel: &service_sandbox::CancelToken| {
                            remote
                                .run_cancellable(&method, params, cancel)
                                .map_err(|f| failure(&a, &f))
                        }));
                    return Ok(Reply {
                        value: Value::Null,
                        effect: Some(Effect::CallService(work)),
                    });
                }
                // The slot is chosen now (it needs the store); the wait happens outside.
                let prepared = host.prepare(store, &id).map_err(|f| failure(allowed, &f))?;
                let (a, method) = (allowed.clone(), method.to_owned());
                let work =
                    ServiceWork::new(Box::new(move |cancel: &service_sandbox::CancelToken| {
                        prepared
                            .run_cancellable(&method, params, cancel)
                            .map_err(|f| failure(&a, &f))
                    }));
                return Ok(Reply {
                    value: Value::Null,
                    effect: Some(Effect::CallService(work)),
                });
            }
            let value = host
                .call_cancellable(store, &id, method, params, services.service_call_cancel())
                .map_err(|f| failure(allowed, &f))?;
            Ok(Reply::value(value))
        }
    }
}

/// Whether the caller's manifest declares `service` as a remote (`server-assisted`) one.
fn declares_remote(a: &Allowed, service: &str) -> bool {
    a.manifest()
        .view()
        .services()
        .any(|s| s.key() == Some(service) && crate::install::remote_service::is_remote(s))
}

fn failure(a: &Allowed, f: &ServiceFailure) -> CallError {
    let code = match f.code {
        "service.timeout" => ErrorCode::Timeout,
        "service.cancelled" => ErrorCode::Cancelled,
        "service.not_declared" | "service.not_found" => ErrorCode::NotFound,
        "service.error" => ErrorCode::InvalidArgument,
        "service.exited" | "service.protocol" | "service.start_failed" => ErrorCode::UnknownError,
        c if crate::hosting::services::is_remote_call_failure(c) => ErrorCode::UnknownError,
        _ => ErrorCode::CapabilityNotAvailable,
    };
    let mut e = err(a, code, &f.message, Some(f.code));
    e.retryable = f.retryable;
    e
}

/// One service's answerer: its own store connection, services and facts cache, opened on the
/// first request.
struct BackCall {
    data: DataDir,
    id: ServiceId,
    open: Option<(Store, Services, FactsCache)>,
    profile: HostProfile,
    seq: u64,
}

/// JSON-RPC error code of a refused `lime.*` request (the message starts with the host code).
pub const REFUSED: i64 = -32001;

impl BackCall {
    fn new(data: DataDir, id: ServiceId) -> Self {
        BackCall {
            data,
            id,
            open: None,
            profile: HostProfile::current(),
            seq: 0,
        }
    }

    fn answer(&mut self, method: &str, params: Value) -> Result<Value, (i64, String)> {
        let refused = |code: &str, cause: &str, message: &str| {
            (REFUSED, format!("{code} {cause}: {message}"))
        };
        if self.open.is_none() {
            let store = Store::open_for_calls(&self.data)
                .map_err(|e| refused("APP_E999", "host.unavailable", &e.message))?;
            let services = Services::for_backend_service(self.data.apps_data());
            self.open = Some((store, services, FactsCache::new()));
        }
        let (store, services, cache) = self.open.as_mut().expect("opened above");
        let (capability, name) = method.rsplit_once('.').unwrap_or((method, ""));
        let never = matches!(
            (capability, name),
            ("lime.agent", "respondAction")
                | ("lime.workflow", "respond")
                | ("lime.policy", "requestPermission")
                | ("lime.files", "requestFiles")
        ) || capability == "lime.services";
        let active = store
            .active_app(&self.id.app)
            .map_err(|e| refused("APP_E001", "service.app_gone", &e.message))?;
        let caller = Caller {
            app_id: active.name.clone(),
            entry_key: format!("{SERVICE_CALLER_PREFIX}{}", self.id.key),
            version: active.version.clone(),
            session_id: format!("service:{}/{}", self.id.app, self.id.key),
            package_hash: active.package_hash.clone(),
            manifest_hash: active.manifest_hash.clone(),
        };
        self.seq += 1;
        let call = Call {
            request_id: format!("svc-{}", self.seq),
            capability: capability.to_owned(),
            method: name.to_owned(),
            args: if params.is_null() { json!({}) } else { params },
            options: Map::new(),
        };
        if never {
            // Audited like a denial, executed never.
            let _ = store.record_audit(
                "capability.call",
                Some(&caller.app_id),
                Some(&caller.version),
                &json!({"entryKey": caller.entry_key, "capability": call.capability,
                        "method": call.method, "decision": "deny",
                        "reason": "service.user_only", "mountId": caller.session_id}),
            );
            return Err(refused(
                "APP_E002",
                "service.user_only",
                "a backend service cannot answer approvals or reviews, ask the user, or call lime.services",
            ));
        }
        let trace = format!("trace_service_{}_{}", self.id.key, self.seq);
        let mut answers = SessionAnswers::default();
        match dispatch_with(
            cache,
            store,
            &self.profile,
            &caller,
            &call,
            &trace,
            &mut answers,
        ) {
            Verdict::Allowed(proof) => match services.call_with(store, &proof, &call.args) {
                Ok(Reply {
                    value,
                    effect: None,
                }) => Ok(value),
                Ok(Reply {
                    effect: Some(Effect::WatchTask { value, .. } | Effect::WatchRun { value, .. }),
                    ..
                }) => Ok(value),
                Ok(Reply {
                    effect: Some(_), ..
                }) => Err(refused(
                    "APP_E002",
                    "permission.not_granted",
                    "this call needs a frame (an event to frames or a prompt)",
                )),
                Err(e) => Err(refused(
                    e.code.as_str(),
                    e.cause_code.unwrap_or(e.code.as_str()),
                    &e.message,
                )),
            },
            Verdict::Denied(e) => Err(refused(
                e.code.as_str(),
                e.cause_code.unwrap_or(e.code.as_str()),
                &e.message,
            )),
            Verdict::Ask(q) => Err(refused(
                "APP_E002",
                "permission.not_granted",
                &format!(
                    "{}.{} needs the user's permission {}: a service cannot ask",
                    q.capability,
                    q.method,
                    q.permission.as_deref().unwrap_or("(a policy confirmation)")
                ),
            )),
        }
    }
}
