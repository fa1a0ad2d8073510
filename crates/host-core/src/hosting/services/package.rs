//! The read-only `/app` a backend service runs from: the installed version's files, read
//! through the verified store (each file's hash checked), laid out once per package hash under
//! `<data>/runtime/service-packages/<app>/<hash>/` (a temporary folder renamed into place, then
//! made read-only), older layouts of the app removed. Uninstall removes the app's folder.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::foundation::paths::DataDir;
use crate::install::store::Store;

/// `<data>/runtime/service-packages`.
pub fn root(data: &DataDir) -> PathBuf {
    data.root().join("runtime").join("service-packages")
}

/// Removes every layout of `app` (uninstall).
pub fn remove_app(data: &DataDir, app: &str) {
    let dir = root(data).join(app);
    make_writable(&dir);
    let _ = std::fs::remove_dir_all(dir);
}

fn make_writable(dir: &Path) {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                make_writable(&e.path());
            }
        }
    }
}

/// The layout of `app`'s `version` (package hash `hash`), made if missing.
pub fn layout(store: &Store, app: &str, version: &str, hash: &str) -> Result<PathBuf, String> {
    let data = store.data_dir();
    let app_dir = root(data).join(app);
    let short: String = hash
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(24)
        .collect();
    let target = app_dir.join(&short);
    if target.join(".complete").is_file() {
        return Ok(target);
    }
    runtime_core::private_fs::create_private_dir(&app_dir)
        .map_err(|e| format!("cannot create {}: {e}", app_dir.display()))?;
    let tmp = app_dir.join(format!(
        ".tmp-{}",
        crate::foundation::random::random_hex(8).map_err(|e| e.message)?
    ));
    let written = write_all(store, app, version, &tmp);
    if let Err(e) = written {
        make_writable(&tmp);
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    // Older layouts (and a half-made one) go; this one is renamed into place.
    if let Ok(rd) = std::fs::read_dir(&app_dir) {
        for e in rd.flatten() {
            if e.path() != tmp {
                make_writable(&e.path());
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    std::fs::rename(&tmp, &target).map_err(|e| format!("cannot place the package: {e}"))?;
    seal(&target);
    Ok(target)
}

fn write_all(store: &Store, app: &str, version: &str, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    for path in store.package_paths(app, version).map_err(|e| e.message)? {
        // Package paths were validated at install (no `..`, no absolute paths, no links).
        let dst = dir.join(&path);
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        let bytes = store
            .read_file(app, version, &path)
            .map_err(|e| e.message)?;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o755)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&dst)
            .map_err(|e| format!("{path}: {e}"))?;
        f.write_all(&bytes).map_err(|e| format!("{path}: {e}"))?;
    }
    std::fs::write(dir.join(".complete"), b"").map_err(|e| e.to_string())?;
    Ok(())
}

/// Folders read-only (the sandbox mounts it read-only anyway).
fn seal(dir: &Path) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                seal(&e.path());
            }
        }
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555));
}
