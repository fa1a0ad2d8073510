//! The cleanup plan: every file and row an uninstall would remove, computed without changing
//! anything (available before the app ever runs).

use std::collections::BTreeMap;

use rusqlite::params;
use serde::Serialize;

use super::{app_id, Store};
use crate::foundation::error::HostResult;
use runtime_core::{DataFile, SkippedEntry};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DataMode {
    /// Remove the package and projection; keep the app's data.
    KeepData,
    /// Remove everything the app owns.
    DeleteData,
    /// Zip the app's data to a file, then remove everything.
    ExportThenDelete,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RowGroup {
    pub table: &'static str,
    pub rows: i64,
    pub what: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlobRemoval {
    pub blob: String,
    pub size: u64,
    /// The package paths (`version:path`) this blob holds.
    pub paths: Vec<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackRemoval {
    pub pack: String,
    pub file: String,
    pub size: u64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CleanupPlan {
    pub app: String,
    pub mode: DataMode,
    pub versions: Vec<String>,
    pub rows: Vec<RowGroup>,
    pub blobs_removed: Vec<BlobRemoval>,
    pub blob_bytes_removed: u64,
    /// Blobs this app shares with other installed apps: they stay.
    pub blobs_shared: usize,
    /// Pack files deleted because nothing else lives in them (`packs/<id>.pack`). Packs that
    /// keep other apps' blobs stay (and are compacted when mostly garbage).
    pub pack_files_removed: Vec<PackRemoval>,
    pub data_dir: String,
    #[schemars(with = "Vec<DataFileSchema>")]
    pub data_files_removed: Vec<DataFile>,
    #[schemars(with = "Vec<DataFileSchema>")]
    pub data_files_kept: Vec<DataFile>,
    /// Entries of the app's data that are not regular files (links, FIFOs, sockets, devices),
    /// too deep or unreadable: not listed above, never exported, removed with the folder
    /// (links themselves, never what they point to).
    #[schemars(with = "Vec<SkippedEntrySchema>")]
    pub data_entries_skipped: Vec<SkippedEntry>,
    /// Every regular file in the app's data and their bytes (the lists above stop at
    /// `runtime_core::app_data::MAX_LISTED_FILES`; `dataListingTruncated` says so).
    pub data_file_count: u64,
    pub data_bytes: u64,
    pub data_listing_truncated: bool,
    /// What stays on purpose.
    pub retained: Vec<String>,
}

/// The host API schema of `runtime_core::app_data::DataFile` (runtime-core has no schemars
/// derives on it; `tests/host_api_schemas.rs` validates real plans against this).
#[derive(schemars::JsonSchema)]
#[schemars(rename = "DataFile")]
#[allow(dead_code)]
pub(crate) struct DataFileSchema {
    /// Relative to the app's directory, '/' separated.
    path: String,
    size: u64,
}

/// The host API schema of `runtime_core::app_data::SkippedEntry`.
#[derive(schemars::JsonSchema)]
#[schemars(rename = "SkippedEntry")]
#[allow(dead_code)]
pub(crate) struct SkippedEntrySchema {
    path: String,
    /// `symlink`, `fifo`, `socket`, `block-device`, `char-device`, `directory`, `file`, `unknown`.
    kind: String,
    reason: String,
}

impl Store {
    pub fn cleanup_plan(&self, name: &str, mode: DataMode) -> HostResult<CleanupPlan> {
        self.app_row(name)?;
        let versions = self.versions_of(name)?;
        let count = |sql: &str| -> HostResult<i64> {
            Ok(self.conn.query_row(sql, params![name], |r| r.get(0))?)
        };
        let mut rows = vec![
            RowGroup {
                table: "apps",
                rows: 1,
                what: format!("the catalog entry of {name}"),
            },
            RowGroup {
                table: "app_versions",
                rows: count("SELECT COUNT(*) FROM app_versions WHERE name = ?1")?,
                what: "installed versions, their manifests and projections".into(),
            },
            RowGroup {
                table: "version_files",
                rows: count("SELECT COUNT(*) FROM version_files WHERE name = ?1")?,
                what: "the package file lists".into(),
            },
            RowGroup {
                table: "grants",
                rows: count("SELECT COUNT(*) FROM grants WHERE app = ?1")?,
                what: "granted permissions".into(),
            },
        ];
        if mode != DataMode::KeepData {
            rows.push(RowGroup {
                table: "publishers",
                rows: count("SELECT COUNT(*) FROM publishers WHERE app = ?1")?,
                what: "the publisher pin (the key that signed the active version)".into(),
            });
        }
        let secret_slots = self.secret_bindings(name)?.len() as i64;
        if mode != DataMode::KeepData && secret_slots > 0 {
            rows.push(RowGroup {
                table: "settings",
                rows: secret_slots,
                what: "secret slot bindings (their values leave the secret store too)".into(),
            });
        }

        let mut mine: BTreeMap<String, BlobRemoval> = BTreeMap::new();
        {
            let mut stmt = self.conn.prepare("SELECT blob, size, version, path FROM version_files WHERE name = ?1 ORDER BY version, path")?;
            let it = stmt.query_map([name], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })?;
            for row in it {
                let (blob, size, version, path) = row?;
                mine.entry(blob.clone())
                    .or_insert_with(|| BlobRemoval {
                        blob,
                        size: size as u64,
                        paths: Vec::new(),
                    })
                    .paths
                    .push(format!("{version}:{path}"));
            }
        }
        let mut shared = 0;
        let mut removed = Vec::new();
        for (blob, r) in mine {
            let others: bool = self.conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM version_files WHERE blob = ?1 AND name <> ?2)",
                params![blob, name],
                |row| row.get(0),
            )?;
            if others {
                shared += 1;
            } else {
                removed.push(r);
            }
        }
        let data = self.app_data();
        let id = app_id(name)?;
        // Never fails: an app cannot block its own uninstall with what it writes.
        let listing = data.list(&id);
        let (data_files_removed, data_files_kept) = match mode {
            DataMode::KeepData => (Vec::new(), listing.files),
            _ => (listing.files, Vec::new()),
        };
        let mut retained = vec![format!(
            "host audit log entries for {name} (the host's own record of what happened)"
        )];
        if mode == DataMode::KeepData {
            retained.push(format!("the app's data in {}", data.dir(&id).display()));
            retained.push(format!(
                "the publisher pin of {name}: the kept data goes back only to a package from the same publisher"
            ));
            if secret_slots > 0 {
                retained.push(format!(
                    "the {secret_slots} bound secret slot(s) of {name} and their values"
                ));
            }
        }
        Ok(CleanupPlan {
            app: name.to_owned(),
            mode,
            versions,
            rows,
            pack_files_removed: self.packs_freed(&removed)?,
            blob_bytes_removed: removed.iter().map(|b| b.size).sum(),
            blobs_removed: removed,
            blobs_shared: shared,
            data_dir: data.dir(&id).display().to_string(),
            data_files_removed,
            data_files_kept,
            data_entries_skipped: listing.skipped,
            data_file_count: listing.total_files,
            data_bytes: listing.total_bytes,
            data_listing_truncated: listing.truncated,
            retained,
        })
    }
}

impl Store {
    /// Packs all of whose blobs are in `removed`.
    fn packs_freed(&self, removed: &[BlobRemoval]) -> HostResult<Vec<PackRemoval>> {
        let gone: std::collections::HashSet<&str> =
            removed.iter().map(|b| b.blob.as_str()).collect();
        let mut stmt = self.conn.prepare("SELECT p.id, p.size, b.sha256 FROM packs p JOIN blobs b ON b.pack = p.id ORDER BY p.id")?;
        let rows: Vec<(String, i64, String)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        let mut by_pack: BTreeMap<String, (u64, bool)> = BTreeMap::new();
        for (pack, size, sha) in rows {
            let e = by_pack.entry(pack).or_insert((size as u64, true));
            e.1 &= gone.contains(sha.as_str());
        }
        let dir = self.dir.packs();
        Ok(by_pack
            .into_iter()
            .filter(|(_, (_, all_gone))| *all_gone)
            .map(|(pack, (size, _))| PackRemoval {
                file: super::packs::pack_path(&dir, &pack).display().to_string(),
                pack,
                size,
            })
            .collect())
    }
}
