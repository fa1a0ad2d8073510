//! Walking a bound folder: from the root's descriptor, one `openat(O_NOFOLLOW)` per step,
//! every entry classified by `fstatat(AT_SYMLINK_NOFOLLOW)` before anything is opened. A link
//! (to anywhere, inside or out of the folder) is skipped and reported, never followed; a FIFO,
//! socket or device is never opened; a file is opened `O_NOFOLLOW|O_NONBLOCK`, re-checked with
//! `fstat` (still a regular file, still within the size bound) and read with a bounded `take`.
//! Every bound of [`Limits`] is checked before the work it bounds.

use std::ffi::CString;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use super::{Limits, Problem};

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// A regular file found by the walk (not read yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Relative to the bound root, `/`-separated.
    pub path: String,
    pub size: u64,
    pub mtime_ns: i64,
}

/// What the walk saw beside the files.
#[derive(Debug, Default)]
pub struct WalkOutcome {
    pub problems: Vec<Problem>,
    /// Problems beyond [`Limits::max_problems`], counted only.
    pub problems_dropped: usize,
}

impl WalkOutcome {
    pub(super) fn report(&mut self, limits: &Limits, code: &'static str, path: &str, why: String) {
        if self.problems.len() < limits.max_problems {
            self.problems.push(Problem {
                code: code.to_owned(),
                path: path.to_owned(),
                message: why,
            });
        } else {
            self.problems_dropped += 1;
        }
    }
}

/// Opens the bound root (chosen by the user, so a link naming the root itself is followed; below
/// it nothing is). `Err` when it is not a readable directory.
pub fn open_root(root: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// The file types the index reads, by extension (lower case).
pub fn format_of(path: &str) -> Option<Format> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    match ext.as_str() {
        "md" | "markdown" => Some(Format::Markdown),
        "txt" | "text" => Some(Format::Text),
        "html" | "htm" => Some(Format::Html),
        "pdf" => Some(Format::Pdf),
        _ => None,
    }
}

/// A document format the walk recognises (`Pdf` is recognised to be refused by name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Text,
    Html,
    Pdf,
}

/// Walks `root`, calling `visit(found, dir, name, out)` for each regular file of a supported format in
/// name order; `dir` is the descriptor of its folder, for [`read_file`]. Stops at
/// `limits.max_files` files and `limits.max_entries` entries (reported once each).
pub fn walk(
    root: &OwnedFd,
    limits: &Limits,
    out: &mut WalkOutcome,
    visit: &mut dyn FnMut(&Found, &OwnedFd, &CString, &mut WalkOutcome),
) -> io::Result<()> {
    let mut state = State {
        entries: 0,
        files: 0,
        stopped: false,
    };
    walk_dir(root, "", 0, limits, &mut state, out, visit)
}

struct State {
    entries: usize,
    files: usize,
    stopped: bool,
}

fn walk_dir(
    dir: &OwnedFd,
    prefix: &str,
    depth: usize,
    limits: &Limits,
    st: &mut State,
    out: &mut WalkOutcome,
    visit: &mut dyn FnMut(&Found, &OwnedFd, &CString, &mut WalkOutcome),
) -> io::Result<()> {
    let mut names = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let n = entry.file_name();
        if n == c"." || n == c".." {
            continue;
        }
        st.entries += 1;
        if st.entries > limits.max_entries {
            if !st.stopped {
                st.stopped = true;
                out.report(
                    limits,
                    "knowledge.limit_reached",
                    prefix,
                    format!(
                        "more than {} entries: the rest is not indexed",
                        limits.max_entries
                    ),
                );
            }
            return Ok(());
        }
        names.push(n.to_owned());
    }
    names.sort();
    for name in names {
        if st.stopped {
            return Ok(());
        }
        let Ok(shown) = std::str::from_utf8(name.to_bytes()) else {
            let lossy = String::from_utf8_lossy(name.to_bytes()).into_owned();
            out.report(
                limits,
                "knowledge.name_invalid",
                &join(prefix, &lossy),
                "the name is not UTF-8: skipped".into(),
            );
            continue;
        };
        if shown.starts_with('.') {
            continue; // hidden files and folders (.git, editors' swap files)
        }
        let rel = join(prefix, shown);
        let Ok(stat) = rustix::fs::statat(dir, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) else {
            continue; // gone since the listing
        };
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Symlink => out.report(
                limits,
                "knowledge.link_skipped",
                &rel,
                "a symbolic link: links are never followed".into(),
            ),
            FileType::Directory if depth + 1 >= limits.max_depth => out.report(
                limits,
                "knowledge.too_deep",
                &rel,
                format!("deeper than {} folders: not indexed", limits.max_depth),
            ),
            FileType::Directory => {
                match rustix::fs::openat(dir, name.as_c_str(), DIR_FLAGS, Mode::empty()) {
                    Ok(sub) => walk_dir(&sub, &rel, depth + 1, limits, st, out, visit)?,
                    Err(e) => out.report(
                        limits,
                        "knowledge.read_failed",
                        &rel,
                        format!("the folder cannot be opened: {e}"),
                    ),
                }
            }
            FileType::RegularFile => {
                if format_of(&rel).is_none() {
                    continue; // not a document format: silently not indexed
                }
                if st.files >= limits.max_files {
                    st.stopped = true;
                    out.report(
                        limits,
                        "knowledge.limit_reached",
                        &rel,
                        format!(
                            "more than {} files: the rest is not indexed",
                            limits.max_files
                        ),
                    );
                    return Ok(());
                }
                st.files += 1;
                let found = Found {
                    path: rel,
                    size: stat.st_size as u64,
                    mtime_ns: stat.st_mtime.saturating_mul(1_000_000_000)
                        + stat.st_mtime_nsec as i64,
                };
                visit(&found, dir, &name, out);
            }
            _ => out.report(
                limits,
                "knowledge.special_file_skipped",
                &rel,
                "not a regular file (FIFO, socket or device): never opened".into(),
            ),
        }
    }
    Ok(())
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}/{name}")
    }
}

/// Why a file could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// Over `max` bytes (by `fstat`, or by what the read returned).
    TooLarge(u64),
    /// Replaced by something that is not a regular file since the walk.
    NotRegular,
    Io(io::Error),
}

/// Reads `name` in `dir` (never through a link, never blocking on a FIFO), at most `max` bytes.
pub fn read_file(dir: &OwnedFd, name: &CString, max: u64) -> Result<Vec<u8>, ReadError> {
    let fd = rustix::fs::openat(
        dir,
        name.as_c_str(),
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(|e| ReadError::Io(e.into()))?;
    let st = rustix::fs::fstat(&fd).map_err(|e| ReadError::Io(e.into()))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(ReadError::NotRegular);
    }
    let size = st.st_size as u64;
    if size > max {
        return Err(ReadError::TooLarge(size));
    }
    let mut buf = Vec::with_capacity(size as usize);
    File::from(fd)
        .take(max + 1)
        .read_to_end(&mut buf)
        .map_err(ReadError::Io)?;
    if buf.len() as u64 > max {
        return Err(ReadError::TooLarge(buf.len() as u64));
    }
    Ok(buf)
}
