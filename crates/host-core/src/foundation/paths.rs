//! Where AppHost keeps its state: one data directory (`APPHOST_DATA_DIR` overrides it).
//!
//! ```text
//! <data>/host.db            host state (SQLite, WAL): apps, versions, files, grants, settings, audit
//! <data>/packs/<id>.pack    installed package files: content-addressed blobs inside immutable packs
//! <data>/staging/<op>/      work in progress of one mutating operation (a journal); empty when idle
//! <data>/staging/uploads/   packages uploaded to the app center awaiting review (private files,
//!                           owned by the process that took them; recovery leaves them alone)
//! <data>/user-files/<ref>    files the user uploaded to `apphost serve` for one app (`lime.files`
//!                           refs of origin `upload`; 0600, removed with the ref)
//! <data>/apps/<app>/        each app's own data (its storage namespace), owned by RuntimeCore
//! <data>/quarantine/<op>/   data recovery set aside and could not put back (never deleted by AppHost)
//! <data>/lock               advisory lock held by the process mutating the store
//! <data>/secrets.enc        secrets (API keys) encrypted at rest when no OS keyring is running;
//!                           its key lives outside the data directory (see `secrets`)
//! <data>/secrets.lock       lock held while secrets.enc is rewritten
//! ```

use std::path::{Path, PathBuf};

use crate::foundation::error::{ErrorCode, HostError, HostResult};

pub const DATA_DIR_ENV: &str = "APPHOST_DATA_DIR";

/// The folder of `staging/` that holds uploads rather than an operation.
pub const UPLOADS_DIR: &str = "uploads";

#[derive(Debug, Clone)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    /// The data directory at `root`, made absolute (journals record absolute paths, and
    /// recovery may run from another working directory).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let root = std::path::absolute(&root).unwrap_or(root);
        DataDir { root }
    }

    /// `$APPHOST_DATA_DIR`, else the platform data directory (`~/.local/share/apphost` on Linux).
    pub fn from_env() -> HostResult<Self> {
        if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()) {
            return Ok(DataDir::at(PathBuf::from(dir)));
        }
        dirs::data_dir()
            .map(|d| DataDir::at(d.join("apphost")))
            .ok_or_else(|| {
                HostError::new(
                    ErrorCode::StoreIo,
                    format!("no user data directory is known; set {DATA_DIR_ENV}"),
                )
            })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn db_path(&self) -> PathBuf {
        self.root.join("host.db")
    }
    pub fn packs(&self) -> PathBuf {
        self.root.join("packs")
    }
    pub fn staging(&self) -> PathBuf {
        self.root.join("staging")
    }
    /// Packages uploaded for an install review (`center::uploads`): not an operation's folder.
    pub fn uploads(&self) -> PathBuf {
        self.staging().join(UPLOADS_DIR)
    }
    /// Copies of files uploaded for `lime.files` refs, one per ref (`user-files/<ref>`).
    pub fn user_file_uploads(&self) -> PathBuf {
        self.root.join("user-files")
    }
    pub fn apps_data(&self) -> PathBuf {
        self.root.join("apps")
    }
    pub fn quarantine(&self) -> PathBuf {
        self.root.join("quarantine")
    }
    pub fn lock_path(&self) -> PathBuf {
        self.root.join("lock")
    }
}
