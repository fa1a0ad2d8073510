//! The hook the store calls before an app is disabled or uninstalled, so the service host of
//! this process stops the app's service processes first. The services' crash and disk-quota
//! health is durable in host.db (`install/store/service_health_rows.rs`), read by readiness and
//! `services list` in every process.

use std::path::Path;

/// What the service host does when an app leaves (`data`, `app`, reason `disabled` or
/// `uninstalled`): stop the app's service processes in this process. Set once by
/// `hosting::services`; the store calls [`app_leaving`] before it disables or uninstalls.
pub type LeavingHook = fn(&Path, &str, &str);

static LEAVING: std::sync::OnceLock<LeavingHook> = std::sync::OnceLock::new();

/// Installs the hook (the first one wins; there is one service host implementation).
pub fn on_app_leaving(hook: LeavingHook) {
    let _ = LEAVING.set(hook);
}

/// Called by the store before an app is disabled or uninstalled.
pub fn app_leaving(data: &Path, app: &str, reason: &str) {
    if let Some(hook) = LEAVING.get() {
        hook(data, app, reason);
    }
}
