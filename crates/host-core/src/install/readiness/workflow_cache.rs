//! Workflow checks for readiness, remembered by content.
//!
//! Readiness runs often (the choke point re-evaluates it at least once a second per app for its
//! date checks), and checking a workflow parses every CEL expression on a 64 MiB-stack thread.
//! The outcome depends only on the app's `workflows[]` values and its declared capability
//! names, so it is kept under the SHA-256 of exactly those: the same manifest is checked once
//! per process; any change to a workflow or to `requires.capabilities` is a new key. At most
//! [`MAX_ENTRIES`] outcomes are kept (the map is emptied when full: a miss only costs a parse).
//! A pure memo: no clock, no file system.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use runtime_core::workflow::{self, Finding};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Most remembered outcomes (apps × manifest versions).
pub const MAX_ENTRIES: usize = 256;

/// What readiness needs of one checked workflow.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub blocked: bool,
    pub findings: Vec<Finding>,
    /// Findings left out past the checker's bound.
    pub dropped: usize,
}

type Memo = Mutex<HashMap<[u8; 32], Arc<Vec<Verdict>>>>;

fn memo() -> &'static Memo {
    static MEMO: OnceLock<Memo> = OnceLock::new();
    MEMO.get_or_init(Default::default)
}

fn key(items: &[&Value], declared: &BTreeSet<String>) -> [u8; 32] {
    let mut h = Sha256::new();
    for name in declared {
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
    }
    h.update(b"\0workflows");
    for w in items {
        let bytes = serde_json::to_vec(w).unwrap_or_default();
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    h.finalize().into()
}

/// The verdicts of `items` (in order) against `declared`: remembered, or checked now (all of
/// them on one expression thread).
pub fn checked(items: &[&Value], declared: &BTreeSet<String>) -> Arc<Vec<Verdict>> {
    let k = key(items, declared);
    if let Some(hit) = memo().lock().unwrap_or_else(|p| p.into_inner()).get(&k) {
        return hit.clone();
    }
    let verdicts = Arc::new(check_now(items, declared));
    let mut m = memo().lock().unwrap_or_else(|p| p.into_inner());
    if m.len() >= MAX_ENTRIES {
        m.clear();
    }
    m.insert(k, verdicts.clone());
    verdicts
}

/// Checks without the memo (what every readiness evaluation did before it).
pub fn check_now(items: &[&Value], declared: &BTreeSet<String>) -> Vec<Verdict> {
    // One expression thread for every workflow of the app (`check` would start one each).
    workflow::expr::on_expr_stack(|| {
        items
            .iter()
            .map(|w| {
                let c = workflow::check(w, declared);
                Verdict {
                    blocked: c.blocked(),
                    findings: c.findings,
                    dropped: c.dropped,
                }
            })
            .collect()
    })
    .unwrap_or_else(|e| {
        let failed = || Verdict {
            blocked: true,
            findings: vec![Finding::error(e.code, "", e.message.clone())],
            dropped: 0,
        };
        items.iter().map(|_| failed()).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wf(end: &str) -> Value {
        json!({"key": "w", "recovery": {"onError": "fail", "onTimeout": "fail"}, "states": [
            {"key": "start", "kind": "start", "next": "save"},
            {"key": "save", "kind": "storage-write", "storageKey": "k", "value": "input.x", "next": end},
            {"key": "done", "kind": "end"}
        ]})
    }

    #[test]
    fn the_same_workflows_are_checked_once_and_any_change_is_a_new_check() {
        let declared: BTreeSet<String> = ["lime.storage".to_owned()].into();
        let (a, b) = (wf("done"), wf("nowhere"));
        let first = checked(&[&a], &declared);
        assert!(!first[0].blocked, "{first:?}");
        assert!(
            Arc::ptr_eq(&first, &checked(&[&a], &declared)),
            "remembered"
        );
        let changed = checked(&[&b], &declared);
        assert!(!Arc::ptr_eq(&first, &changed));
        assert!(
            changed[0].blocked,
            "an edge to a missing state: {changed:?}"
        );
        // Declared capabilities are part of the key: without lime.storage the step is invalid.
        let none = checked(&[&a], &BTreeSet::new());
        assert!(none[0].blocked, "{none:?}");
        assert!(!checked(&[&a], &declared)[0].blocked);
    }
}
