//! The total-size quota of a service's writable directory (`/service`), enforced in three steps
//! (docs/services.md, "Disk quota"):
//!
//! 1. **before each launch** the directory is measured ([`crate::disk_usage`], allocated blocks,
//!    links never followed); at or over the quota the launch is refused with
//!    `service.disk_quota_exceeded` and nothing starts;
//! 2. **at launch** `RLIMIT_FSIZE` becomes `min(file_size, quota - used)`: no single file can
//!    grow past what is left, so a one-file fill stops at the quota with `EFBIG`;
//! 3. **while it runs** a [`QuotaWatch`] re-measures the directory every `scan_every` (stretched
//!    to 10x the last scan's duration, so the scan never takes more than ~10% of a core) and,
//!    once the total is over the quota (or the walk hit its entry/depth bounds, or cannot read a
//!    directory the service made unreadable), kills the sandbox through a pidfd (no pid-reuse
//!    race) and records why; the supervisor then audits a `disk` limit hit and the next launch is
//!    refused by step 1, so further writes fail until the user frees space.
//!
//! An rlimit alone is per file (many files each under it add up), a scan alone lets one big
//! write overshoot between scans: together a many-file fill can overshoot by at most what the
//! service writes in one scan interval, and a one-file fill not at all.

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::disk_usage::{self, Bounds};
use crate::error::SandboxError;

/// A service directory's quota and how it is watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskQuota {
    /// Total allocated bytes the directory may hold.
    pub bytes: u64,
    /// The shortest time between two scans of a running service's directory.
    pub scan_every: Duration,
    /// The most entries and the deepest nesting a scan walks; beyond them = over quota.
    pub max_entries: u64,
    pub max_depth: usize,
}

impl DiskQuota {
    pub fn new(bytes: u64) -> Self {
        DiskQuota {
            bytes,
            scan_every: Duration::from_secs(1),
            max_entries: 100_000,
            max_depth: 64,
        }
    }

    fn bounds(&self) -> Bounds {
        Bounds {
            max_entries: self.max_entries,
            max_depth: self.max_depth,
            stop_above: self.bytes,
        }
    }

    /// Measures `dir`: `Ok(bytes left)`, or `Err(why)` when it is at or over the quota (or
    /// cannot be measured within the bounds).
    pub fn measure(&self, dir: &Path) -> Result<u64, String> {
        let fd = disk_usage::open_dir(dir).map_err(|e| format!("cannot measure: {e}"))?;
        self.measure_fd(&fd)
    }

    fn measure_fd(&self, fd: &std::os::fd::OwnedFd) -> Result<u64, String> {
        let u =
            disk_usage::usage_of(fd, self.bounds()).map_err(|e| format!("cannot measure: {e}"))?;
        if !u.complete && u.bytes <= self.bytes {
            return Err(format!(
                "more than {} entries or {} levels (counted {} entries, {} bytes)",
                self.max_entries, self.max_depth, u.entries, u.bytes
            ));
        }
        if u.bytes >= self.bytes {
            return Err(format!(
                "{}{} bytes used of a {} byte quota",
                if u.complete { "" } else { "over " },
                u.bytes,
                self.bytes
            ));
        }
        Ok(self.bytes - u.bytes)
    }

    /// The pre-launch check: bytes left, or `service.disk_quota_exceeded`.
    pub fn check(&self, dir: &Path) -> Result<u64, SandboxError> {
        self.measure(dir).map_err(SandboxError::DiskQuotaExceeded)
    }
}

type Stop = Arc<(Mutex<bool>, Condvar)>;

/// The running service's watcher thread; dropping it stops the thread.
pub struct QuotaWatch {
    stop: Stop,
    tripped: Arc<Mutex<Option<String>>>,
    thread: Option<JoinHandle<()>>,
}

