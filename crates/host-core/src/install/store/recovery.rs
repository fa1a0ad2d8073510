//! Finishing or undoing operations that were interrupted (crash, kill, power loss).
//!
//! Recovery is itself crash-safe: it restores moved data, removes files the operation created,
//! collects garbage (unrecorded blobs and packs), and only then retires each staging folder (renamed to `*.trash`
//! atomically, then deleted). A recovery killed at any point leaves the staging folders in
//! place, so the next one does the whole job again.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::staging_fs::{self, remove_any, remove_file_if_present, retire, TRASH_SUFFIX};
use super::{failpoint, journal, Store};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Recovered {
    pub op_id: String,
    pub kind: String,
    pub app: Option<String>,
    /// `rolled-forward` (it had committed) or `rolled-back`.
    pub action: &'static str,
    /// Data the operation had set aside that could not be put back: kept, never deleted.
    pub quarantined: Vec<Quarantined>,
}

/// Data recovery kept in `<data>/quarantine/<op>/` instead of restoring it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Quarantined {
    /// Where the data was before the operation set it aside.
    pub original: String,
    /// Where it is now.
    pub path: String,
    pub reason: String,
}

/// What a staging folder may hold besides data set aside (the journal, the staged pack).
const OWN_FILES: [&str; 3] = ["journal.json", "journal.json.tmp", "pack"];

pub(super) fn recover(store: &Store) -> HostResult<Vec<Recovered>> {
    let staging = super::staging_root(&store.dir);
    let entries: Vec<_> = match fs::read_dir(&staging) {
        Ok(rd) => rd
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| super::io("cannot read", &staging, e))?
            .into_iter()
            // Uploads awaiting review belong to the process that took them, not to an operation.
            .filter(|p| !is_uploads(p))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(super::io("cannot read", &staging, e)),
    };
    if entries.is_empty() {
        store.conn.execute("DELETE FROM ops", [])?;
        // Cheap: only lists packs/. Catches pack files left by a crash outside any operation.
        super::packs::sweep(&store.conn, &store.dir.packs())?;
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let mut live = Vec::new();
    for dir in entries {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.ends_with(TRASH_SUFFIX) {
            continue; // already retired; deleted below
        }
        let mut quarantined = Vec::new();
        let j = match journal::read(&dir) {
            Some(j) => j,
            None => {
                // No readable journal: nothing says what the folder holds, so anything in it
                // besides the journal and the staged pack is kept.
                quarantine_unknown(&store.dir, &dir, &name, &mut quarantined)?;
                journal::Journal {
                    op_id: name.clone(),
                    kind: "unknown".into(),
                    ..Default::default()
                }
            }
        };
        let committed: bool = store.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM ops WHERE op_id = ?1)",
            [&j.op_id],
            |r| r.get(0),
        )?;
        if !committed {
            for m in j.moves.iter().rev() {
                restore(&store.dir, &j.op_id, m, &mut quarantined)?;
            }
            for f in &j.rollback_files {
                remove_file_if_present(f)?;
            }
        }
        for t in &j.temp_files {
            remove_file_if_present(t)?;
        }
        tracing::info!(op = %j.op_id, committed, "recovering an interrupted operation");
        for q in &quarantined {
            tracing::warn!(original = %q.original, kept_in = %q.path, "{}", q.reason);
        }
        out.push(Recovered {
            op_id: j.op_id.clone(),
            kind: j.kind,
            app: j.app,
            action: if committed {
                "rolled-forward"
            } else {
                "rolled-back"
            },
            quarantined,
        });
        live.push(dir);
    }
    failpoint::hit("recover.restored");
    store.collect_garbage()?;
    failpoint::hit("recover.collected");
    for dir in live {
        retire(&dir)?;
    }
    // Whatever is left is retired: delete it. Then no operation is in flight.
    let rd = fs::read_dir(&staging).map_err(|e| super::io("cannot read", &staging, e))?;
    for e in rd {
        let e = e.map_err(|e| super::io("cannot read", &staging, e))?;
        if !is_uploads(&e.path()) {
            remove_any(&e.path())?;
        }
    }
    store.conn.execute("DELETE FROM ops", [])?;
    Ok(out)
}

fn is_uploads(path: &Path) -> bool {
    path.file_name() == Some(std::ffi::OsStr::new(crate::foundation::paths::UPLOADS_DIR))
}

