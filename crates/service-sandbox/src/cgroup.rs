//! One pids cgroup per launch: caps the process count (a root host ignores RLIMIT_NPROC for
//! uid 0) and is the final sweep: every process still in it is killed and the group removed.

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT: AtomicU64 = AtomicU64::new(0);

/// The parent under which launch groups are made (cgroup v1 `pids` hierarchy, or v2 unified).
pub fn root() -> Option<PathBuf> {
    for base in [
        "/sys/fs/cgroup/pids",
        "/sys/fs/cgroup/unified",
        "/sys/fs/cgroup",
    ] {
        let base = PathBuf::from(base);
        if !base.join("cgroup.procs").exists() {
            continue;
        }
        let dir = base.join("apphost-services");
        if fs::create_dir_all(&dir).is_ok()
            && (dir.join("pids.max").exists() || base.ends_with("pids"))
        {
            return Some(dir);
        }
    }
    None
}

#[derive(Debug)]
pub struct PidsGroup {
    pub dir: PathBuf,
}

impl PidsGroup {
    pub fn create(max: u64) -> std::io::Result<Self> {
        let root = root().ok_or_else(|| std::io::Error::other("no pids cgroup"))?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = root.join(format!("svc-{}-{n}", std::process::id()));
        fs::create_dir(&dir)?;
        fs::write(dir.join("pids.max"), max.to_string())?;
        Ok(Self { dir })
    }

    pub fn procs_file(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    pub fn pids(&self) -> Vec<i32> {
        fs::read_to_string(self.procs_file())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// Kill every member until the group is empty (bounded), then remove it.
    pub fn kill_all(&self) {
        for _ in 0..200 {
            let pids = self.pids();
            if pids.is_empty() {
                break;
            }
            for pid in pids {
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

impl Drop for PidsGroup {
    fn drop(&mut self) {
        self.kill_all();
        for _ in 0..100 {
            if fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}
