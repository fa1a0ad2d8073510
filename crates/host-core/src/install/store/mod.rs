//! The install store: content-addressed blobs in pack files plus `host.db`, under one data
//! directory.
//!
//! Every mutating operation runs under an exclusive file lock and follows one protocol, so a
//! crash at any point leaves each app fully present or fully absent:
//!
//! 1. `staging/<op>/journal.json` is written first (what the operation is, what it moved);
//! 2. new content is staged into one pack file, made durable, then renamed into `packs/`;
//! 3. one SQLite transaction records the new state *and* the operation id in `ops`;
//! 4. leftovers are cleaned (unrecorded packs, moved-away data, the staging folder).
//!
//! On the next locked open, [`recovery`] finishes or undoes any operation whose staging folder
//! still exists: committed (its id is in `ops`) means roll forward, otherwise roll back.

mod app_rows;
mod cleanup;
mod data_export;
mod driver;
pub mod durability;
pub mod failpoint;
pub mod file_refs;
mod gc;
mod icon;
mod install;
mod journal;
mod knowledge_bindings;
mod lifecycle;
mod network_grants;
mod packs;
mod queries;
mod recovery;
mod remote_grants;
mod schema;
mod secret_bindings;
mod service_files;
pub mod service_health_rows;
mod serving;
mod settings;
mod staging_fs;
mod stamp;
mod storage_plan;
mod summary;
pub mod tool_rows;
mod trusted_keys;
mod verify;

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::path::PathBuf;

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use serde_json::Value;

pub use app_rows::{
    reserved_prefix as reserved_setting_prefix, RESERVED_PREFIXES as RESERVED_SETTING_PREFIXES,
};
pub(crate) use cleanup::SkippedEntrySchema;
pub use cleanup::{CleanupPlan, DataMode, PackRemoval};
pub use data_export::ExportOutcome;
pub use driver::{Consent, Given, Installed, ModeChoice, Planned};
pub use file_refs::{FileRef, FileRefKind, FileRefOrigin, NewFileRef};
pub(crate) use install::diff_permissions;
pub use install::{
    FieldChange, InstallMode, InstallPlan, PermissionChange, PlanOptions, PublisherChange, Signer,
    Staged,
};
pub use knowledge_bindings::KnowledgeBinding;
pub use lifecycle::UninstallOutcome;
pub use queries::{AuditQuery, AuditRow, VersionInfo, MAX_AUDIT_LIMIT};
pub use recovery::{Quarantined, Recovered};
pub use schema::is_busy;
pub use secret_bindings::{delete_secret_values, SecretBinding};
pub use service_health_rows::ServiceHealthRow;
pub use serving::ActiveApp;
pub use stamp::ChangeStamp;
pub use storage_plan::{quota_from, PlannedMigration, StoragePlan};
pub use verify::{Problem, VerifyReport};

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;
use crate::install::manifest::Manifest;
use crate::install::signature::TrustedKey;
use runtime_core::{AppDataStore, AppId};

pub struct Store {
    dir: DataDir,
    conn: Connection,
    lock: Option<File>,
    /// Unique per opened store, so change stamps of two connections never compare equal.
    id: u64,
    /// See [`Store::durable_sections`].
    durable_sections: std::cell::Cell<u64>,
}

/// One installed app as lists show it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppSummary {
    pub name: String,
    pub display_name: Option<String>,
    pub description: String,
    pub active_version: String,
    pub previous_version: Option<String>,
    pub versions: Vec<String>,
    pub enabled: bool,
    pub trust: String,
    pub sideloaded: bool,
    pub readiness: String,
    pub package_hash: String,
    pub installed_at: String,
    pub updated_at: String,
    /// Problems after the commit point of the operation that produced this summary (it did
    /// happen): `store.cleanup_incomplete` warnings. Empty, and not serialized, otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<HostError>,
    /// The active version's entries, in manifest order (what the host UI offers to open).
    pub entries: Vec<EntrySummary>,
    /// An `apphost dev` install (a folder being developed; shown as DEV, never as signed).
    pub dev: bool,
    /// The manifest's `publisher.name` (a claim: `trust` says whether a key vouches for it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publisher: Option<String>,
    /// The icon as a bounded `data:` URL (`store/icon.rs`); none: the UI draws the initial.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// Why the app is not simply ready, in words (readiness checks that block, need setup or
    /// degrade it; at most [`MAX_READINESS_REASONS`]).
    pub readiness_reasons: Vec<String>,
    /// What the user can do about it (readiness setup actions: grant a permission, bind a
    /// secret, set up a model, ...).
    pub setup_actions: Vec<crate::install::readiness::SetupAction>,
}

