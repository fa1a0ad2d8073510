//! `apphost verify`: is the store consistent and is every installed file intact?
//!
//! Checks the database (integrity, foreign keys, active/previous versions exist), that every
//! pack exists with its recorded size, that every installed file's blob is there and (deep) its
//! bytes still hash to its content address (catches files tampered with after install), that
//! nothing is unreferenced or unrecorded, and that nothing is left in staging.

use std::collections::BTreeMap;
use std::fs;

use serde::Serialize;

use super::packs;
use super::{Recovered, Store};
use crate::foundation::error::HostResult;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    pub code: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    pub ok: bool,
    pub recovered: Vec<Recovered>,
    pub apps: usize,
    pub versions: usize,
    pub blobs: usize,
    pub bytes_hashed: u64,
    /// Every blob the store holds (SHA-256 hex, sorted) and the number of pack files.
    pub stored_blobs: Vec<String>,
    pub packs: usize,
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

        // Every referenced blob with its location and its first owner.
        struct Located {
            size: u64,
            app: String,
            path: String,
            pack: Option<(String, u64, u64)>, // (pack, offset, recorded size)
        }
        let mut referenced: BTreeMap<String, Located> = BTreeMap::new();
        {
            let mut stmt = self.conn.prepare(
                "SELECT v.blob, v.size, v.name, v.version || ':' || v.path, b.pack, b.offset, b.size
                 FROM version_files v LEFT JOIN blobs b ON b.sha256 = v.blob ORDER BY v.name, v.version, v.path",
            )?;
            let rows = stmt.query_map([], |r| {
                let pack: Option<String> = r.get(4)?;
                let loc = match pack {
                    Some(p) => Some((p, r.get::<_, i64>(5)? as u64, r.get::<_, i64>(6)? as u64)),
                    None => None,
                };
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)? as u64,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    loc,
                ))
            })?;
            for row in rows {
                let (blob, size, app, path, pack) = row?;
                if only_app.is_none_or(|a| a == app) {
                    referenced.entry(blob).or_insert(Located {
                        size,
                        app,
                        path,
                        pack,
                    });
                }
            }
        }
        let packs_dir = self.dir.packs();
        let recorded: BTreeMap<String, u64> = {
            let mut stmt = self.conn.prepare("SELECT id, size FROM packs")?;
            let rows = stmt.query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })?;
            rows.collect::<Result<_, _>>()?
        };
        // Open each pack once; check its size against the record.
        let mut open: BTreeMap<String, Option<fs::File>> = BTreeMap::new();
        for (id, size) in &recorded {
            let path = packs::pack_path(&packs_dir, id);
            let file = match fs::metadata(&path) {
                Err(_) => {
                    p(
                        "pack.missing",
                        format!("pack {id} is missing from the store"),
                        None,
                        Some(path.display().to_string()),
                    );
                    None
                }
                Ok(m) if m.len() != *size => {
                    p(
                        "pack.size_mismatch",
                        format!("pack {id} has {} bytes, {size} recorded", m.len()),
                        None,
                        Some(path.display().to_string()),
                    );
                    None
                }
                Ok(_) => fs::File::open(&path).ok(),
            };
            open.insert(id.clone(), file);
        }
        let mut bytes_hashed = 0;
        let mut buf = vec![0u8; 256 * 1024];
        for (blob, loc) in &referenced {
            let (app, path) = (&loc.app, &loc.path);
            let Some((pack, offset, size)) = &loc.pack else {
                p(
                    "blob.missing",
                    format!("{app}: {path} is missing from the store"),
                    Some(app),
                    Some(path.clone()),
                );
                continue;
            };
            if *size != loc.size {
                p(
                    "blob.size_mismatch",
                    format!(
                        "{app}: {path} has {size} bytes stored, {} expected",
                        loc.size
                    ),
                    Some(app),
                    Some(path.clone()),
                );
                continue;
            }
            let Some(Some(file)) = open.get_mut(pack) else {
                p(
                    "blob.missing",
                    format!("{app}: {path} is in pack {pack}, which is missing or damaged"),
                    Some(app),
                    Some(path.clone()),
                );
                continue;
            };
            if deep {
                match packs::hash_range(file, *offset, *size, &mut buf) {
                    Ok(d) if hex::encode(d) == *blob => {}
                    Ok(_) => p(
                        "blob.hash_mismatch",
                        format!("{app}: {path} was modified after install (its content no longer matches its hash)"),
                        Some(app),
                        Some(path.clone()),
                    ),
                    Err(e) => p("blob.missing", format!("{app}: {path} cannot be read from pack {pack}: {e}"), Some(app), Some(path.clone())),
                }
                bytes_hashed += size;
            }
        }
        if only_app.is_none() {
            let unreferenced: Vec<String> = {
                let mut stmt = self.conn.prepare("SELECT sha256 FROM blobs WHERE NOT EXISTS (SELECT 1 FROM version_files v WHERE v.blob = blobs.sha256)")?;
                let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
                rows.collect::<Result<_, _>>()?
            };
            for blob in unreferenced {
                p(
                    "blob.orphan",
                    format!("blob {blob} is not referenced by any installed app"),
                    None,
                    Some(blob),
                );
            }
            let (files, strays) = packs::scan(&packs_dir)?;
            for id in files.iter().filter(|id| !recorded.contains_key(*id)) {
                p(
                    "pack.orphan",
                    format!("pack {id} is not recorded in host.db"),
                    None,
                    Some(id.clone()),
                );
            }
            let empty: Vec<String> = {
                let mut stmt = self.conn.prepare("SELECT id FROM packs WHERE NOT EXISTS (SELECT 1 FROM blobs b WHERE b.pack = packs.id)")?;
                let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
                rows.collect::<Result<_, _>>()?
            };
            for id in empty {
                p(
                    "pack.orphan",
                    format!("pack {id} holds no blob"),
                    None,
                    Some(id),
                );
            }
            for s in strays {
                p(
                    "pack.stray",
                    format!("{} is not a pack", s.display()),
                    None,
                    Some(s.display().to_string()),
                );
            }
            if let Ok(rd) = fs::read_dir(self.dir.staging()) {
                for e in rd
                    .flatten()
                    .filter(|e| e.file_name() != crate::foundation::paths::UPLOADS_DIR)
                {
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
            stored_blobs: {
                let mut stmt = self
                    .conn
                    .prepare("SELECT sha256 FROM blobs ORDER BY sha256")?;
                let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
                rows.collect::<Result<_, _>>()?
            },
            packs: recorded.len(),
            problems,
        })
    }
}
