//! Content-addressed blob storage: `blobs/sha256/<2 hex>/<64 hex>`, immutable, read-only.
//!
//! Files are first written into the operation's staging folder, named by their SHA-256 once
//! complete, made durable with one `syncfs`, and only then renamed into `blobs/` (an atomic
//! step each). A blob is referenced by rows in `version_files`; anything in `blobs/` that no row
//! references is garbage from an interrupted operation and is removed by [`gc`].

use std::collections::{BTreeSet, HashSet};
use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::failpoint;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::hashing::Sha256Bytes;
use crate::package::pipeline::BlobSink;

pub fn blob_path(blobs: &Path, hex: &str) -> PathBuf {
    blobs.join(&hex[..2]).join(hex)
}

fn io(what: &str, path: &Path, e: std::io::Error) -> HostError {
    HostError::io(ErrorCode::StoreIo, what, path, e)
}

/// Flushes the file system holding `path` (one call instead of one fsync per file).
pub fn sync_fs(path: &Path) -> HostResult<()> {
    let dir = File::open(path).map_err(|e| io("cannot open", path, e))?;
    rustix::fs::syncfs(&dir).map_err(|e| io("cannot sync", path, e.into()))
}

/// A [`BlobSink`] writing into `staging/<op>/blobs/`, skipping content the store already has.
pub struct StagingSink {
    dir: PathBuf,
    store_blobs: PathBuf,
    current: Option<(File, PathBuf)>,
    counter: u64,
    staged: BTreeSet<String>,
}

impl StagingSink {
    pub fn new(dir: PathBuf, store_blobs: PathBuf) -> HostResult<Self> {
        fs::create_dir_all(&dir).map_err(|e| io("cannot create", &dir, e))?;
        Ok(StagingSink {
            dir,
            store_blobs,
            current: None,
            counter: 0,
            staged: BTreeSet::new(),
        })
    }

    /// Blobs written to staging that the store did not have yet.
    pub fn staged(&self) -> &BTreeSet<String> {
        &self.staged
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl BlobSink for StagingSink {
    fn begin(&mut self, _path: &str, _size: u64) -> HostResult<()> {
        self.counter += 1;
        let tmp = self.dir.join(format!("tmp-{}", self.counter));
        let file = File::create(&tmp).map_err(|e| io("cannot create", &tmp, e))?;
        self.current = Some((file, tmp));
        Ok(())
    }

    fn write(&mut self, data: &[u8]) -> HostResult<()> {
        let (file, tmp) = self
            .current
            .as_mut()
            .ok_or_else(|| HostError::new(ErrorCode::Internal, "write before begin"))?;
        file.write_all(data).map_err(|e| io("cannot write", tmp, e))
    }

    fn end(&mut self, sha256: &Sha256Bytes) -> HostResult<()> {
        let (file, tmp) = self
            .current
            .take()
            .ok_or_else(|| HostError::new(ErrorCode::Internal, "end before begin"))?;
        drop(file);
        let hex = hex::encode(sha256);
        if self.staged.contains(&hex) || blob_path(&self.store_blobs, &hex).exists() {
            fs::remove_file(&tmp).map_err(|e| io("cannot remove", &tmp, e))?;
        } else {
            let dest = self.dir.join(&hex);
            fs::rename(&tmp, &dest).map_err(|e| io("cannot rename", &tmp, e))?;
            self.staged.insert(hex);
        }
        failpoint::hit("stage.file");
        Ok(())
    }
}

/// Moves staged blobs into the store. Idempotent: a blob already present is left as it is.
pub fn promote(
    staging_blobs: &Path,
    store_blobs: &Path,
    staged: &BTreeSet<String>,
) -> HostResult<()> {
    let mut made_dirs = HashSet::new();
    for hex in staged {
        let dest = blob_path(store_blobs, hex);
        let parent = dest.parent().expect("blob paths have a parent");
        if made_dirs.insert(parent.to_path_buf()) {
            fs::create_dir_all(parent).map_err(|e| io("cannot create", parent, e))?;
        }
        let src = staging_blobs.join(hex);
        if dest.exists() {
            continue;
        }
        let mut perms = fs::metadata(&src)
            .map_err(|e| io("cannot stat", &src, e))?
            .permissions();
        perms.set_mode(0o444);
        fs::set_permissions(&src, perms).map_err(|e| io("cannot chmod", &src, e))?;
        fs::rename(&src, &dest).map_err(|e| io("cannot move blob into the store", &src, e))?;
        failpoint::hit("promote.blob");
    }
    Ok(())
}

/// Every blob file in the store (hex names), plus stray entries that are not blobs.
pub fn scan(store_blobs: &Path) -> HostResult<(BTreeSet<String>, Vec<PathBuf>)> {
    let mut blobs = BTreeSet::new();
    let mut strays = Vec::new();
    let Ok(shards) = fs::read_dir(store_blobs) else {
        return Ok((blobs, strays));
    };
    for shard in shards {
        let shard = shard.map_err(|e| io("cannot read", store_blobs, e))?;
        let shard_path = shard.path();
        if !shard_path.is_dir() {
            strays.push(shard_path);
            continue;
        }
        for item in fs::read_dir(&shard_path).map_err(|e| io("cannot read", &shard_path, e))? {
            let item = item.map_err(|e| io("cannot read", &shard_path, e))?;
            let name = item.file_name().to_string_lossy().into_owned();
            let valid = name.len() == 64
                && name.bytes().all(|b| b.is_ascii_hexdigit())
                && name.starts_with(&*shard.file_name().to_string_lossy());
            if valid && item.path().is_file() {
                blobs.insert(name);
            } else {
                strays.push(item.path());
            }
        }
    }
    Ok((blobs, strays))
}

/// Removes every blob (and stray file) not in `referenced`. Returns what was removed.
pub fn gc(store_blobs: &Path, referenced: &HashSet<String>) -> HostResult<Vec<String>> {
    let (blobs, strays) = scan(store_blobs)?;
    let mut removed = Vec::new();
    for hex in blobs.into_iter().filter(|h| !referenced.contains(h)) {
        let p = blob_path(store_blobs, &hex);
        fs::remove_file(&p).map_err(|e| io("cannot remove", &p, e))?;
        failpoint::hit("gc.blob");
        removed.push(hex);
    }
    for p in strays {
        let _ = if p.is_dir() {
            fs::remove_dir_all(&p)
        } else {
            fs::remove_file(&p)
        };
        removed.push(p.display().to_string());
    }
    Ok(removed)
}
