//! Crash points for the crash-safety test.
//!
//! Only in builds with the `failpoints` cargo feature (the test builds: the root package's
//! dev-dependency enables it; release and desktop builds do not): `APPHOST_CRASH_AT=N` then
//! makes the process kill itself with SIGKILL (via `kill -9`, a real signal, no unwinding, no
//! destructors) the N-th time it reaches a crash point. Crash points sit between every pair of
//! durable steps of install, update, uninstall, compaction and recovery. Without the feature
//! [`hit`] is empty and the variable is never read.

/// Whether this build has crash points at all.
pub const ENABLED: bool = cfg!(feature = "failpoints");

#[cfg(feature = "failpoints")]
pub fn hit(_name: &str) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;

    static TARGET: OnceLock<Option<u64>> = OnceLock::new();
    static HITS: AtomicU64 = AtomicU64::new(0);

    let target = *TARGET.get_or_init(|| {
        std::env::var("APPHOST_CRASH_AT")
            .ok()
            .and_then(|v| v.parse().ok())
    });
    let Some(target) = target else { return };
    let n = HITS.fetch_add(1, Ordering::Relaxed) + 1;
    if n == target {
        let pid = std::process::id().to_string();
        // Whatever `kill` reports, this process must not go on past its crash point.
        let _status = std::process::Command::new("kill")
            .args(["-9", &pid])
            .status();
        std::process::abort();
    }
}

#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub fn hit(_name: &str) {}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Command;

    /// Run in a child process by [`crash_at_is_honoured_only_with_the_feature`].
    #[test]
    fn child_hits_crash_points() {
        if std::env::var_os("APPHOST_FAILPOINT_CHILD").is_none() {
            return;
        }
        for _ in 0..3 {
            super::hit("test.point");
        }
        println!("survived every crash point");
    }

    /// A default build ignores `APPHOST_CRASH_AT`; a `failpoints` build dies at the N-th point.
    #[test]
    fn crash_at_is_honoured_only_with_the_feature() {
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "install::store::failpoint::tests::child_hits_crash_points",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("APPHOST_FAILPOINT_CHILD", "1")
            .env("APPHOST_CRASH_AT", "2")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        if super::ENABLED {
            assert_eq!(out.status.signal(), Some(9), "{stdout}");
            assert!(!stdout.contains("survived"), "{stdout}");
        } else {
            assert!(out.status.success(), "{stdout}");
            assert!(stdout.contains("survived every crash point"), "{stdout}");
        }
    }
}
