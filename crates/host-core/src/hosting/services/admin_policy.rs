//! Where the service host, the remote call path and the `allow-remote` / `grant-network`
//! commands apply the admin's `<data>/policy/services.json` (`install/services_policy.rs`):
//! read again (when its `stat` moved) at every call, launch, tick and command, never taken from
//! a caller. Deny wins over the user's allowance or grant; the refusal is
//! `service.policy_denied` and names the file.

use super::{ServiceFailure, ServiceId, ServiceStatus};
use crate::foundation::error::{ErrorCode, HostError};
use crate::foundation::paths::DataDir;
use crate::install::services_policy::{self, CODE};

/// The audited stop reason of a running service whose network the policy now denies.
pub const POLICY_DENIED: &str = "policy_denied";

/// `Err(service.policy_denied)` when the policy denies calls of `id` at `origin`.
pub fn check_remote(data: &DataDir, id: &ServiceId, origin: &str) -> Result<(), ServiceFailure> {
    match services_policy::load(data).remote_denied(&id.app, &id.key, origin) {
        Some(why) => Err(ServiceFailure::new(
            CODE,
            format!("service {} cannot be called: {why}", id.key),
        )),
        None => Ok(()),
    }
}

/// `Err(service.policy_denied)` when the policy denies network to `remote-allowed` service `id`.
pub fn check_network(data: &DataDir, id: &ServiceId) -> Result<(), ServiceFailure> {
    match services_policy::load(data).network_denied(&id.app, &id.key) {
        Some(why) => Err(ServiceFailure::new(
            CODE,
            format!("service {} cannot reach the network: {why}", id.key),
        )),
        None => Ok(()),
    }
}

/// The refusal of `allow-remote` / `grant-network`: `service.cannot_run` with `details.cause`
/// `service.policy_denied` (nothing is written).
pub fn refusal(f: ServiceFailure) -> HostError {
    HostError::new(ErrorCode::ServiceCannotRun, f.message).with("cause", CODE)
}

/// A listed service the policy denies: `blocked` with the code and why.
pub fn annotate(st: &mut ServiceStatus, f: ServiceFailure) {
    st.state = "blocked".into();
    st.code = Some(CODE.into());
    st.reason = Some(f.message);
}
