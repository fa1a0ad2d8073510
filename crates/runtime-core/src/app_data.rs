//! The per-app data area: one directory per app under a root the host chooses.
//!
//! It holds everything the app owns at runtime (its SQLite storage, artifacts, caches). The
//! host's own database never lives here, and nothing here is shared between apps. Uninstall can
//! keep it, delete it, or export it as a zip first.
//!
//! Running apps write here, so nothing in it is trusted: the walk has `lstat` semantics
//! (directories are opened with `O_NOFOLLOW` relative to their parent's descriptor, entries are
//! `fstatat(AT_SYMLINK_NOFOLLOW)`ed), symbolic links are never followed, FIFOs, sockets and
//! devices are never opened (they are skipped and reported, so an export cannot hang on a FIFO),
//! regular files are opened with `O_NOFOLLOW | O_NONBLOCK` and checked again with `fstat`, the
//! depth is bounded, and names that are not UTF-8 are handled (shown with `\xNN` escapes). A
//! listing never fails: whatever it cannot read is reported as skipped.

use std::collections::HashSet;
use std::ffi::CStr;
use std::fs;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use serde::Serialize;

use crate::durable;
use crate::ids::AppId;

/// Directories nested deeper than this below the app's directory are skipped (and reported).
pub const MAX_DEPTH: usize = 64;
/// A listing keeps at most this many files (it still counts the rest, and says it was cut).
pub const MAX_LISTED_FILES: usize = 100_000;
/// A listing keeps at most this many skipped entries.
pub const MAX_LISTED_SKIPPED: usize = 10_000;

#[derive(Debug, thiserror::Error)]
pub enum AppDataError {
    #[error("i/o error on {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("zip error writing {path}: {source}")]
    Zip {
        path: PathBuf,
        source: zip::result::ZipError,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> AppDataError + '_ {
    move |source| AppDataError::Io {
        path: path.to_owned(),
        source,
    }
}

/// One file in an app's data area, with its path relative to the app's directory ('/' separated;
/// bytes that are not UTF-8 written as `\xNN`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DataFile {
    pub path: String,
    pub size: u64,
}

/// What an entry the walk did not list or export is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    Symlink,
    Fifo,
    Socket,
    BlockDevice,
    CharDevice,
    Directory,
    File,
    Unknown,
}

impl EntryKind {
    fn of(t: FileType) -> EntryKind {
        match t {
            FileType::Symlink => EntryKind::Symlink,
            FileType::Fifo => EntryKind::Fifo,
            FileType::Socket => EntryKind::Socket,
            FileType::BlockDevice => EntryKind::BlockDevice,
            FileType::CharacterDevice => EntryKind::CharDevice,
            FileType::Directory => EntryKind::Directory,
            FileType::RegularFile => EntryKind::File,
            _ => EntryKind::Unknown,
        }
    }
}

/// An entry of the app's data area that was not listed (or not exported), and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedEntry {
    pub path: String,
    pub kind: EntryKind,
    pub reason: String,
}

/// Everything under an app's directory, as far as it can be read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DataListing {
    /// Regular files, sorted by path (at most [`MAX_LISTED_FILES`]).
    pub files: Vec<DataFile>,
    /// Entries not listed: links, special files, unreadable or too deep directories.
    pub skipped: Vec<SkippedEntry>,
    /// Every regular file found, listed or not, and their bytes.
    pub total_files: u64,
    pub total_bytes: u64,
    /// Whether `files` or `skipped` were cut at their limit.
    pub truncated: bool,
}

/// What an export wrote, and what it left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportReport {
    pub files: u64,
    pub bytes: u64,
    pub skipped: Vec<SkippedEntry>,
}

#[derive(Debug, Clone)]
pub struct AppDataStore {
    root: PathBuf,
}

impl AppDataStore {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        AppDataStore { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The app's directory. It may not exist yet.
    pub fn dir(&self, app: &AppId) -> PathBuf {
        self.root.join(app.as_str())
    }

    /// Whether the app has a data area: its directory, or anything else (a link, a file) under
    /// its name, which uninstall removes just the same. Never follows a link.
    pub fn exists(&self, app: &AppId) -> bool {
        fs::symlink_metadata(self.dir(app)).is_ok()
    }

    /// Creates the app's directory if missing (0700, never through a link; see
    /// [`crate::app_area`]).
    pub fn ensure(&self, app: &AppId) -> Result<PathBuf, AppDataError> {
        let dir = self.dir(app);
        crate::app_area::AppArea::open(&dir).map_err(io_err(&dir))?;
        Ok(dir)
    }

