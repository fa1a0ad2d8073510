//! Private files in the data directory, whatever the process umask: directories 0700, files and
//! SQLite databases 0600 (the data directory holds prompts, tool arguments and app data).
//!
//! The one helper for it, shared by host-core (data directory, `host.db`, staging, packs,
//! uploads) and runtime-core (`runtime/`, `events.db`, `agent-tasks.sqlite`, ...):
//! - [`create_private_dir`]: creates a directory (and missing parents) 0700, and tightens an
//!   existing one to 0700;
//! - [`prepare_private_db`] / [`open_private_db`]: creates a database file 0600 with
//!   `O_CREAT|O_EXCL|O_NOFOLLOW` before SQLite opens it, or tightens an existing one (and its
//!   `-wal` / `-shm` / `-journal`) to 0600. SQLite creates `-wal` and `-shm` with the database
//!   file's mode, so they are 0600 too (`tests/private_files.rs`);
//! - [`create_private_file`]: creates or truncates a regular file 0600 (`O_NOFOLLOW`).
//!
//! Data directories made before these modes existed are tightened when they are opened.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Mode of private directories.
pub const DIR_MODE: u32 = 0o700;
/// Mode of private files.
pub const FILE_MODE: u32 = 0o600;

/// `O_NOFOLLOW` (through rustix: no libc dependency).
const NOFOLLOW: i32 = rustix::fs::OFlags::NOFOLLOW.bits() as i32;

/// SQLite's companion files of a database (tightened with it).
const SQLITE_SUFFIXES: &[&str] = &["-wal", "-shm", "-journal"];

/// Creates `dir` (and any missing parent) with mode 0700, or tightens an existing `dir` to 0700.
/// A symbolic link named `dir` is followed (a user may point the data directory elsewhere).
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)?;
    let meta = fs::metadata(dir)?;
    if meta.permissions().mode() & 0o777 != DIR_MODE {
        fs::set_permissions(dir, Permissions::from_mode(DIR_MODE))?;
    }
    Ok(())
}

/// Makes sure the database at `path` exists as a private regular file before SQLite opens it:
/// creates it empty with mode 0600 (`O_CREAT|O_EXCL|O_NOFOLLOW`), or tightens an existing one
/// and its `-wal` / `-shm` / `-journal` to 0600. A symbolic link at `path` is an error.
pub fn prepare_private_db(path: &Path) -> io::Result<()> {
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .custom_flags(NOFOLLOW)
        .open(path)
    {
        Ok(f) => set_mode(&f),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            if !fs::symlink_metadata(path)?.file_type().is_file() {
                return Err(io::Error::other(format!(
                    "{} is not a regular file",
                    path.display()
                )));
            }
            tighten_file(path)?;
            for suffix in SQLITE_SUFFIXES {
                let mut companion = path.as_os_str().to_owned();
                companion.push(suffix);
                tighten_file(Path::new(&companion))?;
            }
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// [`prepare_private_db`], then opens it with rusqlite.
pub fn open_private_db(path: &Path) -> rusqlite::Result<rusqlite::Connection> {
    prepare_private_db(path).map_err(|e| io_to_sqlite(path, e))?;
    rusqlite::Connection::open(path)
}

/// An I/O failure as a rusqlite error (`SQLITE_CANTOPEN`, naming the path).
pub fn io_to_sqlite(path: &Path, e: io::Error) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
        Some(format!("cannot create {} privately: {e}", path.display())),
    )
}

/// Creates (or truncates) the regular file `path` for writing, mode 0600; a symbolic link at
/// `path` is an error.
pub fn create_private_file(path: &Path) -> io::Result<File> {
    let f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(FILE_MODE)
        .custom_flags(NOFOLLOW)
        .open(path)?;
    set_mode(&f)?;
    Ok(f)
}

/// 0600 on an open file unless it already is (the umask only ever removes bits, so this is for
/// files made before, or an umask that removed the owner's own bits).
fn set_mode(f: &File) -> io::Result<()> {
    if f.metadata()?.permissions().mode() & 0o777 != FILE_MODE {
        f.set_permissions(Permissions::from_mode(FILE_MODE))?;
    }
    Ok(())
}

/// Tightens an existing regular file to 0600 (absent, or not a regular file: left alone).
fn tighten_file(path: &Path) -> io::Result<()> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if meta.file_type().is_file() && meta.permissions().mode() & 0o777 != FILE_MODE {
        fs::set_permissions(path, Permissions::from_mode(FILE_MODE))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn existing_loose_modes_are_tightened() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("data");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, Permissions::from_mode(0o755)).unwrap();
        let db = dir.join("x.db");
        let wal = dir.join("x.db-wal");
        for f in [&db, &wal] {
            fs::write(f, b"").unwrap();
            fs::set_permissions(f, Permissions::from_mode(0o644)).unwrap();
        }
        create_private_dir(&dir).unwrap();
        prepare_private_db(&db).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&db), 0o600);
        assert_eq!(mode(&wal), 0o600);
    }

    #[test]
    fn a_link_in_place_of_a_database_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let target = t.path().join("elsewhere");
        fs::write(&target, b"").unwrap();
        fs::set_permissions(&target, Permissions::from_mode(0o644)).unwrap();
        let link = t.path().join("x.db");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(prepare_private_db(&link).is_err());
        assert!(create_private_file(&link).is_err());
        assert_eq!(mode(&target), 0o644, "the link's target is not touched");
    }
}
