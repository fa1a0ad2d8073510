//! Finishing or undoing operations that were interrupted (crash, kill, power loss).
//!
//! Recovery is itself crash-safe: it restores moved data, removes files the operation created,
//! collects garbage (unrecorded blobs and packs), and only then retires each staging folder (renamed to `*.trash`
//! atomically, then deleted). A recovery killed at any point leaves the staging folders in
//! place, so the next one does the whole job again.

use std::fs;
use std::path::Path;

use serde::Serialize;

use super::{failpoint, journal, Store};
use crate::error::HostResult;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Recovered {
    pub op_id: String,
    pub kind: String,
    pub app: Option<String>,
    /// `rolled-forward` (it had committed) or `rolled-back`.
    pub action: &'static str,
}

pub const TRASH_SUFFIX: &str = ".trash";

pub(super) fn recover(store: &Store) -> HostResult<Vec<Recovered>> {
    let staging = super::staging_root(&store.dir);
    let entries: Vec<_> = match fs::read_dir(&staging) {
        Ok(rd) => rd.filter_map(Result::ok).map(|e| e.path()).collect(),
        Err(_) => Vec::new(),
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
        let j = journal::read(&dir).unwrap_or(journal::Journal {
            op_id: name.clone(),
            kind: "unknown".into(),
            ..Default::default()
        });
        let committed: bool = store.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM ops WHERE op_id = ?1)",
            [&j.op_id],
            |r| r.get(0),
        )?;
        if !committed {
            for m in j.moves.iter().rev() {
                if m.to.exists() && !m.from.exists() {
                    if let Some(parent) = m.from.parent() {
                        let _ = fs::create_dir_all(parent);
                    }
                    fs::rename(&m.to, &m.from)
                        .map_err(|e| super::io("cannot restore", &m.to, e))?;
                }
            }
            for f in &j.rollback_files {
                remove_file_if_present(f)?;
            }
        }
        for t in &j.temp_files {
            remove_file_if_present(t)?;
        }
        tracing::info!(op = %j.op_id, committed, "recovering an interrupted operation");
        out.push(Recovered {
            op_id: j.op_id.clone(),
            kind: j.kind,
            app: j.app,
            action: if committed {
                "rolled-forward"
            } else {
                "rolled-back"
            },
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
    if let Ok(rd) = fs::read_dir(&staging) {
        for e in rd.flatten() {
            remove_any(&e.path())?;
        }
    }
    store.conn.execute("DELETE FROM ops", [])?;
    Ok(out)
}

/// Marks a staging folder as finished (one atomic rename), then deletes it.
pub(super) fn retire(dir: &Path) -> HostResult<()> {
    let mut trash = dir.as_os_str().to_owned();
    trash.push(TRASH_SUFFIX);
    let trash = std::path::PathBuf::from(trash);
    fs::rename(dir, &trash).map_err(|e| super::io("cannot retire", dir, e))?;
    failpoint::hit("op.retired");
    remove_any(&trash)
}

fn remove_any(path: &Path) -> HostResult<()> {
    let result = if path.is_dir() {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    };
    match result {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(super::io("cannot remove", path, e))
        }
        _ => Ok(()),
    }
}

fn remove_file_if_present(path: &Path) -> HostResult<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(super::io("cannot remove", path, e))
        }
        _ => Ok(()),
    }
}
