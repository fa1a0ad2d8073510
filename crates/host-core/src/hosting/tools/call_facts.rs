//! What every broker call reads before it reaches a server — the `tools.*` settings rows (grants,
//! user servers) and the admin policy file — kept between calls and re-read only when they may
//! have changed: the store's [`ChangeStamp`] moved (any commit by another connection or process,
//! or a write of this connection other than the broker's own audit row), or the policy file's
//! size, modification time or inode changed. A grant, revoke, server change or policy edit
//! therefore applies to the very next call, as before; an unchanged store costs one
//! `PRAGMA data_version` and one `stat` per call instead of reading and parsing every row.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::sync::{Arc, Mutex};

use super::policy::{policy_path, AdminPolicy};
use super::registry::{self, Server};
use super::spec::ToolRef;
use crate::foundation::error::HostResult;
use crate::foundation::paths::DataDir;
use crate::install::store::{ChangeStamp, Store};

/// The policy file as `stat` sees it (`None`: absent or unreadable).
type FileSig = Option<(u64, i64, i64, u64)>;

fn policy_sig(dir: &DataDir) -> FileSig {
    std::fs::metadata(policy_path(dir))
        .ok()
        .map(|m| (m.len(), m.mtime(), m.mtime_nsec(), m.ino()))
}

/// The facts of one moment.
#[derive(Debug)]
pub struct Facts {
    pub settings: BTreeMap<String, String>,
    pub policy: AdminPolicy,
    pub servers: BTreeMap<String, Server>,
}

impl Facts {
    pub fn grants(&self, app: &str) -> Vec<ToolRef> {
        registry::grants(&self.settings, app)
    }
}

#[derive(Default)]
struct Cached {
    stamp: Option<ChangeStamp>,
    policy: FileSig,
    facts: Option<Arc<Facts>>,
}

#[derive(Default)]
pub struct CallFacts {
    inner: Mutex<Cached>,
}

impl CallFacts {
    /// The facts valid now for `store` (read again when anything may have changed).
    pub fn get(&self, store: &Store, dir: &DataDir) -> HostResult<Arc<Facts>> {
        let stamp = store.change_stamp().ok();
        let sig = policy_sig(dir);
        let mut c = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let (Some(f), Some(s)) = (&c.facts, stamp) {
            if c.stamp == Some(s) && c.policy == sig {
                return Ok(f.clone());
            }
        }
        let settings = store.settings()?;
        let policy = AdminPolicy::load(dir);
        let servers = registry::servers(&settings, &policy);
        let facts = Arc::new(Facts {
            settings,
            policy,
            servers,
        });
        c.facts = stamp.map(|_| facts.clone());
        c.stamp = stamp;
        c.policy = sig;
        Ok(facts)
    }

    /// The store's stamp before this broker writes its own audit row.
    pub fn before_own_write(&self, store: &Store) -> Option<ChangeStamp> {
        store.change_stamp().ok()
    }

    /// After the broker's own audit row: the facts stay valid when nothing else committed in
    /// between (the row changes no setting).
    pub fn after_own_write(&self, store: &Store, before: Option<ChangeStamp>) {
        let (Some(before), Ok(now)) = (before, store.change_stamp()) else {
            return;
        };
        let mut c = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if c.stamp == Some(before) && before.only_own_changes_until(&now) {
            c.stamp = Some(now);
        }
    }
}
