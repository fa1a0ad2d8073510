//! `lime.files` refs in `host.db` (`file_refs`, schema v4): a document or folder the user chose
//! for one app, named to the app only by an opaque random 128-bit ref (`fref_` + 32 hex
//! digits), never by its path. Granting, revoking and removing are audited (`files.grant`,
//! `files.revoke`); uninstall in any data mode removes the app's refs (and their uploaded
//! copies, `uploads/files/<ref>`). A revoked ref keeps its row (with `revoked_at`) for the
//! record, but answers exactly like a ref that never existed.
//!
//! This module only keeps rows: what a path may be (a regular file or a directory, no link,
//! no special file) and how it is read are `hosting::user_files`.

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use super::{audit, now_str, Store};
use crate::foundation::error::{ErrorCode, HostError, HostResult};

/// Most live refs one app holds (a grant beyond it is `files.too_many_refs`).
pub const MAX_REFS_PER_APP: usize = 1000;

/// What a ref names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FileRefKind {
    File,
    Folder,
}

impl FileRefKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FileRefKind::File => "file",
            FileRefKind::Folder => "folder",
        }
    }
    fn parse(s: &str) -> Option<FileRefKind> {
        match s {
            "file" => Some(FileRefKind::File),
            "folder" => Some(FileRefKind::Folder),
            _ => None,
        }
    }
}

/// Where the granted bytes live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FileRefOrigin {
    /// A path on this machine the user named (CLI, the desktop's dialog).
    Path,
    /// A copy the user uploaded to `apphost serve`, kept under `uploads/files/<ref>`.
    Upload,
}

impl FileRefOrigin {
    fn as_str(self) -> &'static str {
        match self {
            FileRefOrigin::Path => "path",
            FileRefOrigin::Upload => "upload",
        }
    }
}

/// What the grant records about the file or folder when it is granted.
#[derive(Debug, Clone)]
pub struct NewFileRef {
    pub kind: FileRefKind,
    /// Absolute path (for an upload, the kept copy).
    pub path: String,
    pub display_name: String,
    pub size: u64,
    /// Seconds since the epoch.
    pub mtime: i64,
    pub origin: FileRefOrigin,
}

/// One ref, as the host (never the app) sees it: with its path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileRef {
    pub app: String,
    #[serde(rename = "ref")]
    pub handle: String,
    pub kind: FileRefKind,
    pub path: String,
    pub display_name: String,
    pub size: u64,
    pub mtime: i64,
    pub origin: FileRefOrigin,
    pub created_at: String,
}

/// Whether `s` has the shape of a ref (`fref_` + 32 lowercase hex digits).
pub fn is_ref_shape(s: &str) -> bool {
    s.len() == 37
        && s.starts_with("fref_")
        && s.as_bytes()[5..]
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
}

impl Store {
    /// Records a new ref of `app` (audited `files.grant`, without the path's text beyond its
    /// display name). The app must be installed.
    pub fn grant_file_ref(&self, app: &str, new: &NewFileRef) -> HostResult<FileRef> {
        let handle = format!("fref_{}", crate::foundation::random::random_id()?);
        let tx = self.immediate_transaction()?;
        let version: Option<String> = tx
            .query_row(
                "SELECT active_version FROM apps WHERE name = ?1",
                [app],
                |r| r.get(0),
            )
            .optional()?;
        let Some(version) = version else {
            return Err(HostError::new(
                ErrorCode::AppNotInstalled,
                format!("{app} is not installed"),
            )
            .with("app", app));
        };
        let live: i64 = tx.query_row(
            "SELECT COUNT(*) FROM file_refs WHERE app = ?1 AND revoked_at IS NULL",
            [app],
            |r| r.get(0),
        )?;
        if live as usize >= MAX_REFS_PER_APP {
            return Err(HostError::new(
                ErrorCode::FilesTooManyRefs,
                format!("{app} holds {live} file refs already (at most {MAX_REFS_PER_APP}); revoke some first"),
            )
            .with("app", app));
        }
        let created_at = now_str();
        tx.execute(
            "INSERT INTO file_refs (ref, app, kind, path, display_name, size, mtime, origin, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                handle,
                app,
                new.kind.as_str(),
                new.path,
                new.display_name,
                new.size as i64,
                new.mtime,
                new.origin.as_str(),
                created_at
            ],
        )?;
        audit(
            &tx,
            "files.grant",
            Some(app),
            Some(&version),
            &serde_json::json!({
                "ref": handle, "kind": new.kind.as_str(), "name": new.display_name,
                "size": new.size, "origin": new.origin.as_str(),
            }),
        )?;
        tx.commit()?;
        Ok(FileRef {
            app: app.to_owned(),
            handle,
            kind: new.kind,
            path: new.path.clone(),
            display_name: new.display_name.clone(),
            size: new.size,
            mtime: new.mtime,
            origin: new.origin,
            created_at,
        })
    }

    /// The live refs of `app`, oldest first (at most [`MAX_REFS_PER_APP`]).
    pub fn file_refs(&self, app: &str) -> HostResult<Vec<FileRef>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {COLUMNS} FROM file_refs WHERE app = ?1 AND revoked_at IS NULL
             ORDER BY created_at, ref LIMIT {MAX_REFS_PER_APP}"
        ))?;
        let rows = stmt.query_map([app], row)?;
        rows.map(|r| r?).collect()
    }

    /// The live ref `handle` of `app`; `None` for an unknown ref, a revoked one and another
    /// app's (the caller answers all three the same way).
    pub fn file_ref(&self, app: &str, handle: &str) -> HostResult<Option<FileRef>> {
        if !is_ref_shape(handle) {
            return Ok(None);
        }
        let found = self
            .conn
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM file_refs WHERE ref = ?1 AND app = ?2 AND revoked_at IS NULL"
                ),
                params![handle, app],
                row,
            )
            .optional()?;
        found.transpose()
    }

    /// Revokes a live ref of `app` (audited `files.revoke`): the next read of it is
    /// `files.ref_not_found`. Returns the revoked ref (an upload's copy is for the caller to
    /// remove); `files.ref_not_found` when `app` has no such live ref.
    pub fn revoke_file_ref(&self, app: &str, handle: &str) -> HostResult<FileRef> {
        let tx = self.immediate_transaction()?;
        let found = if is_ref_shape(handle) {
            tx.query_row(
                &format!(
                    "SELECT {COLUMNS} FROM file_refs WHERE ref = ?1 AND app = ?2 AND revoked_at IS NULL"
                ),
                params![handle, app],
                row,
            )
            .optional()?
            .transpose()?
        } else {
            None
        };
        let Some(found) = found else {
            return Err(not_found(app));
        };
        tx.execute(
            "UPDATE file_refs SET revoked_at = ?2 WHERE ref = ?1",
            params![handle, now_str()],
        )?;
        audit(
            &tx,
            "files.revoke",
            Some(app),
            None,
            &serde_json::json!({ "ref": handle, "name": found.display_name }),
        )?;
        tx.commit()?;
        Ok(found)
    }
}

