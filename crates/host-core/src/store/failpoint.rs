//! Crash points for the crash-safety test.
//!
//! `APPHOST_CRASH_AT=N` makes the process kill itself with SIGKILL (via `kill -9`, a real
//! signal, no unwinding, no destructors) the N-th time it reaches a crash point. Crash points
//! sit between every pair of durable steps of install, update and uninstall. Without the
//! variable this is one relaxed atomic increment.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

static TARGET: OnceLock<Option<u64>> = OnceLock::new();
static HITS: AtomicU64 = AtomicU64::new(0);

pub fn hit(_name: &str) {
    let target = *TARGET.get_or_init(|| {
        std::env::var("APPHOST_CRASH_AT")
            .ok()
            .and_then(|v| v.parse().ok())
    });
    let Some(target) = target else { return };
    let n = HITS.fetch_add(1, Ordering::Relaxed) + 1;
    if n == target {
        let pid = std::process::id().to_string();
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid])
            .status();
        // kill -9 does not return; if it somehow failed, refuse to continue silently.
        std::process::abort();
    }
}
