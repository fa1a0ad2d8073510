//! The mount table: Rust's own record of which app entry each frame shows.
//!
//! The host UI asks for a mount of `(app, entry)`; the caller of [`MountTable::insert`] has
//! checked that the app is installed, enabled and the entry can run. Bridge messages relayed by
//! the host UI name only the `mountId`: app, entry, version, origin and provenance are taken from
//! here, never from the message. Mount ids are random 128-bit values, so one frame cannot guess
//! another's. Disabling, uninstalling, updating or rolling back an app removes its mounts.
//!
//! Each mount bounds the calls it has in flight: beyond [`MAX_IN_FLIGHT`] a call is refused with
//! a retryable rate-limit error (never dropped silently).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::Serialize;

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::hosting::capability::Caller;

/// Most calls one mount may have in flight at once.
pub const MAX_IN_FLIGHT: usize = 32;
/// Most `lime.events` topics one mount may subscribe to.
pub const MAX_SUBSCRIPTIONS: usize = 32;

/// What a mount shows and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Mount {
    pub mount_id: String,
    pub app_id: String,
    pub entry_key: String,
    pub entry_kind: String,
    pub version: String,
    pub package_hash: String,
    pub manifest_hash: String,
    pub origin: String,
    pub url: String,
    pub sandbox: String,
    #[serde(skip)]
    ready: bool,
    #[serde(skip)]
    in_flight: HashSet<String>,
    #[serde(skip)]
    visible: bool,
    /// `lime.events` topics this frame subscribed to: they die with the mount.
    #[serde(skip)]
    subscriptions: BTreeSet<String>,
}

impl Mount {
    /// The choke point's view of this frame: which app entry calls, at which version (the
    /// mount id is its session, for the audit record).
    pub fn caller(&self) -> Caller {
        Caller {
            app_id: self.app_id.clone(),
            entry_key: self.entry_key.clone(),
            version: self.version.clone(),
            session_id: self.mount_id.clone(),
            package_hash: self.package_hash.clone(),
            manifest_hash: self.manifest_hash.clone(),
        }
    }
}

/// Everything a new mount needs; the table adds the id and the runtime state.
#[derive(Debug, Clone)]
pub struct MountSpec {
    pub app_id: String,
    pub entry_key: String,
    pub entry_kind: String,
    pub version: String,
    pub package_hash: String,
    pub manifest_hash: String,
    pub origin: String,
    pub url: String,
    pub sandbox: String,
}

/// Why a call could not start on a mount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallRefused {
    UnknownMount,
    /// The same `requestId` is already in flight on this mount.
    DuplicateRequest,
    RateLimited,
}

#[derive(Debug, Default)]
pub struct MountTable {
    mounts: BTreeMap<String, Mount>,
}

