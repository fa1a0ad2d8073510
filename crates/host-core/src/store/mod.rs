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

mod cleanup;
pub mod failpoint;
mod gc;
mod install;
mod journal;
mod lifecycle;
mod packs;
mod recovery;
mod schema;
mod serving;
mod verify;

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::path::PathBuf;

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use serde_json::Value;

pub use cleanup::{CleanupPlan, DataMode, PackRemoval};
pub use install::{InstallMode, InstallPlan, PermissionChange, Staged};
pub use lifecycle::UninstallOutcome;
pub use recovery::Recovered;
pub use serving::ActiveApp;
pub use verify::{Problem, VerifyReport};

use crate::error::{ErrorCode, HostError, HostResult};
use crate::manifest::Manifest;
use crate::paths::DataDir;
use crate::profile::HostProfile;
use crate::readiness::{self, Grants, HostState, Report};
use crate::signature::TrustedKey;
use runtime_core::{AppDataStore, AppId};

pub struct Store {
    dir: DataDir,
    conn: Connection,
    lock: Option<File>,
}

/// One installed app as lists show it.
#[derive(Debug, Clone, Serialize)]
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
    /// The active version's entries, in manifest order (what the host UI offers to open).
    pub entries: Vec<EntrySummary>,
}

/// One entry of an installed app, as the app list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EntrySummary {
    pub key: String,
    pub kind: String,
    pub title: Option<String>,
    /// Whether the entry is a UI surface the window can mount (`bridge::mounting::MOUNTABLE_KINDS`).
    pub mountable: bool,
}

pub(crate) fn now_str() -> String {
    jiff::Timestamp::now().to_string()
}

fn io(what: &str, path: &std::path::Path, e: std::io::Error) -> HostError {
    HostError::io(ErrorCode::StoreIo, what, path, e)
}

impl Store {
    /// Opens the store for reading (creating it if needed). Does not take the lock.
    pub fn open(dir: &DataDir) -> HostResult<Store> {
        fs::create_dir_all(dir.root())
            .map_err(|e| io("cannot create data directory", dir.root(), e))?;
        let conn = schema::open(&dir.db_path())?;
        Ok(Store {
            dir: dir.clone(),
            conn,
            lock: None,
        })
    }

