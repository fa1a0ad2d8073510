//! The runtime's resident sessions: which sessions' in-memory state (read model, queue, chat
//! history) is held, and how many sessions each app and the whole data directory have.
//!
//! A session is kept in memory while something needs it (a live or queued turn, a paused queue,
//! a caller holding its handle); an idle one is only a cache entry, dropped least recently used
//! first once more than [`SessionLimits::resident`] are held, and rebuilt from the event log (the
//! source of truth) the next time it is named. So memory is bounded by the LRU bound plus the
//! sessions with live work, whatever the number of sessions in the log.
//!
//! The counts are what the session caps are checked against ([`SessionLimits::per_app`],
//! [`SessionLimits::total`]): built from the log on open and kept up to date by every start.

use std::collections::HashMap;
use std::sync::Arc;

use crate::ids::{AppId, SessionId};

/// Bounds on sessions (a [`crate::runtime::RuntimeConfig`] field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionLimits {
    /// Idle sessions kept in memory at most (least recently used are dropped first).
    pub resident: usize,
    /// Sessions one app may have in the log.
    pub per_app: u64,
    /// Sessions the data directory may hold, all apps together.
    pub total: u64,
}

/// Default LRU bound on idle sessions held in memory.
pub const DEFAULT_RESIDENT_SESSIONS: usize = 256;
/// Default cap on one app's sessions.
pub const DEFAULT_SESSIONS_PER_APP: u64 = 10_000;
/// Default cap on the data directory's sessions.
pub const DEFAULT_SESSIONS_TOTAL: u64 = 100_000;

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits {
            resident: DEFAULT_RESIDENT_SESSIONS,
            per_app: DEFAULT_SESSIONS_PER_APP,
            total: DEFAULT_SESSIONS_TOTAL,
        }
    }
}

/// Which cap a new session would break.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitScope {
    App,
    Workspace,
}

impl LimitScope {
    pub fn as_str(self) -> &'static str {
        match self {
            LimitScope::App => "app",
            LimitScope::Workspace => "workspace",
        }
    }
}

/// The resident handles (with their last use) and the session counts.
pub(crate) struct Resident<H> {
    entries: HashMap<SessionId, (Arc<H>, u64)>,
    tick: u64,
    per_app: HashMap<String, u64>,
    total: u64,
}

impl<H> Default for Resident<H> {
    fn default() -> Self {
        Resident {
            entries: HashMap::new(),
            tick: 0,
            per_app: HashMap::new(),
            total: 0,
        }
    }
}

impl<H> Resident<H> {
    /// The resident handle of `id`, marked as just used.
    pub fn get(&mut self, id: &SessionId) -> Option<Arc<H>> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(id).map(|(h, used)| {
            *used = tick;
            h.clone()
        })
    }

    /// The resident handle of `id`, without marking it used (a listing is not a use).
    pub fn peek(&self, id: &SessionId) -> Option<Arc<H>> {
        self.entries.get(id).map(|(h, _)| h.clone())
    }

    pub fn contains(&self, id: &SessionId) -> bool {
        self.entries.contains_key(id)
    }

    pub fn insert(&mut self, id: SessionId, h: Arc<H>) {
        self.tick += 1;
        self.entries.insert(id, (h, self.tick));
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Drops least recently used entries until at most `bound` are held, skipping any that is
    /// not idle (`is_idle` false) or whose handle someone else holds; returns the dropped ids.
    pub fn evict(&mut self, bound: usize, is_idle: impl Fn(&H) -> bool) -> Vec<SessionId> {
        if self.entries.len() <= bound {
            return Vec::new();
        }
        let mut candidates: Vec<(u64, SessionId)> = self
            .entries
            .iter()
            .filter(|(_, (h, _))| Arc::strong_count(h) == 1 && is_idle(h))
            .map(|(id, (_, used))| (*used, id.clone()))
            .collect();
        candidates.sort_unstable_by_key(|(used, _)| *used);
        let excess = self.entries.len() - bound;
        let mut dropped = Vec::new();
        for (_, id) in candidates.into_iter().take(excess) {
            self.entries.remove(&id);
            dropped.push(id);
        }
        dropped
    }

    /// Counts a session of `app`.
    pub fn count(&mut self, app: &AppId) {
        *self.per_app.entry(app.as_str().to_owned()).or_default() += 1;
        self.total += 1;
    }

    /// Whether `app` may have one more session under `limits`.
    pub fn room(&self, app: &AppId, limits: &SessionLimits) -> Result<(), (LimitScope, u64)> {
        if self.per_app.get(app.as_str()).copied().unwrap_or(0) >= limits.per_app {
            return Err((LimitScope::App, limits.per_app));
        }
        if self.total >= limits.total {
            return Err((LimitScope::Workspace, limits.total));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sid(n: u32) -> SessionId {
        SessionId::new(format!("sess_{n:08}")).unwrap()
    }

    #[test]
    fn evicts_least_recently_used_idle_entries_only() {
        let mut r: Resident<bool> = Resident::default();
        for n in 0..5 {
            // Entry 1 is busy (not idle).
            r.insert(sid(n), Arc::new(n != 1));
        }
        let held = r.get(&sid(0)).unwrap(); // used last, and held by a caller
        let dropped = r.evict(2, |idle| *idle);
        assert_eq!(dropped, vec![sid(2), sid(3), sid(4)]);
        assert!(r.contains(&sid(0)) && r.contains(&sid(1)));
        drop(held);
        assert_eq!(r.evict(1, |idle| *idle), vec![sid(0)]);
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn room_checks_the_app_then_the_workspace() {
        let limits = SessionLimits {
            resident: 1,
            per_app: 2,
            total: 3,
        };
        let (a, b) = (AppId::new("a").unwrap(), AppId::new("b").unwrap());
        let mut r: Resident<()> = Resident::default();
        r.count(&a);
        r.count(&a);
        assert_eq!(r.room(&a, &limits), Err((LimitScope::App, 2)));
        assert_eq!(r.room(&b, &limits), Ok(()));
        r.count(&b);
        assert_eq!(r.room(&b, &limits), Err((LimitScope::Workspace, 3)));
    }
}
