//! The app detail page: summary, readme (the APP.md body), entries with their readiness,
//! permissions with grants, data sizes and counts, versions.

use serde::Serialize;
use serde_json::Value;

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;
use crate::foundation::profile::HostProfile;
use crate::install::readiness::Report;
use crate::install::store::{AppSummary, EntrySummary, Store, VersionInfo};
use runtime_core::app_artifacts::AppArtifacts;
use runtime_core::app_evidence::AppEvidence;
use runtime_core::{AppDataStore, AppId};

/// `AppDetail` in `docs/host-api.md`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppDetail {
    pub summary: AppSummary,
    /// The APP.md body (markdown), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readme: Option<String>,
    pub entries: Vec<DetailEntry>,
    pub permissions: Vec<PermissionRow>,
    pub data: DataUsage,
    pub versions: Vec<VersionInfo>,
    pub readiness: Report,
    /// The manifest's `storage.uninstallPolicy`, as written.
    pub uninstall_policy: Option<String>,
    /// The uninstall state the danger zone preselects (`lifecycle::default_mode`); none for
    /// `ask` (or no policy): the user picks.
    pub uninstall_default: Option<super::lifecycle::UninstallMode>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DetailEntry {
    #[serde(flatten)]
    pub entry: EntrySummary,
    pub readiness: String,
}

/// One declared permission of the active version and whether it is granted.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRow {
    pub key: String,
    pub scope: Value,
    pub access: Value,
    pub reason: Value,
    pub required: bool,
    pub domains: Value,
    pub granted: bool,
}

/// What the app keeps in its own data area.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DataUsage {
    /// Bytes of every regular file under `apps/<app>/`.
    pub storage_bytes: u64,
    pub files: u64,
    pub artifacts: u64,
    pub evidence: u64,
}

/// The permissions of the active version of `name`, each with its grant.
pub fn permission_rows(store: &Store, name: &str) -> HostResult<Vec<PermissionRow>> {
    let app = store.active_app(name)?;
    Ok(app
        .manifest
        .view()
        .permissions()
        .filter_map(|p| {
            let key = p.key()?.to_owned();
            Some(PermissionRow {
                granted: app.grants.contains(&key),
                key,
                scope: p.scope_raw().cloned().unwrap_or(Value::Null),
                access: p.access_raw().cloned().unwrap_or(Value::Null),
                reason: p.reason_raw().cloned().unwrap_or(Value::Null),
                required: p.required(),
                domains: p.domains_raw().cloned().unwrap_or(Value::Array(Vec::new())),
            })
        })
        .collect())
}

/// Sizes and record counts of the app's data (read-only: nothing is created).
pub fn data_usage(dir: &DataDir, name: &str) -> HostResult<DataUsage> {
    let id = AppId::new(name)
        .map_err(|e| HostError::new(ErrorCode::AppNotInstalled, e.to_string()).with("app", name))?;
    let store = AppDataStore::new(dir.apps_data());
    if !store.exists(&id) {
        return Ok(DataUsage::default());
    }
    let listing = store.list(&id);
    let app_dir = store.dir(&id);
    let unreadable = |what: &str, e: &dyn std::fmt::Display| {
        HostError::new(
            ErrorCode::AppDataUnreadable,
            format!("cannot read {name}'s {what}: {e}"),
        )
        .with("app", name)
    };
    let artifacts = match AppArtifacts::open_read_only(&app_dir) {
        Ok(Some(a)) => a.count().map_err(|e| unreadable("artifacts", &e))?,
        Ok(None) => 0,
        Err(e) => return Err(unreadable("artifacts", &e)),
    };
    let evidence = match AppEvidence::open_read_only(&app_dir) {
        Ok(Some(a)) => a.count().map_err(|e| unreadable("evidence", &e))?,
        Ok(None) => 0,
        Err(e) => return Err(unreadable("evidence", &e)),
    };
    Ok(DataUsage {
        storage_bytes: listing.total_bytes,
        files: listing.total_files,
        artifacts,
        evidence,
    })
}

/// Everything the app detail page shows about an installed app.
pub fn app_detail(dir: &DataDir, name: &str) -> HostResult<AppDetail> {
    let store = Store::open(dir)?;
    let profile = HostProfile::current();
    let summary = store.summary(name, &profile)?;
    let manifest = store.manifest(name, &summary.active_version)?;
    let readiness = store.readiness(name, &profile)?;
    let entries = summary
        .entries
        .iter()
        .map(|e| DetailEntry {
            readiness: readiness
                .entries
                .iter()
                .find(|r| r.entry_key == e.key)
                .map_or("unknown", |r| r.status.as_str())
                .to_owned(),
            entry: e.clone(),
        })
        .collect();
    let policy = super::lifecycle::uninstall_policy(&manifest);
    let body = manifest.body.trim();
    Ok(AppDetail {
        readme: (!body.is_empty()).then(|| body.to_owned()),
        entries,
        permissions: permission_rows(&store, name)?,
        data: data_usage(dir, name)?,
        versions: store.versions(name)?,
        readiness,
        uninstall_default: super::lifecycle::default_mode(policy.as_deref()),
        uninstall_policy: policy,
        summary,
    })
}
