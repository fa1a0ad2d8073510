//! Mounting the image read-only with `squashfuse` (FUSE), and taking it down again.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A program on the PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// `fusermount3` or `fusermount`, whichever the system has.
pub fn fusermount() -> Option<PathBuf> {
    which("fusermount3").or_else(|| which("fusermount"))
}

/// FUSE is usable: `/dev/fuse` opens read-write, `squashfuse` and `fusermount` exist.
pub fn fuse_usable() -> bool {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
        .is_ok()
        && which("squashfuse").is_some()
        && fusermount().is_some()
}

/// Mounts the squashfs at `offset` of `image` on `dir` (an empty folder); true once `AppRun` is
/// visible there (at most 10 s).
pub fn mount(image: &Path, offset: u64, dir: &Path) -> bool {
    let status = Command::new("squashfuse")
        .arg("-o")
        .arg(format!("ro,offset={offset}"))
        .arg(image)
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status();
    if !matches!(status, Ok(s) if s.success()) {
        return false;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if dir.join("AppRun").exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    unmount(dir);
    false
}

/// Unmounts `dir` (lazily: a helper process may still hold a file) and removes the folder.
pub fn unmount(dir: &Path) {
    if let Some(fusermount) = fusermount() {
        let _ = Command::new(fusermount)
            .args(["-u", "-z"])
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let _ = std::fs::remove_dir(dir);
}
