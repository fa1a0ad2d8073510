//! Reaching what a `lime.files` ref names, and nothing else. Every open walks the granted
//! path from `/` one component at a time with `openat(O_NOFOLLOW)` (directories with
//! `O_DIRECTORY`), so a file or directory swapped for a symlink after the grant is never
//! followed (`files.changed`); a name under a folder grant is a relative path of plain
//! components (no `..`, `.`, empty or absolute part: `files.path_not_allowed`) walked the same
//! way from the folder, so nothing outside the folder is reachable.
//!
//! A file is `lstat`ed through its directory handle before it is opened (a device or a FIFO is
//! refused without being opened), then opened `O_NOFOLLOW | O_NONBLOCK` (a FIFO swapped in
//! between cannot block the open) and checked again on the open handle: a regular file.
//!
//! Hard links: a regular file with more than one link under a FOLDER grant is refused
//! (`files.changed`): a hard link is the same file as another name, possibly one outside the
//! folder (e.g. a link to `~/.ssh/id_ed25519` left in a shared folder), so the folder's grant
//! does not cover it. A file the user granted by itself is allowed whatever its link count: the
//! user chose that very file.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

use rustix::fs::{fstat, openat, statat, AtFlags, Dir, FileType, Mode, OFlags, Stat, CWD};
use rustix::io::Errno;

use crate::install::store::{FileRef, FileRefKind};

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
const FILE_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// Longest relative path under a folder grant (bytes) and longest component.
pub const MAX_REL_PATH: usize = 4096;
const MAX_COMPONENT: usize = 255;
/// Most children one `listFolder` answers (the rest is reported as `truncated`).
pub const MAX_LIST_ENTRIES: usize = 1000;

/// Why a ref's file cannot be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccessError {
    /// The relative path is not a plain path under the folder.
    PathNotAllowed(&'static str),
    /// Nothing at the granted path (or at the relative path under it).
    NotFound,
    /// A link, a special file, or a hard-linked file under a folder grant, where the grant
    /// named a file or directory.
    Changed(&'static str),
    /// The ref names a file where a folder is needed, or the reverse.
    WrongKind(&'static str),
    /// Any other I/O failure (the message may name host paths: never shown to an app).
    Io(String),
}

impl AccessError {
    fn of(e: Errno, what: &'static str) -> AccessError {
        match e {
            Errno::NOENT => AccessError::NotFound,
            // O_NOFOLLOW on a link: ELOOP; O_DIRECTORY on a non-directory (or a link): ENOTDIR.
            Errno::LOOP | Errno::NOTDIR | Errno::MLINK => AccessError::Changed(what),
            other => AccessError::Io(format!("{what}: {other}")),
        }
    }
}

/// Checks `rel` (a path under a folder grant) and splits it into its components.
pub fn components(rel: &str) -> Result<Vec<&str>, AccessError> {
    if rel.len() > MAX_REL_PATH {
        return Err(AccessError::PathNotAllowed("the path is too long"));
    }
    if rel.is_empty() {
        return Ok(Vec::new());
    }
    if rel.starts_with('/') {
        return Err(AccessError::PathNotAllowed(
            "an absolute path is not allowed; give a path relative to the folder",
        ));
    }
    let mut out = Vec::new();
    for c in rel.split('/') {
        if c.is_empty() || c == "." || c == ".." {
            return Err(AccessError::PathNotAllowed(
                "the path has an empty, \".\" or \"..\" component",
            ));
        }
        if c.len() > MAX_COMPONENT || c.contains('\0') {
            return Err(AccessError::PathNotAllowed("the path has an invalid name"));
        }
        out.push(c);
    }
    Ok(out)
}

/// Opens the directory at absolute `path`, walking from `/` with `O_NOFOLLOW`.
fn open_abs_dir(path: &Path) -> Result<OwnedFd, AccessError> {
    let mut cur = openat(CWD, "/", DIR_FLAGS, Mode::empty())
        .map_err(|e| AccessError::of(e, "cannot open /"))?;
    for comp in path.iter().skip(1) {
        cur = openat(&cur, comp, DIR_FLAGS, Mode::empty()).map_err(|e| {
            AccessError::of(e, "a directory of the granted path is not one any more")
        })?;
    }
    Ok(cur)
}

fn open_rel_dir(mut cur: OwnedFd, comps: &[&str]) -> Result<OwnedFd, AccessError> {
    for comp in comps {
        cur = openat(&cur, *comp, DIR_FLAGS, Mode::empty()).map_err(|e| {
            AccessError::of(
                e,
                "a directory under the granted folder is not a plain directory",
            )
        })?;
    }
    Ok(cur)
}

/// An open granted file, checked.
pub struct OpenFile {
    pub file: File,
    pub size: u64,
    /// Seconds since the epoch.
    pub mtime: i64,
    /// The file's name (the last component).
    pub name: String,
}

/// Opens the regular file `name` in `dir` (never following a link, never blocking).
fn open_in(dir: &OwnedFd, name: &str, under_folder: bool) -> Result<OpenFile, AccessError> {
    let before = statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .map_err(|e| AccessError::of(e, "cannot stat the file"))?;
    check_regular(&before, under_folder)?;
    let fd = openat(dir, name, FILE_FLAGS, Mode::empty())
        .map_err(|e| AccessError::of(e, "the file is not a plain file any more"))?;
    let st = fstat(&fd).map_err(|e| AccessError::of(e, "cannot stat the open file"))?;
    check_regular(&st, under_folder)?;
    Ok(OpenFile {
        file: File::from(fd),
        size: st.st_size.max(0) as u64,
        mtime: st.st_mtime,
        name: name.to_owned(),
    })
}

fn check_regular(st: &Stat, under_folder: bool) -> Result<(), AccessError> {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {}
        FileType::Symlink => return Err(AccessError::Changed("the file is a symbolic link")),
        FileType::Directory => return Err(AccessError::WrongKind("this is a folder, not a file")),
        _ => return Err(AccessError::Changed("the file is not a regular file")),
    }
    if under_folder && st.st_nlink > 1 {
        return Err(AccessError::Changed(
            "the file has other hard links; a folder grant does not cover it",
        ));
    }
    Ok(())
}

/// Splits an absolute granted path into its parent and last component.
fn split(path: &str) -> Result<(&Path, &str), AccessError> {
    let p = Path::new(path);
    match (p.parent(), p.file_name().and_then(|n| n.to_str())) {
        (Some(parent), Some(name)) if p.is_absolute() => Ok((parent, name)),
        _ => Err(AccessError::Io(format!("bad granted path {path:?}"))),
    }
}

/// Opens the file a ref names: the file itself (`rel` must be absent or empty), or `rel`
/// under a folder ref.
pub fn open_file(r: &FileRef, rel: Option<&str>) -> Result<OpenFile, AccessError> {
    let comps = components(rel.unwrap_or(""))?;
    match r.kind {
        FileRefKind::File => {
            if !comps.is_empty() {
                return Err(AccessError::PathNotAllowed(
                    "this ref names a file: no path can be given under it",
                ));
            }
            let (parent, name) = split(&r.path)?;
            let dir = open_abs_dir(parent)?;
            open_in(&dir, name, false)
        }
        FileRefKind::Folder => {
            let Some((last, dirs)) = comps.split_last() else {
                return Err(AccessError::WrongKind(
                    "this ref names a folder: give args.path of a file under it",
                ));
            };
            let root = open_abs_dir(Path::new(&r.path))?;
            let dir = open_rel_dir(root, dirs)?;
            open_in(&dir, last, true)
        }
    }
}

/// One child of a folder, as `listFolder` answers it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Child {
    pub name: String,
    /// `file` or `folder`.
    pub kind: &'static str,
    pub size: u64,
    pub mtime: i64,
}

