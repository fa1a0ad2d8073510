//! Named crash points of workflow steps, for the workflow crash test (`tests/workflow_crash.rs`).
//!
//! Only in builds with the `failpoints` cargo feature (test builds: the root package's
//! dev-dependency enables it; release and desktop builds do not):
//! `APPHOST_FAILPOINT=<name>:<n>` makes the process SIGKILL itself (a real signal: no
//! unwinding, no destructors, no flush) the `n`-th time it reaches the point `name`. Points:
//! - `workflow.before_effect`: a step's start is recorded, its capability call not made;
//! - `workflow.after_effect`: the call's effect is committed, its result not yet recorded
//!   (the window an idempotency key must close).
//!
//! Without the feature [`hit`] is empty and the variable is never read.

#[cfg(feature = "failpoints")]
pub fn hit(name: &str) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;

    static TARGET: OnceLock<Option<(String, u64)>> = OnceLock::new();
    static HITS: AtomicU64 = AtomicU64::new(0);

    let target = TARGET.get_or_init(|| {
        let v = std::env::var("APPHOST_FAILPOINT").ok()?;
        let (point, n) = v.rsplit_once(':')?;
        Some((point.to_owned(), n.parse().ok()?))
    });
    let Some((point, n)) = target else { return };
    if point != name {
        return;
    }
    if HITS.fetch_add(1, Ordering::SeqCst) + 1 == *n {
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
