//! `apphost services grant-network|revoke-network`: the user's network grant to one
//! `remote-allowed` service of an installed app (host.db rows, `install/store/network_grants.rs`).
//! A grant is only given to a service the active manifest declares `remote-allowed`; a revoke
//! also stops the service at once if this process runs it (a call in flight is cancelled;
//! audited `service.stop` with reason `network_revoked`), so its next launch is refused.
//! Another AppHost process running it sees the revoke within its service host's next tick
//! (500 ms) or call, and stops it the same way (`ServiceHost::take_away`).

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::install::store::Store;

/// Grants network to `service` of `app`; `Ok(false)` if it already was. Refused with
/// `service.not_declared` (no such service) or `service.cannot_run` with `details.cause`
/// `service.network_not_declared` (the service does not declare `network: remote-allowed`) or
/// `service.policy_denied` (the admin's `<data>/policy/services.json` denies it); nothing is
/// written then.
pub fn grant(store: &Store, app: &str, service: &str) -> HostResult<bool> {
    let active = store.active_app(app)?;
    let view = active.manifest.view();
    let Some(s) = view.services().find(|s| s.key() == Some(service)) else {
        return Err(HostError::new(
            ErrorCode::ServiceNotDeclared,
            format!("{app} declares no service {service}"),
        )
        .with("app", app));
    };
    if s.network() != "remote-allowed" {
        return Err(HostError::new(
            ErrorCode::ServiceCannotRun,
            format!(
                "service {service} declares network {}, not remote-allowed: there is nothing to grant",
                s.network()
            ),
        )
        .with("cause", "service.network_not_declared"));
    }
    let id = super::ServiceId {
        app: app.to_owned(),
        key: service.to_owned(),
    };
    super::admin_policy::check_network(store.data_dir(), &id)
        .map_err(super::admin_policy::refusal)?;
    store.grant_network(app, &active.version, service)
}

/// Revokes the grant; `Ok(false)` if there was none. The app must be installed.
pub fn revoke(store: &Store, app: &str, service: &str) -> HostResult<bool> {
    let active = store.active_app(app)?;
    let was = store.revoke_network(app, Some(&active.version), service)?;
    if let Some(h) = super::ServiceHost::existing(store.data_dir().root()) {
        h.take_away(
            &super::ServiceId {
                app: app.to_owned(),
                key: service.to_owned(),
            },
            super::NETWORK_REVOKED,
        );
    }
    Ok(was)
}