impl Store {
    /// Sets where an uploaded ref's copy is kept (once, right after the grant recorded it).
    pub fn set_file_ref_path(&self, handle: &str, path: &str) -> HostResult<()> {
        self.conn.execute(
            "UPDATE file_refs SET path = ?2 WHERE ref = ?1",
            params![handle, path],
        )?;
        Ok(())
    }
}

/// `files.ref_not_found` for `app` (the same for unknown, revoked and other apps' refs).
pub fn not_found(app: &str) -> HostError {
    HostError::new(
        ErrorCode::FilesRefNotFound,
        format!("{app} has no such file ref"),
    )
    .with("app", app)
}

/// Deletes every ref row of `app` (inside the uninstall's transaction) and returns the
/// uploaded copies to remove after its commit.
pub(super) fn delete_all(tx: &Connection, app: &str) -> HostResult<Vec<String>> {
    let uploads: Vec<String> = {
        let mut stmt = tx.prepare(
            "SELECT ref FROM file_refs WHERE app = ?1 AND origin = 'upload' AND revoked_at IS NULL",
        )?;
        let rows = stmt.query_map([app], |r| r.get::<_, String>(0))?;
        rows.collect::<Result<_, _>>()?
    };
    let removed = tx.execute("DELETE FROM file_refs WHERE app = ?1", [app])?;
    if removed > 0 {
        audit(
            tx,
            "files.remove_all",
            Some(app),
            None,
            &serde_json::json!({ "refs": removed }),
        )?;
    }
    Ok(uploads)
}

const COLUMNS: &str = "app, ref, kind, path, display_name, size, mtime, origin, created_at";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<HostResult<FileRef>> {
    let kind: String = r.get(2)?;
    let origin: String = r.get(7)?;
    let handle: String = r.get(1)?;
    let corrupt = |what: &str| {
        HostError::new(
            ErrorCode::StoreCorrupt,
            format!("file ref {handle}: bad {what}"),
        )
    };
    let Some(kind) = FileRefKind::parse(&kind) else {
        return Ok(Err(corrupt("kind")));
    };
    let origin = match origin.as_str() {
        "path" => FileRefOrigin::Path,
        "upload" => FileRefOrigin::Upload,
        _ => return Ok(Err(corrupt("origin"))),
    };
    Ok(Ok(FileRef {
        app: r.get(0)?,
        handle,
        kind,
        path: r.get(3)?,
        display_name: r.get(4)?,
        size: r.get::<_, i64>(5)?.max(0) as u64,
        mtime: r.get(6)?,
        origin,
        created_at: r.get(8)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ref_shape_is_exact() {
        assert!(is_ref_shape("fref_0123456789abcdef0123456789abcdef"));
        assert!(!is_ref_shape("fref_0123456789ABCDEF0123456789abcdef"));
        assert!(!is_ref_shape("/etc/passwd"));
        assert!(!is_ref_shape("file:///etc/passwd"));
        assert!(!is_ref_shape("fref_0123456789abcdef0123456789abcde"));
        assert!(!is_ref_shape("fref_0123456789abcdef0123456789abcdeg"));
        assert!(!is_ref_shape("fref_0123456789abcdef0123456789abcd\u{e9}"));
    }
}
