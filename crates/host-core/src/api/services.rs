//! The backend-services area of the host UI (`docs/host-api.md`, "Services"): the app detail
//! page's services section (state, restarts, last exit, a bounded log) and its Start / Stop,
//! over the session's one [`ServiceHost`](crate::hosting::services::ServiceHost) (held by the
//! bridge's services, so what the page starts lives as long as the session), exactly as
//! `apphost services list|start|stop|logs|call`. A call made here is the user's, audited
//! `service.call` with `by: host-user`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use service_sandbox::CancelToken;

use super::{answer, args, Command, Session};
use crate::foundation::error::HostResult;
use crate::hosting::services::{ServiceId, ServiceStatus};
use crate::install::store::Store;

macro_rules! commands {
    ($($name:literal => $f:ident,)*) => {
        pub const COMMANDS: &[Command] = &[$(Command { name: $name, run: $f },)*];
    };
}

commands! {
    "app_services" => app_services,
    "service_logs" => service_logs,
    "service_start" => service_start,
    "service_stop" => service_stop,
    "service_call" => service_call,
    "service_allow_remote" => service_allow_remote,
    "service_revoke_remote" => service_revoke_remote,
}

/// Most log bytes one answer carries (the page shows the tail).
pub const MAX_LOG_BYTES: usize = 64 * 1024;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "AppServicesArgs")]
pub(crate) struct AppArg {
    app_id: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "ServiceArgs")]
pub(crate) struct ServiceArg {
    app_id: String,
    service: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "ServiceCallArgs")]
pub(crate) struct CallArg {
    app_id: String,
    service: String,
    method: String,
    #[serde(default)]
    params: Option<Value>,
}

/// A service's log tail.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceLog {
    pub text: String,
    /// The log was longer: only its last [`MAX_LOG_BYTES`] are shown.
    pub truncated: bool,
}

fn id(app: &str, service: &str) -> ServiceId {
    ServiceId {
        app: app.to_owned(),
        key: service.to_owned(),
    }
}

fn host(session: &Session) -> HostResult<std::sync::Arc<crate::hosting::services::ServiceHost>> {
    session.with_bridge(|h, store| h.service_host(store))
}

fn app_services(session: &Session, raw: Value) -> HostResult<Value> {
    let a: AppArg = args("app_services", raw)?;
    let store = Store::open(&session.data)?;
    let list: Vec<ServiceStatus> = host(session)?
        .list(&store, &a.app_id)
        .map_err(|f| f.host_error())?;
    answer(list)
}

fn service_logs(session: &Session, raw: Value) -> HostResult<Value> {
    let a: ServiceArg = args("service_logs", raw)?;
    let full = host(session)?.logs(&id(&a.app_id, &a.service), MAX_LOG_BYTES + 1);
    let truncated = full.len() > MAX_LOG_BYTES;
    let mut start = full.len().saturating_sub(MAX_LOG_BYTES);
    while !full.is_char_boundary(start) {
        start += 1;
    }
    let text = full[start..].to_owned();
    answer(ServiceLog { text, truncated })
}

fn service_start(session: &Session, raw: Value) -> HostResult<Value> {
    let a: ServiceArg = args("service_start", raw)?;
    let store = Store::open_for_calls(&session.data)?;
    host(session)?
        .start(&store, &id(&a.app_id, &a.service))
        .map_err(|f| f.host_error())?;
    answer(true)
}

fn service_stop(session: &Session, raw: Value) -> HostResult<Value> {
    let a: ServiceArg = args("service_stop", raw)?;
    answer(host(session)?.stop(&id(&a.app_id, &a.service), "user"))
}

fn service_call(session: &Session, raw: Value) -> HostResult<Value> {
    call_by(session, raw, "host-user", &CancelToken::default())
}

/// [`service_call`] on behalf of `by` (`host-user`, `door`), ended by `cancel`.
pub(crate) fn call_by(
    session: &Session,
    raw: Value,
    by: &str,
    cancel: &CancelToken,
) -> HostResult<Value> {
    let a: CallArg = args("service_call", raw)?;
    let store = Store::open_for_calls(&session.data)?;
    let params = a.params.unwrap_or(Value::Object(Default::default()));
    let out = host(session)?
        .call_as(
            &store,
            &id(&a.app_id, &a.service),
            &a.method,
            params,
            by,
            cancel,
        )
        .map_err(|f| f.host_error())?;
    answer(out)
}

/// The answer of `service_allow_remote`.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoteAllowed {
    /// The origin the service may now be called at.
    pub origin: String,
    /// `false`: it already was.
    pub changed: bool,
}

/// Allows a `server-assisted` remote service (host policy; `apphost services allow-remote`).
fn service_allow_remote(session: &Session, raw: Value) -> HostResult<Value> {
    let a: ServiceArg = args("service_allow_remote", raw)?;
    let store = crate::center::open_locked(&session.data)?;
    let (origin, changed) =
        crate::hosting::services::remote::policy::allow(&store, &a.app_id, &a.service)?;
    answer(RemoteAllowed { origin, changed })
}

/// Revokes it; `true` when it was allowed.
fn service_revoke_remote(session: &Session, raw: Value) -> HostResult<Value> {
    let a: ServiceArg = args("service_revoke_remote", raw)?;
    let store = crate::center::open_locked(&session.data)?;
    answer(crate::hosting::services::remote::policy::revoke(
        &store, &a.app_id, &a.service,
    )?)
}