impl QuotaWatch {
    /// Watches `dir` (opened now, never through a link) for the sandbox whose outer process is
    /// `pid` (a child of this process not yet reaped: the pidfd names exactly it).
    pub fn start(dir: &Path, quota: DiskQuota, pid: u32) -> Result<QuotaWatch, SandboxError> {
        let fd = disk_usage::open_dir(dir)
            .map_err(|e| SandboxError::StartFailed(format!("service dir: {e}")))?;
        let pidfd =
            pidfd_open(pid).map_err(|e| SandboxError::StartFailed(format!("pidfd: {e}")))?;
        let stop: Stop = Arc::new((Mutex::new(false), Condvar::new()));
        let tripped = Arc::new(Mutex::new(None));
        let (s, t) = (stop.clone(), tripped.clone());
        let thread = std::thread::Builder::new()
            .name("apphost-service-disk".into())
            .spawn(move || {
                let mut wait = quota.scan_every;
                loop {
                    {
                        let (m, cv) = &*s;
                        let guard = m.lock().unwrap_or_else(|p| p.into_inner());
                        let (guard, _) = cv
                            .wait_timeout_while(guard, wait, |stopped| !*stopped)
                            .unwrap_or_else(|p| p.into_inner());
                        if *guard {
                            return;
                        }
                    }
                    let began = Instant::now();
                    if let Err(why) = quota.measure_fd(&fd) {
                        *t.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
                        pidfd_kill(&pidfd);
                        return;
                    }
                    wait = quota.scan_every.max(began.elapsed().saturating_mul(10));
                }
            })
            .map_err(|e| SandboxError::StartFailed(e.to_string()))?;
        Ok(QuotaWatch {
            stop,
            tripped,
            thread: Some(thread),
        })
    }

    /// Why the watch killed the service, once it has.
    pub fn tripped(&self) -> Option<String> {
        self.tripped
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Drop for QuotaWatch {
    fn drop(&mut self) {
        let (m, cv) = &*self.stop;
        *m.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cv.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn pidfd_open(pid: u32) -> std::io::Result<std::os::fd::OwnedFd> {
    let pid = i32::try_from(pid).map_err(|_| std::io::Error::other("pid out of range"))?;
    // SAFETY: pidfd_open(pid, 0) has no pointer arguments; the result is checked and owned.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0u32) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor owned by nobody else.
    Ok(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd as i32) })
}

/// SIGKILL to the process the pidfd names (a no-op once it has exited).
fn pidfd_kill(pidfd: &std::os::fd::OwnedFd) {
    use std::os::fd::AsRawFd;
    // SAFETY: pidfd is open; no siginfo (NULL), no flags.
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<libc::siginfo_t>(),
            0u32,
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measure_gives_what_is_left_and_refuses_at_the_quota() {
        let t = tempfile::tempdir().unwrap();
        let q = DiskQuota::new(1 << 20);
        let left = q.measure(t.path()).unwrap();
        assert!(left > (1 << 20) - 16384, "{left}");
        std::fs::write(t.path().join("a"), vec![1u8; 600 << 10]).unwrap();
        std::fs::write(t.path().join("b"), vec![1u8; 600 << 10]).unwrap();
        let e = q.check(t.path()).unwrap_err();
        assert_eq!(e.code(), "service.disk_quota_exceeded");
        // a million-entry hiding place is over quota too
        let few = DiskQuota {
            max_entries: 2,
            ..DiskQuota::new(1 << 30)
        };
        assert!(few.measure(t.path()).is_ok());
        std::fs::write(t.path().join("c"), b"").unwrap();
        assert!(few.measure(t.path()).unwrap_err().contains("entries"));
    }

    #[test]
    fn the_watch_kills_the_process_once_the_directory_is_over_the_quota() {
        let t = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let q = DiskQuota {
            scan_every: Duration::from_millis(20),
            ..DiskQuota::new(256 << 10)
        };
        let w = QuotaWatch::start(t.path(), q, child.id()).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert!(w.tripped().is_none());
        assert!(child.try_wait().unwrap().is_none());
        std::fs::write(t.path().join("fill"), vec![1u8; 512 << 10]).unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success());
        assert!(w.tripped().unwrap().contains("quota"), "{:?}", w.tripped());
        drop(w);
        // dropping a watch that never tripped stops its thread at once
        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let w = QuotaWatch::start(t.path(), DiskQuota::new(1 << 30), other.id()).unwrap();
        let began = Instant::now();
        drop(w);
        assert!(began.elapsed() < Duration::from_millis(500));
        assert!(other.try_wait().unwrap().is_none());
        other.kill().unwrap();
        other.wait().unwrap();
    }
}
