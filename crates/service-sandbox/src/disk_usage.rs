//! How much disk a service's writable directory takes: the allocated blocks (`st_blocks * 512`)
//! of every entry under it, walked through descriptors (`openat(O_NOFOLLOW)` +
//! `fstatat(AT_SYMLINK_NOFOLLOW)`), so a link is counted as itself and never followed, and a
//! directory swapped for a link mid-walk is not entered. The walk's cost is bounded: it stops
//! once it has seen `max_entries` entries, gone `max_depth` levels deep or counted more than
//! `stop_above` bytes, and says so ([`Usage::complete`] is then `false`: the caller treats an
//! incomplete walk as over quota, so a service cannot hide bytes behind a million empty files
//! or a deep chain of directories).

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What a walk counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// Allocated bytes of every entry seen (the directory itself included).
    pub bytes: u64,
    /// Entries seen (files, directories, links, anything).
    pub entries: u64,
    /// `false`: the walk stopped early at one of its bounds (see [`Bounds`]).
    pub complete: bool,
}

/// The bounds of one walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub max_entries: u64,
    pub max_depth: usize,
    /// Stop as soon as more than this many bytes are counted (the answer is already "over").
    pub stop_above: u64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            max_entries: 100_000,
            max_depth: 64,
            stop_above: u64::MAX,
        }
    }
}

/// Opens `dir` as a directory without following a link in its last component.
pub fn open_dir(dir: &Path) -> io::Result<OwnedFd> {
    let c = CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"))?;
    // SAFETY: a valid C string; the result is checked and owned below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The usage of the directory `dir` (a link there is refused: `ELOOP`/`ENOTDIR`).
pub fn usage(dir: &Path, bounds: Bounds) -> io::Result<Usage> {
    usage_of(&open_dir(dir)?, bounds)
}

/// The usage of the open directory `fd` (not consumed: the walk reopens it).
pub fn usage_of(fd: &OwnedFd, bounds: Bounds) -> io::Result<Usage> {
    let mut u = Usage {
        bytes: 0,
        entries: 0,
        complete: true,
    };
    let top = reopen_dir(fd)?;
    u.bytes = allocated(&fstat(top.as_raw_fd())?);
    walk(top, 1, bounds, &mut u)?;
    Ok(u)
}

fn walk(dir: OwnedFd, depth: usize, b: Bounds, u: &mut Usage) -> io::Result<()> {
    let mut stream = Dir::new(dir)?;
    while let Some(name) = stream.next_name()? {
        if u.entries >= b.max_entries {
            u.complete = false;
            return Ok(());
        }
        u.entries += 1;
        let st = match fstatat(stream.fd(), &name) {
            Ok(st) => st,
            // removed since it was listed: it takes nothing now
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
            Err(e) => return Err(e),
        };
        u.bytes = u.bytes.saturating_add(allocated(&st));
        if u.bytes > b.stop_above {
            u.complete = false;
            return Ok(());
        }
        if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
            if depth >= b.max_depth {
                u.complete = false;
                return Ok(());
            }
            match openat_dir(stream.fd(), &name) {
                Ok(child) => walk(child, depth + 1, b, u)?,
                // swapped for a link or removed since: not entered
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::ENOENT | libc::ELOOP | libc::ENOTDIR)
                    ) => {}
                Err(e) => return Err(e),
            }
            if !u.complete {
                return Ok(());
            }
        }
    }
    Ok(())
}

fn allocated(st: &libc::stat) -> u64 {
    u64::try_from(st.st_blocks).unwrap_or(0).saturating_mul(512)
}

