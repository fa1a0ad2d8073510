//! Folder sources (sideloading): a directory whose root holds `APP.md`.
//!
//! Symlinks, hardlinks (regular files with more than one link) and special files are rejected,
//! never followed: a package must not be able to make AppHost read files outside it, or block
//! on a pipe. Everything under the root is reached from the root's directory handle, one
//! component at a time with `openat(O_NOFOLLOW)`, so a directory or file swapped for a link
//! after listing is not followed. A file is opened with `O_NOFOLLOW | O_NONBLOCK` (a FIFO
//! swapped in cannot block the open) and then checked against the listing (same device and
//! inode, still a regular file with one link) before a byte is read.

use std::fs;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustix::fs::{openat, statat, AtFlags, Dir, FileType, Mode, OFlags, CWD};
use rustix::io::Errno;

use super::{path, Budget, Entry, Listing, Loc};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::limits::Limits;

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
const FILE_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// The listed folder's directory handle, and the directory under it opened last (files are
/// read in listing order, so consecutive files mostly share a directory).
pub(super) struct Root {
    fd: OwnedFd,
    path: PathBuf,
    last_dir: Option<(String, OwnedFd)>,
}

impl Root {
    fn open(path: &Path) -> HostResult<Root> {
        // The root itself is the user's choice and may be reached through a link.
        let fd = openat(
            CWD,
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot open folder", path, e.into()))?;
        Ok(Root {
            fd,
            path: path.to_path_buf(),
            last_dir: None,
        })
    }

    /// Opens the package directory `rel` (`""` is the root), never following a link.
    fn open_dir(&self, rel: &str) -> Result<OwnedFd, Errno> {
        let mut cur = openat(&self.fd, ".", DIR_FLAGS, Mode::empty())?;
        for comp in rel.split('/').filter(|c| !c.is_empty()) {
            cur = openat(&cur, comp, DIR_FLAGS, Mode::empty())?;
        }
        Ok(cur)
    }

    fn dir(&mut self, rel: &str) -> Result<&OwnedFd, Errno> {
        if self.last_dir.as_ref().is_none_or(|(r, _)| r != rel) {
            let fd = self.open_dir(rel)?;
            self.last_dir = Some((rel.to_owned(), fd));
        }
        Ok(&self.last_dir.as_ref().expect("just set").1)
    }
}

pub(super) fn list(root_path: &Path, limits: &Limits) -> HostResult<(Listing, Root)> {
    let root = Root::open(root_path)?;
    let mut listing = Listing {
        entries: Vec::new(),
        skipped: Vec::new(),
        total_bytes: 0,
    };
    let mut budget = Budget::new(limits);
    // Explicit stack of package-relative directories: untrusted folders may be arbitrarily
    // deep, and only one directory handle (plus the root's) is open at a time.
    let mut stack = vec![String::new()];
    while let Some(prefix) = stack.pop() {
        let abs_dir = root_path.join(&prefix);
        let io_err = |e: Errno| {
            if matches!(e, Errno::LOOP | Errno::NOTDIR) {
                changed(&abs_dir)
            } else {
                HostError::io(
                    ErrorCode::SourceIo,
                    "cannot read folder",
                    &abs_dir,
                    e.into(),
                )
            }
        };
        let dir_fd = root.open_dir(&prefix).map_err(io_err)?;
        let dir = Dir::read_from(&dir_fd).map_err(io_err)?;
        for item in dir {
            let item = item.map_err(io_err)?;
            let raw = item.file_name().to_bytes();
            if raw == b"." || raw == b".." {
                continue;
            }
            let name = std::str::from_utf8(raw).map_err(|_| {
                HostError::new(
                    ErrorCode::ArchiveNonUtf8Name,
                    format!("a file name under {prefix:?} is not valid UTF-8"),
                )
                .with("name", String::from_utf8_lossy(raw))
            })?;
            let rel = if prefix.is_empty() {
                name.to_owned()
            } else {
                format!("{prefix}/{name}")
            };
            path::validate(&rel)?;
            let abs = root_path.join(&rel);
            let st = statat(&dir_fd, name, AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot stat", &abs, e.into()))?;
            let ft = FileType::from_raw_mode(st.st_mode);
            if ft == FileType::Symlink {
                return Err(HostError::new(
                    ErrorCode::ArchiveSymlink,
                    format!("{rel:?} is a symbolic link; packages may not contain links"),
                )
                .with("path", rel));
            }
            if ft == FileType::Directory {
                if path::is_excluded_dir_name(name) {
                    listing.skipped.push(rel);
                } else {
                    stack.push(rel);
                }
                continue;
            }
            if ft != FileType::RegularFile {
                return Err(HostError::new(
                    ErrorCode::ArchiveSpecialFile,
                    format!("{rel:?} is not a regular file (device, socket or pipe)"),
                )
                .with("path", rel));
            }
            if st.st_nlink > 1 {
                return Err(HostError::new(
                    ErrorCode::ArchiveHardlink,
                    format!(
                        "{rel:?} is a hard link ({} links); packages may not contain links",
                        st.st_nlink
                    ),
                )
                .with("path", rel));
            }
            let size = u64::try_from(st.st_size).unwrap_or(0);
            budget.add(&rel, size)?;
            listing.entries.push(Entry {
                path: rel,
                size,
                loc: Loc::File {
                    abs,
                    // The same conversions std's `MetadataExt` makes, compared in `open_checked`.
                    #[allow(clippy::unnecessary_cast)]
                    dev: st.st_dev as u64,
                    #[allow(clippy::unnecessary_cast)]
                    ino: st.st_ino as u64,
                },
            });
        }
    }
    listing.total_bytes = budget.bytes;
    Ok((listing, root))
}

fn changed(abs: &Path) -> HostError {
    HostError::new(
        ErrorCode::SourceChanged,
        format!("{} changed while it was being read", abs.display()),
    )
    .with("path", abs.display().to_string())
}

/// Opens the listed file `rel` from the root's handle and checks it is still the listed one.
pub(super) fn open_checked(
    root: &mut Root,
    rel: &str,
    abs: &Path,
    dev: u64,
    ino: u64,
) -> HostResult<fs::File> {
    let (dir_rel, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    let io_err = |e: Errno| {
        if matches!(e, Errno::LOOP | Errno::NOTDIR | Errno::NOENT) {
            changed(abs)
        } else {
            HostError::io(ErrorCode::SourceIo, "cannot open", abs, e.into())
        }
    };
    let dir = root.dir(dir_rel).map_err(io_err)?;
    let file = fs::File::from(openat(dir, name, FILE_FLAGS, Mode::empty()).map_err(io_err)?);
    let meta = file
        .metadata()
        .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot stat", abs, e))?;
    if meta.dev() != dev || meta.ino() != ino || !meta.is_file() || meta.nlink() > 1 {
        return Err(changed(abs));
    }
    Ok(file)
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Root")
            .field("path", &self.path)
            .field("fd", &self.fd.as_fd())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    fn listed(dir: &Path) -> (Listing, Root) {
        fs::write(dir.join("APP.md"), "---\nname: x\n---\n").unwrap();
        fs::create_dir(dir.join("d")).unwrap();
        fs::write(dir.join("d/a.txt"), "hello").unwrap();
        list(dir, &Limits::default()).unwrap()
    }

    fn open_listed(listing: &Listing, root: &mut Root, rel: &str) -> HostResult<fs::File> {
        let e = listing.entries.iter().find(|e| e.path == rel).unwrap();
        let Loc::File { abs, dev, ino } = &e.loc else {
            panic!("a folder entry")
        };
        open_checked(root, rel, abs, *dev, *ino)
    }

    #[test]
    fn a_listed_file_opens() {
        let t = tempfile::tempdir().unwrap();
        let (listing, mut root) = listed(t.path());
        assert_eq!(listing.entries.len(), 2);
        assert!(open_listed(&listing, &mut root, "d/a.txt").is_ok());
        assert!(open_listed(&listing, &mut root, "APP.md").is_ok());
    }

    #[test]
    fn a_fifo_swapped_in_after_listing_does_not_block() {
        let t = tempfile::tempdir().unwrap();
        let (listing, mut root) = listed(t.path());
        fs::remove_file(t.path().join("d/a.txt")).unwrap();
        let d = fs::File::open(t.path().join("d")).unwrap();
        rustix::fs::mknodat(&d, "a.txt", FileType::Fifo, Mode::RUSR | Mode::WUSR, 0).unwrap();
        // Opening a FIFO without O_NONBLOCK waits for a writer forever: run it on a thread.
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let r = open_listed(&listing, &mut root, "d/a.txt").map(|_| ());
            let _ = tx.send(r.map_err(|e| e.code.as_str()));
        });
        let got = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("opening a swapped-in FIFO must not block");
        assert_eq!(got, Err("source.changed"));
    }

    #[test]
    fn links_swapped_in_after_listing_are_not_followed() {
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir(outside.path().join("d")).unwrap();
        fs::write(outside.path().join("d/a.txt"), "hello").unwrap();
        // The file becomes a link to a file outside the package.
        let t = tempfile::tempdir().unwrap();
        let (listing, mut root) = listed(t.path());
        fs::remove_file(t.path().join("d/a.txt")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("d/a.txt"), t.path().join("d/a.txt"))
            .unwrap();
        let e = open_listed(&listing, &mut root, "d/a.txt").unwrap_err();
        assert_eq!(e.code.as_str(), "source.changed");
        assert!(open_listed(&listing, &mut root, "APP.md").is_ok());
        // Its directory becomes a link to a directory outside the package.
        let t = tempfile::tempdir().unwrap();
        let (listing, mut root) = listed(t.path());
        fs::remove_dir_all(t.path().join("d")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("d"), t.path().join("d")).unwrap();
        let e = open_listed(&listing, &mut root, "d/a.txt").unwrap_err();
        assert_eq!(e.code.as_str(), "source.changed");
    }

    #[test]
    fn special_files_and_links_are_rejected_when_listing() {
        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join("APP.md"), "x").unwrap();
        let d = fs::File::open(t.path()).unwrap();
        rustix::fs::mknodat(&d, "pipe", FileType::Fifo, Mode::RUSR | Mode::WUSR, 0).unwrap();
        let e = list(t.path(), &Limits::default()).unwrap_err();
        assert_eq!(e.code.as_str(), "archive.special_file");
        fs::remove_file(t.path().join("pipe")).unwrap();
        std::os::unix::fs::symlink("/etc", t.path().join("etc")).unwrap();
        let e = list(t.path(), &Limits::default()).unwrap_err();
        assert_eq!(e.code.as_str(), "archive.symlink");
    }
}
