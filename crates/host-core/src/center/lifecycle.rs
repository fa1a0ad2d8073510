//! Disable/enable, uninstall (with its cleanup plan shown first) and rollback: the store's own
//! operations, as the CLI runs them. The host UI offers the standard's four uninstall states
//! (§9.2) as one chooser: disable only, uninstall keeping data, uninstall deleting data, export
//! then delete; each has a plan answered before it runs ([`plan`]), and the manifest's
//! `storage.uninstallPolicy` picks the default ([`default_mode`]).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;
use crate::foundation::profile::HostProfile;
use crate::install::manifest::Manifest;
use crate::install::store::{AppSummary, CleanupPlan, DataMode, Store, UninstallOutcome};

/// The uninstall states the host UI offers (`docs/host-api.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum UninstallMode {
    /// Disable only: the entries are hidden; the package, data and grants stay
    /// (`set_enabled {enabled: false}` runs it).
    Disable,
    KeepData,
    DeleteData,
    /// Export the app's data to a zip, then delete everything.
    Export,
}

impl UninstallMode {
    fn data_mode(self) -> Option<DataMode> {
        match self {
            UninstallMode::Disable => None,
            UninstallMode::KeepData => Some(DataMode::KeepData),
            UninstallMode::DeleteData => Some(DataMode::DeleteData),
            UninstallMode::Export => Some(DataMode::ExportThenDelete),
        }
    }
}

/// The default uninstall state of a manifest's `storage.uninstallPolicy`: `retain` keeps the
/// data, `delete` deletes it, `export-then-delete` exports first; `ask`, another value or none:
/// no default (the user picks).
pub fn default_mode(policy: Option<&str>) -> Option<UninstallMode> {
    match policy? {
        "retain" => Some(UninstallMode::KeepData),
        "delete" => Some(UninstallMode::DeleteData),
        "export-then-delete" => Some(UninstallMode::Export),
        _ => None,
    }
}

/// A manifest's `storage.uninstallPolicy`, as written.
pub fn uninstall_policy(manifest: &Manifest) -> Option<String> {
    manifest
        .view()
        .storage()
        .and_then(|s| s.uninstall_policy())
        .map(str::to_owned)
}

/// What "Disable only" does: the entries hidden, everything else kept.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DisablePlan {
    pub app: String,
    /// Always `disable`.
    pub mode: &'static str,
    /// The entries no longer offered (and any open frame of them closed).
    pub entries_hidden: Vec<String>,
    /// The installed versions: all kept.
    pub versions_kept: Vec<String>,
    pub data_dir: String,
    pub data_file_count: u64,
    pub data_bytes: u64,
    /// Nothing is removed.
    pub retained: Vec<String>,
    pub already_disabled: bool,
}

/// The plan of one uninstall state, as `uninstall_plan` answers it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum LifecyclePlan {
    Disable(DisablePlan),
    Cleanup(Box<CleanupPlan>),
}

pub fn set_enabled(dir: &DataDir, app: &str, enabled: bool) -> HostResult<AppSummary> {
    super::open_locked(dir)?.set_enabled(app, enabled)
}

pub fn rollback(dir: &DataDir, app: &str) -> HostResult<AppSummary> {
    super::open_locked(dir)?.rollback(app)
}

/// What uninstalling in `mode` would remove and keep (nothing changes). Not for `disable`
/// (see [`plan`]).
pub fn uninstall_plan(dir: &DataDir, app: &str, mode: UninstallMode) -> HostResult<CleanupPlan> {
    let data_mode = mode.data_mode().ok_or_else(not_an_uninstall)?;
    Store::open(dir)?.cleanup_plan(app, data_mode)
}

/// The plan of any of the four states (nothing changes).
pub fn plan(dir: &DataDir, app: &str, mode: UninstallMode) -> HostResult<LifecyclePlan> {
    let store = Store::open(dir)?;
    let Some(data_mode) = mode.data_mode() else {
        let summary = store.summary(app, &HostProfile::current())?;
        let keep = store.cleanup_plan(app, DataMode::KeepData)?;
        let entries_hidden: Vec<String> = summary.entries.iter().map(|e| e.key.clone()).collect();
        let retained = vec![
            format!("the package (versions {})", summary.versions.join(", ")),
            format!("the app's data in {}", keep.data_dir),
            "its grants and secret bindings".to_owned(),
        ];
        return Ok(LifecyclePlan::Disable(DisablePlan {
            app: app.to_owned(),
            mode: "disable",
            entries_hidden,
            versions_kept: summary.versions,
            data_dir: keep.data_dir,
            data_file_count: keep.data_file_count,
            data_bytes: keep.data_bytes,
            retained,
            already_disabled: !summary.enabled,
        }));
    };
    Ok(LifecyclePlan::Cleanup(Box::new(
        store.cleanup_plan(app, data_mode)?,
    )))
}

fn not_an_uninstall() -> HostError {
    HostError::new(
        ErrorCode::CliUsage,
        "mode disable does not uninstall: set_enabled {enabled: false} disables the app",
    )
}

/// Uninstalls `app`. `export` needs `export_path` (a new file); the other modes refuse one.
pub fn uninstall(
    dir: &DataDir,
    app: &str,
    mode: UninstallMode,
    export_path: Option<&Path>,
) -> HostResult<UninstallOutcome> {
    let data_mode = mode.data_mode().ok_or_else(not_an_uninstall)?;
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
    let out = super::open_locked(dir)?.uninstall(app, data_mode, export_path)?;
    // The app no longer follows a catalog for updates. The uninstall is done: a failure to
    // rewrite `catalogs/apps.json` leaves a record `browse_catalog` ignores (no installed app).
    let _ = crate::install::remote::state::unfollow(dir, app);
    Ok(out)
}
