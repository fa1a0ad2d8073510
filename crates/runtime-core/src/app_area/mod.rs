//! The app data area: `apps/<app>/`, one directory per app, and the one way to get a path or a
//! handle inside it.
//!
//! Every writer (the `lime.storage` / `lime.artifacts` / `lime.evidence` services, the agent's
//! host tools, the App Server's readers, uninstall and export) reaches the area through
//! [`AppArea`]: the app's directory is opened once without following a link (`O_NOFOLLOW`), and
//! what lives in it is named only by the [`RESERVED_NAMES`] table ([`Db`] files and [`SubDir`]
//! directories). The agent's `storage_*` tools get the `files/` sub-area ([`files::FilesArea`]),
//! whose paths are walked from its descriptor one component at a time with
//! `openat(O_NOFOLLOW)`: they cannot name a reserved file, and no link is followed at any step.
//!
//! New directories are created 0700, new files 0600 (everything under `apps/<app>/` is the
//! app's private data).
//!
//! The host chooses the root (`<data>/apps`, created 0700): it is trusted. Below it nothing is:
//! the app's directory being a link (or anything but a directory) is refused (`ELOOP` /
//! `ENOTDIR`). SQLite opens its files by path (with `SQLITE_OPEN_NOFOLLOW` on the file itself),
//! right after the directory was checked; only the host can change `apps/` itself.

pub mod files;
pub mod services;

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// What a name at the top of `apps/<app>/` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReservedKind {
    /// An SQLite database (its `-wal`, `-shm` and `-journal` companions are reserved with it).
    Database,
    /// A directory the owner manages.
    Directory,
}

/// One reserved name at the top of `apps/<app>/` and the only writer allowed to touch it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReservedName {
    pub name: &'static str,
    pub kind: ReservedKind,
    pub owner: &'static str,
}

/// Everything that lives in `apps/<app>/`. Nothing else is created there by the host; the
/// agent's tools write only inside `files/`. (`artifacts/` held the agent's artifact files
/// before `artifact_write` made real `lime.artifacts` artifacts; it is kept for export only.)
pub const RESERVED_NAMES: &[ReservedName] = &[
    ReservedName {
        name: "storage.sqlite",
        kind: ReservedKind::Database,
        owner: "lime.storage",
    },
    ReservedName {
        name: "artifacts.sqlite",
        kind: ReservedKind::Database,
        owner: "lime.artifacts",
    },
    ReservedName {
        name: "artifact-blobs",
        kind: ReservedKind::Directory,
        owner: "lime.artifacts",
    },
    ReservedName {
        name: "evidence.sqlite",
        kind: ReservedKind::Database,
        owner: "lime.evidence",
    },
    ReservedName {
        name: "files",
        kind: ReservedKind::Directory,
        owner: "the agent's storage_* tools",
    },
    ReservedName {
        name: "knowledge",
        kind: ReservedKind::Directory,
        owner: "lime.knowledge (one FTS5 index per bound template)",
    },
    ReservedName {
        name: "services",
        kind: ReservedKind::Directory,
        owner: "host-supervised backend services (`services/<key>/` writable by that service only, `services/.logs/`)",
    },
    ReservedName {
        name: "artifacts",
        kind: ReservedKind::Directory,
        owner: "none (legacy agent artifact files; exported, never written)",
    },
];

/// SQLite's companion files of a database `x`: `x-wal`, `x-shm`, `x-journal`.
pub const DB_SUFFIXES: &[&str] = &["", "-wal", "-shm", "-journal"];

/// Whether `name` (one path component at the top of `apps/<app>/`) is reserved.
pub fn is_reserved(name: &str) -> bool {
    RESERVED_NAMES.iter().any(|r| match r.kind {
        ReservedKind::Directory => name == r.name,
        ReservedKind::Database => DB_SUFFIXES
            .iter()
            .any(|s| name.strip_prefix(r.name) == Some(s)),
    })
}

/// The databases of the area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Db {
    Storage,
    Artifacts,
    Evidence,
}

impl Db {
    pub fn file_name(self) -> &'static str {
        match self {
            Db::Storage => "storage.sqlite",
            Db::Artifacts => "artifacts.sqlite",
            Db::Evidence => "evidence.sqlite",
        }
    }
}

