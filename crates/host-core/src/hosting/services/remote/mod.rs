//! `server-assisted` services (`executionPlane: cloud-remote`, `protocol: remote-http`): nothing
//! runs on this machine; each `lime.services.call` to such a service is an HTTPS JSON-RPC POST
//! the host makes to the declared endpoint (docs/services.md, "Remote services").
//!
//! Every call re-derives the trust decision from the store, never from the app: the active
//! manifest's declaration (`install::remote_service`), the user's allowance for this service
//! bound to the endpoint's origin (`install/store/remote_grants.rs`), and the auth secret's
//! value read from the secret store through the app's binding of the declared slot
//! (`hosting/app_secrets.rs`). The app gives only `{service, method, params}`; it never sees the
//! secret, the headers, or any other origin. Each call is audited `service.remote_call`
//! (service, origin, method, outcome, duration; never the secret or the bodies).
//!
//! Only public internet addresses are reached (`install/remote_address.rs`): an IP-literal
//! endpoint is checked at readiness, allowance and per call (`http.rs`), a name when the
//! client resolves it (`resolve.rs`: once, every address checked, connected to the checked
//! ones); a refusal is `service.remote_address_refused`. A caller's cancel aborts the request.

mod http;
pub mod policy;
mod resolve;

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};
use service_sandbox::CancelToken;
use zeroize::Zeroizing;

use super::{ServiceFailure, ServiceId};
use crate::foundation::paths::DataDir;
use crate::install::manifest::{Key, ManifestView};
use crate::install::remote_service::{RemoteAuth, RemoteSpec};
use crate::install::service_launch;
use crate::install::store::Store;

pub use http::MAX_RESPONSE_BYTES;

/// What the detail page and `apphost services list` show of a remote service.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoteInfo {
    /// The URL the host POSTs to.
    pub endpoint: String,
    /// The only origin the host contacts for it.
    pub origin: String,
    /// `none`, `bearer` or `header`.
    pub auth: String,
    /// The `secrets[]` slot whose value the host sends (never the value).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// What the remote service receives and keeps, in the author's words.
    pub data_boundary: String,
    /// The user allowed it for this origin.
    pub allowed: bool,
}

/// A remote call whose trust decision is made: run it without the store.
pub struct RemoteCall {
    data: DataDir,
    id: ServiceId,
    version: String,
    spec: RemoteSpec,
    timeout: Duration,
    auth: Option<(String, Zeroizing<String>)>,
}

fn server_assisted(v: ManifestView<'_>) -> bool {
    v.list(Key::RuntimeTargets)
        .iter()
        .any(|t| t.as_str() == Some("server-assisted"))
}

/// The spec of `key` of the active manifest when it is a remote service: `Ok(None)` when it
/// is not one (or not declared: the caller reports that), a refusal when its declaration is
/// not valid.
pub fn spec_of(
    v: ManifestView<'_>,
    key: &str,
) -> Result<Option<(RemoteSpec, u64)>, ServiceFailure> {
    let Some(s) = v.services().find(|s| s.key() == Some(key)) else {
        return Ok(None);
    };
    if !crate::install::remote_service::is_remote(s) {
        return Ok(None);
    }
    let plan = service_launch::plan(s, &|_| false, server_assisted(v))
        .map_err(|r| ServiceFailure::new(r.code, r.why))?;
    let spec = plan
        .remote
        .ok_or_else(|| ServiceFailure::new("service.invalid_spec", "not a remote service"))?;
    if let Some(slot) = spec.auth.secret() {
        if !v.items(Key::Secrets).any(|i| i.key() == Some(slot)) {
            return Err(ServiceFailure::new(
                "service.invalid_spec",
                format!(
                    "service {key}'s auth sends secret {slot}, which secrets[] does not declare"
                ),
            ));
        }
    }
    Ok(Some((spec, plan.timeout_ms)))
}