    /// Opens the store for changes: takes the exclusive lock (waiting for another AppHost
    /// process if needed) and recovers any interrupted operation.
    pub fn open_locked(dir: &DataDir) -> HostResult<(Store, Vec<Recovered>)> {
        let mut store = Store::open(dir)?;
        let lock_path = dir.lock_path();
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
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

    pub fn trusted_keys(&self) -> HostResult<Vec<TrustedKey>> {
        let mut stmt = self
            .conn
            .prepare("SELECT key_id, public_key, name FROM trusted_keys ORDER BY key_id")?;
        let rows = stmt.query_map([], |r| {
            Ok(TrustedKey {
                key_id: r.get(0)?,
                public_key: r.get(1)?,
                name: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn add_trusted_key(&self, key: &TrustedKey) -> HostResult<()> {
        self.require_lock()?;
        let tx = self.conn.unchecked_transaction()?;
        tx.execute(
            "INSERT INTO trusted_keys (key_id, public_key, name, added_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (key_id) DO UPDATE SET name = excluded.name",
            params![key.key_id, key.public_key, key.name, now_str()],
        )?;
        audit(
            &tx,
            "trust.add",
            None,
            None,
            &serde_json::json!({"keyId": key.key_id, "name": key.name}),
        )?;
        tx.commit()?;
        Ok(())
    }

    pub fn remove_trusted_key(&self, key_id: &str) -> HostResult<()> {
        self.require_lock()?;
        let tx = self.conn.unchecked_transaction()?;
        if tx.execute("DELETE FROM trusted_keys WHERE key_id = ?1", [key_id])? == 0 {
            return Err(
                HostError::new(ErrorCode::KeyNotFound, format!("no trusted key {key_id}"))
                    .with("keyId", key_id),
            );
        }
        audit(
            &tx,
            "trust.remove",
            None,
            None,
            &serde_json::json!({"keyId": key_id}),
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Every stored setting, by key.
    pub fn settings(&self) -> HostResult<std::collections::BTreeMap<String, String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT key, value FROM settings ORDER BY key")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Stores a setting after checking it (`None` removes it).
    pub fn set_setting(&self, key: &str, value: Option<&str>) -> HostResult<()> {
        self.require_lock()?;
        let check = |v: &str| {
            crate::limits::Limits::default()
                .apply_setting(key, v)
                .map_err(|m| HostError::new(ErrorCode::SettingInvalid, m).with("key", key))
        };
        let tx = self.conn.unchecked_transaction()?;
        match value {
            Some(v) => {
                check(v)?;
                tx.execute(
                    "INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    params![key, v.trim()],
                )?;
            }
            None => {
                check("1")?;
                tx.execute("DELETE FROM settings WHERE key = ?1", [key])?;
            }
        }
        audit(
            &tx,
            "setting",
            None,
            None,
            &serde_json::json!({"key": key, "value": value}),
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The limits in effect: defaults overridden by stored settings.
    pub fn limits(&self) -> HostResult<crate::limits::Limits> {
        let mut limits = crate::limits::Limits::default();
        for (k, v) in self.settings()? {
            if k.starts_with("limits.") {
                limits
                    .apply_setting(&k, &v)
                    .map_err(|m| HostError::new(ErrorCode::StoreCorrupt, m).with("key", k))?;
            }
        }
        Ok(limits)
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
    ) -> HostResult<Vec<crate::hashing::FileRecord>> {
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
            out.push(crate::hashing::FileRecord {
                path,
                size: size as u64,
                sha256: sha,
            });
        }
        out.sort_by(|a, b| crate::package::path::cli_order(&a.path, &b.path));
        Ok(out)
    }

    /// The stored manifest of an installed version.
    pub fn manifest(&self, name: &str, version: &str) -> HostResult<Manifest> {
        let row = self.version_row(name, version)?;
        stored_manifest(&row.manifest_json)
    }

    /// Readiness of the active version of an installed app, now.
    pub fn readiness(&self, name: &str, profile: &HostProfile) -> HostResult<Report> {
        let app = self.app_row(name)?;
        let manifest = self.manifest(name, &app.active)?;
        let files = self.file_records(name, &app.active)?;
        let mut state = HostState::preview(jiff::Timestamp::now());
        state.disabled = !app.enabled;
        state.grants = Grants::Granted(self.grants_of(name)?);
        Ok(readiness::evaluate(&manifest, &files, profile, &state))
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

    pub fn summary(&self, name: &str, profile: &HostProfile) -> HostResult<AppSummary> {
        let app = self.app_row(name)?;
        let row = self.version_row(name, &app.active)?;
        let manifest = stored_manifest(&row.manifest_json)?;
        let readiness = self.readiness(name, profile)?;
        Ok(AppSummary {
            name: name.to_owned(),
            display_name: manifest.str("displayName").map(str::to_owned),
            description: manifest.str("description").unwrap_or_default().to_owned(),
            active_version: app.active.clone(),
            previous_version: app.previous.clone(),
            versions: self.versions_of(name)?,
            enabled: app.enabled,
            trust: row.trust,
            sideloaded: row.sideloaded,
            readiness: readiness.status.as_str().to_owned(),
            package_hash: row.package_hash,
            installed_at: app.installed_at,
            updated_at: app.updated_at,
            entries: entry_summaries(&manifest),
        })
    }

    /// Every installed app, by name.
    pub fn list_apps(&self) -> HostResult<Vec<AppSummary>> {
        let profile = HostProfile::current();
        self.app_names()?
            .iter()
            .map(|n| self.summary(n, &profile))
            .collect()
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

/// The entries of a manifest, in order; entries without a string `key` are skipped.
fn entry_summaries(manifest: &Manifest) -> Vec<EntrySummary> {
    let text = |e: &serde_json::Map<String, Value>, k: &str| {
        e.get(k).and_then(Value::as_str).map(str::to_owned)
    };
    manifest
        .array("entries")
        .iter()
        .filter_map(Value::as_object)
        .filter_map(|e| {
            let kind = text(e, "kind").unwrap_or_default();
            Some(EntrySummary {
                key: text(e, "key")?,
                mountable: crate::bridge::mounting::MOUNTABLE_KINDS.contains(&kind.as_str()),
                kind,
                title: text(e, "title"),
            })
        })
        .collect()
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
    conn.execute(
        "INSERT INTO audit_log (at, action, app, version, details) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![now_str(), action, app, version, details.to_string()],
    )?;
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
