//! The content-addressed blob directory: the lock that serialises blob writes, unlinks and
//! clean-ups, writing a blob without replacing anything, reading one rehashed, and removing
//! unreferenced blobs and temporary files.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};
use sha2::{Digest, Sha256};

use crate::ids::random_hex;

use super::*;

/// Holds an exclusive `flock` on the blob directory: blob writes, unlinks and the clean-up on
/// open are serialised between every `AppArtifacts` of the app (the bridge's, the agent
/// tools', another process's), so a clean-up never removes a blob whose row is committing.
pub(super) struct BlobLock<'a>(&'a OwnedFd);

impl<'a> BlobLock<'a> {
    pub(super) fn take(fd: &'a OwnedFd) -> Result<BlobLock<'a>, ArtifactError> {
        rustix::fs::flock(fd, rustix::fs::FlockOperation::LockExclusive)
            .map_err(errno("lock the blob directory"))?;
        Ok(BlobLock(fd))
    }
}

impl Drop for BlobLock<'_> {
    fn drop(&mut self) {
        rustix::fs::flock(self.0, rustix::fs::FlockOperation::Unlock).ok();
    }
}

impl AppArtifacts {
    /// Makes sure `artifact-blobs/<sha>` holds `bytes`; returns whether it wrote a new file.
    pub(super) fn put_blob(&self, sha: &str, bytes: &[u8]) -> Result<bool, ArtifactError> {
        if self.read_blob(sha, bytes.len() as u64).is_ok() {
            return Ok(false);
        }
        let tmp = format!(".tmp-{}", random_hex());
        let fd = rustix::fs::openat(
            &self.blobs,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .map_err(errno("create a blob"))?;
        let mut file = File::from(fd);
        let written = file
            .write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(io("write a blob"));
        drop(file);
        let placed = written.and_then(|()| {
            match rustix::fs::renameat_with(
                &self.blobs,
                tmp.as_str(),
                &self.blobs,
                sha,
                RenameFlags::NOREPLACE,
            ) {
                Ok(()) => Ok(()),
                // Something else sits under the name (a damaged blob, a planted file): the
                // content was checked not to match, so replace it.
                Err(rustix::io::Errno::EXIST) => {
                    rustix::fs::renameat(&self.blobs, tmp.as_str(), &self.blobs, sha)
                        .map_err(errno("place a blob"))
                }
                Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {
                    rustix::fs::renameat(&self.blobs, tmp.as_str(), &self.blobs, sha)
                        .map_err(errno("place a blob"))
                }
                Err(e) => Err(errno("place a blob")(e)),
            }
        });
        if let Err(e) = placed {
            rustix::fs::unlinkat(&self.blobs, tmp.as_str(), AtFlags::empty()).ok();
            return Err(e);
        }
        rustix::fs::fsync(&self.blobs).map_err(errno("sync the blob directory"))?;
        Ok(true)
    }

    /// Reads and rehashes `artifact-blobs/<sha>`, which must be a regular file of `size` bytes.
    pub(super) fn read_blob(&self, sha: &str, size: u64) -> Result<Vec<u8>, ArtifactError> {
        let fd = match rustix::fs::openat(
            &self.blobs,
            sha,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            // Missing, or a link (ELOOP): the bytes are not there.
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::LOOP) => {
                return Err(ArtifactError::Corrupt)
            }
            Err(e) => return Err(errno("open a blob")(e)),
        };
        let st = rustix::fs::fstat(&fd).map_err(errno("stat a blob"))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile || st.st_size as u64 != size
        {
            return Err(ArtifactError::Corrupt);
        }
        let mut buf = Vec::with_capacity(size as usize);
        File::from(fd)
            .take(size + 1)
            .read_to_end(&mut buf)
            .map_err(io("read a blob"))?;
        if buf.len() as u64 != size || hex(&Sha256::digest(&buf)) != sha {
            return Err(ArtifactError::Corrupt);
        }
        Ok(buf)
    }

    pub(super) fn unlink_blob(&self, sha: &str) -> Result<(), ArtifactError> {
        match rustix::fs::unlinkat(&self.blobs, sha, AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => {}
            Err(e) => return Err(errno("remove a blob")(e)),
        }
        rustix::fs::fsync(&self.blobs).map_err(errno("sync the blob directory"))
    }

    /// Removes every entry of the blob directory that is not the blob of a row: leftovers of a
    /// crash (temporary files, blobs whose row never committed or was deleted). Directories and
    /// other non-files are left alone.
    pub(super) fn collect_garbage(&self) -> Result<BlobCleanup, ArtifactError> {
        let _lock = BlobLock::take(&self.blobs)?;
        let mut names: Vec<CString> = Vec::new();
        let dir =
            rustix::fs::Dir::read_from(&self.blobs).map_err(errno("list the blob directory"))?;
        for entry in dir {
            let entry = entry.map_err(errno("list the blob directory"))?;
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            names.push(name.to_owned());
        }
        let mut out = BlobCleanup::default();
        let mut stmt = self
            .conn
            .prepare("SELECT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = ?1)")?;
        for name in names {
            let keep = match name.to_str() {
                Ok(s) if is_sha_hex(s) => stmt.query_row([s], |r| r.get::<_, bool>(0))?,
                _ => false,
            };
            if keep || !is_plain_file(&self.blobs, &name) {
                continue;
            }
            if rustix::fs::unlinkat(&self.blobs, name.as_c_str(), AtFlags::empty()).is_ok() {
                out.removed += 1;
            }
        }
        if out.removed > 0 {
            rustix::fs::fsync(&self.blobs).map_err(errno("sync the blob directory"))?;
        }
        Ok(out)
    }
}

fn is_plain_file(dir: &OwnedFd, name: &CStr) -> bool {
    rustix::fs::statat(dir.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW)
        .map(|st| {
            matches!(
                FileType::from_raw_mode(st.st_mode),
                FileType::RegularFile | FileType::Symlink
            )
        })
        .unwrap_or(false)
}

/// The blob directory path of an app (for tests and diagnostics; never shown to apps).
pub fn blobs_dir(app_dir: &Path) -> PathBuf {
    app_dir.join(BLOBS_DIR)
}
