//! [`CancelToken`]: how a caller (a frame's `capability:cancel`, a workflow run's cancel, the
//! host stopping a service whose network grant was revoked) ends a call in flight. A call made
//! with a token ([`crate::Supervisor::call_cancellable`]) looks at it every [`CANCEL_POLL`]; once
//! cancelled, the service gets `$/cancelRequest {id}` and the call fails with
//! `service.cancelled` (the service's late answer is dropped like a timed-out call's).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How often a call in flight looks at its token.
pub const CANCEL_POLL: Duration = Duration::from_millis(20);

/// A condition that cancels a call when it becomes true (e.g. "the workflow run has ended").
pub type CancelProbe = Arc<dyn Fn() -> bool + Send + Sync>;

/// Cancels a call when any of its flags is set or any of its probes answers `true`. Cloning
/// shares the flags: `cancel()` on one clone is seen by all.
#[derive(Clone, Default)]
pub struct CancelToken {
    flags: Vec<Arc<AtomicBool>>,
    probes: Vec<CancelProbe>,
}

impl CancelToken {
    /// A token with one flag of its own, not cancelled.
    pub fn new() -> Self {
        CancelToken {
            flags: vec![Arc::new(AtomicBool::new(false))],
            probes: Vec::new(),
        }
    }

    /// A token cancelled when `probe` answers `true` (polled while the call waits).
    pub fn from_probe(probe: CancelProbe) -> Self {
        CancelToken {
            flags: Vec::new(),
            probes: vec![probe],
        }
    }

    /// Sets this token's flags: every clone, and every token made [`CancelToken::or`] with it,
    /// sees it.
    pub fn cancel(&self) {
        for f in &self.flags {
            f.store(true, Ordering::SeqCst);
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.flags.iter().any(|f| f.load(Ordering::SeqCst)) || self.probes.iter().any(|p| p())
    }

    /// A token cancelled when this one or `other` is (their flags and probes, shared).
    pub fn or(&self, other: &CancelToken) -> CancelToken {
        CancelToken {
            flags: self.flags.iter().chain(&other.flags).cloned().collect(),
            probes: self.probes.iter().chain(&other.probes).cloned().collect(),
        }
    }
}

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_reaches_every_clone_and_every_combined_token_but_not_the_other_side() {
        let a = CancelToken::new();
        let b = CancelToken::new();
        let both = a.or(&b);
        assert!(!both.is_cancelled());
        b.cancel();
        assert!(both.is_cancelled());
        assert!(b.clone().is_cancelled());
        assert!(!a.is_cancelled(), "cancelling b must not cancel a");
        assert!(!CancelToken::default().is_cancelled());
        // A combined token's cancel sets both sides (the caller's and the host's flag).
        let c = CancelToken::new();
        let d = CancelToken::new();
        c.or(&d).cancel();
        assert!(c.is_cancelled() && d.is_cancelled());
    }

    #[test]
    fn a_probe_cancels_when_it_turns_true() {
        let flag = Arc::new(AtomicBool::new(false));
        let f2 = flag.clone();
        let t = CancelToken::from_probe(Arc::new(move || f2.load(Ordering::SeqCst)));
        assert!(!t.is_cancelled());
        flag.store(true, Ordering::SeqCst);
        assert!(t.is_cancelled());
        assert!(CancelToken::new().or(&t).is_cancelled());
    }
}
