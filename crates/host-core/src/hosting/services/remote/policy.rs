//! `apphost services allow-remote|revoke-remote` (and the host UI's same commands): host policy
//! for `server-assisted` services is the user's allowance per app and service, bound to the
//! endpoint's origin the user saw (host.db rows, `install/store/remote_grants.rs`). It is only
//! given to a service whose active declaration is valid (`server-assisted`, endpoint, auth, data
//! boundary); an update that moves the endpoint to another origin needs it again.

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::install::store::Store;

/// Allows `service` of `app` to be called at its declared endpoint; answers the origin and
/// whether it was newly allowed. Refused with `service.not_declared` (no such service) or
/// `service.cannot_run` whose `cause` is `service.remote_not_declared` (not a remote service)
/// or the declaration's own refusal (`service.invalid_spec`, `service.remote_not_allowed`
/// without `server-assisted`, `service.remote_address_refused` for an IP-literal endpoint that
/// is not a public address, `service.policy_denied` when the admin's
/// `<data>/policy/services.json` denies it); nothing is written then.
pub fn allow(store: &Store, app: &str, service: &str) -> HostResult<(String, bool)> {
    let active = store.active_app(app)?;
    let view = active.manifest.view();
    if !view.services().any(|s| s.key() == Some(service)) {
        return Err(HostError::new(
            ErrorCode::ServiceNotDeclared,
            format!("{app} declares no service {service}"),
        )
        .with("app", app));
    }
    let spec = match super::spec_of(view, service) {
        Ok(Some((spec, _))) => spec,
        Ok(None) => {
            return Err(HostError::new(
                ErrorCode::ServiceCannotRun,
                format!("service {service} is not a remote (cloud-remote / remote-http) service: there is nothing to allow"),
            )
            .with("cause", "service.remote_not_declared"))
        }
        Err(f) => return Err(f.host_error()),
    };
    // An IP-literal endpoint outside the public internet can never be called: nothing to allow.
    if let Err(refused) = crate::install::remote_address::check_endpoint(&spec.endpoint) {
        return Err(
            HostError::new(ErrorCode::ServiceCannotRun, refused.to_string())
                .with("cause", crate::install::remote_address::CODE),
        );
    }
    // The admin's policy file denies it: nothing the user allows would be honoured.
    let id = super::super::ServiceId {
        app: app.to_owned(),
        key: service.to_owned(),
    };
    super::super::admin_policy::check_remote(store.data_dir(), &id, &spec.origin)
        .map_err(super::super::admin_policy::refusal)?;
    let new = store.allow_remote(app, &active.version, service, &spec.origin)?;
    Ok((spec.origin, new))
}

/// Revokes the allowance; `Ok(false)` if there was none. The app must be installed. The next
/// call is refused (each call re-reads it).
pub fn revoke(store: &Store, app: &str, service: &str) -> HostResult<bool> {
    let active = store.active_app(app)?;
    store.revoke_remote(app, Some(&active.version), service)
}
