//! Creating a mount: the host UI asks for `(app, entry)`; Rust checks the app is installed and
//! enabled, the entry exists, is a UI surface and is ready (or ready-degraded), and records the
//! mount with everything later calls are decided from.

use super::mounts::{Mount, MountSpec, MountTable};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::profile::HostProfile;
use crate::hosting::surface::csp::FrameOptions;
use crate::hosting::surface::origin::OriginStyle;
use crate::hosting::surface::serve::{ui_entry, ui_root};
use crate::install::manifest::{Entry, EntryKind};
use crate::install::readiness::Status;
use crate::install::store::Store;

/// The entry to mount when none is named (`apphost open <app>`): the first entry, in manifest
/// order, whose kind is a UI surface. `mount.not_a_surface` when the app has none.
pub fn default_entry(store: &Store, app_id: &str) -> HostResult<String> {
    let app = store.active_app(app_id)?;
    let first = app
        .manifest
        .view()
        .entries()
        .find(|e| e.kind().is_some_and(EntryKind::is_ui_surface))
        .and_then(Entry::key)
        .map(str::to_owned);
    first.ok_or_else(|| {
        HostError::new(
            ErrorCode::MountNotASurface,
            format!("{app_id} has no entry that can be opened in a window"),
        )
        .with("app", app_id)
    })
}

pub fn mount_entry(
    store: &Store,
    profile: &HostProfile,
    table: &mut MountTable,
    style: &OriginStyle,
    app_id: &str,
    entry_key: &str,
) -> HostResult<Mount> {
    let app = store.active_app(app_id)?;
    let refuse = |code: ErrorCode, msg: String| {
        Err(HostError::new(code, msg)
            .with("app", app_id)
            .with("entry", entry_key))
    };
    if !app.enabled {
        return refuse(ErrorCode::MountAppDisabled, format!("{app_id} is disabled"));
    }
    let Some(entry) = app.manifest.view().entry(entry_key) else {
        return refuse(
            ErrorCode::MountUnknownEntry,
            format!("{app_id} has no entry {entry_key}"),
        );
    };
    let kind = entry.kind().map(EntryKind::as_str).unwrap_or_default();
    if !EntryKind::parse(kind).is_ui_surface() {
        return refuse(
            ErrorCode::MountNotASurface,
            format!("entry {entry_key} is a {kind} entry, not a UI surface"),
        );
    }
    if ui_root(&app).is_none() {
        return refuse(
            ErrorCode::MountNotASurface,
            format!("{app_id} ships no UI (runtimePackage.ui.path)"),
        );
    }
    let report = store.readiness(app_id, profile)?;
    let status = report
        .entries
        .iter()
        .find(|e| e.entry_key == entry_key)
        .map_or(report.status, |e| e.status);
    if !matches!(status, Status::Ready | Status::ReadyDegraded) {
        return Err(HostError::new(
            ErrorCode::MountNotReady,
            format!("{app_id}/{entry_key} is {}", status.as_str()),
        )
        .with("app", app_id)
        .with("entry", entry_key)
        .with("status", status.as_str())
        .with("setupActions", &report.setup_actions));
    }
    let origin = style.origin(app_id);
    // The SDK reads its identity from the query (Rust never trusts it: the mount table decides).
    let url = format!(
        "{origin}/{}?app={}&entry={}",
        ui_entry(&app),
        query_safe(&app.name),
        query_safe(entry_key)
    );
    table.insert(MountSpec {
        app_id: app.name.clone(),
        entry_key: entry_key.to_owned(),
        entry_kind: kind.to_owned(),
        version: app.version.clone(),
        package_hash: app.package_hash.clone(),
        manifest_hash: app.manifest_hash.clone(),
        origin,
        url,
        sandbox: FrameOptions::from_manifest(&app.manifest.data).sandbox_attribute(),
    })
}

/// Percent-encodes everything but unreserved characters.
fn query_safe(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