impl MountTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, spec: MountSpec) -> HostResult<Mount> {
        let mount_id = new_mount_id()?;
        let mount = Mount {
            mount_id: mount_id.clone(),
            app_id: spec.app_id,
            entry_key: spec.entry_key,
            entry_kind: spec.entry_kind,
            version: spec.version,
            package_hash: spec.package_hash,
            manifest_hash: spec.manifest_hash,
            origin: spec.origin,
            url: spec.url,
            sandbox: spec.sandbox,
            ready: false,
            in_flight: HashSet::new(),
            visible: true,
            subscriptions: BTreeSet::new(),
        };
        self.mounts.insert(mount_id, mount.clone());
        Ok(mount)
    }

    pub fn get(&self, mount_id: &str) -> Option<&Mount> {
        self.mounts.get(mount_id)
    }

    pub fn is_ready(&self, mount_id: &str) -> bool {
        self.mounts.get(mount_id).is_some_and(|m| m.ready)
    }

    /// Records the `app:ready` handshake.
    pub fn mark_ready(&mut self, mount_id: &str) -> bool {
        match self.mounts.get_mut(mount_id) {
            Some(m) => {
                m.ready = true;
                true
            }
            None => false,
        }
    }

    /// Records visibility; returns whether it changed.
    pub fn set_visible(&mut self, mount_id: &str, visible: bool) -> bool {
        match self.mounts.get_mut(mount_id) {
            Some(m) if m.visible != visible => {
                m.visible = visible;
                true
            }
            _ => false,
        }
    }

    pub fn remove(&mut self, mount_id: &str) -> Option<Mount> {
        self.mounts.remove(mount_id)
    }

    /// Removes every mount of an app (disable, uninstall, update, rollback); returns them so
    /// the shell can tell the host UI which frames to tear down.
    pub fn remove_app(&mut self, app_id: &str) -> Vec<Mount> {
        let ids: Vec<String> = self
            .mounts
            .values()
            .filter(|m| m.app_id == app_id)
            .map(|m| m.mount_id.clone())
            .collect();
        ids.iter().filter_map(|id| self.mounts.remove(id)).collect()
    }

    pub fn mounts_of<'a>(&'a self, app_id: &'a str) -> impl Iterator<Item = &'a Mount> + 'a {
        self.mounts.values().filter(move |m| m.app_id == app_id)
    }

    pub fn all(&self) -> impl Iterator<Item = &Mount> {
        self.mounts.values()
    }

    /// Starts a call: refused when the mount is gone, the id is in flight, or the mount is full.
    pub fn begin_call(&mut self, mount_id: &str, request_id: &str) -> Result<(), CallRefused> {
        let m = self
            .mounts
            .get_mut(mount_id)
            .ok_or(CallRefused::UnknownMount)?;
        if m.in_flight.contains(request_id) {
            return Err(CallRefused::DuplicateRequest);
        }
        if m.in_flight.len() >= MAX_IN_FLIGHT {
            return Err(CallRefused::RateLimited);
        }
        m.in_flight.insert(request_id.to_owned());
        Ok(())
    }

    /// Ends a call; returns false when it was not in flight (already ended or cancelled).
    pub fn end_call(&mut self, mount_id: &str, request_id: &str) -> bool {
        self.mounts
            .get_mut(mount_id)
            .is_some_and(|m| m.in_flight.remove(request_id))
    }

    pub fn in_flight(&self, mount_id: &str) -> usize {
        self.mounts.get(mount_id).map_or(0, |m| m.in_flight.len())
    }

    /// Subscribes a mount to a `lime.events` topic; `Ok(false)` if it already was. Refused
    /// beyond [`MAX_SUBSCRIPTIONS`] topics per mount.
    pub fn subscribe(&mut self, mount_id: &str, topic: &str) -> Result<bool, CallRefused> {
        let m = self
            .mounts
            .get_mut(mount_id)
            .ok_or(CallRefused::UnknownMount)?;
        if m.subscriptions.contains(topic) {
            return Ok(false);
        }
        if m.subscriptions.len() >= MAX_SUBSCRIPTIONS {
            return Err(CallRefused::RateLimited);
        }
        Ok(m.subscriptions.insert(topic.to_owned()))
    }

    /// Unsubscribes; returns whether the mount was subscribed.
    pub fn unsubscribe(&mut self, mount_id: &str, topic: &str) -> bool {
        self.mounts
            .get_mut(mount_id)
            .is_some_and(|m| m.subscriptions.remove(topic))
    }

    /// The mounts of `app_id`, other than `except`, that have done the handshake and subscribe
    /// to `topic`. Never a mount of another app.
    pub fn subscribers<'a>(
        &'a self,
        app_id: &'a str,
        topic: &'a str,
        except: &'a str,
    ) -> impl Iterator<Item = &'a Mount> + 'a {
        self.mounts_of(app_id)
            .filter(move |m| m.mount_id != except && m.ready && m.subscriptions.contains(topic))
    }
}