    /// Every regular file under the app's directory, sorted by path, and every entry skipped.
    /// Never fails: what cannot be read is reported in `skipped`.
    pub fn list(&self, app: &AppId) -> DataListing {
        let mut listing = DataListing::default();
        walk_app(&self.dir(app), &mut |item| {
            match item {
                Item::File { rel, size, .. } => {
                    listing.total_files += 1;
                    listing.total_bytes += size;
                    if listing.files.len() < MAX_LISTED_FILES {
                        listing.files.push(DataFile { path: rel, size });
                    } else {
                        listing.truncated = true;
                    }
                }
                Item::Skipped(s) => {
                    if listing.skipped.len() < MAX_LISTED_SKIPPED {
                        listing.skipped.push(s);
                    } else {
                        listing.truncated = true;
                    }
                }
            }
            Ok(())
        })
        .expect("the listing visitor never fails");
        listing.files.sort_by(|a, b| a.path.cmp(&b.path));
        listing.skipped.sort_by(|a, b| a.path.cmp(&b.path));
        listing
    }

    /// Writes a zip of the app's regular files to `dest` (through a temporary file moved into
    /// place without replacing anything, then made durable, so `dest` is either the complete
    /// export or absent). Links, special files and too deep directories are left out and
    /// reported; nothing but regular files is ever opened, so this cannot block.
    pub fn export_zip(&self, app: &AppId, dest: &Path) -> Result<ExportReport, AppDataError> {
        let dir = self.dir(app);
        let tmp = partial_export_path(dest);
        let mut report = ExportReport::default();
        let mut created = false;
        let result = (|| {
            let file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
                .map_err(io_err(&tmp))?;
            created = true;
            let mut zip = zip::ZipWriter::new(file);
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated)
                .last_modified_time(zip::DateTime::default());
            let zerr = |source: zip::result::ZipError| AppDataError::Zip {
                path: dest.to_owned(),
                source,
            };
            let mut names = HashSet::new();
            walk_app(&dir, &mut |item| {
                let (dirfd, name, rel) = match item {
                    Item::File {
                        dirfd, name, rel, ..
                    } => (dirfd, name, rel),
                    Item::Skipped(s) => {
                        report.skipped.push(s);
                        return Ok(());
                    }
                };
                let mut input = match open_regular(dirfd, name) {
                    Ok(f) => f,
                    Err(skip) => {
                        report.skipped.push(skip.at(rel));
                        return Ok(());
                    }
                };
                let entry = format!("{}/{rel}", app.as_str());
                if !names.insert(entry.clone()) {
                    report.skipped.push(SkippedEntry {
                        path: rel,
                        kind: EntryKind::File,
                        reason: "its name is not UTF-8 and, escaped, equals another file's name"
                            .into(),
                    });
                    return Ok(());
                }
                zip.start_file(entry, opts).map_err(zerr)?;
                let src = dir.join(&rel);
                let n = io::copy(&mut input, &mut zip).map_err(io_err(&src))?;
                report.files += 1;
                report.bytes += n;
                Ok(())
            })?;
            let mut file = zip.finish().map_err(zerr)?;
            file.flush().map_err(io_err(&tmp))?;
            file.sync_all().map_err(io_err(&tmp))?;
            drop(file);
            durable::rename_noreplace(&tmp, dest).map_err(io_err(dest))?;
            // The export must be durable before anything deletes the data it holds.
            durable::sync_parent(dest).map_err(io_err(dest))
        })();
        if result.is_err() && created {
            // Best effort: only our own temporary file, which the host also journals (and
            // recovery removes) in case this fails too.
            fs::remove_file(&tmp).ok();
        }
        result.map(|()| report)
    }
}

/// The temporary file [`AppDataStore::export_zip`] writes before renaming it to `dest`.
pub fn partial_export_path(dest: &Path) -> PathBuf {
    let parent = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    parent.join(format!(
        ".{}.partial",
        dest.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "export.zip".into())
    ))
}

/// A name as shown to people and written into exports: UTF-8 as is, other bytes as `\xNN`.
pub fn display_name(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

/// What the walk found.
enum Item<'a> {
    /// A regular file (by `lstat`): its directory, its name there, its display path.
    File {
        dirfd: BorrowedFd<'a>,
        name: &'a CStr,
        rel: String,
        size: u64,
    },
    Skipped(SkippedEntry),
}

