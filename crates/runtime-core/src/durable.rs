//! Durable file-system steps shared by the host's store and RuntimeCore's data area: make a
//! directory entry durable (fsync the directory), and rename without ever replacing a file.

use std::fs;
use std::io;
use std::path::Path;

/// Makes the entries of `dir` (files created, renamed or removed in it) durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

/// Makes the directory entry of `path` durable: fsyncs its parent directory.
pub fn sync_parent(path: &Path) -> io::Result<()> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    sync_dir(parent)
}

/// Renames `from` to `to`, failing with `AlreadyExists` (and changing nothing) if `to` exists.
///
/// Uses `renameat2(RENAME_NOREPLACE)`, atomic in the kernel. Where the file system does not
/// support it, falls back to a hard link (which never replaces either) and then unlinks `from`;
/// a crash between the two leaves both names, which callers treat like an unfinished rename.
pub fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(()),
            Err(e)
                if e == rustix::io::Errno::INVAL
                    || e == rustix::io::Errno::NOSYS
                    || e == rustix::io::Errno::OPNOTSUPP =>
            {
                // The file system (or kernel) lacks RENAME_NOREPLACE: link, then unlink.
            }
            Err(e) => return Err(e.into()),
        }
    }
    link_then_unlink(from, to)
}

/// The fallback of [`rename_noreplace`]: `link(from, to)` (fails if `to` exists), then
/// `unlink(from)`.
pub fn link_then_unlink(from: &Path, to: &Path) -> io::Result<()> {
    fs::hard_link(from, to)?;
    fs::remove_file(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rename_noreplace_never_replaces_and_moves_otherwise() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            tmp.path().join("a"),
            tmp.path().join("b"),
            tmp.path().join("c"),
        );
        fs::write(&a, b"new").unwrap();
        fs::write(&b, b"existing").unwrap();
        let e = rename_noreplace(&a, &b).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&b).unwrap(), b"existing");
        assert_eq!(fs::read(&a).unwrap(), b"new");
        rename_noreplace(&a, &c).unwrap();
        assert!(!a.exists());
        assert_eq!(fs::read(&c).unwrap(), b"new");
        sync_parent(&c).unwrap();
    }

    #[test]
    fn the_link_fallback_never_replaces_either() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            tmp.path().join("a"),
            tmp.path().join("b"),
            tmp.path().join("c"),
        );
        fs::write(&a, b"new").unwrap();
        fs::write(&b, b"existing").unwrap();
        let e = link_then_unlink(&a, &b).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&b).unwrap(), b"existing");
        assert!(a.exists());
        link_then_unlink(&a, &c).unwrap();
        assert!(!a.exists());
        assert_eq!(fs::read(&c).unwrap(), b"new");
    }
}
