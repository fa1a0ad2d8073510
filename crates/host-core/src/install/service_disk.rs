//! The total-size quota of a backend service's writable directory (`apps/<app>/services/<key>/`,
//! `/service` in its sandbox): 256 MiB per service by default, `APPHOST_SERVICE_DISK_QUOTA_BYTES`
//! overrides it (tests), `APPHOST_SERVICE_DISK_SCAN_MS` the shortest interval between two scans of
//! a running service's directory (default 1000 ms). Enforced by the supervisor
//! (`service_sandbox::disk_quota`: checked before each launch, `RLIMIT_FSIZE` capped at what is
//! left, watched while it runs); re-measured here for readiness once a service was stopped or
//! refused for it, so freeing space clears the check without a launch.

use std::time::Duration;

use service_sandbox::DiskQuota;

use crate::foundation::paths::DataDir;

/// The default quota of one service's directory.
pub const DEFAULT_SERVICE_DISK_QUOTA: u64 = 256 << 20;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|s| s.trim().parse().ok())
}

/// The quota every process service gets (the environment read at each launch).
pub fn disk_quota() -> DiskQuota {
    let mut q = DiskQuota::new(
        env_u64("APPHOST_SERVICE_DISK_QUOTA_BYTES")
            .filter(|b| *b > 0)
            .unwrap_or(DEFAULT_SERVICE_DISK_QUOTA),
    );
    if let Some(ms) = env_u64("APPHOST_SERVICE_DISK_SCAN_MS").filter(|ms| *ms > 0) {
        q.scan_every = Duration::from_millis(ms);
    }
    q
}

/// Why `key`'s directory of `app` is still at or over the quota now, if it is (a missing
/// directory holds nothing).
pub fn still_over(data: &DataDir, app: &str, key: &str) -> Option<String> {
    if !runtime_core::app_area::services::valid_key(key) {
        return None;
    }
    let dir = data.apps_data().join(app).join("services").join(key);
    if std::fs::symlink_metadata(&dir).is_err() {
        return None;
    }
    disk_quota().measure(&dir).err()
}
