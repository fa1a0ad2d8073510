//! Packages uploaded by the host UI (`upload_package`: a `.zip` chosen with a file input or
//! dropped on the window), kept as files in a private temporary folder until a review takes
//! them (once) or the session ends.
//!
//! Bounded: one upload is at most [`MAX_UPLOAD_BYTES`], at most [`MAX_UPLOADS`] are kept (the
//! oldest is dropped first). An upload that fails leaves no file behind.

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

use crate::error::{ErrorCode, HostError, HostResult};

/// Largest package accepted through `upload_package` (a zip; its contents are bounded again by
/// the package limits when it is reviewed).
pub const MAX_UPLOAD_BYTES: usize = 256 * 1024 * 1024;
/// Uploads kept at once.
pub const MAX_UPLOADS: usize = 4;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Uploaded {
    pub upload_id: String,
    pub bytes: u64,
}

#[derive(Default)]
struct Kept {
    dir: Option<PathBuf>,
    files: VecDeque<(String, PathBuf)>,
}

/// The session's uploads (removed with it).
#[derive(Default)]
pub struct Uploads {
    kept: Mutex<Kept>,
}

impl Uploads {
    pub fn new() -> Self {
        Uploads::default()
    }

    /// Keeps `bytes` as a new upload.
    pub fn put(&self, bytes: &[u8]) -> HostResult<Uploaded> {
        if bytes.len() > MAX_UPLOAD_BYTES {
            return Err(HostError::new(
                ErrorCode::ApiUploadTooLarge,
                format!("the package is larger than {MAX_UPLOAD_BYTES} bytes"),
            )
            .with("bytes", bytes.len())
            .with("limit", MAX_UPLOAD_BYTES));
        }
        let mut kept = self.lock()?;
        let dir = match &kept.dir {
            Some(dir) => dir.clone(),
            None => {
                let dir = private_dir()?;
                kept.dir = Some(dir.clone());
                dir
            }
        };
        let upload_id = format!("u-{}", random_hex()?);
        let path = dir.join(format!("{upload_id}.zip"));
        if let Err(e) = write_new(&path, bytes) {
            let _ = std::fs::remove_file(&path);
            return Err(HostError::io(
                ErrorCode::StoreIo,
                "cannot keep the upload in",
                &path,
                e,
            ));
        }
        if kept.files.len() == MAX_UPLOADS {
            if let Some((_, old)) = kept.files.pop_front() {
                let _ = std::fs::remove_file(old);
            }
        }
        kept.files.push_back((upload_id.clone(), path));
        Ok(Uploaded {
            upload_id,
            bytes: bytes.len() as u64,
        })
    }

    /// Hands the file of `upload_id` over (once): the caller owns it and removes it when done.
    pub fn take(&self, upload_id: &str) -> HostResult<PathBuf> {
        let mut kept = self.lock()?;
        let Some(at) = kept.files.iter().position(|(id, _)| id == upload_id) else {
            return Err(HostError::new(
                ErrorCode::ApiUploadNotFound,
                "no such upload (it was used already, replaced by newer ones, or never made)",
            )
            .with("uploadId", upload_id.chars().take(64).collect::<String>()));
        };
        Ok(kept.files.remove(at).map(|(_, p)| p).unwrap_or_default())
    }

    /// How many uploads are kept now.
    pub fn len(&self) -> usize {
        self.kept.lock().map(|k| k.files.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> HostResult<std::sync::MutexGuard<'_, Kept>> {
        self.kept
            .lock()
            .map_err(|_| HostError::new(ErrorCode::Internal, "the upload list is unusable"))
    }
}

impl Drop for Uploads {
    fn drop(&mut self) {
        if let Ok(kept) = self.kept.get_mut() {
            if let Some(dir) = &kept.dir {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
}

fn random_hex() -> HostResult<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| {
        HostError::new(ErrorCode::Internal, "no randomness available").with("reason", e.to_string())
    })?;
    Ok(hex::encode(bytes))
}

/// A new folder only this user can read, under the system temporary folder.
fn private_dir() -> HostResult<PathBuf> {
    let dir = std::env::temp_dir().join(format!("apphost-uploads-{}", random_hex()?));
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700);
    }
    builder.create(&dir).map_err(|e| {
        HostError::io(
            ErrorCode::StoreIo,
            "cannot create the upload folder",
            &dir,
            e,
        )
    })?;
    Ok(dir)
}

fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upload_is_taken_once_and_the_oldest_go_first() {
        let uploads = Uploads::new();
        let first = uploads.put(b"PK-one").unwrap();
        assert_eq!(first.bytes, 6);
        let path = uploads.take(&first.upload_id).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"PK-one");
        let again = uploads.take(&first.upload_id).unwrap_err();
        assert_eq!(again.code, ErrorCode::ApiUploadNotFound);
        let ids: Vec<_> = (0..MAX_UPLOADS + 2)
            .map(|i| uploads.put(format!("z{i}").as_bytes()).unwrap().upload_id)
            .collect();
        assert_eq!(uploads.len(), MAX_UPLOADS);
        assert_eq!(
            uploads.take(&ids[0]).unwrap_err().code,
            ErrorCode::ApiUploadNotFound
        );
        let last = uploads.take(&ids[MAX_UPLOADS + 1]).unwrap();
        assert!(last.is_file());
        let dir = last.parent().unwrap().to_owned();
        drop(uploads);
        assert!(!dir.exists(), "the folder goes with the session");
    }

    #[test]
    fn oversized_uploads_leave_nothing() {
        let uploads = Uploads::new();
        let big = vec![0u8; MAX_UPLOAD_BYTES + 1];
        let e = uploads.put(&big).unwrap_err();
        assert_eq!(e.code, ErrorCode::ApiUploadTooLarge);
        assert!(uploads.is_empty());
    }
}
