//! Garbage collection and compaction of packs, and reading installed files back.

use rusqlite::{params, OptionalExtension};

use super::{audit, failpoint, journal, now_str, packs, Store};
use crate::foundation::error::{ErrorCode, HostError, HostResult};

impl Store {
    /// Deletes garbage: unreferenced blob and pack rows (one transaction), then pack files the
    /// database does not record.
    pub(crate) fn collect_garbage(&self) -> HostResult<()> {
        let tx = self.immediate_transaction()?;
        packs::collect_rows(&tx)?;
        tx.commit()?;
        packs::sweep(&self.conn, &self.dir.packs())?;
        Ok(())
    }

    /// Rewrites each pack whose live blobs fill less than half of it, as its own journaled
    /// operation: copy (checking every hash) → place the new pack → one transaction moving the
    /// blob rows → delete the old file. A crash leaves either pack unrecorded, and the next
    /// sweep deletes it.
    ///
    /// Runs after the operation that freed the space has finished, so that at most one
    /// operation is ever in flight.
    pub(crate) fn compact(&self) -> HostResult<()> {
        for (old, size, live) in packs::sparse_packs(&self.conn)? {
            let op = journal::Op::begin(&self.dir, "compact", None)?;
            let tmp = op.dir.join("pack");
            let (entries, new_size) =
                match packs::copy_live(&self.conn, &self.dir.packs(), &old, &tmp) {
                    Ok(x) => x,
                    Err(e) => {
                        // A damaged pack is left as it is, for `verify` to report.
                        tracing::warn!(pack = %old, error = %e, "not compacting");
                        op.finish()?;
                        continue;
                    }
                };
            let new_id = packs::new_id()?;
            packs::place(&tmp, &self.dir.packs(), &new_id)?;
            failpoint::hit("compact.placed");
            let now = now_str();
            let tx = self.immediate_transaction()?;
            tx.execute(
                "INSERT INTO packs (id, size, created_at) VALUES (?1, ?2, ?3)",
                params![new_id, new_size as i64, now],
            )?;
            {
                let mut stmt =
                    tx.prepare("UPDATE blobs SET pack = ?1, offset = ?2 WHERE sha256 = ?3")?;
                for e in &entries {
                    stmt.execute(params![new_id, e.offset as i64, e.sha256])?;
                }
            }
            tx.execute("DELETE FROM packs WHERE id = ?1", [&old])?;
            audit(
                &tx,
                "compact",
                None,
                None,
                &serde_json::json!({"pack": old, "size": size, "live": live, "into": new_id}),
            )?;
            let op_id = op.journal.op_id.clone();
            tx.execute(
                "INSERT INTO ops (op_id, kind, app, committed_at) VALUES (?1, 'compact', NULL, ?2)",
                params![op_id, now],
            )?;
            tx.commit()?;
            failpoint::hit("compact.committed");
            packs::sweep(&self.conn, &self.dir.packs())?;
            op.finish()?;
            self.conn
                .execute("DELETE FROM ops WHERE op_id = ?1", [&op_id])?;
        }
        Ok(())
    }

    /// The content of an installed file, checked against its hash: an error (never silently
    /// wrong bytes) if it was modified after install.
    pub fn read_file(&self, name: &str, version: &str, path: &str) -> HostResult<Vec<u8>> {
        let row: Option<(String, String, i64, i64)> = self
            .conn
            .query_row(
                "SELECT b.sha256, b.pack, b.offset, b.size FROM version_files v JOIN blobs b ON b.sha256 = v.blob
                 WHERE v.name = ?1 AND v.version = ?2 AND v.path = ?3",
                params![name, version, path],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()?;
        let (sha, pack, offset, size) = row.ok_or_else(|| {
            HostError::new(
                ErrorCode::AppNotInstalled,
                format!("{name}@{version} has no file {path}"),
            )
            .with("app", name)
            .with("path", path)
        })?;
        packs::read_verified(&self.dir.packs(), &pack, offset as u64, size as u64, &sha)
    }
}