/// The directories of the area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubDir {
    ArtifactBlobs,
    Files,
    Knowledge,
    Services,
}

impl SubDir {
    pub fn name(self) -> &'static str {
        match self {
            SubDir::ArtifactBlobs => "artifact-blobs",
            SubDir::Files => "files",
            SubDir::Knowledge => "knowledge",
            SubDir::Services => "services",
        }
    }
}

/// Mode of every directory the area creates.
pub const DIR_MODE: u32 = 0o700;
/// Mode of every file the area creates.
pub const FILE_MODE: u32 = 0o600;

pub(crate) const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// One app's data directory, open.
#[derive(Debug)]
pub struct AppArea {
    path: PathBuf,
    dir: OwnedFd,
}

impl AppArea {
    /// Opens the app directory `app_dir` (`<root>/<app>`), creating it (0700, and the root if
    /// missing) first. A link or a non-directory at `app_dir` is refused.
    pub fn open(app_dir: &Path) -> io::Result<AppArea> {
        let (parent, name) = split(app_dir)?;
        let root = open_root(parent, true)?;
        let dir = mkdir_open(&root, name)?;
        Ok(AppArea {
            path: app_dir.to_owned(),
            dir,
        })
    }

    /// Opens the app directory only if it exists (never creates anything).
    pub fn open_existing(app_dir: &Path) -> io::Result<Option<AppArea>> {
        let (parent, name) = split(app_dir)?;
        let root = match open_root(parent, false) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            r => r?,
        };
        match rustix::fs::openat(&root, name, DIR_FLAGS, Mode::empty()) {
            Ok(dir) => Ok(Some(AppArea {
                path: app_dir.to_owned(),
                dir,
            })),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The app directory's path (for messages, and for SQLite, which opens by path).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The app directory's descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }

    /// The path SQLite opens for `db`.
    pub fn db_path(&self, db: Db) -> PathBuf {
        self.path.join(db.file_name())
    }

