//! Packages uploaded by the host UI (a `.zip` chosen in a file dialog or dropped on the
//! window): written to a private file in `<data>/staging/uploads/` (folder 0700, file 0600,
//! created new), bounded by the package size limit, removed when the upload is used by a
//! review (then with the review), expires, or the center goes away. Files left by a crash are
//! swept when a center starts.

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::Center;
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;
use crate::install::store::Store;

/// What `upload_package` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UploadInfo {
    pub upload_id: String,
    pub bytes: u64,
}

/// An uploaded package on disk; dropping it removes the file.
pub(crate) struct UploadFile {
    pub path: PathBuf,
    pub bytes: u64,
}

impl Drop for UploadFile {
    fn drop(&mut self) {
        if let Err(e) = fs::remove_file(&self.path) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(path = %self.path.display(), error = %e, "cannot remove an upload");
            }
        }
    }
}

fn io(what: &str, path: &Path, e: std::io::Error) -> HostError {
    HostError::io(ErrorCode::StoreIo, what, path, e)
}

/// Removes upload files older than `ttl` (left by a process that crashed).
pub(crate) fn sweep_stale(dir: &DataDir, ttl: Duration) {
    let Ok(rd) = fs::read_dir(dir.uploads()) else {
        return;
    };
    for e in rd.flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= ttl);
        if old {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// Copies at most `limit` bytes of `body` into a new private file under `<data>/staging/uploads/`.
/// More than `limit` bytes: `upload.too_large`, and the file is gone.
pub(crate) fn write(dir: &DataDir, body: &mut dyn Read, limit: u64) -> HostResult<UploadFile> {
    let folder = dir.uploads();
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&folder)
        .map_err(|e| io("cannot create", &folder, e))?;
    let path = folder.join(format!("{}.zip", super::random_id()?));
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| io("cannot create", &path, e))?;
    // From here on, dropping `file` removes what was written.
    let mut file = UploadFile { path, bytes: 0 };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match body.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io("cannot read the upload into", &file.path, e)),
        };
        file.bytes += n as u64;
        if file.bytes > limit {
            return Err(HostError::new(
                ErrorCode::UploadTooLarge,
                format!("the package is larger than the limit of {limit} bytes"),
            )
            .with("limit", limit));
        }
        f.write_all(&buf[..n])
            .map_err(|e| io("cannot write", &file.path, e))?;
    }
    f.sync_all().map_err(|e| io("cannot sync", &file.path, e))?;
    Ok(file)
}

impl Center {
    /// Keeps an uploaded package for a review (`review_install {source: {uploadId}}`).
    pub fn upload(&self, bytes: &[u8]) -> HostResult<UploadInfo> {
        self.upload_from(&mut &bytes[..])
    }

    /// [`Center::upload`] from a stream (an HTTP body), read up to the package size limit.
    pub fn upload_from(&self, body: &mut dyn Read) -> HostResult<UploadInfo> {
        let limit = self.upload_limit()?;
        let file = write(&self.dir, body, limit)?;
        let bytes = file.bytes;
        let upload_id = self.uploads.lock().map_err(poisoned)?.insert(file)?;
        Ok(UploadInfo { upload_id, bytes })
    }

    /// The package size limit (`limits.maxUnpackedBytes`): a zip bigger than what it may
    /// unpack to is refused before it is read.
    pub fn upload_limit(&self) -> HostResult<u64> {
        Ok(if self.dir.db_path().exists() {
            Store::open(&self.dir)?.limits()?.max_unpacked_bytes
        } else {
            crate::foundation::limits::Limits::default().max_unpacked_bytes
        })
    }

    pub(crate) fn take_upload(&self, id: &str) -> HostResult<UploadFile> {
        self.uploads
            .lock()
            .map_err(poisoned)?
            .take(id)
            .ok_or_else(|| {
                HostError::new(
                    ErrorCode::UploadNotFound,
                    "no such upload: it was already reviewed, or it expired; upload the package again",
                )
                .with("uploadId", id)
            })
    }
}

pub(crate) fn poisoned<T>(_: T) -> HostError {
    HostError::new(
        ErrorCode::Internal,
        "the app center's state is unusable after a crash in another call",
    )
}
