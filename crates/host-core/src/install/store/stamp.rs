//! What one open [`Store`] has seen of `host.db`: a value that moves whenever anything is
//! committed to it, by this connection or any other (another process included), so that facts
//! read from the store can be cached and reused exactly until the store changes.
//!
//! Two SQLite counters make it: `PRAGMA data_version`, which changes when *another* connection
//! commits, and `sqlite3_total_changes`, the rows this connection itself changed. A stamp also
//! names its connection: stamps of two different `Store` values never compare equal, because
//! `data_version` values are only comparable on one connection.

use std::sync::atomic::{AtomicU64, Ordering};

use super::Store;
use crate::foundation::error::HostResult;

static NEXT_STORE_ID: AtomicU64 = AtomicU64::new(1);

/// A unique id for each opened `Store` (never reused in this process).
pub(super) fn next_store_id() -> u64 {
    NEXT_STORE_ID.fetch_add(1, Ordering::Relaxed)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeStamp {
    store: u64,
    data_version: i64,
    own_changes: u64,
}

impl ChangeStamp {
    /// Whether `later`, taken on the same store, differs from `self` only by rows this
    /// connection changed (no other connection committed in between).
    pub fn only_own_changes_until(&self, later: &ChangeStamp) -> bool {
        self.store == later.store && self.data_version == later.data_version
    }
}

impl Store {
    /// `PRAGMA data_version` of this connection: it moves when another connection (another
    /// process included) commits, never on this connection's own commits.
    pub fn data_version(&self) -> HostResult<i64> {
        Ok(self
            .conn
            .prepare_cached("PRAGMA data_version")?
            .query_row([], |r| r.get(0))?)
    }

    /// The stamp of what this connection sees now (one `PRAGMA data_version`).
    pub fn change_stamp(&self) -> HostResult<ChangeStamp> {
        let data_version: i64 = self
            .conn
            .prepare_cached("PRAGMA data_version")?
            .query_row([], |r| r.get(0))?;
        Ok(ChangeStamp {
            store: self.id,
            data_version,
            own_changes: self.conn.total_changes(),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::foundation::paths::DataDir;
    use crate::install::store::Store;

    #[test]
    fn a_stamp_moves_on_own_and_foreign_commits_only() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path().join("data"));
        let a = Store::open(&dir).unwrap();
        let b = Store::open(&dir).unwrap();
        let s0 = a.change_stamp().unwrap();
        // Reads change nothing.
        a.app_names().unwrap();
        b.app_names().unwrap();
        assert_eq!(a.change_stamp().unwrap(), s0);
        // A commit on another connection (as another process would) moves it.
        b.record_audit("test", None, None, &serde_json::json!({}))
            .unwrap();
        let s1 = a.change_stamp().unwrap();
        assert_ne!(s1, s0);
        assert!(!s0.only_own_changes_until(&s1));
        // So does a commit on this connection, which `data_version` alone would not show.
        a.record_audit("test", None, None, &serde_json::json!({}))
            .unwrap();
        let s2 = a.change_stamp().unwrap();
        assert_ne!(s2, s1);
        assert!(s1.only_own_changes_until(&s2));
        // Stamps of two connections never match.
        assert_ne!(a.change_stamp().unwrap(), b.change_stamp().unwrap());
    }
}
