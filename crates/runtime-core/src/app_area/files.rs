//! `files/`: the part of an app's data area the agent's `storage_*` tools read and write.
//!
//! A path is relative to `files/` ('/'-separated components, each a plain name: no `.`, `..`,
//! empty component, NUL or backslash; at most [`MAX_PATH_BYTES`] bytes and [`MAX_PATH_DEPTH`]
//! components), so it can never name a reserved file of the area. It is walked from the
//! descriptor of `files/` one component at a time with `openat(O_NOFOLLOW)`: a link at any step
//! (at `files/` itself, at a sub-folder, at the file) is refused with [`FilesError::Link`] and
//! nothing is written. A write goes to a fresh temporary name (`.lime-partial-<random>`, created
//! `O_CREAT|O_EXCL|O_NOFOLLOW`, 0600, in the same directory descriptor), is fsynced, and is
//! renamed over the file with `renameat` (a rename replaces a directory entry, never writes
//! through one). New folders are 0700.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use super::{mkdir_open, AppArea, SubDir, DIR_FLAGS, FILE_MODE};
use crate::ids::random_hex;

pub const MAX_PATH_BYTES: usize = 255;
pub const MAX_PATH_DEPTH: usize = 16;
/// A listing (and the byte count the quota uses) stops after this many entries.
pub const MAX_WALK_ENTRIES: usize = 100_000;
/// Prefix of the temporary names writes use; paths may not use it.
pub const TEMP_PREFIX: &str = ".lime-partial-";

#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    #[error("invalid path: {0}")]
    InvalidPath(&'static str),
    #[error("a symbolic link is in the way (links are never followed)")]
    Link,
    #[error("no such file in this app's storage")]
    NotFound,
    #[error("the path is not a regular file")]
    NotAFile,
    #[error("the file is {size} bytes (at most {max})")]
    TooLarge { size: u64, max: u64 },
    #[error("storage i/o error: {0}")]
    Io(#[from] io::Error),
}

impl FilesError {
    /// The stable tool error code.
    pub fn code(&self) -> &'static str {
        match self {
            FilesError::InvalidPath(_) => "invalid_path",
            FilesError::Link => "link_refused",
            FilesError::NotFound => "not_found",
            FilesError::NotAFile => "not_a_file",
            FilesError::TooLarge { .. } => "too_large",
            FilesError::Io(_) => "storage_error",
        }
    }
}

fn from_errno(e: rustix::io::Errno) -> FilesError {
    match e {
        rustix::io::Errno::LOOP => FilesError::Link,
        rustix::io::Errno::NOENT => FilesError::NotFound,
        rustix::io::Errno::NOTDIR | rustix::io::Errno::ISDIR => FilesError::NotAFile,
        e => FilesError::Io(e.into()),
    }
}

/// One file of the sub-area.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    pub path: String,
    pub size: u64,
}

/// The regular files of `files/` (links and special files are never listed), sorted by path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilesListing {
    pub files: Vec<FileEntry>,
    pub total_bytes: u64,
    /// Whether the walk stopped at [`MAX_WALK_ENTRIES`] or [`MAX_PATH_DEPTH`].
    pub truncated: bool,
}

/// `files/` of one app, open.
#[derive(Debug)]
pub struct FilesArea {
    dir: OwnedFd,
}

/// A checked relative path: its components.
pub struct RelPath(Vec<CString>);