/// Most readiness reasons an [`AppSummary`] carries.
pub const MAX_READINESS_REASONS: usize = 5;

/// One entry of an installed app, as the app list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntrySummary {
    pub key: String,
    pub kind: String,
    pub title: Option<String>,
    /// Whether the entry is a UI surface the window can mount (`EntryKind::is_ui_surface`).
    pub mountable: bool,
}

/// Settings key prefix of `apphost dev` installs (`center::dev`): `dev-app/<name>`.
pub const DEV_PREFIX: &str = "dev-app/";

pub(crate) fn now_str() -> String {
    jiff::Timestamp::now().to_string()
}

fn io(what: &str, path: &std::path::Path, e: std::io::Error) -> HostError {
    HostError::io(ErrorCode::StoreIo, what, path, e)
}

impl Store {
    /// Opens the store for reading (creating it if needed). Does not take the lock.
    pub fn open(dir: &DataDir) -> HostResult<Store> {
        runtime_core::private_fs::create_private_dir(dir.root())
            .map_err(|e| io("cannot create data directory", dir.root(), e))?;
        let conn = schema::open(&dir.db_path())?;
        Ok(Store {
            dir: dir.clone(),
            conn,
            lock: None,
            id: stamp::next_store_id(),
            durable_sections: std::cell::Cell::new(0),
        })
    }

