//! Settings rows kept per app under `<prefix><app>/<item>` (no schema change): secret bindings
//! (`app-secret/`), knowledge bindings (`app-knowledge/`) and service network grants
//! (`app-network/`). The key of one item, an app's
//! rows in key order, and their removal inside the caller's transaction.

use rusqlite::{params, Connection};

use crate::foundation::error::HostResult;

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

/// Deletes every row of `app` (inside the caller's transaction).
pub(super) fn delete_all(tx: &Connection, prefix: &str, app: &str) -> HostResult<usize> {
    let (start, end) = key_range(prefix, app);
    Ok(tx.execute(
        "DELETE FROM settings WHERE key >= ?1 AND key < ?2",
        params![start, end],
    )?)
}
