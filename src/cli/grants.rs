//! `apphost grants <app>`, `apphost grant <app> <permission>`, `apphost revoke <app> <permission>`:
//! the user's permission grants, as the capability choke point reads them on every call (a
//! revoke takes effect on the app's next call).

use serde_json::{json, Value};

use super::output;
use super::store_open::open_locked;
use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::foundation::paths::DataDir;
use host_core::install::store::Store;

/// Every permission the active version declares, and whether it is granted.
pub fn list(dir: &DataDir, app: &str, json: bool) -> HostResult<i32> {
    let store = Store::open(dir)?;
    let active = store.active_app(app)?;
    let rows: Vec<Value> = active
        .manifest
        .view()
        .permissions()
        .filter_map(|p| {
            let key = p.key()?;
            Some(json!({
                "permission": key,
                "scope": p.scope_raw().cloned().unwrap_or(Value::Null),
                "access": p.access_raw().cloned().unwrap_or(Value::Null),
                "required": p.required(),
                "granted": active.grants.contains(key),
                "reason": p.reason_raw().cloned().unwrap_or(Value::Null),
            }))
        })
        .collect();
    if json {
        output::print_json(&rows);
    } else if rows.is_empty() {
        out_line!("{app} declares no permissions");
    } else {
        for r in &rows {
            out_line!(
                "{:<24} {:<10} {:<8} {:<9} {}",
                r["permission"].as_str().unwrap_or(""),
                r["scope"].as_str().unwrap_or("-"),
                if r["required"] == true {
                    "required"
                } else {
                    "optional"
                },
                if r["granted"] == true { "granted" } else { "-" },
                r["reason"].as_str().unwrap_or("")
            );
        }
    }
    Ok(0)
}

pub fn grant(dir: &DataDir, app: &str, permission: &str, json: bool) -> HostResult<i32> {
    let store = open_locked(dir, json)?;
    store.grant(app, permission)?;
    report(json, app, permission, "granted", true);
    Ok(0)
}

pub fn revoke(dir: &DataDir, app: &str, permission: &str, json: bool) -> HostResult<i32> {
    let store = open_locked(dir, json)?;
    let declared = store
        .active_app(app)?
        .manifest
        .view()
        .permission(permission)
        .is_some();
    if !declared {
        return Err(HostError::new(
            ErrorCode::PermissionUnknown,
            format!("{app} does not declare a permission {permission}"),
        )
        .with("app", app)
        .with("permission", permission));
    }
    let was = store.revoke(app, permission)?;
    report(json, app, permission, "revoked", was);
    Ok(0)
}

fn report(json: bool, app: &str, permission: &str, verb: &str, changed: bool) {
    if json {
        output::print_json(&json!({"app": app, "permission": permission, verb: changed}));
    } else if changed {
        out_line!("{verb} {permission} for {app}");
    } else {
        out_line!("{permission} was not granted to {app}; nothing changed");
    }
}