impl RelPath {
    pub fn parse(rel: &str) -> Result<RelPath, FilesError> {
        if rel.is_empty() || rel.len() > MAX_PATH_BYTES {
            return Err(FilesError::InvalidPath("the path must be 1..=255 bytes"));
        }
        if rel.starts_with('/') {
            return Err(FilesError::InvalidPath("the path must be relative"));
        }
        let mut out = Vec::new();
        for c in rel.split('/') {
            if c.is_empty() || c == "." || c == ".." {
                return Err(FilesError::InvalidPath(
                    "the path must be relative, without '..', '.' or empty parts",
                ));
            }
            if c.contains(['\0', '\\']) || c.chars().any(char::is_control) {
                return Err(FilesError::InvalidPath(
                    "the path has a control character or a backslash",
                ));
            }
            if c.starts_with(TEMP_PREFIX) {
                return Err(FilesError::InvalidPath(
                    "names starting .lime-partial- are the host's",
                ));
            }
            out.push(CString::new(c).expect("no NUL"));
        }
        if out.len() > MAX_PATH_DEPTH {
            return Err(FilesError::InvalidPath("the path is nested too deep"));
        }
        Ok(RelPath(out))
    }

    fn split(&self) -> (&[CString], &CStr) {
        let (last, dirs) = self.0.split_last().expect("at least one component");
        (dirs, last.as_c_str())
    }
}

impl FilesArea {
    /// Opens `files/` of `area`, creating it when `create`; `None` when missing.
    pub fn open(area: &AppArea, create: bool) -> Result<Option<FilesArea>, FilesError> {
        match area.subdir(SubDir::Files, create) {
            Ok(d) => Ok(d.map(|dir| FilesArea { dir })),
            Err(e) => Err(
                match e.raw_os_error().map(rustix::io::Errno::from_raw_os_error) {
                    Some(rustix::io::Errno::LOOP) | Some(rustix::io::Errno::NOTDIR) => {
                        FilesError::Link
                    }
                    _ => FilesError::Io(e),
                },
            ),
        }
    }

    /// The directory holding `path`'s last component, walked without following links;
    /// missing folders are created (0700) when `create`.
    fn parent(&self, dirs: &[CString], create: bool) -> Result<OwnedFd, FilesError> {
        let mut cur = rustix::io::dup(&self.dir).map_err(|e| FilesError::Io(e.into()))?;
        for d in dirs {
            let next = if create {
                mkdir_open(&cur, d.as_c_str()).map_err(|e| match e.raw_os_error() {
                    Some(n) => from_errno(rustix::io::Errno::from_raw_os_error(n)),
                    None => FilesError::Io(e),
                })
            } else {
                rustix::fs::openat(&cur, d.as_c_str(), DIR_FLAGS, Mode::empty()).map_err(from_errno)
            };
            cur = next.map_err(|e| match e {
                // `O_DIRECTORY|O_NOFOLLOW` on a link: ELOOP, or ENOTDIR on some systems.
                FilesError::NotAFile if is_link(&cur, d) => FilesError::Link,
                e => e,
            })?;
        }
        Ok(cur)
    }

