//! Opening the store for a change from the CLI: every command that writes shares it (install,
//! grants, secrets, …), so it sits below them.

use super::output;
use host_core::foundation::error::HostResult;
use host_core::foundation::paths::DataDir;
use host_core::install::store::Store;

/// Opens the store for a change, telling what recovery did (and what it quarantined).
pub(super) fn open_locked(dir: &DataDir, json: bool) -> HostResult<Store> {
    let (store, recovered) = Store::open_locked(dir)?;
    for r in &recovered {
        output::note(
            json,
            &format!("recovered an interrupted {} ({})", r.kind, r.action),
        );
        for q in &r.quarantined {
            output::note(json, &format!("{}; it is kept in {}", q.reason, q.path));
        }
    }
    Ok(store)
}