    /// Opens the store for changes: takes the exclusive lock (waiting for another AppHost
    /// process if needed) and recovers any interrupted operation.
    pub fn open_locked(dir: &DataDir) -> HostResult<(Store, Vec<Recovered>)> {
        let mut store = Store::open(dir)?;
        let lock_path = dir.lock_path();
        let file = std::os::unix::fs::OpenOptionsExt::mode(
            fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true),
            runtime_core::private_fs::FILE_MODE,
        )
        .open(&lock_path)
        .map_err(|e| io("cannot open", &lock_path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                // Another AppHost process is changing the store (it may be waiting for consent).
                tracing::warn!(
                    "waiting for another AppHost operation on {} to finish",
                    dir.root().display()
                );
                file.lock().map_err(|e| io("cannot lock", &lock_path, e))?;
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io("cannot lock", &lock_path, e)),
        }
        store.lock = Some(file);
        let recovered = recovery::recover(&store)?;
        Ok((store, recovered))
    }

    pub fn data_dir(&self) -> &DataDir {
        &self.dir
    }

    /// `BEGIN IMMEDIATE`: takes SQLite's write lock at once, so that what is checked inside
    /// the transaction still holds when it commits, whatever another process does (the file
    /// lock serializes AppHost's own writers; this holds even where that lock is not honoured).
    pub(crate) fn immediate_transaction(&self) -> HostResult<rusqlite::Transaction<'_>> {
        Ok(rusqlite::Transaction::new_unchecked(
            &self.conn,
            rusqlite::TransactionBehavior::Immediate,
        )?)
    }

    /// After an operation failed before its commit point: undoes what it did, exactly as
    /// recovery would after a crash there, and returns its error (with recovery's own, if that
    /// failed too: it runs again on the next locked open).
    pub(crate) fn recover_after_failure(&self, e: HostError) -> HostError {
        match recovery::recover(self) {
            Ok(recovered) => {
                let quarantined: Vec<_> =
                    recovered.into_iter().flat_map(|r| r.quarantined).collect();
                if quarantined.is_empty() {
                    e
                } else {
                    e.with("quarantined", &quarantined)
                }
            }
            Err(re) => {
                tracing::error!(error = %re, "undoing the failed operation failed too");
                e.with("recoveryError", &re)
            }
        }
    }

    /// Runs the steps after an operation's commit point (retiring its journal, garbage
    /// collection, compaction). The operation happened whatever they do: a failure is a
    /// `store.cleanup_incomplete` warning, never a failed operation, and recovery finishes the
    /// job (right away, else on the next locked open).
    pub(crate) fn after_commit(
        &self,
        what: &str,
        steps: impl FnOnce() -> HostResult<()>,
    ) -> Vec<HostError> {
        let Err(e) = steps() else {
            return Vec::new();
        };
        tracing::warn!(error = %e, "{what} committed, but the cleanup after it failed");
        let mut warnings = vec![HostError::new(
            ErrorCode::StoreCleanupIncomplete,
            format!(
                "{what} is done, but the cleanup after it failed: {}",
                e.message
            ),
        )
        .with("cause", &e)];
        match recovery::recover(self) {
            Ok(recovered) => warnings.extend(recovery::quarantine_warnings(&recovered)),
            Err(re) => warnings.push(
                HostError::new(
                    ErrorCode::StoreCleanupIncomplete,
                    format!(
                        "finishing the cleanup failed too ({}); it runs again the next time the store is opened for a change",
                        re.message
                    ),
                )
                .with("cause", &re),
            ),
        }
        warnings
    }

    fn app_data(&self) -> AppDataStore {
        AppDataStore::new(self.dir.apps_data())
    }

    fn require_lock(&self) -> HostResult<()> {
        if self.lock.is_some() {
            Ok(())
        } else {
            Err(HostError::new(
                ErrorCode::Internal,
                "the store must be opened with open_locked to change it",
            ))
        }
    }

    pub fn app_names(&self) -> HostResult<Vec<String>> {
        let mut stmt = self.conn.prepare("SELECT name FROM apps ORDER BY name")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn app_row(&self, name: &str) -> HostResult<AppRow> {
        self.conn
            .query_row(
                "SELECT active_version, previous_version, enabled, installed_at, updated_at FROM apps WHERE name = ?1",
                [name],
                |r| Ok(AppRow { active: r.get(0)?, previous: r.get(1)?, enabled: r.get::<_, i64>(2)? != 0, installed_at: r.get(3)?, updated_at: r.get(4)? }),
            )
            .optional()?
            .ok_or_else(|| HostError::new(ErrorCode::AppNotInstalled, format!("{name} is not installed")).with("app", name))
    }

    fn version_row(&self, name: &str, version: &str) -> HostResult<VersionRow> {
        Ok(self.conn.query_row(
            "SELECT package_hash, trust, sideloaded, manifest_json, projection_json FROM app_versions WHERE name = ?1 AND version = ?2",
            params![name, version],
            |r| {
                Ok(VersionRow {
                    package_hash: r.get(0)?,
                    trust: r.get(1)?,
                    sideloaded: r.get::<_, i64>(2)? != 0,
                    manifest_json: r.get(3)?,
                    projection_json: r.get(4)?,
                })
            },
        )?)
    }

    fn versions_of(&self, name: &str) -> HostResult<Vec<String>> {
        let mut stmt = self.conn.prepare(
            "SELECT version FROM app_versions WHERE name = ?1 ORDER BY installed_at, version",
        )?;
        let rows = stmt.query_map([name], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn grants_of(&self, name: &str) -> HostResult<BTreeSet<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT permission FROM grants WHERE app = ?1")?;
        let rows = stmt.query_map([name], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn file_records(
        &self,
        name: &str,
        version: &str,
    ) -> HostResult<Vec<crate::foundation::hashing::FileRecord>> {
        let mut stmt = self.conn.prepare(
            "SELECT path, size, blob FROM version_files WHERE name = ?1 AND version = ?2",
        )?;
        let rows = stmt.query_map(params![name, version], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (path, size, blob) = row?;
            let mut sha = [0u8; 32];
            hex::decode_to_slice(&blob, &mut sha).map_err(|_| {
                HostError::new(ErrorCode::StoreCorrupt, format!("bad blob id {blob}"))
            })?;
            out.push(crate::foundation::hashing::FileRecord {
                path,
                size: size as u64,
                sha256: sha,
            });
        }
        out.sort_by(|a, b| crate::install::package::path::cli_order(&a.path, &b.path));
        Ok(out)
    }

    /// The stored manifest of an installed version.
    pub fn manifest(&self, name: &str, version: &str) -> HostResult<Manifest> {
        let row = self.version_row(name, version)?;
        stored_manifest(&row.manifest_json)
    }

    pub fn projection(&self, name: &str) -> HostResult<Value> {
        let app = self.app_row(name)?;
        let row = self.version_row(name, &app.active)?;
        serde_json::from_str(&row.projection_json).map_err(|e| {
            HostError::new(
                ErrorCode::StoreCorrupt,
                format!("stored projection of {name}: {e}"),
            )
        })
    }

    /// The audit log, newest first (optionally for one app).
    pub fn audit_log(&self, app: Option<&str>, limit: usize) -> HostResult<Vec<Value>> {
        let mut stmt = self.conn.prepare(
            "SELECT at, action, app, version, details FROM audit_log WHERE (?1 IS NULL OR app = ?1) ORDER BY id DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![app, limit as i64], |r| {
            let details: String = r.get(4)?;
            Ok(serde_json::json!({
                "at": r.get::<_, String>(0)?, "action": r.get::<_, String>(1)?,
                "app": r.get::<_, Option<String>>(2)?, "version": r.get::<_, Option<String>>(3)?,
                "details": serde_json::from_str::<Value>(&details).unwrap_or(Value::Null),
            }))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

struct AppRow {
    active: String,
    previous: Option<String>,
    enabled: bool,
    installed_at: String,
    updated_at: String,
}

struct VersionRow {
    package_hash: String,
    trust: String,
    sideloaded: bool,
    manifest_json: String,
    projection_json: String,
}

pub(crate) fn audit(
    conn: &Connection,
    action: &str,
    app: Option<&str>,
    version: Option<&str>,
    details: &Value,
) -> HostResult<()> {
    // Prepared once per connection: every capability call and tool call writes one.
    conn.prepare_cached(
        "INSERT INTO audit_log (at, action, app, version, details) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        now_str(),
        action,
        app,
        version,
        details.to_string()
    ])?;
    Ok(())
}

/// The manifest as stored in `app_versions.manifest_json`.
pub(crate) fn manifest_to_json(m: &Manifest) -> Value {
    serde_json::json!({
        "data": m.data,
        "body": m.body,
        "readinessSpec": m.readiness_spec,
        "healthSpec": m.health_spec,
        "signature": m.signature_doc,
        "layeredFiles": m.layered_files,
        "manifestVersion": m.manifest_version,
        "findings": m.findings,
    })
}

fn stored_manifest(json: &str) -> HostResult<Manifest> {
    let v: Value = serde_json::from_str(json)
        .map_err(|e| HostError::new(ErrorCode::StoreCorrupt, format!("stored manifest: {e}")))?;
    let opt = |k: &str| v.get(k).filter(|x| !x.is_null()).cloned();
    Ok(Manifest {
        data: v
            .get("data")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        body: v
            .get("body")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        readiness_spec: opt("readinessSpec"),
        health_spec: opt("healthSpec"),
        signature_doc: opt("signature"),
        layered_files: v
            .get("layeredFiles")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        manifest_version: v
            .get("manifestVersion")
            .and_then(Value::as_str)
            .unwrap_or("0.4.0")
            .to_owned(),
        findings: Vec::new(),
    })
}

pub(crate) fn app_id(name: &str) -> HostResult<AppId> {
    AppId::new(name)
        .map_err(|e| HostError::new(ErrorCode::CliUsage, e.to_string()).with("app", name))
}

pub(crate) fn staging_root(dir: &DataDir) -> PathBuf {
    dir.staging()
}