    /// The size of the regular file at `rel`, `None` when it does not exist.
    pub fn size_of(&self, rel: &RelPath) -> Result<Option<u64>, FilesError> {
        let (dirs, name) = rel.split();
        let parent = match self.parent(dirs, false) {
            Ok(p) => p,
            Err(FilesError::NotFound) => return Ok(None),
            Err(e) => return Err(e),
        };
        match rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => match FileType::from_raw_mode(st.st_mode) {
                FileType::RegularFile => Ok(Some(st.st_size as u64)),
                FileType::Symlink => Err(FilesError::Link),
                _ => Err(FilesError::NotAFile),
            },
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(from_errno(e)),
        }
    }

    /// Reads the regular file at `rel` (at most `max` bytes, refused before reading if larger).
    pub fn read(&self, rel: &RelPath, max: u64) -> Result<Vec<u8>, FilesError> {
        let (dirs, name) = rel.split();
        let parent = self.parent(dirs, false)?;
        let fd = rustix::fs::openat(
            &parent,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(from_errno)?;
        let st = rustix::fs::fstat(&fd).map_err(from_errno)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(FilesError::NotAFile);
        }
        let size = st.st_size as u64;
        if size > max {
            return Err(FilesError::TooLarge { size, max });
        }
        let mut buf = Vec::with_capacity(size as usize);
        File::from(fd).take(max + 1).read_to_end(&mut buf)?;
        if buf.len() as u64 > max {
            return Err(FilesError::TooLarge {
                size: buf.len() as u64,
                max,
            });
        }
        Ok(buf)
    }

    /// Replaces (or creates) the file at `rel` with `bytes`, atomically. A link at the file's
    /// name or on the way is refused; a failed write leaves the old file as it was.
    pub fn write(&self, rel: &RelPath, bytes: &[u8]) -> Result<(), FilesError> {
        let (dirs, name) = rel.split();
        let parent = self.parent(dirs, true)?;
        match rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => match FileType::from_raw_mode(st.st_mode) {
                FileType::RegularFile => {}
                FileType::Symlink => return Err(FilesError::Link),
                _ => return Err(FilesError::NotAFile),
            },
            Err(rustix::io::Errno::NOENT) => {}
            Err(e) => return Err(from_errno(e)),
        }
        let tmp = format!("{TEMP_PREFIX}{}", random_hex());
        let fd = rustix::fs::openat(
            &parent,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(FILE_MODE),
        )
        .map_err(from_errno)?;
        let mut file = File::from(fd);
        let written = file.write_all(bytes).and_then(|()| file.sync_all());
        drop(file);
        let placed = written.map_err(FilesError::Io).and_then(|()| {
            rustix::fs::renameat(&parent, tmp.as_str(), &parent, name).map_err(from_errno)
        });
        if let Err(e) = placed {
            rustix::fs::unlinkat(&parent, tmp.as_str(), AtFlags::empty()).ok();
            return Err(e);
        }
        rustix::fs::fsync(&parent).map_err(from_errno)?;
        Ok(())
    }

    /// Every regular file (never through a link), sorted, with the bytes they hold. Temporary
    /// files of writes in progress count towards the bytes but are not listed.
    pub fn list(&self) -> Result<FilesListing, FilesError> {
        let mut out = FilesListing::default();
        let mut seen = 0usize;
        walk(&self.dir, "", 0, &mut seen, &mut out)?;
        out.files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }
}

