//! The grants page: every declared permission of every installed app (or of one) with its
//! grant; grant and revoke through the store's own `grant`/`revoke` (audited; the capability
//! choke point reads grants on every call, so a revoke applies to the app's next call).

use serde::Serialize;

use super::detail::{permission_rows, PermissionRow};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;
use crate::install::store::Store;

/// `GrantRow` in `docs/host-api.md`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrantRow {
    pub app_id: String,
    #[serde(flatten)]
    pub permission: PermissionRow,
}

/// The grants of one app, or of every installed app (by app, in manifest order).
pub fn list_grants(dir: &DataDir, app: Option<&str>) -> HostResult<Vec<GrantRow>> {
    let store = Store::open(dir)?;
    let names = match app {
        Some(a) => vec![a.to_owned()],
        None => store.app_names()?,
    };
    let mut out = Vec::new();
    for name in names {
        for permission in permission_rows(&store, &name)? {
            out.push(GrantRow {
                app_id: name.clone(),
                permission,
            });
        }
    }
    Ok(out)
}

fn row(store: &Store, app: &str, scope: &str) -> HostResult<GrantRow> {
    permission_rows(store, app)?
        .into_iter()
        .find(|p| p.key == scope)
        .map(|permission| GrantRow {
            app_id: app.to_owned(),
            permission,
        })
        .ok_or_else(|| {
            HostError::new(
                ErrorCode::PermissionUnknown,
                format!("{app} does not declare a permission {scope}"),
            )
            .with("app", app)
            .with("permission", scope)
        })
}

/// Grants a permission the active version declares.
pub fn grant(dir: &DataDir, app: &str, scope: &str) -> HostResult<GrantRow> {
    let store = super::open_locked(dir)?;
    store.grant(app, scope)?;
    row(&store, app, scope)
}

/// Revokes a declared permission (`permission.unknown` if it is not declared; revoking a
/// permission that is not granted changes nothing).
pub fn revoke(dir: &DataDir, app: &str, scope: &str) -> HostResult<GrantRow> {
    let store = super::open_locked(dir)?;
    row(&store, app, scope)?;
    store.revoke(app, scope)?;
    row(&store, app, scope)
}
