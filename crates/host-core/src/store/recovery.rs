//! Finishing or undoing operations that were interrupted (crash, kill, power loss).

use std::fs;

use serde::Serialize;

use super::{blobs, journal, Store};
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

pub(super) fn recover(store: &Store) -> HostResult<Vec<Recovered>> {
    let staging = super::staging_root(&store.dir);
    let mut out = Vec::new();
    let entries: Vec<_> = match fs::read_dir(&staging) {
        Ok(rd) => rd.filter_map(Result::ok).map(|e| e.path()).collect(),
        Err(_) => Vec::new(),
    };
    let had_leftovers = !entries.is_empty();
    for dir in entries {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
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
        }
        for t in &j.temp_files {
            let _ = fs::remove_file(t);
        }
        if dir.is_dir() {
            fs::remove_dir_all(&dir).map_err(|e| super::io("cannot remove", &dir, e))?;
        } else {
            fs::remove_file(&dir).map_err(|e| super::io("cannot remove", &dir, e))?;
        }
        store
            .conn
            .execute("DELETE FROM ops WHERE op_id = ?1", [&j.op_id])?;
        tracing::info!(op = %j.op_id, committed, "recovered an interrupted operation");
        out.push(Recovered {
            op_id: j.op_id,
            kind: j.kind,
            app: j.app,
            action: if committed {
                "rolled-forward"
            } else {
                "rolled-back"
            },
        });
    }
    // Operation markers whose staging folder is gone are finished.
    store.conn.execute("DELETE FROM ops", [])?;
    if had_leftovers {
        let referenced = store.referenced_blobs()?;
        blobs::gc(&store.dir.blobs(), &referenced)?;
    }
    Ok(out)
}
