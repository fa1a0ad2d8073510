//! A `server-assisted` remote service (`cloud-remote` / `remote-http`, its declaration checked
//! by `install::remote_service`): the secret its auth sends must be a declared `secrets[]` slot
//! (else `service.invalid_spec`), and host policy must allow it: the user's allowance for this
//! app's service, bound to the endpoint's origin (`HostState::services.remote_allowed`, from
//! host.db). Until then it is `blocked` (required) or `degraded` (optional) with
//! `service.remote_not_allowed`, the data boundary in the message, and a setup action naming
//! `apphost services allow-remote <app> <service>`. An allowance given for another origin (an
//! update moved the endpoint) does not count. An IP-literal endpoint outside the public
//! internet is `service.remote_address_refused` whatever the allowance. The admin's
//! `<data>/policy/services.json` denying it is `service.policy_denied` (no setup action),
//! whatever the allowance.

use super::{Ctx, Outcome};
use crate::install::manifest::Key;
use crate::install::remote_service::RemoteSpec;

/// (outcome, code, message, setup action (title, target)).
pub(super) type Verdict = (
    Outcome,
    Option<&'static str>,
    String,
    Option<(String, String)>,
);

/// The setup command that allows `key` of `app`.
pub fn allow_command(app: &str, key: &str) -> String {
    format!("apphost services allow-remote {app} {key}")
}

pub(super) fn remote(cx: &Ctx, key: &str, required: bool, spec: &RemoteSpec) -> Verdict {
    let failing = if required {
        Outcome::Blocked
    } else {
        Outcome::Degraded
    };
    let view = cx.m.view();
    if let Some(slot) = spec.auth.secret() {
        let declared = view.items(Key::Secrets).any(|i| i.key() == Some(slot));
        if !declared {
            return (
                failing,
                Some("service.invalid_spec"),
                format!(
                    "service {key} cannot run: its auth sends secret {slot}, which secrets[] does not declare"
                ),
                None,
            );
        }
    }
    // An endpoint that is an IP literal outside the public internet (the LAN, loopback, the
    // metadata service) is refused now, allowance or not (`install/remote_address.rs`).
    if let Err(refused) = crate::install::remote_address::check_endpoint(&spec.endpoint) {
        return (
            failing,
            Some(crate::install::remote_address::CODE),
            format!("service {key} cannot run: {refused}"),
            None,
        );
    }
    // The admin's policy file denies whatever the user allowed (deny wins); nothing the user
    // could do here, so no setup action.
    if let Some(why) = cx
        .state
        .services
        .policy
        .as_ref()
        .and_then(|p| p.remote_denied(view.name(), key, &spec.origin))
    {
        return (
            failing,
            Some(crate::install::services_policy::CODE),
            format!("service {key} cannot run: {why}"),
            None,
        );
    }
    match cx.state.services.remote_allowed.get(key) {
        Some(origin) if *origin == spec.origin => (
            Outcome::Pass,
            None,
            format!(
                "service {key} is allowed to receive data at {}: {}",
                spec.origin, spec.data_boundary
            ),
            None,
        ),
        other => {
            let why = match other {
                Some(old) => format!(
                    "it was allowed for {old}, and its endpoint is now {}",
                    spec.origin
                ),
                None => "host policy allows remote services only once you allow them".to_owned(),
            };
            (
                failing,
                Some("service.remote_not_allowed"),
                format!(
                    "service {key} sends data to {} ({why}). Data boundary: {}",
                    spec.origin, spec.data_boundary
                ),
                Some((
                    format!("Allow remote service {key} ({})", spec.origin),
                    allow_command(view.name(), key),
                )),
            )
        }
    }
}