/// Why an entry was not read, before its path is known.
struct Skip {
    kind: EntryKind,
    reason: String,
}

impl Skip {
    fn at(self, path: String) -> SkippedEntry {
        SkippedEntry {
            path,
            kind: self.kind,
            reason: self.reason,
        }
    }
}

type Visit<'v> = dyn for<'a> FnMut(Item<'a>) -> Result<(), AppDataError> + 'v;

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}/{name}")
    }
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Walks the app's directory (which may be missing: nothing to list). Only `visit` can fail.
fn walk_app(dir: &Path, visit: &mut Visit<'_>) -> Result<(), AppDataError> {
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        _ => {}
    }
    match rustix::fs::open(dir, DIR_FLAGS, Mode::empty()) {
        Ok(fd) => walk(&fd, "", 0, visit),
        Err(e) => {
            let kind = match fs::symlink_metadata(dir) {
                Ok(m) if m.file_type().is_symlink() => EntryKind::Symlink,
                Ok(m) if m.is_dir() => EntryKind::Directory,
                Ok(_) => EntryKind::Unknown,
                Err(_) => EntryKind::Unknown,
            };
            visit(Item::Skipped(SkippedEntry {
                path: ".".into(),
                kind,
                reason: format!("the app's data directory cannot be opened: {e}"),
            }))
        }
    }
}

fn walk(
    dirfd: &OwnedFd,
    prefix: &str,
    depth: usize,
    visit: &mut Visit<'_>,
) -> Result<(), AppDataError> {
    let mut names = Vec::new();
    let mut error = None;
    match rustix::fs::Dir::read_from(dirfd) {
        Ok(mut dir) => {
            while let Some(entry) = dir.read() {
                match entry {
                    Ok(e) => {
                        let n = e.file_name();
                        if n != c"." && n != c".." {
                            names.push(n.to_owned());
                        }
                    }
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
            }
        }
        Err(e) => error = Some(e),
    }
    if let Some(e) = error {
        visit(Item::Skipped(SkippedEntry {
            path: if prefix.is_empty() {
                ".".into()
            } else {
                prefix.to_owned()
            },
            kind: EntryKind::Directory,
            reason: format!("cannot read this directory (entries may be missing): {e}"),
        }))?;
    }
    names.sort();
    for name in &names {
        let rel = join(prefix, &display_name(name.to_bytes()));
        let st = match rustix::fs::statat(dirfd, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(e) => {
                visit(Item::Skipped(SkippedEntry {
                    path: rel,
                    kind: EntryKind::Unknown,
                    reason: format!("cannot stat: {e}"),
                }))?;
                continue;
            }
        };
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => visit(Item::File {
                dirfd: dirfd.as_fd(),
                name: name.as_c_str(),
                rel,
                size: st.st_size as u64,
            })?,
            FileType::Directory if depth + 1 >= MAX_DEPTH => visit(Item::Skipped(SkippedEntry {
                path: rel,
                kind: EntryKind::Directory,
                reason: format!("nested deeper than {MAX_DEPTH} directories"),
            }))?,
            FileType::Directory => {
                match rustix::fs::openat(dirfd, name.as_c_str(), DIR_FLAGS, Mode::empty()) {
                    Ok(sub) => walk(&sub, &rel, depth + 1, visit)?,
                    Err(e) => visit(Item::Skipped(SkippedEntry {
                        path: rel,
                        kind: EntryKind::Directory,
                        reason: format!("cannot open this directory: {e}"),
                    }))?,
                }
            }
            other => {
                let kind = EntryKind::of(other);
                let reason = match kind {
                    EntryKind::Symlink => "a symbolic link (never followed)",
                    _ => "not a regular file (never opened)",
                };
                visit(Item::Skipped(SkippedEntry {
                    path: rel,
                    kind,
                    reason: reason.into(),
                }))?
            }
        }
    }
    Ok(())
}

