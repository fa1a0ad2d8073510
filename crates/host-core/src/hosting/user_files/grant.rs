//! Turning the user's choice into a ref: a path on this machine (`apphost files grant`, the
//! desktop's dialog) or the bytes of a file uploaded to `apphost serve`.
//!
//! A path is made absolute and resolved once (the user's own choice may go through a link);
//! what it resolves to must be a regular file or a directory (`files.path_not_allowed` for a
//! device, FIFO or socket). A path that contains AppHost's own state, or lies inside it (the
//! data directory, the secret store's key folder), is refused with `files.path_not_allowed`:
//! a folder grant must not hand an app `host.db` or the key that opens `secrets.enc`.
//!
//! An upload is written to `<data>/user-files/<ref>` (0600, fsynced, at most
//! [`MAX_UPLOAD_BYTES`]) before its row is recorded; if recording fails the copy is removed.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;
use crate::install::store::{FileRef, FileRefKind, FileRefOrigin, NewFileRef, Store};

/// Largest file `apphost serve` accepts as an upload for `lime.files` (bytes): 16 MiB.
pub const MAX_UPLOAD_BYTES: usize = 16 * 1024 * 1024;
/// Longest display name kept (characters).
const MAX_NAME_CHARS: usize = 255;

fn not_allowed(path: &Path, why: &str) -> HostError {
    HostError::new(
        ErrorCode::FilesPathNotAllowed,
        format!("{} cannot be granted: {why}", path.display()),
    )
    .with("path", path.display().to_string())
}

/// Folders an app must never reach through a folder grant.
fn protected(dir: &DataDir) -> Vec<PathBuf> {
    let mut out = vec![dir.root().to_path_buf()];
    if let Some(c) = dirs::config_dir() {
        out.push(c.join("apphost"));
    }
    if let Some(k) = std::env::var_os(crate::install::secrets::SECRET_KEY_FILE_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
    {
        if let Some(parent) = k.parent() {
            out.push(parent.to_path_buf());
        }
    }
    out.into_iter()
        .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
        .collect()
}

/// Grants `path` (a file or a folder) to `app` and returns the new ref.
pub fn grant_path(store: &Store, app: &str, path: &Path) -> HostResult<FileRef> {
    let abs = std::path::absolute(path)
        .map_err(|e| HostError::io(ErrorCode::FilesPathNotFound, "cannot resolve", path, e))?;
    let real = std::fs::canonicalize(&abs).map_err(|e| {
        let code = if e.kind() == std::io::ErrorKind::NotFound {
            ErrorCode::FilesPathNotFound
        } else {
            ErrorCode::FilesReadFailed
        };
        HostError::io(code, "cannot resolve", &abs, e)
    })?;
    let Some(real_str) = real.to_str() else {
        return Err(not_allowed(&real, "its path is not UTF-8"));
    };
    for p in protected(store.data_dir()) {
        if real.starts_with(&p) || p.starts_with(&real) {
            return Err(not_allowed(
                &real,
                "it holds AppHost's own state (its data or key folder); choose a narrower folder",
            ));
        }
    }
    let meta = std::fs::symlink_metadata(&real)
        .map_err(|e| HostError::io(ErrorCode::FilesReadFailed, "cannot stat", &real, e))?;
    let kind = if meta.is_file() {
        FileRefKind::File
    } else if meta.is_dir() {
        FileRefKind::Folder
    } else {
        return Err(not_allowed(
            &real,
            "it is not a regular file or a folder (a device, a FIFO or a socket)",
        ));
    };
    let name = real
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("/")
        .chars()
        .take(MAX_NAME_CHARS)
        .collect();
    store.grant_file_ref(
        app,
        &NewFileRef {
            kind,
            path: real_str.to_owned(),
            display_name: name,
            size: if kind == FileRefKind::File {
                meta.len()
            } else {
                0
            },
            mtime: meta.mtime(),
            origin: FileRefOrigin::Path,
        },
    )
}

/// Keeps the bytes of a file the user uploaded for `app` and grants them as a file ref.
/// `name` is only shown (its last path component, control characters dropped).
pub fn grant_upload(store: &Store, app: &str, name: &str, bytes: &[u8]) -> HostResult<FileRef> {
    if bytes.len() > MAX_UPLOAD_BYTES {
        return Err(HostError::new(
            ErrorCode::FilesTooLarge,
            format!(
                "the file is {} bytes; an upload may have at most {MAX_UPLOAD_BYTES}",
                bytes.len()
            ),
        )
        .with("limit", MAX_UPLOAD_BYTES));
    }
    let shown: String = name
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_NAME_CHARS)
        .collect();
    let shown = if shown.trim().is_empty() {
        "upload".to_owned()
    } else {
        shown
    };
    let dir = store.data_dir().user_file_uploads();
    runtime_core::private_fs::create_private_dir(&dir)
        .map_err(|e| HostError::io(ErrorCode::StoreIo, "cannot create", &dir, e))?;
    // Written under a temporary name, then renamed to the ref once the row exists.
    let tmp = dir.join(format!(
        ".incoming-{}",
        crate::foundation::random::random_id()?
    ));
    write_private(&tmp, bytes)?;
    let granted = store.grant_file_ref(
        app,
        &NewFileRef {
            kind: FileRefKind::File,
            path: String::new(),
            display_name: shown,
            size: bytes.len() as u64,
            mtime: jiff::Timestamp::now().as_second(),
            origin: FileRefOrigin::Upload,
        },
    );
    let granted = match granted {
        Ok(g) => g,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    let kept = dir.join(&granted.handle);
    if let Err(e) = std::fs::rename(&tmp, &kept) {
        let _ = std::fs::remove_file(&tmp);
        let _ = store.revoke_file_ref(app, &granted.handle);
        return Err(HostError::io(ErrorCode::StoreIo, "cannot keep", &kept, e));
    }
    // Reads walk the path from `/` without following links: keep the resolved one.
    let kept = std::fs::canonicalize(&kept).unwrap_or(kept);
    let path = kept.to_str().unwrap_or_default().to_owned();
    store.set_file_ref_path(&granted.handle, &path)?;
    Ok(FileRef { path, ..granted })
}

fn write_private(path: &Path, bytes: &[u8]) -> HostResult<()> {
    use std::io::Write;
    let mut f = std::os::unix::fs::OpenOptionsExt::mode(
        std::fs::OpenOptions::new().write(true).create_new(true),
        runtime_core::private_fs::FILE_MODE,
    )
    .open(path)
    .map_err(|e| HostError::io(ErrorCode::StoreIo, "cannot create", path, e))?;
    f.write_all(bytes).and_then(|()| f.sync_all()).map_err(|e| {
        let _ = std::fs::remove_file(path);
        HostError::io(ErrorCode::StoreIo, "cannot write", path, e)
    })
}

/// Revokes a ref of `app` and removes an uploaded copy (a copy that cannot be removed is
/// logged: the ref is gone, so nothing can reach it).
pub fn revoke(store: &Store, app: &str, handle: &str) -> HostResult<FileRef> {
    let r = store.revoke_file_ref(app, handle)?;
    if r.origin == FileRefOrigin::Upload {
        let copy = store.data_dir().user_file_uploads().join(&r.handle);
        if let Err(e) = std::fs::remove_file(&copy) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(error = %e, "cannot remove the uploaded copy of a revoked file ref");
            }
        }
    }
    Ok(r)
}