/// Puts back what an uncommitted operation moved aside. If it cannot (something is at the
/// original place again, or the move back fails), the data goes to quarantine: recovery never
/// deletes data it set aside.
fn restore(
    data: &DataDir,
    op_id: &str,
    m: &journal::Move,
    quarantined: &mut Vec<Quarantined>,
) -> HostResult<()> {
    if fs::symlink_metadata(&m.to).is_err() {
        return Ok(()); // never moved (crashed before the move), or already put back
    }
    let conflict = if fs::symlink_metadata(&m.from).is_ok() {
        Some(format!(
            "{} exists again, so the data set aside could not be put back",
            m.from.display()
        ))
    } else {
        let parent_ok = match m.from.parent() {
            Some(p) => fs::create_dir_all(p).map_err(|e| e.to_string()),
            None => Ok(()),
        };
        match parent_ok.and_then(|()| fs::rename(&m.to, &m.from).map_err(|e| e.to_string())) {
            Ok(()) => {
                staging_fs::sync_parent(&m.from)?;
                staging_fs::sync_parent(&m.to)?;
                return Ok(());
            }
            Err(e) => Some(format!(
                "the data set aside could not be moved back to {}: {e}",
                m.from.display()
            )),
        }
    };
    let reason = conflict.unwrap_or_default();
    let path = quarantine(data, op_id, &m.to)?;
    quarantined.push(Quarantined {
        original: m.from.display().to_string(),
        path: path.display().to_string(),
        reason,
    });
    Ok(())
}

/// Keeps every entry of a staging folder without a readable journal, except AppHost's own.
fn quarantine_unknown(
    data: &DataDir,
    dir: &Path,
    name: &str,
    quarantined: &mut Vec<Quarantined>,
) -> HostResult<()> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Ok(()); // not a folder: nothing was set aside in it
    };
    for e in rd {
        let e = e.map_err(|e| super::io("cannot read", dir, e))?;
        if OWN_FILES.iter().any(|f| e.file_name() == *f) {
            continue;
        }
        let path = quarantine(data, name, &e.path())?;
        quarantined.push(Quarantined {
            original: e.path().display().to_string(),
            path: path.display().to_string(),
            reason: "the operation's journal is unreadable, so what it set aside is kept".into(),
        });
    }
    Ok(())
}

/// Moves `what` into `<data>/quarantine/<op>/` under a name not yet used there, durably.
fn quarantine(data: &DataDir, op_id: &str, what: &Path) -> HostResult<PathBuf> {
    let dir = data.quarantine().join(op_id);
    runtime_core::private_fs::create_private_dir(&dir)
        .map_err(|e| super::io("cannot create", &dir, e))?;
    staging_fs::sync_parent(&dir)?;
    staging_fs::sync_parent(&data.quarantine())?;
    let base = what
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "data".into());
    let mut dest = dir.join(&base);
    let mut n = 1;
    while fs::symlink_metadata(&dest).is_ok() {
        n += 1;
        dest = dir.join(format!("{base}-{n}"));
    }
    fs::rename(what, &dest).map_err(|e| super::io("cannot quarantine", what, e))?;
    staging_fs::sync_dir(&dir)?;
    staging_fs::sync_parent(what)?;
    failpoint::hit("recover.quarantined");
    Ok(dest)
}

