//! File-system steps the store's operations and its recovery share: fsyncing folders, and
//! retiring or removing what an operation staged. Below both `journal.rs` and `recovery.rs`
//! (and `packs.rs`), so none of them needs another for these.

use std::fs;
use std::path::Path;

use super::{failpoint, io};
use crate::foundation::error::HostResult;

/// The suffix a retired staging folder is renamed with before it is deleted.
pub const TRASH_SUFFIX: &str = ".trash";

/// fsyncs a directory: the files created, renamed or removed in it are durable.
pub fn sync_dir(dir: &Path) -> HostResult<()> {
    runtime_core::durable::sync_dir(dir).map_err(|e| io("cannot sync", dir, e))
}

/// fsyncs the directory holding `path`.
pub fn sync_parent(path: &Path) -> HostResult<()> {
    runtime_core::durable::sync_parent(path).map_err(|e| io("cannot sync the folder of", path, e))
}

/// Marks a staging folder as finished (one atomic rename), then deletes it.
pub(super) fn retire(dir: &Path) -> HostResult<()> {
    let mut trash = dir.as_os_str().to_owned();
    trash.push(TRASH_SUFFIX);
    let trash = std::path::PathBuf::from(trash);
    fs::rename(dir, &trash).map_err(|e| io("cannot retire", dir, e))?;
    failpoint::hit("op.retired");
    remove_any(&trash)
}

pub(super) fn remove_any(path: &Path) -> HostResult<()> {
    let is_dir = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    let remove = |p: &Path| {
        if is_dir(p) {
            fs::remove_dir_all(p)
        } else {
            fs::remove_file(p)
        }
    };
    let mut result = remove(path);
    if matches!(&result, Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied) {
        // App data may hold folders without write or search permission: grant them to the
        // owner (never following a link), then try again.
        make_removable(path);
        result = remove(path);
    }
    match result {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("cannot remove", path, e)),
        _ => Ok(()),
    }
}

/// Gives the owner full access to every folder under `root` (lstat: links are not followed).
/// Best effort: `remove_any` reports whatever still fails.
fn make_removable(root: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        match fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            _ => continue,
        }
        if fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).is_err() {
            continue;
        }
        if let Ok(rd) = fs::read_dir(&dir) {
            stack.extend(rd.flatten().map(|e| e.path()));
        }
    }
}

pub(super) fn remove_file_if_present(path: &Path) -> HostResult<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("cannot remove", path, e)),
        _ => Ok(()),
    }
}
