//! `apphost verify`: is the store consistent and is every installed file intact?
//!
//! Checks the database (integrity, foreign keys, active/previous versions exist), that every
//! referenced blob exists with the recorded size and its content still hashes to its name
//! (catches files tampered with after install), that no blob is unreferenced, and that nothing
//! is left in staging.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;

use serde::Serialize;

use super::blobs::{blob_path, scan};
use super::{Recovered, Store};
use crate::error::HostResult;
use crate::hashing::FileHasher;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    pub code: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    pub ok: bool,
    pub recovered: Vec<Recovered>,
    pub apps: usize,
    pub versions: usize,
    pub blobs: usize,
    pub bytes_hashed: u64,
    pub problems: Vec<Problem>,
}

impl Store {
    /// Verifies the whole store (or one app). `deep` rehashes every blob.
    pub fn verify(
        &self,
        only_app: Option<&str>,
        deep: bool,
        recovered: Vec<Recovered>,
    ) -> HostResult<VerifyReport> {
        let mut problems = Vec::new();
        let mut p =
            |code: &'static str, message: String, app: Option<&str>, path: Option<String>| {
                problems.push(Problem {
                    code,
                    message,
                    app: app.map(str::to_owned),
                    path,
                });
            };
        if let Some(app) = only_app {
            self.app_row(app)?;
        }
        let integrity: String = self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
        if integrity != "ok" {
            p(
                "db.integrity",
                format!("host.db integrity check: {integrity}"),
                None,
                None,
            );
        }
        let fk_violations: i64 =
            self.conn
                .query_row("SELECT COUNT(*) FROM pragma_foreign_key_check", [], |r| {
                    r.get(0)
                })?;
        if fk_violations > 0 {
            p(
                "db.foreign_keys",
                format!("{fk_violations} rows violate foreign keys"),
                None,
                None,
            );
        }
        let mut stmt = self.conn.prepare(
            "SELECT a.name, a.active_version, a.previous_version,
                    EXISTS (SELECT 1 FROM app_versions v WHERE v.name = a.name AND v.version = a.active_version),
                    a.previous_version IS NULL OR EXISTS (SELECT 1 FROM app_versions v WHERE v.name = a.name AND v.version = a.previous_version)
             FROM apps a ORDER BY a.name",
        )?;
        let apps: Vec<(String, String, Option<String>, bool, bool)> = stmt
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })?
            .collect::<Result<_, _>>()?;
        for (name, active, prev, has_active, has_prev) in &apps {
            if only_app.is_some_and(|a| a != name) {
                continue;
            }
            if !has_active {
                p(
                    "app.missing_version",
                    format!("{name}: active version {active} is not installed"),
                    Some(name),
                    None,
                );
            }
            if !has_prev {
                p(
                    "app.missing_version",
                    format!(
                        "{name}: previous version {} is not installed",
                        prev.as_deref().unwrap_or("")
                    ),
                    Some(name),
                    None,
                );
            }
        }
        let orphan_versions: i64 = self.conn.query_row("SELECT COUNT(*) FROM app_versions v WHERE NOT EXISTS (SELECT 1 FROM apps a WHERE a.name = v.name)", [], |r| r.get(0))?;
        if orphan_versions > 0 {
            p(
                "app.orphan_version",
                format!("{orphan_versions} installed versions belong to no app"),
                None,
                None,
            );
        }
        let versions: i64 = self
            .conn
            .query_row("SELECT COUNT(*) FROM app_versions", [], |r| r.get(0))?;

        // blob -> (size, first owner)
        let mut referenced: BTreeMap<String, (u64, String, String)> = BTreeMap::new();
        {
            let mut stmt = self.conn.prepare("SELECT blob, size, name, version || ':' || path FROM version_files ORDER BY name, version, path")?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })?;
            for row in rows {
                let (blob, size, name, path) = row?;
                if only_app.is_none_or(|a| a == name) {
                    referenced.entry(blob).or_insert((size as u64, name, path));
                }
            }
        }
        let blobs_dir = self.dir.blobs();
        let mut bytes_hashed = 0;
        let mut buf = vec![0u8; 256 * 1024];
        for (blob, (size, app, path)) in &referenced {
            let file = blob_path(&blobs_dir, blob);
            let meta = match fs::metadata(&file) {
                Ok(m) => m,
                Err(_) => {
                    p(
                        "blob.missing",
                        format!("{app}: {path} is missing from the store"),
                        Some(app),
                        Some(path.clone()),
                    );
                    continue;
                }
            };
            if meta.len() != *size {
                p(
                    "blob.size_mismatch",
                    format!("{app}: {path} has {} bytes, {size} expected", meta.len()),
                    Some(app),
                    Some(path.clone()),
                );
                continue;
            }
            if deep {
                let mut h = FileHasher::default();
                let mut f =
                    fs::File::open(&file).map_err(|e| super::io("cannot open", &file, e))?;
                loop {
                    let n = f
                        .read(&mut buf)
                        .map_err(|e| super::io("cannot read", &file, e))?;
                    if n == 0 {
                        break;
                    }
                    h.update(&buf[..n]);
                }
                bytes_hashed += meta.len();
                if hex::encode(h.finish()) != *blob {
                    p("blob.hash_mismatch", format!("{app}: {path} was modified after install (its content no longer matches its hash)"), Some(app), Some(path.clone()));
                }
            }
        }
        let (on_disk, strays) = scan(&blobs_dir)?;
        if only_app.is_none() {
            for blob in on_disk.iter().filter(|b| !referenced.contains_key(*b)) {
                p(
                    "blob.orphan",
                    format!("blob {blob} is not referenced by any installed app"),
                    None,
                    Some(blob.clone()),
                );
            }
            for s in strays {
                p(
                    "blob.stray",
                    format!("{} is not a blob", s.display()),
                    None,
                    Some(s.display().to_string()),
                );
            }
            if let Ok(rd) = fs::read_dir(self.dir.staging()) {
                for e in rd.flatten() {
                    p(
                        "staging.leftover",
                        format!(
                            "{} is left over from an interrupted operation",
                            e.path().display()
                        ),
                        None,
                        Some(e.path().display().to_string()),
                    );
                }
            }
        }
        Ok(VerifyReport {
            ok: problems.is_empty(),
            recovered,
            apps: apps
                .iter()
                .filter(|a| only_app.is_none_or(|o| o == a.0))
                .count(),
            versions: versions as usize,
            blobs: referenced.len(),
            bytes_hashed,
            problems,
        })
    }
}