fn is_link(dir: &OwnedFd, name: &CStr) -> bool {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .map(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
        .unwrap_or(false)
}

fn walk(
    dir: &OwnedFd,
    prefix: &str,
    depth: usize,
    seen: &mut usize,
    out: &mut FilesListing,
) -> Result<(), FilesError> {
    let mut names = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir).map_err(from_errno)? {
        let entry = entry.map_err(from_errno)?;
        let n = entry.file_name();
        if n != c"." && n != c".." {
            names.push(n.to_owned());
        }
    }
    for name in names {
        *seen += 1;
        if *seen > MAX_WALK_ENTRIES {
            out.truncated = true;
            return Ok(());
        }
        let Ok(st) = rustix::fs::statat(dir, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        let shown = crate::app_data::display_name(name.to_bytes());
        let rel = if prefix.is_empty() {
            shown
        } else {
            format!("{prefix}/{shown}")
        };
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => {
                out.total_bytes += st.st_size as u64;
                if !name.to_bytes().starts_with(TEMP_PREFIX.as_bytes()) {
                    out.files.push(FileEntry {
                        path: rel,
                        size: st.st_size as u64,
                    });
                }
            }
            FileType::Directory if depth + 1 < MAX_PATH_DEPTH => {
                if let Ok(sub) = rustix::fs::openat(dir, name.as_c_str(), DIR_FLAGS, Mode::empty())
                {
                    walk(&sub, &rel, depth + 1, seen, out)?;
                }
            }
            FileType::Directory => out.truncated = true,
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    fn area() -> (tempfile::TempDir, AppArea, FilesArea) {
        let tmp = tempfile::tempdir().unwrap();
        let area = AppArea::open(&tmp.path().join("apps/demo")).unwrap();
        let files = FilesArea::open(&area, true).unwrap().unwrap();
        (tmp, area, files)
    }

    fn p(s: &str) -> RelPath {
        RelPath::parse(s).unwrap()
    }

    #[test]
    fn paths_are_plain_relative_names() {
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../b",
            "a//b",
            "./a",
            "a/",
            "a\\b",
            "a\nb",
            ".lime-partial-x",
        ] {
            assert!(
                matches!(RelPath::parse(bad), Err(FilesError::InvalidPath(_))),
                "{bad:?}"
            );
        }
        assert!(RelPath::parse(&["d"; MAX_PATH_DEPTH].join("/")).is_ok());
        assert!(RelPath::parse(&["d"; MAX_PATH_DEPTH + 1].join("/")).is_err());
    }

    #[test]
    fn write_read_list_and_modes() {
        let (tmp, _area, files) = area();
        files.write(&p("d/e/a.txt"), b"hello").unwrap();
        files.write(&p("d/e/a.txt"), b"hi").unwrap();
        files.write(&p("b.txt"), b"xyz").unwrap();
        assert_eq!(files.read(&p("d/e/a.txt"), 10).unwrap(), b"hi");
        assert!(matches!(
            files.read(&p("b.txt"), 2),
            Err(FilesError::TooLarge { .. })
        ));
        assert_eq!(files.size_of(&p("nope/x")).unwrap(), None);
        let l = files.list().unwrap();
        let paths: Vec<_> = l.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["b.txt", "d/e/a.txt"]);
        assert_eq!(l.total_bytes, 5);
        let base = tmp.path().join("apps/demo/files");
        assert_eq!(
            std::fs::metadata(base.join("d/e/a.txt"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o600
        );
        assert_eq!(
            std::fs::metadata(base.join("d/e"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o700
        );
    }

    /// A link planted at `files/`, at a sub-folder, at the file, or at the old temporary name
    /// never sends a write (or a read) outside.
    #[test]
    fn planted_links_never_send_a_write_outside() {
        let (tmp, area, files) = area();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("victim.txt"), b"precious").unwrap();
        let base = tmp.path().join("apps/demo/files");

        // At a sub-folder.
        symlink(&outside, base.join("sub")).unwrap();
        let e = files.write(&p("sub/victim.txt"), b"pwned").unwrap_err();
        assert_eq!(e.code(), "link_refused");
        let e = files.read(&p("sub/victim.txt"), 100).unwrap_err();
        assert_eq!(e.code(), "link_refused");
        // At the file itself.
        symlink(outside.join("victim.txt"), base.join("f.txt")).unwrap();
        assert_eq!(
            files.write(&p("f.txt"), b"pwned").unwrap_err().code(),
            "link_refused"
        );
        assert_eq!(
            files.read(&p("f.txt"), 100).unwrap_err().code(),
            "link_refused"
        );
        // At the temporary name the old tools used.
        symlink(outside.join("victim.txt"), base.join("g.txt.partial-write")).unwrap();
        files.write(&p("g.txt"), b"mine").unwrap();
        assert_eq!(std::fs::read(base.join("g.txt")).unwrap(), b"mine");
        // The links are not listed.
        let paths: Vec<_> = files
            .list()
            .unwrap()
            .files
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert_eq!(paths, ["g.txt"]);
        // At files/ itself.
        drop(files);
        std::fs::remove_dir_all(&base).unwrap();
        symlink(&outside, &base).unwrap();
        assert_eq!(
            FilesArea::open(&area, true).unwrap_err().code(),
            "link_refused"
        );
        assert_eq!(
            FilesArea::open(&area, false).unwrap_err().code(),
            "link_refused"
        );

        assert_eq!(
            std::fs::read(outside.join("victim.txt")).unwrap(),
            b"precious"
        );
        let names: Vec<_> = std::fs::read_dir(&outside)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["victim.txt"]);
    }
}
