//! Apps and mounts: the installed list, mounting an entry (Rust checks the app, the entry and
//! its readiness and returns the frame's URL, origin and sandbox), unmounting, the entry to open
//! at start, and the mount watcher's poll.

use serde::Deserialize;
use serde_json::Value;

use super::session::LaunchTarget;
use super::{answer, args, Command, NoArgs, Session};
use crate::foundation::error::HostResult;
use crate::hosting::bridge::mounting::default_entry;
use crate::install::store::Store;

pub const COMMANDS: &[Command] = &[
    Command {
        name: "list_apps",
        run: list_apps,
    },
    Command {
        name: "mount_entry",
        run: mount_entry,
    },
    Command {
        name: "unmount",
        run: unmount,
    },
    Command {
        name: "launch_target",
        run: launch_target,
    },
    Command {
        name: "sync_mounts",
        run: sync_mounts,
    },
];

/// The installed apps, as the catalog knows them. Opens the store per call (cheap).
fn list_apps(session: &Session, raw: Value) -> HostResult<Value> {
    let NoArgs {} = args("list_apps", raw)?;
    answer(Store::open(&session.data)?.list_apps()?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "MountEntryArgs")]
pub(crate) struct MountArgs {
    app_id: String,
    entry_key: String,
}

/// `mount_entry {appId, entryKey}` → `Mount`.
fn mount_entry(session: &Session, raw: Value) -> HostResult<Value> {
    let a: MountArgs = args("mount_entry", raw)?;
    let mount =
        session.with_bridge(|bridge, store| bridge.mount(store, &a.app_id, &a.entry_key))??;
    answer(mount)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "MountIdArgs")]
pub(crate) struct MountId {
    mount_id: String,
}

/// `unmount {mountId}`: the frame went away. Answers whether the mount existed.
fn unmount(session: &Session, raw: Value) -> HostResult<Value> {
    let a: MountId = args("unmount", raw)?;
    let removed = session.bridge()?.host.unmount(&a.mount_id);
    answer(removed.is_some())
}

/// The entry the host UI was started to open, or null. Without an entry key, the app's first
/// UI entry.
fn launch_target(session: &Session, raw: Value) -> HostResult<Value> {
    let NoArgs {} = args("launch_target", raw)?;
    let Some(request) = session.config.launch.clone() else {
        return answer(Value::Null);
    };
    let entry_key = match request.entry_key {
        Some(key) => key,
        None => default_entry(&Store::open(&session.data)?, &request.app_id)?,
    };
    answer(LaunchTarget {
        app_id: request.app_id,
        entry_key,
    })
}

/// Ends the mounts whose app another process changed (see [`super::watch`]).
fn sync_mounts(session: &Session, raw: Value) -> HostResult<Value> {
    let NoArgs {} = args("sync_mounts", raw)?;
    answer(super::watch::sync(session)?)
}
