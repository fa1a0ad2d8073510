//! What to launch and under which limits.

use std::path::PathBuf;

/// Resource limits applied as rlimits (and the pids cgroup for `max_processes`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// RLIMIT_AS, bytes.
    pub address_space: u64,
    /// RLIMIT_CPU, seconds.
    pub cpu_seconds: u64,
    /// RLIMIT_NOFILE.
    pub open_files: u64,
    /// RLIMIT_NPROC and the pids cgroup's `pids.max`.
    pub max_processes: u64,
    /// RLIMIT_FSIZE, bytes (largest file the service may write).
    pub file_size: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            address_space: 1 << 30,
            cpu_seconds: 60,
            open_files: 64,
            max_processes: 32,
            file_size: 16 << 20,
        }
    }
}

/// One service launch. `package_dir` is mounted read-only at `/app`, `service_dir` (the app
/// data area's `services/<key>/`) read-write at `/service`; `program` runs with `/service` as its
/// working directory, e.g. `["/usr/bin/python3", "/app/service/main.py"]`.
#[derive(Debug, Clone)]
pub struct ServiceSpec {
    pub package_dir: PathBuf,
    pub service_dir: PathBuf,
    pub program: Vec<String>,
    /// Ignored since egress moved to the host proxy: the sandbox's network namespace is always
    /// unshared; a `remote-allowed` service reaches its declared domains only through
    /// [`crate::egress::EgressProxy`] (kept so existing specs still build).
    pub network: bool,
    pub limits: Limits,
    /// The in-sandbox shim binary (`apphost-service-shim`), mounted read-only at `/.shim/shim`.
    pub shim: PathBuf,
    /// The bubblewrap binary.
    pub bwrap: PathBuf,
}
