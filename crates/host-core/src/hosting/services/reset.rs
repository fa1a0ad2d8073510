//! `apphost services reset <app> <service> [--delete-data]`: clears a service's durable crash
//! and disk-quota record (host.db; audited `service.reset`) so a crash-looping or quota-stopped
//! service may start again in every process, and with `--delete-data` first empties its
//! writable directory (`apps/<app>/services/<key>/`, audited `service.data_deleted` with the
//! bytes freed): the readiness action of a service over its disk quota. A service of this
//! process is stopped first; a running host's is stopped by the CLI through its door.

use serde::Serialize;

use super::host::ServiceHost;
use super::id::ServiceId;
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;
use crate::install::store::Store;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResetOutcome {
    /// There was a crash or disk-quota record to clear.
    pub cleared: bool,
    /// `--delete-data`: the allocated bytes the directory held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freed_bytes: Option<u64>,
}

/// Resets `service` of the installed `app` (see the module doc).
pub fn reset(
    store: &Store,
    data: &DataDir,
    app: &str,
    service: &str,
    delete_data: bool,
) -> HostResult<ResetOutcome> {
    let active = store.active_app(app)?;
    if !active
        .manifest
        .view()
        .services()
        .any(|s| s.key() == Some(service))
        || !runtime_core::app_area::services::valid_key(service)
    {
        return Err(HostError::new(
            ErrorCode::ServiceNotDeclared,
            format!("{app} declares no service {service:?}"),
        )
        .with("app", app));
    }
    let id = ServiceId {
        app: app.to_owned(),
        key: service.to_owned(),
    };
    let here = ServiceHost::existing(data.root());
    if let Some(h) = &here {
        h.stop(&id, "reset");
    }
    let freed_bytes = if delete_data {
        Some(delete_service_data(store, data, &id, &active.version)?)
    } else {
        None
    };
    let cleared = match &here {
        Some(h) => h.reset(&id, "cli"),
        None => store.reset_service_health(app, service, "cli")?,
    };
    Ok(ResetOutcome {
        cleared,
        freed_bytes,
    })
}

/// Empties the service's directory (removed without following any link inside, then made
/// again through the app area); the bytes it held.
fn delete_service_data(
    store: &Store,
    data: &DataDir,
    id: &ServiceId,
    version: &str,
) -> HostResult<u64> {
    let io = |e: std::io::Error| {
        HostError::new(
            ErrorCode::Internal,
            format!("cannot delete the data of service {}: {e}", id.key),
        )
    };
    let root = data.apps_data().join(&id.app);
    let Some(area) = runtime_core::app_area::AppArea::open_existing(&root).map_err(io)? else {
        return Ok(0);
    };
    let dir = root.join("services").join(&id.key);
    let freed = service_sandbox::disk_usage::usage(&dir, Default::default())
        .map(|u| u.bytes)
        .unwrap_or(0);
    match std::fs::symlink_metadata(&dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(&dir).map_err(io)?,
        Ok(_) => std::fs::remove_file(&dir).map_err(io)?,
    }
    area.service_paths(&id.key).map_err(io)?;
    store.record_audit(
        "service.data_deleted",
        Some(&id.app),
        Some(version),
        &serde_json::json!({"service": id.key, "freedBytes": freed}),
    )?;
    Ok(freed)
}
