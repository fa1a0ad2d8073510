//! Keeps the window's mounts in step with the store when another process changes it: the CLI
//! disabling, uninstalling, updating or rolling back an app while the window shows it.
//!
//! [`sync`] runs when the host UI polls `sync_mounts` or waits in `next_events` (about once a
//! second). A [`StoreStamp`]
//! (size and modification time of `host.db` and its WAL) makes an unchanged store cost two
//! `stat` calls; the look after a change is repeated once (quietly), because the files can move
//! before the commit is visible to readers; when it changed, every mounted app is looked up again and [`stale_reason`]
//! decides which mounts end. Those are unmounted through `BridgeHost::unmount_app`, which also
//! closes the app's services (its storage file), returned so the host UI removes the frames, and
//! also queued as `mounts:ended` / `store:changed` events in the session's outbox.

use serde::Serialize;

use super::session::Session;
use super::store_stamp::StoreLook;
use crate::foundation::error::{ErrorCode, HostResult};
use crate::install::store::{ActiveApp, Store};

/// Event kinds the watcher queues.
pub const STORE_CHANGED: &str = "store:changed";
pub const MOUNTS_ENDED: &str = "mounts:ended";

/// Why a mount ended without the user closing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StaleReason {
    Uninstalled,
    Disabled,
    /// Another version is active now (update or rollback).
    VersionChanged,
}

/// What the store says about a mounted app now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppNow<'a> {
    Missing,
    /// The store could not be asked (busy, unreadable): the next poll asks again.
    Unknown,
    Present {
        enabled: bool,
        version: &'a str,
    },
}

impl<'a> AppNow<'a> {
    pub fn from_lookup(lookup: &'a HostResult<ActiveApp>) -> AppNow<'a> {
        match lookup {
            Ok(app) => AppNow::Present {
                enabled: app.enabled,
                version: &app.version,
            },
            Err(e) if e.code == ErrorCode::AppNotInstalled => AppNow::Missing,
            Err(_) => AppNow::Unknown,
        }
    }
}

/// Whether a mount of `mounted_version` must end. An unknown state keeps the mount.
pub fn stale_reason(now: AppNow<'_>, mounted_version: &str) -> Option<StaleReason> {
    match now {
        AppNow::Missing => Some(StaleReason::Uninstalled),
        AppNow::Unknown => None,
        AppNow::Present { enabled: false, .. } => Some(StaleReason::Disabled),
        AppNow::Present { version, .. } if version != mounted_version => {
            Some(StaleReason::VersionChanged)
        }
        AppNow::Present { .. } => None,
    }
}

/// One mount the watcher ended, for the host UI.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndedMount {
    pub mount_id: String,
    pub app_id: String,
    /// The entry it showed (the host UI reopens it after an update or rollback).
    pub entry_key: String,
    pub reason: StaleReason,
}

/// Ends the mounts whose app is gone, disabled or replaced; also says whether some app's state
/// could not be read (its mounts are kept, and the next look must ask again).
fn look_at_mounts(session: &Session) -> HostResult<(Vec<EndedMount>, bool)> {
    let store = Store::open(&session.data)?;
    let mut guard = session.bridge()?;
    let bridge = &mut guard.host;
    let mut mounted: Vec<(String, String)> = bridge
        .mounts()
        .all()
        .map(|m| (m.app_id.clone(), m.version.clone()))
        .collect();
    mounted.sort();
    mounted.dedup();
    let mut ended = Vec::new();
    let mut unknown = false;
    for (app_id, version) in mounted {
        let lookup = store.active_app(&app_id);
        let now = AppNow::from_lookup(&lookup);
        if now == AppNow::Unknown {
            if let Err(e) = &lookup {
                tracing::warn!(app = %app_id, code = e.code.as_str(), "mount watcher: cannot read the app's state now: {}", e.message);
            }
            unknown = true;
        }
        if let Some(reason) = stale_reason(now, &version) {
            for m in bridge.unmount_app(&app_id) {
                ended.push(EndedMount {
                    mount_id: m.mount_id,
                    app_id: m.app_id,
                    entry_key: m.entry_key,
                    reason,
                });
            }
        }
    }
    // lime.ui routes of packages no longer active go too, mounted or not.
    bridge.retire_routes(&store);
    Ok((ended, unknown))
}

/// What one poll found.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct SyncReport {
    /// The store changed since the previous poll.
    pub changed: bool,
    pub ended: Vec<EndedMount>,
}

/// Ends the mounts whose app another process disabled, uninstalled, updated or rolled back,
/// queues what it found as events, and returns it. An unchanged store costs two `stat` calls.
pub fn sync(session: &Session) -> HostResult<SyncReport> {
    let look = session.store_changed();
    if look == StoreLook::Unchanged {
        return Ok(SyncReport::default());
    }
    let (ended, unknown) = match look_at_mounts(session) {
        Ok(found) => found,
        Err(e) => {
            session.store_look_failed();
            return Err(e);
        }
    };
    if unknown {
        // Some app could not be looked up: look again next time rather than lose the change.
        session.store_look_failed();
    }
    // Stay quiet when nothing but this window's own bridge commits moved the files (an audit
    // record per capability call), or, with no bridge connection to tell, on a recheck that
    // finds nothing new (the change was already announced).
    let quiet = match session.foreign_commit_seen() {
        Some(foreign) => !foreign,
        None => look == StoreLook::Recheck,
    };
    if ended.is_empty() && quiet {
        return Ok(SyncReport::default());
    }
    let report = SyncReport {
        changed: true,
        ended,
    };
    session.outbox.push(STORE_CHANGED, serde_json::Value::Null);
    if !report.ended.is_empty() {
        session.outbox.push(
            MOUNTS_ENDED,
            serde_json::to_value(&report.ended).unwrap_or_default(),
        );
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::foundation::error::HostError;

    fn present(version: &str, enabled: bool) -> AppNow<'_> {
        AppNow::Present { enabled, version }
    }

    #[test]
    fn a_mount_ends_when_its_app_is_gone_disabled_or_replaced() {
        assert_eq!(
            stale_reason(AppNow::Missing, "1.0.0"),
            Some(StaleReason::Uninstalled)
        );
        assert_eq!(
            stale_reason(present("1.0.0", false), "1.0.0"),
            Some(StaleReason::Disabled)
        );
        assert_eq!(
            stale_reason(present("1.1.0", true), "1.0.0"),
            Some(StaleReason::VersionChanged)
        );
        assert_eq!(stale_reason(present("1.0.0", true), "1.0.0"), None);
        // A store that cannot be read right now does not tear frames down.
        assert_eq!(stale_reason(AppNow::Unknown, "1.0.0"), None);
    }

    #[test]
    fn only_not_installed_counts_as_missing() {
        let gone: HostResult<ActiveApp> = Err(HostError::new(ErrorCode::AppNotInstalled, "gone"));
        assert_eq!(AppNow::from_lookup(&gone), AppNow::Missing);
        let busy: HostResult<ActiveApp> = Err(HostError::new(ErrorCode::StoreDb, "locked"));
        assert_eq!(AppNow::from_lookup(&busy), AppNow::Unknown);
    }
}
