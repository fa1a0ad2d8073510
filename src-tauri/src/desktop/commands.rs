//! Tauri commands: thin adapters over `host-core`. Errors are `HostError` (`{code, message,
//! details}`), never bare strings. Every command is reached only through `guard::host_ui_only`,
//! and runs on Tauri's async runtime (`async`), never on the UI thread.
//!
//! The bridge commands feed `host_core::bridge::host::BridgeHost`, which decides everything:
//! the host UI relays bytes and executes the returned [`Outgoing`] actions.

use host_core::bridge::host::{Answer, Diagnostics, Outgoing};
use host_core::bridge::mounting::default_entry;
use host_core::bridge::mounts::Mount;
use host_core::error::HostError;
use host_core::paths::DataDir;
use host_core::store::{AppSummary, Store};
use host_core::surface::serve::ServeRefusal;
use serde::Serialize;
use tauri::{AppHandle, Manager, Runtime};

use super::external;
use super::state::{Desktop, LaunchTarget};
use super::watch::{stale_reason, AppNow, EndedMount, SyncReport};

fn store_of<R: Runtime>(app: &AppHandle<R>) -> Result<Store, HostError> {
    Store::open(&app.state::<Desktop>().data)
}

/// The installed apps, as the catalog knows them. Opens the store per call (cheap).
#[tauri::command(async)]
pub fn list_apps() -> Result<Vec<AppSummary>, HostError> {
    let dir = DataDir::from_env()?;
    let store = Store::open(&dir)?;
    store.list_apps()
}

/// Mounts `(appId, entryKey)`: Rust checks the app and entry and returns the mount (id, URL,
/// origin, sandbox) the host UI builds the frame from.
#[tauri::command(async)]
pub fn mount_entry<R: Runtime>(
    app: AppHandle<R>,
    app_id: String,
    entry_key: String,
) -> Result<Mount, HostError> {
    app.state::<Desktop>()
        .with_bridge(|bridge, store| bridge.mount(store, &app_id, &entry_key))?
}

/// One message a frame posted, relayed with the origin the host UI observed.
#[tauri::command(async)]
pub fn bridge_message<R: Runtime>(
    app: AppHandle<R>,
    mount_id: String,
    origin: String,
    data: String,
) -> Result<Vec<Outgoing>, HostError> {
    app.state::<Desktop>()
        .with_bridge(|bridge, store| bridge.handle(store, &mount_id, &origin, &data))
}

/// A message the host UI refused itself (`bridge.wrong_source`): counted, never acted on.
#[tauri::command(async)]
pub fn bridge_refused<R: Runtime>(
    app: AppHandle<R>,
    mount_id: Option<String>,
    reason: String,
    bytes: usize,
) -> Result<(), HostError> {
    let state = app.state::<Desktop>();
    state
        .bridge()?
        .host
        .report_refusal(mount_id.as_deref(), &reason, bytes);
    Ok(())
}

/// The user's answer to a permission prompt.
#[tauri::command(async)]
pub fn answer_prompt<R: Runtime>(
    app: AppHandle<R>,
    prompt_id: String,
    answer: Answer,
) -> Result<Vec<Outgoing>, HostError> {
    app.state::<Desktop>()
        .with_bridge(|bridge, store| bridge.answer(store, &prompt_id, answer))
}

/// The user's answer to a download (`Outgoing::ConfirmDownload`): `save` writes the file into
/// the user's download folder (`host_core::downloads`); Rust answers the app either way.
#[tauri::command(async)]
pub fn answer_download<R: Runtime>(
    app: AppHandle<R>,
    download_id: String,
    save: bool,
) -> Result<Vec<Outgoing>, HostError> {
    let dir = host_core::downloads::download_dir();
    app.state::<Desktop>().with_bridge(|bridge, store| {
        bridge.answer_download(store, &download_id, save, dir.as_deref())
    })?
}

/// The frame went away. Returns whether the mount existed.
#[tauri::command(async)]
pub fn unmount<R: Runtime>(app: AppHandle<R>, mount_id: String) -> Result<bool, HostError> {
    let state = app.state::<Desktop>();
    let removed = state.bridge()?.host.unmount(&mount_id);
    Ok(removed.is_some())
}

/// Ends the mounts whose app another process disabled, uninstalled, updated or rolled back
/// (the CLI, while the window is open), and returns them so the host UI removes their frames;
/// `changed` tells the host UI to reload its list. The host UI polls it; an unchanged store
/// costs two `stat` calls.
#[tauri::command(async)]
pub fn sync_mounts<R: Runtime>(app: AppHandle<R>) -> Result<SyncReport, HostError> {
    let state = app.state::<Desktop>();
    if !state.store_changed() {
        return Ok(SyncReport::default());
    }
    let store = store_of(&app)?;
    let mut guard = state.bridge()?;
    let bridge = &mut guard.host;
    let mut mounted: Vec<(String, String)> = bridge
        .mounts()
        .all()
        .map(|m| (m.app_id.clone(), m.version.clone()))
        .collect();
    mounted.sort();
    mounted.dedup();
    let mut ended = Vec::new();
    for (app_id, version) in mounted {
        let lookup = store.active_app(&app_id);
        if let Some(reason) = stale_reason(AppNow::from_lookup(&lookup), &version) {
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
    Ok(SyncReport {
        changed: true,
        ended,
    })
}

/// What the bridge and the file server refused, and how many service calls ran.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DesktopDiagnostics {
    #[serde(flatten)]
    pub bridge: Diagnostics,
    pub serve_refusals: Vec<ServeRefusal>,
    /// How many frames Rust has mounted now.
    pub mounts: usize,
}

#[tauri::command(async)]
pub fn bridge_diagnostics<R: Runtime>(app: AppHandle<R>) -> Result<DesktopDiagnostics, HostError> {
    let state = app.state::<Desktop>();
    let (bridge, mounts) = {
        let guard = state.bridge()?;
        let host = &guard.host;
        (host.diagnostics(), host.mounts().all().count())
    };
    Ok(DesktopDiagnostics {
        bridge,
        serve_refusals: state.serve_refusals(),
        mounts,
    })
}

/// Opens an http(s) link in the user's browser. The host UI calls it only after the user
/// confirmed; the URL is checked again here.
#[tauri::command(async)]
pub fn open_external(url: String) -> Result<(), HostError> {
    external::open(&url)
}

/// The entry the window was started to open (`apphost open <app> [--entry <key>]`), or null.
/// Without `--entry`, the app's first UI entry.
#[tauri::command(async)]
pub fn launch_target<R: Runtime>(app: AppHandle<R>) -> Result<Option<LaunchTarget>, HostError> {
    let state = app.state::<Desktop>();
    let Some(request) = state.launch.clone() else {
        return Ok(None);
    };
    let entry_key = match request.entry_key {
        Some(key) => key,
        None => default_entry(&store_of(&app)?, &request.app_id)?,
    };
    Ok(Some(LaunchTarget {
        app_id: request.app_id,
        entry_key,
    }))
}
