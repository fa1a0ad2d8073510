//! Settings rows kept per app under `<prefix><app>/<item>` (no schema change): secret bindings
//! (`app-secret/`), knowledge bindings (`app-knowledge/`), service network grants
//! (`app-network/`), remote service allowances (`app-remote/`) and service health
//! (`app-service-health/`). The key of one item, an app's rows in key order, one row's value,
//! an upsert, an audited removal of one row and the removal of all of an app's rows, each inside
//! the caller's transaction; and the prefixes the generic settings writer refuses
//! ([`RESERVED_PREFIXES`]), so that none of these rows is written but through its own audited
//! path.

use rusqlite::{params, Connection, OptionalExtension, Transaction};
use serde_json::Value;

use super::{audit, Store};
use crate::foundation::error::{ErrorCode, HostError, HostResult};

/// `lime.secrets` slot bindings (`secret_bindings`).
pub(super) const SECRET: &str = "app-secret/";
/// Knowledge template bindings (`knowledge_bindings`).
pub(super) const KNOWLEDGE: &str = "app-knowledge/";
/// Network grants of `remote-allowed` services (`network_grants`).
pub(super) const NETWORK: &str = "app-network/";
/// Allowances of `remote-http` services (`remote_grants`).
pub(super) const REMOTE: &str = "app-remote/";
/// The durable health of each backend service (`service_health_rows`).
pub(super) const SERVICE_HEALTH: &str = "app-service-health/";

/// Every settings key prefix the store writes only through its own audited paths: the per-app
/// rows above and the `apphost dev` marker rows ([`super::DEV_PREFIX`]).
/// [`Store::set_setting`](super::Store::set_setting) refuses a key under any of them
/// (`setting.reserved`).
pub const RESERVED_PREFIXES: [&str; 6] = [
    SECRET,
    KNOWLEDGE,
    NETWORK,
    REMOTE,
    SERVICE_HEALTH,
    super::DEV_PREFIX,
];

/// The reserved prefix `key` is under, if any.
pub fn reserved_prefix(key: &str) -> Option<&'static str> {
    RESERVED_PREFIXES.into_iter().find(|p| key.starts_with(p))
}

/// The settings key of `item` of `app`.
pub(super) fn key(prefix: &str, app: &str, item: &str) -> String {
    format!("{prefix}{app}/{item}")
}

/// `[start, end)` of the settings keys of `app` (`/` + 1 is `0`).
fn key_range(prefix: &str, app: &str) -> (String, String) {
    (format!("{prefix}{app}/"), format!("{prefix}{app}0"))
}

/// `app`'s rows as `(key, item, value)`, by item.
pub(super) fn rows(
    conn: &Connection,
    prefix: &str,
    app: &str,
) -> HostResult<Vec<(String, String, String)>> {
    let (start, end) = key_range(prefix, app);
    let mut stmt =
        conn.prepare("SELECT key, value FROM settings WHERE key >= ?1 AND key < ?2 ORDER BY key")?;
    let rows = stmt.query_map(params![start, end], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (key, value) = row?;
        let item = key[start.len()..].to_owned();
        out.push((key, item, value));
    }
    Ok(out)
}

/// `app`'s rows as `(item, value)`, by item.
pub(super) fn items(
    conn: &Connection,
    prefix: &str,
    app: &str,
) -> HostResult<Vec<(String, String)>> {
    Ok(rows(conn, prefix, app)?
        .into_iter()
        .map(|(_, item, value)| (item, value))
        .collect())
}

/// The value of `item` of `app`, if it has a row.
pub(super) fn value(
    conn: &Connection,
    prefix: &str,
    app: &str,
    item: &str,
) -> HostResult<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT value FROM settings WHERE key = ?1",
            [key(prefix, app, item)],
            |r| r.get::<_, String>(0),
        )
        .optional()?)
}

/// Writes (or replaces) the row of `item` of `app` (inside the caller's transaction).
pub(super) fn put(
    tx: &Connection,
    prefix: &str,
    app: &str,
    item: &str,
    value: &str,
) -> HostResult<()> {
    tx.execute(
        "INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![key(prefix, app, item), value],
    )?;
    Ok(())
}

/// Deletes the row of `item` of `app` and, when there was one, audits `action` (of `app` at
/// `version`, with `details`), then commits `tx`: both or neither. Whether there was a row.
pub(super) fn delete_audited(
    tx: Transaction<'_>,
    prefix: &str,
    app: &str,
    item: &str,
    action: &str,
    version: Option<&str>,
    details: &Value,
) -> HostResult<bool> {
    let n = tx.execute(
        "DELETE FROM settings WHERE key = ?1",
        [key(prefix, app, item)],
    )?;
    if n > 0 {
        audit(&tx, action, Some(app), version, details)?;
    }
    tx.commit()?;
    Ok(n > 0)
}

/// Deletes every row of `app` (inside the caller's transaction).
pub(super) fn delete_all(tx: &Connection, prefix: &str, app: &str) -> HostResult<usize> {
    let (start, end) = key_range(prefix, app);
    Ok(tx.execute(
        "DELETE FROM settings WHERE key >= ?1 AND key < ?2",
        params![start, end],
    )?)
}

/// `service` as a row item: a valid service key, else `service.not_declared`.
pub(super) fn require_service_key(service: &str) -> HostResult<()> {
    if runtime_core::app_area::services::valid_key(service) {
        Ok(())
    } else {
        Err(HostError::new(
            ErrorCode::ServiceNotDeclared,
            format!("{service:?} is not a service name"),
        ))
    }
}

impl Store {
    /// Removes the row of `service` of `app` under `prefix` (a network grant, a remote
    /// allowance) under the store lock, audited `action` with `{"service"}`; `false` if there
    /// was none.
    pub(super) fn revoke_service_row(
        &self,
        prefix: &str,
        action: &str,
        app: &str,
        version: Option<&str>,
        service: &str,
    ) -> HostResult<bool> {
        self.require_lock()?;
        delete_audited(
            self.conn.unchecked_transaction()?,
            prefix,
            app,
            service,
            action,
            version,
            &serde_json::json!({ "service": service }),
        )
    }
}
