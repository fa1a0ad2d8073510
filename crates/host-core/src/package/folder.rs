//! Folder sources (sideloading): a directory whose root holds `APP.md`.
//!
//! Symlinks, hardlinks (regular files with more than one link) and special files are rejected,
//! never followed: a package must not be able to make AppHost read files outside it. Each file
//! is re-checked when opened (same device and inode as listed), so swapping a file for a link
//! between listing and reading is caught.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{path, Budget, Entry, Listing, Loc};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::Limits;

pub(super) fn list(root: &Path, limits: &Limits) -> HostResult<Listing> {
    let mut listing = Listing {
        entries: Vec::new(),
        skipped: Vec::new(),
        total_bytes: 0,
    };
    let mut budget = Budget::new(limits);
    // Explicit stack: untrusted folders may be arbitrarily deep.
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        let read = fs::read_dir(&dir)
            .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot read folder", &dir, e))?;
        for item in read {
            let item = item
                .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot read folder", &dir, e))?;
            let abs = item.path();
            let name = item.file_name().into_string().map_err(|raw| {
                HostError::new(
                    ErrorCode::ArchiveNonUtf8Name,
                    format!("a file name under {prefix:?} is not valid UTF-8"),
                )
                .with("name", raw.to_string_lossy())
            })?;
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            path::validate(&rel)?;
            let meta = fs::symlink_metadata(&abs)
                .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot stat", &abs, e))?;
            let ft = meta.file_type();
            if ft.is_symlink() {
                return Err(HostError::new(
                    ErrorCode::ArchiveSymlink,
                    format!("{rel:?} is a symbolic link; packages may not contain links"),
                )
                .with("path", rel));
            }
            if ft.is_dir() {
                if path::is_excluded_dir_name(&name) {
                    listing.skipped.push(rel);
                } else {
                    stack.push((abs, rel));
                }
                continue;
            }
            if !ft.is_file() {
                return Err(HostError::new(
                    ErrorCode::ArchiveSpecialFile,
                    format!("{rel:?} is not a regular file (device, socket or pipe)"),
                )
                .with("path", rel));
            }
            if meta.nlink() > 1 {
                return Err(HostError::new(
                    ErrorCode::ArchiveHardlink,
                    format!(
                        "{rel:?} is a hard link ({} links); packages may not contain links",
                        meta.nlink()
                    ),
                )
                .with("path", rel));
            }
            budget.add(&rel, meta.len())?;
            listing.entries.push(Entry {
                path: rel,
                size: meta.len(),
                loc: Loc::File {
                    abs,
                    dev: meta.dev(),
                    ino: meta.ino(),
                },
            });
        }
    }
    listing.total_bytes = budget.bytes;
    Ok(listing)
}

pub(super) fn open_checked(abs: &Path, dev: u64, ino: u64) -> HostResult<fs::File> {
    let file = fs::File::open(abs)
        .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot open", abs, e))?;
    let meta = file
        .metadata()
        .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot stat", abs, e))?;
    if meta.dev() != dev || meta.ino() != ino || !meta.is_file() || meta.nlink() > 1 {
        return Err(HostError::new(
            ErrorCode::SourceChanged,
            format!("{} changed while it was being read", abs.display()),
        )
        .with("path", abs.display().to_string()));
    }
    Ok(file)
}