/// A folder's listing.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// Regular files with one link and directories, by name.
    pub entries: Vec<Child>,
    /// Entries left out: links, special files, hard-linked files, names that are not UTF-8.
    pub skipped: u64,
    /// More than [`MAX_LIST_ENTRIES`] entries: the rest is not listed.
    pub truncated: bool,
}

/// Lists the folder a folder ref names (or `rel` under it). Nothing is opened but
/// directories: children are `lstat`ed through the directory handle.
pub fn list_folder(r: &FileRef, rel: Option<&str>) -> Result<Listing, AccessError> {
    if r.kind != FileRefKind::Folder {
        return Err(AccessError::WrongKind(
            "this ref names a file, not a folder",
        ));
    }
    let comps = components(rel.unwrap_or(""))?;
    let root = open_abs_dir(Path::new(&r.path))?;
    let dir = open_rel_dir(root, &comps)?;
    let reader = Dir::read_from(&dir).map_err(|e| AccessError::of(e, "cannot read folder"))?;
    let mut out = Listing {
        entries: Vec::new(),
        skipped: 0,
        truncated: false,
    };
    for entry in reader {
        let entry = entry.map_err(|e| AccessError::of(e, "cannot read folder"))?;
        let raw = entry.file_name().to_bytes();
        if raw == b"." || raw == b".." {
            continue;
        }
        let Ok(name) = std::str::from_utf8(raw) else {
            out.skipped += 1;
            continue;
        };
        let Ok(st) = statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
            out.skipped += 1;
            continue;
        };
        let kind = match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile if st.st_nlink == 1 => "file",
            FileType::Directory => "folder",
            _ => {
                out.skipped += 1;
                continue;
            }
        };
        if out.entries.len() >= MAX_LIST_ENTRIES {
            out.truncated = true;
            break;
        }
        out.entries.push(Child {
            name: name.to_owned(),
            kind,
            size: if kind == "file" {
                st.st_size.max(0) as u64
            } else {
                0
            },
            mtime: st.st_mtime,
        });
    }
    out.entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Reads `length` bytes at `offset` (fewer at the end of the file) with positioned reads.
pub fn read_range(f: &OpenFile, offset: u64, length: u64) -> Result<Vec<u8>, AccessError> {
    let end = offset.saturating_add(length).min(f.size);
    let want = end.saturating_sub(offset) as usize;
    let mut buf = vec![0u8; want];
    let mut got = 0usize;
    while got < want {
        match f.file.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(AccessError::Io(format!("read failed: {e}"))),
        }
    }
    buf.truncate(got);
    Ok(buf)
}

/// A MIME type guessed from the file name's extension (`application/octet-stream` else).
pub fn mime_guess(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "txt" | "log" => "text/plain",
        "md" | "markdown" => "text/markdown",
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "js" | "mjs" => "text/javascript",
        "json" => "application/json",
        "xml" => "application/xml",
        "yaml" | "yml" => "application/yaml",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "zip" => "application/zip",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_plain_components_only() {
        assert_eq!(components("").unwrap(), Vec::<&str>::new());
        assert_eq!(components("a/b.txt").unwrap(), vec!["a", "b.txt"]);
        for bad in ["/etc/passwd", "../x", "a/../b", "a//b", "./a", "a/", "a\0b"] {
            assert!(
                matches!(components(bad), Err(AccessError::PathNotAllowed(_))),
                "{bad:?}"
            );
        }
        assert!(components(&"a/".repeat(3000)).is_err());
    }

    #[test]
    fn mime_is_guessed_by_extension() {
        assert_eq!(mime_guess("Notes.MD"), "text/markdown");
        assert_eq!(mime_guess("x"), "application/octet-stream");
    }
}