/// One warning per quarantined item, for operations that report warnings.
pub(super) fn quarantine_warnings(recovered: &[Recovered]) -> Vec<HostError> {
    recovered
        .iter()
        .flat_map(|r| &r.quarantined)
        .map(|q| {
            HostError::new(
                ErrorCode::StoreCleanupIncomplete,
                format!("{}; it is kept in {}", q.reason, q.path),
            )
            .with("original", &q.original)
            .with("path", &q.path)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::store::journal::Op;

    fn setup() -> (tempfile::TempDir, DataDir, Store, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let data = DataDir::at(tmp.path().join("data"));
        let (store, _) = Store::open_locked(&data).unwrap();
        let app_dir = data.apps_data().join("demo");
        fs::create_dir_all(app_dir.join("sub")).unwrap();
        fs::write(app_dir.join("sub/notes.db"), b"the app's data").unwrap();
        (tmp, data, store, app_dir)
    }

    /// An uncommitted uninstall that moved the data aside, as a crash leaves it.
    fn interrupted_uninstall(data: &DataDir, app_dir: &Path) -> String {
        let mut op = Op::begin(data, "uninstall", Some("demo")).unwrap();
        op.move_aside(app_dir, "app-data").unwrap();
        op.journal.op_id.clone()
    }

    #[test]
    fn rolled_back_moves_are_put_back() {
        let (_tmp, data, store, app_dir) = setup();
        interrupted_uninstall(&data, &app_dir);
        assert!(!app_dir.exists());
        let rec = recover(&store).unwrap();
        assert_eq!(rec.len(), 1);
        assert_eq!(rec[0].action, "rolled-back");
        assert!(rec[0].quarantined.is_empty());
        assert_eq!(
            fs::read(app_dir.join("sub/notes.db")).unwrap(),
            b"the app's data"
        );
        assert!(!data.quarantine().exists());
    }

    #[test]
    fn set_aside_data_is_quarantined_when_its_place_is_taken() {
        let (_tmp, data, store, app_dir) = setup();
        let op_id = interrupted_uninstall(&data, &app_dir);
        // Something recreated the app's folder before recovery ran.
        fs::create_dir_all(&app_dir).unwrap();
        fs::write(app_dir.join("new.txt"), b"written later").unwrap();

        let rec = recover(&store).unwrap();
        assert_eq!(rec.len(), 1);
        assert_eq!(rec[0].action, "rolled-back");
        let q = &rec[0].quarantined;
        assert_eq!(q.len(), 1, "{rec:?}");
        assert_eq!(q[0].original, app_dir.display().to_string());
        let kept = PathBuf::from(&q[0].path);
        assert!(kept.starts_with(data.quarantine().join(&op_id)), "{kept:?}");
        // Both copies survive: the newer one in place, the set-aside one in quarantine.
        assert_eq!(
            fs::read(kept.join("sub/notes.db")).unwrap(),
            b"the app's data"
        );
        assert_eq!(fs::read(app_dir.join("new.txt")).unwrap(), b"written later");
        assert_eq!(fs::read_dir(data.staging()).unwrap().count(), 0);
        // Reported as a warning too.
        let w = quarantine_warnings(&rec);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].code, ErrorCode::StoreCleanupIncomplete);
    }

    #[test]
    fn a_staging_folder_without_a_journal_keeps_what_it_holds() {
        let (_tmp, data, store, app_dir) = setup();
        interrupted_uninstall(&data, &app_dir);
        let op_dir = fs::read_dir(data.staging())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        fs::write(op_dir.join("journal.json"), b"{ not json").unwrap();
        let rec = recover(&store).unwrap();
        assert_eq!(rec[0].kind, "unknown");
        assert_eq!(rec[0].quarantined.len(), 1, "{rec:?}");
        let kept = PathBuf::from(&rec[0].quarantined[0].path);
        assert_eq!(
            fs::read(kept.join("sub/notes.db")).unwrap(),
            b"the app's data"
        );
    }

    #[test]
    fn op_ids_are_random_and_never_shared() {
        let (_tmp, data, _store, _app) = setup();
        let a = Op::begin(&data, "compact", None).unwrap();
        let b = Op::begin(&data, "compact", None).unwrap();
        assert_ne!(a.journal.op_id, b.journal.op_id);
        let hex = a.journal.op_id.strip_prefix("compact-").unwrap();
        assert_eq!(hex.len(), 32);
        assert!(hex.bytes().all(|c| c.is_ascii_hexdigit()));
    }
}

#[cfg(test)]
mod after_commit_tests {
    use super::*;
    use crate::install::store::journal::Op;

    /// A committed operation whose cleanup fails: a warning, and recovery finishes the job.
    #[test]
    fn a_failure_after_the_commit_point_is_a_warning_and_is_recovered() {
        let tmp = tempfile::tempdir().unwrap();
        let data = DataDir::at(tmp.path().join("data"));
        let (store, _) = Store::open_locked(&data).unwrap();
        let op = Op::begin(&data, "uninstall", Some("demo")).unwrap();
        store
            .conn
            .execute(
                "INSERT INTO ops (op_id, kind, app, committed_at) VALUES (?1, 'uninstall', 'demo', 'now')",
                [&op.journal.op_id],
            )
            .unwrap();
        let warnings = store.after_commit("uninstalling demo", || {
            Err(HostError::new(ErrorCode::StoreIo, "disk trouble"))
        });
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].code, ErrorCode::StoreCleanupIncomplete);
        assert!(warnings[0].message.contains("disk trouble"));
        // Recovery rolled the committed operation forward and retired it.
        assert_eq!(fs::read_dir(data.staging()).unwrap().count(), 0);
        let ops: i64 = store
            .conn
            .query_row("SELECT COUNT(*) FROM ops", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ops, 0);
        drop(op);
        assert!(store.after_commit("nothing", || Ok(())).is_empty());
    }
}
