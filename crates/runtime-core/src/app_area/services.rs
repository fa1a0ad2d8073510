//! The `services/` sub-area of `apps/<app>/`: one writable directory per backend service
//! (`services/<key>/`, mounted read-write at `/service` in the service's sandbox, the only place
//! it may write) and the supervisor's logs (`services/.logs/<key>.log`). Every directory is made
//! through the area's descriptors with `mkdirat` + `openat(O_NOFOLLOW)`: a link planted at any
//! step is refused, never followed.

use std::io;
use std::path::PathBuf;

use super::{mkdir_open, AppArea, SubDir};

/// The logs directory's name inside `services/` (a dot name: never a valid service key).
pub const LOGS_DIR: &str = ".logs";

/// The paths of one service's directories, created (0700) and checked.
#[derive(Debug, Clone)]
pub struct ServicePaths {
    /// `apps/<app>/services/<key>/`.
    pub service_dir: PathBuf,
    /// `apps/<app>/services/.logs/<key>.log`.
    pub log_file: PathBuf,
}

/// Whether `key` may name a service directory: 1..=64 of `a-z A-Z 0-9 - _ .`, starting with a
/// letter or digit (so never `.logs`, `.`, `..` or a path).
pub fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 64
        && key.as_bytes()[0].is_ascii_alphanumeric()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

impl AppArea {
    /// Creates (if missing) and checks `services/<key>/` and `services/.logs/`.
    pub fn service_paths(&self, key: &str) -> io::Result<ServicePaths> {
        if !valid_key(key) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("invalid service key {key:?}"),
            ));
        }
        let services = self
            .subdir(SubDir::Services, true)?
            .ok_or_else(|| io::Error::other("services/ missing"))?;
        mkdir_open(&services, key)?;
        mkdir_open(&services, LOGS_DIR)?;
        let root = self.path.join(SubDir::Services.name());
        Ok(ServicePaths {
            service_dir: root.join(key),
            log_file: root.join(LOGS_DIR).join(format!("{key}.log")),
        })
    }

    /// The log file of `key` if the area and its logs exist (never creates anything).
    pub fn service_log(&self, key: &str) -> Option<PathBuf> {
        valid_key(key).then(|| {
            self.path
                .join(SubDir::Services.name())
                .join(LOGS_DIR)
                .join(format!("{key}.log"))
        })
    }

    /// Removes `services/` (every service's data and logs), if present. A link there is
    /// removed as a link, never followed.
    pub fn remove_services(&self) -> io::Result<()> {
        let dir = self.path.join(SubDir::Services.name());
        match std::fs::symlink_metadata(&dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&dir),
            Ok(_) => std::fs::remove_file(&dir),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_paths_are_made_inside_the_area_and_links_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let area = AppArea::open(&tmp.path().join("apps/demo")).unwrap();
        let p = area.service_paths("parser").unwrap();
        assert!(p.service_dir.is_dir());
        assert!(p.log_file.parent().unwrap().is_dir());
        assert!(crate::app_area::is_reserved("services"));
        for bad in ["", ".logs", "..", "a/b", ".x", &"x".repeat(65)] {
            assert!(area.service_paths(bad).is_err(), "{bad}");
        }
        // a link planted as a service dir is refused
        std::os::unix::fs::symlink(tmp.path(), tmp.path().join("apps/demo/services/evil")).unwrap();
        assert!(area.service_paths("evil").is_err());
        area.remove_services().unwrap();
        assert!(!tmp.path().join("apps/demo/services").exists());
        assert!(tmp.path().exists());
    }
}
