//! Which sandbox layers this host offers (the readiness check of a `client-local` service).

use std::path::{Path, PathBuf};

/// The Landlock ABI that covers `LANDLOCK_ACCESS_FS_TRUNCATE`; below it a service is refused.
pub const MIN_LANDLOCK_ABI: i64 = 3;

#[derive(Debug, Clone)]
pub struct Layers {
    pub bwrap: Option<PathBuf>,
    /// Landlock ABI version reported by the kernel (<= 0 when absent or disabled).
    pub landlock_abi: i64,
    pub pids_cgroup: bool,
}

impl Layers {
    /// `Err(reason)` naming the first missing layer (the readiness setup action names it).
    pub fn require(&self) -> Result<PathBuf, String> {
        if self.landlock_abi < MIN_LANDLOCK_ABI {
            return Err(format!(
                "Landlock ABI {} < {MIN_LANDLOCK_ABI} (needs Linux 6.2+ with landlock in lsm=)",
                self.landlock_abi
            ));
        }
        if !self.pids_cgroup {
            return Err(
                "no writable pids cgroup (/sys/fs/cgroup/pids or cgroup v2 pids controller)".into(),
            );
        }
        self.bwrap
            .clone()
            .ok_or_else(|| "bubblewrap (bwrap) not installed: apt-get install bubblewrap".into())
    }
}

pub fn landlock_abi() -> i64 {
    // landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    }
}

pub fn find_bwrap() -> Option<PathBuf> {
    ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"]
        .iter()
        .map(Path::new)
        .find(|p| p.is_file())
        .map(Path::to_path_buf)
}

pub fn available_layers() -> Layers {
    Layers {
        bwrap: find_bwrap(),
        landlock_abi: landlock_abi(),
        pids_cgroup: crate::cgroup::root().is_some(),
    }
}
