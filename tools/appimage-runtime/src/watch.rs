//! The watcher: a detached copy of the runtime that waits until the application (which took over
//! the runtime's process id with `exec`) has exited, then unmounts or deletes the run folder.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The runtime's first argument when it runs as the watcher (an internal option).
pub const WATCH_ARG: &str = "--appimage-internal-watch";

#[derive(Clone, Copy)]
pub enum Kind {
    Mount,
    Extracted,
}

/// Starts the watcher for this process: in its own process group, so a signal to the
/// application's group does not stop the cleanup.
pub fn spawn(image: &Path, kind: Kind, dir: &Path) -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    let pid = std::process::id();
    let start = start_time(pid).ok_or("cannot read /proc/self/stat")?;
    let kind = match kind {
        Kind::Mount => "mount",
        Kind::Extracted => "extracted",
    };
    Command::new(image)
        .arg(WATCH_ARG)
        .arg(pid.to_string())
        .arg(start)
        .arg(kind)
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .map(drop)
        .map_err(|e| format!("cannot start the cleanup watcher: {e}"))
}

/// The watcher's body: `<pid> <start time> mount|extracted <dir>`.
pub fn watch(args: &[OsString]) -> Result<(), String> {
    let [pid, start, kind, dir] = args else {
        return Err("watcher: bad arguments".into());
    };
    let pid: u32 = pid
        .to_str()
        .and_then(|p| p.parse().ok())
        .ok_or("watcher: bad pid")?;
    let start = start.to_str().unwrap_or("").to_owned();
    let dir = PathBuf::from(dir);
    // The start time tells the process apart from a later one that reuses its id.
    while start_time(pid).as_deref() == Some(start.as_str()) {
        std::thread::sleep(Duration::from_millis(100));
    }
    if kind == "mount" {
        crate::mount::unmount(&dir);
    } else if dir
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("appimage-extracted-"))
    {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}

/// Field 22 of `/proc/<pid>/stat` (the process's start time), or `None` once it is gone.
fn start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces: count from the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    // A zombie has exited: its files may go.
    let mut fields = rest.split_whitespace();
    if fields.next() == Some("Z") {
        return None;
    }
    fields.nth(18).map(str::to_owned)
}