/// Opens a file the walk saw as regular, without following a link and without blocking, and
/// checks it is still a regular file (it may have been replaced since).
fn open_regular(dirfd: BorrowedFd<'_>, name: &CStr) -> Result<fs::File, Skip> {
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dirfd, name, flags, Mode::empty()).map_err(|e| Skip {
        kind: if e == rustix::io::Errno::LOOP {
            EntryKind::Symlink
        } else {
            EntryKind::File
        },
        reason: format!("cannot open: {e}"),
    })?;
    let st = rustix::fs::fstat(&fd).map_err(|e| Skip {
        kind: EntryKind::File,
        reason: format!("cannot stat: {e}"),
    })?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => Ok(fs::File::from(fd)),
        other => Err(Skip {
            kind: EntryKind::of(other),
            reason: "replaced by something that is not a regular file while exporting".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::symlink;
    use std::time::Duration;

    fn store_with_app() -> (tempfile::TempDir, AppDataStore, AppId, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let store = AppDataStore::new(tmp.path().join("apps"));
        let app = AppId::new("demo").unwrap();
        let dir = store.ensure(&app).unwrap();
        (tmp, store, app, dir)
    }

    fn zip_names(path: &Path) -> Vec<String> {
        let mut zip = zip::ZipArchive::new(fs::File::open(path).unwrap()).unwrap();
        let mut names: Vec<_> = (0..zip.len())
            .map(|i| zip.by_index(i).unwrap().name().unwrap().into_owned())
            .collect();
        names.sort();
        names
    }

    fn mkfifo(path: &Path) {
        let st = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(st.success(), "mkfifo failed");
    }

    /// Runs `f` on a thread and fails the test (instead of hanging) if it takes too long.
    fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(f()).ok());
        rx.recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("{what} did not finish in 20 s (blocked?)"))
    }

    #[test]
    fn export_contains_every_file_and_leaves_no_partial_file() {
        let (tmp, store, app, dir) = store_with_app();
        fs::create_dir_all(dir.join("sub")).unwrap();
        fs::write(dir.join("a.txt"), b"hello").unwrap();
        fs::write(dir.join("sub/b.bin"), vec![7u8; 1000]).unwrap();

        let dest = tmp.path().join("out.zip");
        let report = store.export_zip(&app, &dest).unwrap();
        assert_eq!((report.files, report.bytes), (2, 1005));
        assert!(report.skipped.is_empty());
        assert_eq!(zip_names(&dest), vec!["demo/a.txt", "demo/sub/b.bin"]);
        let leftovers: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".partial"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn export_never_replaces_an_existing_file() {
        let (tmp, store, app, dir) = store_with_app();
        fs::write(dir.join("a.txt"), b"hello").unwrap();
        let dest = tmp.path().join("out.zip");
        fs::write(&dest, b"precious").unwrap();
        assert!(store.export_zip(&app, &dest).is_err());
        assert_eq!(fs::read(&dest).unwrap(), b"precious");
        assert!(!partial_export_path(&dest).exists());
    }

    #[test]
    fn listing_a_missing_app_is_empty() {
        let tmp = tempfile::tempdir().unwrap();
        let store = AppDataStore::new(tmp.path());
        let listing = store.list(&AppId::new("none").unwrap());
        assert_eq!(listing, DataListing::default());
    }

    #[test]
    fn symlinks_are_reported_and_never_followed() {
        let (tmp, store, app, dir) = store_with_app();
        let outside = tmp.path().join("outside");
        fs::create_dir_all(outside.join("deep")).unwrap();
        fs::write(outside.join("secret.txt"), b"not the app's").unwrap();
        fs::write(outside.join("deep/more.txt"), b"not the app's either").unwrap();
        fs::write(dir.join("mine.txt"), b"mine").unwrap();
        symlink(&outside, dir.join("link-to-dir")).unwrap();
        symlink(outside.join("secret.txt"), dir.join("link-to-file")).unwrap();
        symlink("/nonexistent/target", dir.join("dangling")).unwrap();

        let listing = store.list(&app);
        assert_eq!(
            listing.files,
            vec![DataFile {
                path: "mine.txt".into(),
                size: 4
            }]
        );
        let skipped: Vec<_> = listing
            .skipped
            .iter()
            .map(|s| (s.path.as_str(), s.kind))
            .collect();
        assert_eq!(
            skipped,
            vec![
                ("dangling", EntryKind::Symlink),
                ("link-to-dir", EntryKind::Symlink),
                ("link-to-file", EntryKind::Symlink),
            ]
        );
        let dest = tmp.path().join("out.zip");
        let report = store.export_zip(&app, &dest).unwrap();
        assert_eq!(zip_names(&dest), vec!["demo/mine.txt"]);
        assert_eq!(report.skipped.len(), 3);
        // The app's directory itself being a link is reported too, and nothing behind it read.
        fs::remove_dir_all(&dir).unwrap();
        symlink(&outside, &dir).unwrap();
        let listing = store.list(&app);
        assert!(listing.files.is_empty());
        assert_eq!(listing.skipped[0].path, ".");
        assert_eq!(listing.skipped[0].kind, EntryKind::Symlink);
        assert!(store.exists(&app));
    }

    #[test]
    fn fifos_and_sockets_are_skipped_and_export_does_not_block() {
        let (tmp, store, app, dir) = store_with_app();
        fs::write(dir.join("a.txt"), b"a").unwrap();
        mkfifo(&dir.join("pipe"));
        fs::create_dir(dir.join("run")).unwrap();
        let _sock = std::os::unix::net::UnixListener::bind(dir.join("run/app.sock")).unwrap();

        let listing = store.list(&app);
        assert_eq!(listing.files.len(), 1);
        let skipped: Vec<_> = listing
            .skipped
            .iter()
            .map(|s| (s.path.as_str(), s.kind))
            .collect();
        assert_eq!(
            skipped,
            vec![
                ("pipe", EntryKind::Fifo),
                ("run/app.sock", EntryKind::Socket)
            ]
        );
        let dest = tmp.path().join("out.zip");
        let (s, a, d) = (store.clone(), app.clone(), dest.clone());
        let report = within("export with a FIFO", move || s.export_zip(&a, &d).unwrap());
        assert_eq!(report.files, 1);
        assert_eq!(report.skipped.len(), 2);
        assert_eq!(zip_names(&dest), vec!["demo/a.txt"]);
    }

    #[test]
    fn a_fifo_swapped_in_for_a_file_is_not_read() {
        // The walk saw a regular file; by the time it is opened it is a FIFO.
        let (tmp, _store, _app, dir) = store_with_app();
        mkfifo(&dir.join("was-a-file"));
        let fd = rustix::fs::open(&dir, DIR_FLAGS, Mode::empty()).unwrap();
        let r = within("opening a FIFO", move || {
            open_regular(fd.as_fd(), c"was-a-file")
                .map(|_| ())
                .map_err(|s| s.kind)
        });
        assert_eq!(r, Err(EntryKind::Fifo));
        drop(tmp);
    }

    #[test]
    fn deep_trees_are_cut_at_the_depth_limit() {
        let (tmp, store, app, dir) = store_with_app();
        let mut p = dir.clone();
        for i in 0..(MAX_DEPTH + 20) {
            p = p.join("d");
            fs::create_dir(&p).unwrap();
            if i == 2 {
                fs::write(p.join("shallow.txt"), b"s").unwrap();
            }
        }
        fs::write(p.join("bottom.txt"), b"b").unwrap();
        let listing = store.list(&app);
        assert_eq!(listing.files.len(), 1);
        assert_eq!(listing.files[0].path, "d/d/d/shallow.txt");
        assert_eq!(listing.skipped.len(), 1);
        assert_eq!(listing.skipped[0].kind, EntryKind::Directory);
        assert_eq!(listing.skipped[0].path.split('/').count(), MAX_DEPTH);
        let dest = tmp.path().join("out.zip");
        let report = store.export_zip(&app, &dest).unwrap();
        assert_eq!(report.files, 1);
        assert_eq!(report.skipped.len(), 1);
    }

    #[test]
    fn non_utf8_names_are_listed_and_exported_escaped() {
        let (tmp, store, app, dir) = store_with_app();
        let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
        fs::write(dir.join(name), b"latin-1").unwrap();
        let sub = dir.join(std::ffi::OsStr::from_bytes(b"\xff\xfe"));
        fs::create_dir(&sub).unwrap();
        fs::write(sub.join("x"), b"x").unwrap();
        // A UTF-8 name that looks like the escape of another: a collision in the export.
        fs::write(dir.join("caf\\xE9.txt"), b"utf-8").unwrap();

        let listing = store.list(&app);
        let paths: Vec<_> = listing.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["\\xFF\\xFE/x", "caf\\xE9.txt", "caf\\xE9.txt"]);
        let dest = tmp.path().join("out.zip");
        let report = store.export_zip(&app, &dest).unwrap();
        assert_eq!(report.files, 2);
        assert_eq!(report.skipped.len(), 1, "{report:?}");
        assert_eq!(
            zip_names(&dest),
            vec!["demo/\\xFF\\xFE/x", "demo/caf\\xE9.txt"]
        );
    }

    #[test]
    fn display_names_escape_only_invalid_bytes() {
        assert_eq!(display_name(b"plain.txt"), "plain.txt");
        assert_eq!(display_name("é".as_bytes()), "é");
        assert_eq!(display_name(b"a\xffb\xc3"), "a\\xFFb\\xC3");
    }
}
