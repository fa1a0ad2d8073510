//! What `lime.storage` needs from the store for one app version: the migrations the install
//! review showed (`storage.plannedMigrations` in the stored projection: path, size, SHA-256, in
//! order), the declared tables (`storage/schema.json`, read as verified bytes), the quota, and
//! the record of a failed migration batch (`storage_failures`, which blocks that version).

use rusqlite::{params, OptionalExtension};
use serde_json::Value;

use super::{audit, now_str, Store};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::install::manifest::Storage;
use crate::install::readiness::StorageFailure;
use runtime_core::app_storage::{TableDecl, DEFAULT_QUOTA_BYTES, MAX_QUOTA_BYTES};

/// Largest `storage/schema.json` the host reads.
pub const MAX_SCHEMA_BYTES: u64 = 256 * 1024;
/// Most tables a schema may declare.
pub const MAX_TABLES: usize = 256;

/// One migration as the review showed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedMigration {
    /// The file name (`001_init.sql`): the id recorded in the app's database.
    pub id: String,
    pub path: String,
    pub size: u64,
    pub sha256: String,
}

/// The storage facts of one installed app version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoragePlan {
    /// Whether the manifest has a `storage` block (else: key-value only, no migrations).
    pub declared: bool,
    pub quota: u64,
    pub migrations: Vec<PlannedMigration>,
    /// `storage.schema`, as a package path.
    pub schema_path: Option<String>,
}

/// `storage.quota`: a byte count, or a string `<n>` with `B`, `KB`/`MB`/`GB` (powers of 1000)
/// or `KiB`/`MiB`/`GiB` (powers of 1024), e.g. `"100MB"`. Capped at [`MAX_QUOTA_BYTES`]; absent or
/// unreadable means [`DEFAULT_QUOTA_BYTES`].
pub fn quota_from(storage: Option<Storage>) -> u64 {
    let parsed = match storage.and_then(Storage::quota) {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(t)) => parse_size(t),
        _ => None,
    };
    parsed.map_or(DEFAULT_QUOTA_BYTES, |q| q.min(MAX_QUOTA_BYTES))
}

/// A size such as `100MB`, `1 GiB` or `2048` (bytes): the units of `storage.quota`.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "KB" | "kB" => 1000,
        "MB" => 1000 * 1000,
        "GB" => 1000 * 1000 * 1000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mult)
}

impl Store {
    /// The storage plan of `name@version`, from what the install recorded.
    pub fn storage_plan(&self, name: &str, version: &str) -> HostResult<StoragePlan> {
        let row = self.version_row(name, version)?;
        let manifest = super::stored_manifest(&row.manifest_json)?;
        let projection: Value = serde_json::from_str(&row.projection_json).map_err(|e| {
            HostError::new(
                ErrorCode::StoreCorrupt,
                format!("stored projection of {name}@{version}: {e}"),
            )
        })?;
        let storage = manifest.view().storage();
        let mut migrations = Vec::new();
        for m in projection
            .pointer("/storage/plannedMigrations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (Some(path), Some(sha256), Some(size)) = (
                m.get("path").and_then(Value::as_str),
                m.get("sha256").and_then(Value::as_str),
                m.get("size").and_then(Value::as_u64),
            ) else {
                return Err(HostError::new(
                    ErrorCode::StoreCorrupt,
                    format!("stored migration plan of {name}@{version} is malformed"),
                ));
            };
            migrations.push(PlannedMigration {
                id: path.rsplit('/').next().unwrap_or(path).to_owned(),
                path: path.to_owned(),
                size,
                sha256: sha256.to_owned(),
            });
        }
        Ok(StoragePlan {
            declared: storage.is_some(),
            quota: quota_from(storage),
            migrations,
            schema_path: storage
                .and_then(Storage::schema)
                .and_then(Value::as_str)
                .map(crate::install::projection::package_path)
                .filter(|p| !p.is_empty()),
        })
    }

    /// The tables `storage/schema.json` of `name@version` declares (verified bytes; bounded).
    /// A missing, oversized or malformed schema declares no table.
    pub fn storage_tables(&self, name: &str, plan: &StoragePlan, version: &str) -> Vec<TableDecl> {
        let Some(path) = &plan.schema_path else {
            return Vec::new();
        };
        let size: Option<i64> = self
            .conn
            .query_row(
                "SELECT size FROM version_files WHERE name = ?1 AND version = ?2 AND path = ?3",
                params![name, version, path],
                |r| r.get(0),
            )
            .optional()
            .ok()
            .flatten();
        if size.is_none_or(|s| s < 0 || s as u64 > MAX_SCHEMA_BYTES) {
            return Vec::new();
        }
        let Ok(bytes) = self.read_file(name, version, path) else {
            return Vec::new();
        };
        let Ok(doc) = serde_json::from_slice::<Value>(&bytes) else {
            return Vec::new();
        };
        doc.get("tables")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| {
                let name = t.get("name").and_then(Value::as_str)?;
                Some(TableDecl {
                    name: name.to_owned(),
                    primary_key: t
                        .get("primaryKey")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                })
            })
            .take(MAX_TABLES)
            .collect()
    }

    /// Why `name@version`'s migrations failed, if they did.
    pub fn storage_failure(&self, name: &str, version: &str) -> HostResult<Option<StorageFailure>> {
        Ok(self
            .conn
            .query_row(
                "SELECT cause, migration, message FROM storage_failures WHERE name = ?1 AND version = ?2",
                params![name, version],
                |r| {
                    Ok(StorageFailure {
                        cause: r.get(0)?,
                        migration: r.get(1)?,
                        message: r.get(2)?,
                    })
                },
            )
            .optional()?)
    }

    /// Records that `name@version`'s migrations failed (audited); readiness then shows that
    /// version `blocked` until an update or a rollback makes another version active.
    pub fn record_storage_failure(
        &self,
        name: &str,
        version: &str,
        failure: &StorageFailure,
    ) -> HostResult<()> {
        let tx = self.conn.unchecked_transaction()?;
        tx.execute(
            "INSERT INTO storage_failures (name, version, cause, migration, message, failed_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (name, version) DO UPDATE SET cause = excluded.cause,
                 migration = excluded.migration, message = excluded.message,
                 failed_at = excluded.failed_at",
            params![
                name,
                version,
                failure.cause,
                failure.migration,
                failure.message,
                now_str()
            ],
        )?;
        audit(
            &tx,
            "storage.migration_failed",
            Some(name),
            Some(version),
            &serde_json::to_value(failure).unwrap_or(Value::Null),
        )?;
        tx.commit()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quota_field_is_parsed_capped_and_defaulted() {
        let q = |v: Value| {
            let decl = json!({ "quota": v });
            quota_from(Some(Storage::new(&decl)))
        };
        assert_eq!(q(json!(1_000_000)), 1_000_000);
        assert_eq!(q(json!("100MB")), 100_000_000);
        assert_eq!(q(json!("8 MiB")), 8 << 20);
        assert_eq!(q(json!("5TB")), DEFAULT_QUOTA_BYTES);
        assert_eq!(q(json!("99999999999999999999GB")), DEFAULT_QUOTA_BYTES);
        assert_eq!(q(json!(u64::MAX)), MAX_QUOTA_BYTES);
        assert_eq!(q(json!(-1)), DEFAULT_QUOTA_BYTES);
        assert_eq!(quota_from(None), DEFAULT_QUOTA_BYTES);
    }
}
