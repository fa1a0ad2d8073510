//! Disable/enable, uninstall (with its cleanup plan shown first) and rollback: the store's own
//! operations, as the CLI runs them.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, HostError, HostResult};
use crate::paths::DataDir;
use crate::store::{AppSummary, CleanupPlan, DataMode, Store, UninstallOutcome};

/// The uninstall modes the host UI offers (`docs/host-api.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UninstallMode {
    KeepData,
    DeleteData,
    /// Export the app's data to a zip, then delete everything.
    Export,
}

impl UninstallMode {
    fn data_mode(self) -> DataMode {
        match self {
            UninstallMode::KeepData => DataMode::KeepData,
            UninstallMode::DeleteData => DataMode::DeleteData,
            UninstallMode::Export => DataMode::ExportThenDelete,
        }
    }
}

pub fn set_enabled(dir: &DataDir, app: &str, enabled: bool) -> HostResult<AppSummary> {
    super::open_locked(dir)?.set_enabled(app, enabled)
}

pub fn rollback(dir: &DataDir, app: &str) -> HostResult<AppSummary> {
    super::open_locked(dir)?.rollback(app)
}

/// What uninstalling in `mode` would remove and keep (nothing changes).
pub fn uninstall_plan(dir: &DataDir, app: &str, mode: UninstallMode) -> HostResult<CleanupPlan> {
    Store::open(dir)?.cleanup_plan(app, mode.data_mode())
}

/// Uninstalls `app`. `export` needs `export_path` (a new file); the other modes refuse one.
pub fn uninstall(
    dir: &DataDir,
    app: &str,
    mode: UninstallMode,
    export_path: Option<&Path>,
) -> HostResult<UninstallOutcome> {
    match (mode, export_path) {
        (UninstallMode::Export, None) => {
            return Err(HostError::new(
                ErrorCode::CliUsage,
                "uninstalling with mode export needs exportPath (a new file)",
            ))
        }
        (UninstallMode::KeepData | UninstallMode::DeleteData, Some(_)) => {
            return Err(HostError::new(
                ErrorCode::CliUsage,
                "exportPath is only for mode export",
            ))
        }
        _ => {}
    }
    super::open_locked(dir)?.uninstall(app, mode.data_mode(), export_path)
}
