//! The store facts a capability call is decided from (the app's active version, manifest,
//! enabled flag and grants, and each entry's readiness), kept between calls until the store
//! changes.
//!
//! Every entry is valid for one [`ChangeStamp`] of one open store: any commit to `host.db`, by
//! this connection (a grant from a prompt) or by another one (`apphost grant|revoke|disable`,
//! an install or update in another process), moves the stamp and drops everything, so a
//! grant, revoke, disable, update or uninstall takes effect on the next call. The dispatcher's
//! own audit records are the exception it vouches for: [`FactsCache::after_own_write`] keeps the
//! cache when nothing but this connection wrote since the facts were read. Readiness also
//! depends on the clock (end-of-life and deprecation dates), so an entry's readiness is
//! re-evaluated at least every [`READINESS_TTL`]. A cache used with another store, or a store
//! whose stamp cannot be read, caches nothing.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::decision::EntryState;
use crate::foundation::error::HostResult;
use crate::foundation::profile::HostProfile;
use crate::install::readiness::Status;
use crate::install::store::{ActiveApp, ChangeStamp, Store};

/// How long a cached readiness outcome is trusted before the clock-dependent checks run again.
pub const READINESS_TTL: Duration = Duration::from_secs(1);

#[derive(Default)]
struct Cached {
    app: Option<Arc<ActiveApp>>,
    entries: HashMap<String, (EntryState, Instant)>,
}

#[derive(Default)]
struct Inner {
    stamp: Option<ChangeStamp>,
    apps: HashMap<String, Cached>,
}

/// Per-host cache of call facts (see the module documentation). Memory is bounded by the
/// installed apps and their entries: only apps the store knows are kept.
#[derive(Default)]
pub struct FactsCache {
    inner: RefCell<Inner>,
}

impl FactsCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the store's stamp and drops everything if the store changed since the cached facts
    /// were read. Returns the stamp the facts read next are valid for (`None`: cache nothing).
    pub fn validate(&self, store: &Store) -> Option<ChangeStamp> {
        let stamp = store.change_stamp().ok();
        let mut inner = self.inner.borrow_mut();
        if stamp.is_none() || stamp != inner.stamp {
            inner.apps.clear();
            inner.stamp = stamp;
        }
        stamp
    }

    /// The active app, from the cache when the store has not changed since it was read.
    pub fn active_app(&self, store: &Store, name: &str) -> HostResult<Arc<ActiveApp>> {
        let caching = self.validate(store).is_some();
        if let Some(app) = self
            .inner
            .borrow()
            .apps
            .get(name)
            .and_then(|c| c.app.clone())
        {
            return Ok(app);
        }
        let app = Arc::new(store.active_app(name)?);
        if caching {
            self.inner
                .borrow_mut()
                .apps
                .entry(name.to_owned())
                .or_default()
                .app = Some(Arc::clone(&app));
        }
        Ok(app)
    }

    /// The readiness of entry `key` of `app` (read through [`Self::active_app`] on the same
    /// store), cached for at most [`READINESS_TTL`].
    pub fn entry_state(
        &self,
        store: &Store,
        profile: &HostProfile,
        app: &ActiveApp,
        key: &str,
    ) -> EntryState {
        let caching = self.validate(store).is_some();
        let now = Instant::now();
        let hit = self
            .inner
            .borrow()
            .apps
            .get(&app.name)
            .and_then(|c| c.entries.get(key))
            .filter(|(_, at)| now.duration_since(*at) < READINESS_TTL)
            .map(|(state, _)| *state);
        if let Some(state) = hit {
            return state;
        }
        let state = read_entry_state(store, profile, &app.name, key);
        if caching {
            self.inner
                .borrow_mut()
                .apps
                .entry(app.name.clone())
                .or_default()
                .entries
                .insert(key.to_owned(), (state, now));
        }
        state
    }

    /// After the caller's own write on `store` (an audit record) that changes none of the
    /// cached facts: keeps the cache if the facts were valid at `before` and no other connection
    /// committed since.
    pub fn after_own_write(&self, store: &Store, before: ChangeStamp) {
        let Ok(now) = store.change_stamp() else {
            return;
        };
        let mut inner = self.inner.borrow_mut();
        if inner.stamp == Some(before) && before.only_own_changes_until(&now) {
            inner.stamp = Some(now);
        }
    }
}

fn read_entry_state(store: &Store, profile: &HostProfile, app: &str, key: &str) -> EntryState {
    let Ok(report) = store.readiness(app, profile) else {
        return EntryState::Blocked;
    };
    let status = match key.strip_prefix(SERVICE_CALLER_PREFIX) {
        // A backend service calling back: the app is usable and the service's own check passes.
        Some(service) => service_status(&report, service),
        None => report
            .entries
            .iter()
            .find(|e| e.entry_key == key)
            .map(|e| e.status),
    };
    match status {
        Some(Status::Ready) => EntryState::Ready,
        Some(Status::ReadyDegraded) => EntryState::ReadyDegraded,
        Some(Status::NeedsSetup) => EntryState::NeedsSetup,
        Some(Status::Disabled) => EntryState::Disabled,
        Some(Status::Blocked) | None => EntryState::Blocked,
    }
}

/// The `entry_key` of a [`Caller`](super::call::Caller) that is an app's backend service:
/// `service/<key>` (entry keys match `^[a-zA-Z0-9_.:-]+$`, so never contain `/`).
pub const SERVICE_CALLER_PREFIX: &str = "service/";

/// A service caller's state: the app's status, no better than its service check's outcome.
fn service_status(report: &crate::install::readiness::Report, service: &str) -> Option<Status> {
    use crate::install::readiness::Outcome;
    let check = report
        .checks
        .iter()
        .find(|c| c.kind == "service" && c.key == service && c.entry.is_none())?;
    let own = match check.outcome {
        Outcome::Pass | Outcome::Notice => Status::Ready,
        Outcome::Degraded => Status::ReadyDegraded,
        Outcome::NeedsSetup => Status::NeedsSetup,
        Outcome::Blocked | Outcome::Unknown => Status::Blocked,
    };
    Some(match report.status {
        Status::Disabled | Status::Blocked => report.status,
        _ => own,
    })
}
