//! Tauri commands: thin adapters over `host-core`. Errors are `HostError` (`{code, message,
//! details}`), never bare strings. Every command is reached only through `guard::host_ui_only`.

use host_core::error::HostError;
use host_core::paths::DataDir;
use host_core::store::{AppSummary, Store};

/// The installed apps, as the catalog knows them. Opens the store per call (cheap), on Tauri's
/// async runtime rather than the UI thread.
#[tauri::command(async)]
pub fn list_apps() -> Result<Vec<AppSummary>, HostError> {
    let dir = DataDir::from_env()?;
    let store = Store::open(&dir)?;
    store.list_apps()
}