fn new_mount_id() -> HostResult<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| HostError::new(ErrorCode::Internal, format!("no OS randomness: {e}")))?;
    Ok(format!("m_{}", hex::encode(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(app: &str, entry: &str) -> MountSpec {
        MountSpec {
            app_id: app.into(),
            entry_key: entry.into(),
            entry_kind: "page".into(),
            version: "1.0.0".into(),
            package_hash: "sha256:00".into(),
            manifest_hash: "sha256:11".into(),
            origin: format!("agentapp://{app}"),
            url: format!("agentapp://{app}/index.html"),
            sandbox: "allow-scripts allow-same-origin".into(),
        }
    }

    #[test]
    fn mount_ids_are_unique_and_unguessable() {
        let mut t = MountTable::new();
        let a = t.insert(spec("a", "home")).unwrap();
        let b = t.insert(spec("a", "home")).unwrap();
        assert_ne!(a.mount_id, b.mount_id);
        assert_eq!(a.mount_id.len(), 2 + 32);
        assert!(!t.is_ready(&a.mount_id));
        assert!(t.mark_ready(&a.mount_id));
        assert!(t.is_ready(&a.mount_id));
        assert!(!t.is_ready(&b.mount_id));
        assert!(!t.mark_ready("m_nope"));
    }

    #[test]
    fn removing_an_app_removes_only_its_mounts() {
        let mut t = MountTable::new();
        let a1 = t.insert(spec("a", "home")).unwrap();
        let a2 = t.insert(spec("a", "panel")).unwrap();
        let b = t.insert(spec("b", "home")).unwrap();
        let removed = t.remove_app("a");
        assert_eq!(removed.len(), 2);
        assert!(t.get(&a1.mount_id).is_none() && t.get(&a2.mount_id).is_none());
        assert!(t.get(&b.mount_id).is_some());
        assert_eq!(
            t.begin_call(&a1.mount_id, "r1"),
            Err(CallRefused::UnknownMount)
        );
    }

    #[test]
    fn in_flight_calls_are_bounded_and_never_duplicated() {
        let mut t = MountTable::new();
        let m = t.insert(spec("a", "home")).unwrap().mount_id;
        for i in 0..MAX_IN_FLIGHT {
            t.begin_call(&m, &format!("r{i}")).unwrap();
        }
        assert_eq!(t.begin_call(&m, "one-more"), Err(CallRefused::RateLimited));
        assert_eq!(t.begin_call(&m, "r0"), Err(CallRefused::DuplicateRequest));
        assert!(t.end_call(&m, "r0"));
        assert!(!t.end_call(&m, "r0"));
        t.begin_call(&m, "one-more").unwrap();
        assert_eq!(t.in_flight(&m), MAX_IN_FLIGHT);
    }

    #[test]
    fn subscriptions_are_bounded_per_mount_and_never_reach_another_app() {
        let mut t = MountTable::new();
        let a1 = t.insert(spec("a", "home")).unwrap().mount_id;
        let a2 = t.insert(spec("a", "panel")).unwrap().mount_id;
        let b = t.insert(spec("b", "home")).unwrap().mount_id;
        for m in [&a1, &a2, &b] {
            t.mark_ready(m);
            assert_eq!(t.subscribe(m, "t"), Ok(true));
        }
        assert_eq!(t.subscribe(&a2, "t"), Ok(false));
        let got: Vec<&str> = t
            .subscribers("a", "t", &a1)
            .map(|m| m.mount_id.as_str())
            .collect();
        assert_eq!(got, vec![a2.as_str()]);
        for i in 1..MAX_SUBSCRIPTIONS {
            assert_eq!(t.subscribe(&a1, &format!("t{i}")), Ok(true));
        }
        assert_eq!(t.subscribe(&a1, "one-more"), Err(CallRefused::RateLimited));
        assert!(t.unsubscribe(&a2, "t"));
        assert!(!t.unsubscribe(&a2, "t"));
        assert_eq!(t.subscribers("a", "t", &b).count(), 1);
        t.remove(&a1);
        assert_eq!(t.subscribers("a", "t", &b).count(), 0);
        assert_eq!(t.subscribe(&a1, "t"), Err(CallRefused::UnknownMount));
    }

    #[test]
    fn visibility_changes_are_reported_once() {
        let mut t = MountTable::new();
        let m = t.insert(spec("a", "home")).unwrap().mount_id;
        assert!(!t.set_visible(&m, true));
        assert!(t.set_visible(&m, false));
        assert!(!t.set_visible(&m, false));
    }
}