    /// The path SQLite opens for `db`, for a writer: the file is created first (0600, never
    /// through a link) and made private if it was not, so SQLite's `-wal`/`-shm`/`-journal`
    /// files, which take the database's mode, are private too.
    pub fn prepare_db(&self, db: Db) -> io::Result<PathBuf> {
        let fd = rustix::fs::openat(
            &self.dir,
            db.file_name(),
            OFlags::RDONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::from_raw_mode(FILE_MODE),
        )?;
        let st = rustix::fs::fstat(&fd)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(io::Error::other(format!(
                "{} is not a regular file",
                db.file_name()
            )));
        }
        if st.st_mode & 0o777 != FILE_MODE {
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(FILE_MODE))?;
        }
        Ok(self.db_path(db))
    }

    /// Whether `db` exists as a regular file (`Err` when something else sits under its name).
    pub fn db_exists(&self, db: Db) -> io::Result<bool> {
        match rustix::fs::statat(&self.dir, db.file_name(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => Ok(true),
            Ok(_) => Err(io::Error::other(format!(
                "{} is not a regular file",
                db.file_name()
            ))),
            Err(rustix::io::Errno::NOENT) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Opens the sub-directory `d`, creating it (0700) when `create`; `None` when it is missing
    /// and not created. A link there is refused.
    pub fn subdir(&self, d: SubDir, create: bool) -> io::Result<Option<OwnedFd>> {
        if create {
            return mkdir_open(&self.dir, d.name()).map(Some);
        }
        match rustix::fs::openat(&self.dir, d.name(), DIR_FLAGS, Mode::empty()) {
            Ok(fd) => Ok(Some(fd)),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

fn split(app_dir: &Path) -> io::Result<(&Path, &std::ffi::OsStr)> {
    let name = app_dir
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no app directory name"))?;
    let parent = app_dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok((parent, name))
}

/// Opens the host's apps root (trusted: chosen by the host), creating it 0700 when `create`.
fn open_root(root: &Path, create: bool) -> io::Result<OwnedFd> {
    if create {
        match std::fs::symlink_metadata(root) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                use std::os::unix::fs::DirBuilderExt;
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(DIR_MODE)
                    .create(root)?;
            }
            _ => {}
        }
    }
    Ok(rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Opens (creating 0700 if missing, made durable) the directory `name` below `parent`, never
/// through a link.
pub(crate) fn mkdir_open<P: rustix::path::Arg + Copy>(
    parent: &OwnedFd,
    name: P,
) -> io::Result<OwnedFd> {
    match rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(DIR_MODE)) {
        Ok(()) => rustix::fs::fsync(parent)?,
        Err(rustix::io::Errno::EXIST) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(rustix::fs::openat(parent, name, DIR_FLAGS, Mode::empty())?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    #[test]
    fn reserved_names_cover_the_databases_and_their_companions() {
        for db in [Db::Storage, Db::Artifacts, Db::Evidence] {
            for s in DB_SUFFIXES {
                assert!(is_reserved(&format!("{}{s}", db.file_name())));
            }
        }
        for d in [
            SubDir::ArtifactBlobs,
            SubDir::Files,
            SubDir::Knowledge,
            SubDir::Services,
        ] {
            assert!(is_reserved(d.name()));
        }
        for free in ["notes.txt", "storage.sqlite-x", "storage", "files2"] {
            assert!(!is_reserved(free), "{free}");
        }
    }

    #[test]
    fn the_area_is_private_and_a_linked_app_directory_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("apps");
        let area = AppArea::open(&root.join("demo")).unwrap();
        let files = area.subdir(SubDir::Files, true).unwrap().unwrap();
        drop(files);
        for p in [root.join("demo"), root.join("demo/files")] {
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", p.display());
        }
        assert!(area.subdir(SubDir::ArtifactBlobs, false).unwrap().is_none());
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        symlink(&outside, root.join("linked")).unwrap();
        assert!(AppArea::open(&root.join("linked")).is_err());
        assert!(AppArea::open_existing(&root.join("linked")).is_err());
        assert!(AppArea::open_existing(&root.join("none"))
            .unwrap()
            .is_none());
        // A link planted at a sub-directory is refused too, and nothing is created outside.
        symlink(&outside, root.join("demo/artifact-blobs")).unwrap();
        assert!(area.subdir(SubDir::ArtifactBlobs, true).is_err());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }

    /// Everything the writers create under `apps/<app>/` is private: directories 0700, files
    /// (the databases and SQLite's companions, blobs) 0600, also a database made before.
    #[test]
    fn every_writer_leaves_private_modes() {
        use crate::app_artifacts::{AppArtifacts, ArtifactLimits, Provenance};
        use crate::app_evidence::{AppEvidence, EvidenceLimits};
        use crate::app_storage::{AppStorage, DEFAULT_QUOTA_BYTES};
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("apps/demo");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("evidence.sqlite"), b"").unwrap();
        std::fs::set_permissions(
            dir.join("evidence.sqlite"),
            PermissionsExt::from_mode(0o644),
        )
        .unwrap();
        let mut kv = AppStorage::open(&dir, DEFAULT_QUOTA_BYTES).unwrap();
        kv.set("k", &serde_json::json!(1)).unwrap();
        let mut arts = AppArtifacts::open(&dir, ArtifactLimits::default()).unwrap();
        let prov: Provenance = serde_json::from_value(serde_json::json!({
            "appId": "demo", "appVersion": "1", "packageHash": "p", "manifestHash": "m",
            "entryKey": "main", "traceId": "t"
        }))
        .unwrap();
        arts.create("a.txt", None, b"x", &prov).unwrap();
        let _ev = AppEvidence::open(&dir, EvidenceLimits::default()).unwrap();
        let mut seen = 0;
        let mut stack = vec![dir.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                let m = std::fs::symlink_metadata(&p).unwrap();
                let mode = m.permissions().mode() & 0o777;
                if m.is_dir() {
                    assert_eq!(mode, 0o700, "{}", p.display());
                    stack.push(p);
                } else {
                    assert_eq!(mode, 0o600, "{}", p.display());
                }
                seen += 1;
            }
        }
        assert!(seen >= 6, "{seen}");
        assert!(dir.join("storage.sqlite-wal").exists());
    }
}