/// The remote call of `id`, or `Ok(None)` when `id` is not a remote service. Refused with
/// `service.policy_denied` when the admin's policy file denies it (whatever the allowance),
/// `service.remote_not_allowed` until the user allowed it for its endpoint's origin, and with
/// `service.remote_secret_missing` when its auth secret has no value.
pub fn prepare(store: &Store, id: &ServiceId) -> Result<Option<RemoteCall>, ServiceFailure> {
    let active = store
        .active_app(&id.app)
        .map_err(|e| ServiceFailure::new("service.not_found", e.message))?;
    let Some((spec, timeout_ms)) = spec_of(active.manifest.view(), &id.key)? else {
        return Ok(None);
    };
    if !active.enabled {
        return Err(ServiceFailure::new(
            "service.app_disabled",
            format!("{} is disabled", id.app),
        ));
    }
    // The admin's policy file first: deny wins over the user's allowance.
    super::admin_policy::check_remote(store.data_dir(), id, &spec.origin)?;
    let allowed = store
        .remote_allowed_origin(&id.app, &id.key)
        .map_err(|e| ServiceFailure::new("service.start_failed", e.message))?;
    if allowed.as_deref() != Some(spec.origin.as_str()) {
        return Err(ServiceFailure::new(
            "service.remote_not_allowed",
            format!(
                "service {} sends data to {}, which you have not allowed: {}",
                id.key,
                spec.origin,
                crate::install::readiness::remote_services::allow_command(&id.app, &id.key)
            ),
        ));
    }
    let auth = match &spec.auth {
        RemoteAuth::None => None,
        RemoteAuth::Bearer { secret } => Some((
            "authorization".to_owned(),
            Zeroizing::new(format!(
                "Bearer {}",
                secret_value(store, id, secret)?.as_str()
            )),
        )),
        RemoteAuth::Header { header, secret } => Some((
            header.to_ascii_lowercase(),
            secret_value(store, id, secret)?,
        )),
    };
    Ok(Some(RemoteCall {
        data: store.data_dir().clone(),
        id: id.clone(),
        version: active.version,
        spec,
        timeout: Duration::from_millis(timeout_ms),
        auth,
    }))
}

/// The value bound to `slot` of the app, read from the secret store.
fn secret_value(
    store: &Store,
    id: &ServiceId,
    slot: &str,
) -> Result<Zeroizing<String>, ServiceFailure> {
    let missing = || {
        ServiceFailure::new(
            "service.remote_secret_missing",
            format!(
                "service {} sends secret {slot}, which has no value: apphost secrets set {} {slot}",
                id.key, id.app
            ),
        )
    };
    let binding = store
        .secret_bindings(&id.app)
        .map_err(|e| ServiceFailure::new("service.start_failed", e.message))?
        .into_iter()
        .find(|b| b.slot == slot)
        .ok_or_else(missing)?;
    let value = crate::hosting::app_secrets::resolve(store, &id.app, &binding.handle)
        .map_err(|e| ServiceFailure::new("service.remote_secret_missing", e.message))?
        .ok_or_else(missing)?;
    Ok(Zeroizing::new(value.expose().to_owned()))
}

/// What to show of remote service `key` (`None`: not a valid remote service).
pub fn info(store: &Store, app: &str, v: ManifestView<'_>, key: &str) -> Option<RemoteInfo> {
    let (spec, _) = spec_of(v, key).ok()??;
    let allowed = store
        .remote_allowed_origin(app, key)
        .ok()
        .flatten()
        .is_some_and(|o| o == spec.origin);
    Some(RemoteInfo {
        endpoint: spec.endpoint.clone(),
        origin: spec.origin.clone(),
        auth: spec.auth.kind().to_owned(),
        secret: spec.auth.secret().map(str::to_owned),
        data_boundary: spec.data_boundary,
        allowed,
    })
}

/// A JSON-RPC 2.0 response as the remote service sends it (unknown fields ignored).
#[derive(serde::Deserialize)]
struct RpcResponse {
    jsonrpc: Option<String>,
    id: Option<Value>,
    /// `Some(null)` when the field is there with `null`.
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    error: Option<RpcError>,
}

#[derive(serde::Deserialize)]
struct RpcError {
    code: Option<i64>,
    message: Option<String>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    <Value as serde::Deserialize>::deserialize(d).map(Some)
}