fn fstat(fd: i32) -> io::Result<libc::stat> {
    // SAFETY: an all-zero `stat` is a valid value; fstat fills it or fails.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open; st is a valid out-pointer.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

fn fstatat(dir: i32, name: &CStr) -> io::Result<libc::stat> {
    // SAFETY: as in `fstat`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: dir is open, name is a valid C string (one component), st a valid out-pointer.
    if unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

fn openat_dir(dir: i32, name: &CStr) -> io::Result<OwnedFd> {
    // SAFETY: dir is open, name a valid C string; the result is checked and owned below.
    let fd = unsafe {
        libc::openat(
            dir,
            name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn reopen_dir(fd: &OwnedFd) -> io::Result<OwnedFd> {
    openat_dir(fd.as_raw_fd(), c".")
}

/// A directory stream over an owned descriptor (closed with the stream).
struct Dir(*mut libc::DIR);

impl Dir {
    fn new(fd: OwnedFd) -> io::Result<Dir> {
        let raw = fd.as_raw_fd();
        // SAFETY: raw is an open directory descriptor; on success the stream owns it.
        let d = unsafe { libc::fdopendir(raw) };
        if d.is_null() {
            return Err(io::Error::last_os_error());
        }
        std::mem::forget(fd);
        Ok(Dir(d))
    }

    fn fd(&self) -> i32 {
        // SAFETY: self.0 is a live stream.
        unsafe { libc::dirfd(self.0) }
    }

    /// The next entry's name, without `.` and `..`.
    fn next_name(&mut self) -> io::Result<Option<CString>> {
        loop {
            // SAFETY: errno is thread-local; reset it to tell the end from an error.
            unsafe { *libc::__errno_location() = 0 };
            // SAFETY: self.0 is a live stream.
            let e = unsafe { libc::readdir(self.0) };
            if e.is_null() {
                let err = io::Error::last_os_error();
                return match err.raw_os_error() {
                    Some(0) | None => Ok(None),
                    _ => Err(err),
                };
            }
            // SAFETY: readdir returned a valid entry whose d_name is NUL-terminated; it is
            // copied before the next readdir call.
            let name = unsafe { CStr::from_ptr((*e).d_name.as_ptr()) };
            if name.to_bytes() != b"." && name.to_bytes() != b".." {
                return Ok(Some(name.to_owned()));
            }
        }
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        // SAFETY: self.0 is a live stream, closed once.
        unsafe { libc::closedir(self.0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};

    fn total(dir: &Path) -> Usage {
        usage(dir, Bounds::default()).unwrap()
    }

    #[test]
    fn counts_allocated_blocks_of_nested_files() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("a/b")).unwrap();
        std::fs::write(t.path().join("a/b/one"), vec![1u8; 1 << 20]).unwrap();
        std::fs::write(t.path().join("two"), vec![2u8; 300 << 10]).unwrap();
        let u = total(t.path());
        assert!(u.complete);
        assert_eq!(u.entries, 4);
        assert!(u.bytes >= (1 << 20) + (300 << 10), "{u:?}");
        assert!(u.bytes < (1 << 20) + (300 << 10) + (64 << 10), "{u:?}");
    }

    #[test]
    fn a_sparse_file_counts_what_is_allocated_not_its_length() {
        let t = tempfile::tempdir().unwrap();
        let mut f = std::fs::File::create(t.path().join("sparse")).unwrap();
        f.seek(SeekFrom::Start(1 << 30)).unwrap();
        f.write_all(b"x").unwrap();
        drop(f);
        let u = total(t.path());
        assert!(u.bytes < 1 << 20, "{u:?}");
    }

    #[test]
    fn links_are_counted_as_themselves_and_never_followed() {
        let t = tempfile::tempdir().unwrap();
        let outside = t.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("big"), vec![0u8; 4 << 20]).unwrap();
        let svc = t.path().join("svc");
        std::fs::create_dir(&svc).unwrap();
        std::os::unix::fs::symlink(&outside, svc.join("dir-link")).unwrap();
        std::os::unix::fs::symlink(outside.join("big"), svc.join("file-link")).unwrap();
        let u = total(&svc);
        assert!(u.complete);
        assert_eq!(u.entries, 2);
        assert!(u.bytes < 1 << 20, "{u:?}");
        // the directory itself given as a link is refused
        std::os::unix::fs::symlink(&outside, t.path().join("svc-link")).unwrap();
        assert!(usage(&t.path().join("svc-link"), Bounds::default()).is_err());
    }

    #[test]
    fn the_walk_stops_at_its_bounds_and_says_it_is_incomplete() {
        let t = tempfile::tempdir().unwrap();
        for i in 0..50 {
            std::fs::write(t.path().join(format!("f{i}")), b"").unwrap();
        }
        let b = Bounds {
            max_entries: 10,
            ..Bounds::default()
        };
        let u = usage(t.path(), b).unwrap();
        assert!(!u.complete);
        assert_eq!(u.entries, 10);
        let mut deep = t.path().join("d");
        for _ in 0..10 {
            std::fs::create_dir(&deep).unwrap();
            deep = deep.join("d");
        }
        let b = Bounds {
            max_depth: 4,
            ..Bounds::default()
        };
        assert!(!usage(t.path(), b).unwrap().complete);
        std::fs::write(t.path().join("big"), vec![1u8; 1 << 20]).unwrap();
        let b = Bounds {
            stop_above: 4096,
            ..Bounds::default()
        };
        assert!(!usage(t.path(), b).unwrap().complete);
    }
}
