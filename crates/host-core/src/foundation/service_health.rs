//! The health of each running backend service's supervisor, per data directory, in this
//! process: written by the service host (`hosting/services/`) when a service crashes or
//! crash-loops and cleared when it is reset or removed; read by readiness (through the store's
//! summary) so a crash loop shows as `blocked` (required) or `ready-degraded` (optional).
//! In memory only: a new host process starts every service afresh.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

type Key = (PathBuf, String, String);

static HEALTH: Mutex<BTreeMap<Key, (bool, String)>> = Mutex::new(BTreeMap::new());

fn table() -> std::sync::MutexGuard<'static, BTreeMap<Key, (bool, String)>> {
    HEALTH.lock().unwrap_or_else(|p| p.into_inner())
}

/// Records `service` of `app` as crash-looping (`blocked`) or recently crashed; `None` clears it.
pub fn set(data: &Path, app: &str, service: &str, health: Option<(bool, String)>) {
    let key = (data.to_owned(), app.to_owned(), service.to_owned());
    match health {
        Some(h) => table().insert(key, h),
        None => table().remove(&key),
    };
}

/// Every recorded service of `app`: `key -> (crash loop?, reason)`.
pub fn of_app(data: &Path, app: &str) -> BTreeMap<String, (bool, String)> {
    table()
        .iter()
        .filter(|((d, a, _), _)| d == data && a == app)
        .map(|((_, _, s), h)| (s.clone(), h.clone()))
        .collect()
}

/// Forgets every service of `app` (uninstall, disable).
pub fn clear_app(data: &Path, app: &str) {
    table().retain(|(d, a, _), _| !(d == data && a == app));
}

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