static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl RemoteCall {
    /// POSTs `{"jsonrpc":"2.0","id":N,"method":…,"params":…}` to the endpoint and answers the
    /// response's `result` (its `error`: `service.error`); audited `service.remote_call`.
    pub fn run(self, method: &str, params: Value) -> Result<Value, ServiceFailure> {
        self.run_cancellable(method, params, &CancelToken::default())
    }

    /// [`RemoteCall::run`] that `cancel` ends: the request in flight is aborted (its
    /// connection dropped) and the call fails with `service.cancelled` (audited too).
    pub fn run_cancellable(
        self,
        method: &str,
        params: Value,
        cancel: &CancelToken,
    ) -> Result<Value, ServiceFailure> {
        let started = Instant::now();
        let out = self.exchange(method, params, cancel);
        self.audit(method, &out, started.elapsed());
        out
    }

    fn exchange(
        &self,
        method: &str,
        params: Value,
        cancel: &CancelToken,
    ) -> Result<Value, ServiceFailure> {
        let rpc_id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let body = serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}),
        )
        .map_err(|e| ServiceFailure::new("service.protocol", e.to_string()))?;
        // Re-parsed from the checked spec: the only URL this call may reach.
        let url = url::Url::parse(&self.spec.endpoint)
            .map_err(|e| ServiceFailure::new("service.invalid_spec", e.to_string()))?;
        let body = http::post(
            http::Post {
                url,
                body,
                auth: self.auth.clone(),
                timeout: self.timeout,
                max_body: MAX_RESPONSE_BYTES,
            },
            cancel,
        )?;
        let protocol = |why: &str| {
            ServiceFailure::new(
                "service.protocol",
                format!("the remote service's answer is not a JSON-RPC response: {why}"),
            )
        };
        let v: RpcResponse =
            serde_json::from_slice(&body).map_err(|_| protocol("not a JSON object"))?;
        if v.jsonrpc.as_deref() != Some("2.0") {
            return Err(protocol("no jsonrpc 2.0"));
        }
        if v.id.as_ref().and_then(Value::as_u64) != Some(rpc_id) {
            return Err(protocol("it answers another id"));
        }
        match (v.result, v.error) {
            (_, Some(e)) => {
                let msg: String = e
                    .message
                    .as_deref()
                    .unwrap_or("error")
                    .chars()
                    .take(1024)
                    .collect();
                Err(ServiceFailure::new(
                    "service.error",
                    format!("{}: {msg}", e.code.unwrap_or(0)),
                ))
            }
            (Some(r), None) => Ok(r),
            (None, None) => Err(protocol("no result or error")),
        }
    }

    fn audit(&self, method: &str, out: &Result<Value, ServiceFailure>, took: Duration) {
        let details = json!({
            "service": self.id.key,
            "origin": self.spec.origin,
            "method": method,
            "ok": out.is_ok(),
            "code": out.as_ref().err().map(|f| f.code),
            "ms": took.as_millis() as u64,
        });
        match Store::open_for_calls(&self.data) {
            Ok(st) => {
                if let Err(e) = st.record_audit(
                    "service.remote_call",
                    Some(&self.id.app),
                    Some(&self.version),
                    &details,
                ) {
                    tracing::warn!(error = %e.message, "cannot audit a remote service call");
                }
            }
            Err(e) => tracing::warn!(error = %e.message, "cannot audit a remote service call"),
        }
    }
}

/// A remote service reached the local launch path (a caller skipped [`prepare`]).
pub fn no_local_process(id: &ServiceId) -> ServiceFailure {
    ServiceFailure::new(
        "service.runtime_unavailable",
        format!(
            "service {} is remote: the host calls it, nothing starts here",
            id.key
        ),
    )
}

/// Adds what [`info`] knows to a listed remote service: state `remote` when allowed, else
/// `blocked` with `service.remote_not_allowed`.
pub fn annotate(store: &Store, app: &str, v: ManifestView<'_>, st: &mut super::ServiceStatus) {
    let Some(info) = info(store, app, v, &st.key) else {
        return;
    };
    let id = ServiceId {
        app: app.to_owned(),
        key: st.key.clone(),
    };
    if let Err(refused) = crate::install::remote_address::check_endpoint(&info.endpoint) {
        st.state = "blocked".into();
        st.code = Some(crate::install::remote_address::CODE.into());
        st.reason = Some(refused.to_string());
    } else if let Err(f) = super::admin_policy::check_remote(store.data_dir(), &id, &info.origin) {
        super::admin_policy::annotate(st, f);
    } else if info.allowed {
        st.state = "remote".into();
    } else {
        st.state = "blocked".into();
        st.code = Some("service.remote_not_allowed".into());
        st.reason = Some(format!(
            "sends data to {} only once you allow it: {}",
            info.origin,
            crate::install::readiness::remote_services::allow_command(app, &st.key)
        ));
    }
    st.remote = Some(info);
}
