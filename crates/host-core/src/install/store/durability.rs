//! How durable a `host.db` connection's commits are (the durability rule in `ARCHITECTURE.md`).
//!
//! Every connection runs in WAL mode. [`Store::open`] and [`Store::open_locked`] commit with
//! `synchronous=FULL`: each commit is fsynced, so it survives a power loss. Installs, updates,
//! rollbacks, uninstalls, trusted keys and settings need the lock, so they always run on such a
//! connection.
//!
//! The bridge's own connection ([`Store::open_for_calls`]) writes one audit record per
//! capability call. It commits with `synchronous=NORMAL`: a commit survives a crash of the
//! process (it is in the WAL, which the OS holds), only an OS crash or power loss may lose the
//! last commits since the WAL was last synced. Chromium's IndexedDB makes the same choice. Two
//! kinds of commit on that connection are still fsynced ([`Store::durably`]): a user's grant or
//! revoke, and the audit record of a call whose effect is itself fsynced (an artifact created or
//! deleted, an evidence record), so that such an effect is never on disk without its audit
//! record. A FULL commit syncs the whole WAL, so every earlier commit becomes durable with it.

use super::Store;
use crate::foundation::error::HostResult;
use crate::foundation::paths::DataDir;

/// What a committed transaction survives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous=FULL`: a crash of the process, of the OS, or a power loss.
    PowerLoss,
    /// `synchronous=NORMAL` (WAL): a crash of the process; an OS crash or power loss may lose
    /// the last commits.
    ProcessCrash,
}

impl Durability {
    fn pragma(self) -> &'static str {
        match self {
            Durability::PowerLoss => "FULL",
            Durability::ProcessCrash => "NORMAL",
        }
    }
}

impl Store {
    /// Opens the store for the capability calls of the bridge (see the module doc): commits
    /// survive a crash of the process, and only the grants, revokes and audit records of fsynced
    /// effects are fsynced. It cannot install, update or uninstall (no lock).
    pub fn open_for_calls(dir: &DataDir) -> HostResult<Store> {
        let store = Store::open(dir)?;
        store.set_durability(Durability::ProcessCrash)?;
        Ok(store)
    }

    /// What this connection's commits survive (read back from SQLite).
    pub fn durability(&self) -> HostResult<Durability> {
        let level: i64 = self
            .conn
            .pragma_query_value(None, "synchronous", |r| r.get(0))?;
        // 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA: anything below FULL is not power-loss safe.
        Ok(if level >= 2 {
            Durability::PowerLoss
        } else {
            Durability::ProcessCrash
        })
    }

    /// Runs `f` with every commit fsynced, whatever this connection's durability, then restores
    /// it (also when `f` fails).
    pub fn durably<T>(&self, f: impl FnOnce() -> HostResult<T>) -> HostResult<T> {
        let before = self.durability()?;
        if before == Durability::PowerLoss {
            return f();
        }
        self.set_durability(Durability::PowerLoss)?;
        self.durable_sections.set(self.durable_sections.get() + 1);
        let result = f();
        let restored = self.set_durability(before);
        let value = result?;
        restored?;
        Ok(value)
    }

    /// How many times [`Store::durably`] raised this connection to `synchronous=FULL`
    /// (diagnostics and tests: which calls paid for an fsync).
    pub fn durable_sections(&self) -> u64 {
        self.durable_sections.get()
    }

    fn set_durability(&self, d: Durability) -> HostResult<()> {
        self.conn.pragma_update(None, "synchronous", d.pragma())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bridge_connection_is_relaxed_and_durably_restores_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path().join("data"));
        let plain = Store::open(&dir).unwrap();
        assert_eq!(plain.durability().unwrap(), Durability::PowerLoss);
        let (locked, _) = Store::open_locked(&dir).unwrap();
        assert_eq!(locked.durability().unwrap(), Durability::PowerLoss);
        drop(locked);

        let calls = Store::open_for_calls(&dir).unwrap();
        assert_eq!(calls.durability().unwrap(), Durability::ProcessCrash);
        let inside = calls.durably(|| calls.durability()).unwrap();
        assert_eq!(inside, Durability::PowerLoss);
        assert_eq!(calls.durable_sections(), 1);
        assert_eq!(calls.durability().unwrap(), Durability::ProcessCrash);
        // Restored after a failure too.
        let failed: HostResult<()> = calls.durably(|| {
            Err(crate::foundation::error::HostError::new(
                crate::foundation::error::ErrorCode::Internal,
                "boom",
            ))
        });
        assert!(failed.is_err());
        assert_eq!(calls.durability().unwrap(), Durability::ProcessCrash);
        // A plain store stays FULL after durably.
        plain.durably(|| Ok(())).unwrap();
        assert_eq!(plain.durability().unwrap(), Durability::PowerLoss);
        assert_eq!(
            plain.durable_sections(),
            0,
            "already FULL: nothing to raise"
        );
    }
}
