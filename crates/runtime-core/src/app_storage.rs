//! `lime.storage` key-value data: one SQLite file per app, in the app's own data area.
//!
//! The file is `apps/<app>/storage.sqlite`, never the host's database. Values are JSON. A quota
//! bounds the bytes of keys plus values (tracked in the same transaction as every write, so it is
//! exact, not estimated); a write that would exceed it fails with [`StorageError::QuotaExceeded`]
//! and changes nothing.
//!
//! The connection is hardened because migrations run SQL the app ships: `ATTACH` is impossible
//! (the attached-database limit is 0, so an app cannot open the host's database or another app's
//! file), `trusted_schema` is off and extensions cannot be loaded.

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use serde::Serialize;
use serde_json::Value;

/// The storage file name inside an app's data directory.
pub const STORAGE_FILE: &str = "storage.sqlite";
/// Default quota when neither the manifest nor the host sets one: 64 MiB.
pub const DEFAULT_QUOTA_BYTES: u64 = 64 * 1024 * 1024;
pub const MAX_KEY_BYTES: usize = 512;
pub const MAX_VALUE_BYTES: usize = 1024 * 1024;
pub const MAX_LIST_LIMIT: u32 = 1000;

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("storage quota exceeded: {used} + {adding} bytes > {quota} bytes")]
    QuotaExceeded { used: u64, adding: u64, quota: u64 },
    #[error("invalid key: {0}")]
    InvalidKey(&'static str),
    #[error("value too large: {0} bytes (at most {MAX_VALUE_BYTES})")]
    ValueTooLarge(usize),
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("storage database error: {0}")]
    Db(#[from] rusqlite::Error),
    #[error("storage i/o error on {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl StorageError {
    /// The standard's error code for the Host Bridge (`APP_E201` quota, `APP_E9xx` otherwise).
    pub fn app_code(&self) -> &'static str {
        match self {
            StorageError::QuotaExceeded { .. } => "APP_E201",
            StorageError::InvalidKey(_)
            | StorageError::ValueTooLarge(_)
            | StorageError::InvalidArgument(_) => "APP_E900",
            StorageError::Db(_) | StorageError::Io { .. } => "APP_E999",
        }
    }
}

/// One page of a listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPage {
    pub items: Vec<Item>,
    /// Pass as `cursor` to get the next page; `None` at the end.
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    pub key: String,
    pub value: Value,
}

/// An app's storage file, open.
pub struct AppStorage {
    conn: Connection,
    quota: u64,
    path: PathBuf,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS lime_kv (
    key        TEXT PRIMARY KEY NOT NULL,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lime_meta (
    name  TEXT PRIMARY KEY NOT NULL,
    value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT OR IGNORE INTO lime_meta (name, value) VALUES ('kv_bytes', 0);
";

impl AppStorage {
    /// Opens (creating if needed) the storage file in `app_dir`, the app's data directory.
    pub fn open(app_dir: &Path, quota: u64) -> Result<AppStorage, StorageError> {
        std::fs::create_dir_all(app_dir).map_err(|source| StorageError::Io {
            path: app_dir.to_owned(),
            source,
        })?;
        let path = app_dir.join(STORAGE_FILE);
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_NOFOLLOW,
        )?;
        harden(&conn)?;
        conn.execute_batch(SCHEMA)?;
        Ok(AppStorage { conn, quota, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn quota(&self) -> u64 {
        self.quota
    }

    /// Bytes of keys plus values stored.
    pub fn used(&self) -> Result<u64, StorageError> {
        Ok(self
            .conn
            .query_row(
                "SELECT value FROM lime_meta WHERE name = 'kv_bytes'",
                [],
                |r| r.get::<_, i64>(0),
            )?
            .max(0) as u64)
    }

    pub fn get(&self, key: &str) -> Result<Option<Value>, StorageError> {
        check_key(key)?;
        let text: Option<String> = self
            .conn
            .query_row("SELECT value FROM lime_kv WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()?;
        Ok(text.map(|t| serde_json::from_str(&t).unwrap_or(Value::String(t))))
    }

    /// Stores `value` under `key`. Fails with `QuotaExceeded`, changing nothing, when the new
    /// total would exceed the quota.
    pub fn set(&mut self, key: &str, value: &Value) -> Result<(), StorageError> {
        check_key(key)?;
        let text = serde_json::to_string(value)
            .map_err(|e| StorageError::InvalidArgument(e.to_string()))?;
        if text.len() > MAX_VALUE_BYTES {
            return Err(StorageError::ValueTooLarge(text.len()));
        }
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let old: Option<i64> = tx
            .query_row(
                "SELECT length(CAST(key AS BLOB)) + length(CAST(value AS BLOB)) FROM lime_kv WHERE key = ?1",
                [key],
                |r| r.get(0),
            )
            .optional()?;
        let used: i64 = tx.query_row(
            "SELECT value FROM lime_meta WHERE name = 'kv_bytes'",
            [],
            |r| r.get(0),
        )?;
        let new_size = (key.len() + text.len()) as i64;
        let after = used - old.unwrap_or(0) + new_size;
        if after as u64 > self.quota && new_size > old.unwrap_or(0) {
            return Err(StorageError::QuotaExceeded {
                used: used.max(0) as u64,
                adding: (new_size - old.unwrap_or(0)).max(0) as u64,
                quota: self.quota,
            });
        }
        tx.execute(
            "INSERT INTO lime_kv (key, value) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value,
                 updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
            params![key, text],
        )?;
        tx.execute(
            "UPDATE lime_meta SET value = ?1 WHERE name = 'kv_bytes'",
            [after],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Removes `key`; returns whether it existed.
    pub fn delete(&mut self, key: &str) -> Result<bool, StorageError> {
        check_key(key)?;
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let old: Option<i64> = tx
            .query_row(
                "SELECT length(CAST(key AS BLOB)) + length(CAST(value AS BLOB)) FROM lime_kv WHERE key = ?1",
                [key],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(size) = old {
            tx.execute("DELETE FROM lime_kv WHERE key = ?1", [key])?;
            tx.execute(
                "UPDATE lime_meta SET value = value - ?1 WHERE name = 'kv_bytes'",
                [size],
            )?;
        }
        tx.commit()?;
        Ok(old.is_some())
    }

    /// Keys starting with `prefix`, in byte order, after `cursor` (exclusive), at most `limit`.
    pub fn list(
        &self,
        prefix: &str,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<ListPage, StorageError> {
        if prefix.len() > MAX_KEY_BYTES {
            return Err(StorageError::InvalidKey("prefix longer than a key"));
        }
        if limit == 0 || limit > MAX_LIST_LIMIT {
            return Err(StorageError::InvalidArgument(format!(
                "limit must be 1..={MAX_LIST_LIMIT}"
            )));
        }
        let lower = match cursor {
            Some(c) if c.as_bytes() >= prefix.as_bytes() => c.to_owned(),
            _ => prefix.to_owned(),
        };
        let inclusive = cursor.is_none_or(|c| c.as_bytes() < prefix.as_bytes());
        let sql = if inclusive {
            "SELECT key, value FROM lime_kv WHERE CAST(key AS BLOB) >= CAST(?1 AS BLOB) ORDER BY CAST(key AS BLOB) LIMIT ?2"
        } else {
            "SELECT key, value FROM lime_kv WHERE CAST(key AS BLOB) > CAST(?1 AS BLOB) ORDER BY CAST(key AS BLOB) LIMIT ?2"
        };
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map(params![lower, i64::from(limit) + 1], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut items = Vec::new();
        let mut more = false;
        for row in rows {
            let (key, text) = row?;
            if !key.starts_with(prefix) {
                break;
            }
            if items.len() == limit as usize {
                more = true;
                break;
            }
            let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
            items.push(Item { key, value });
        }
        let next_cursor = if more {
            items.last().map(|i| i.key.clone())
        } else {
            None
        };
        Ok(ListPage { items, next_cursor })
    }

    /// The connection, for migrations (already hardened).
    pub fn connection(&mut self) -> &mut Connection {
        &mut self.conn
    }
}

/// No `ATTACH` (limit 0), no untrusted schema functions, defensive mode. Extension loading is
/// off (SQLite's default; rusqlite is built without `load_extension`).
fn harden(conn: &Connection) -> Result<(), StorageError> {
    conn.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_ATTACHED, 0)?;
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA,
        false,
    )?;
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(())
}

fn check_key(key: &str) -> Result<(), StorageError> {
    if key.is_empty() {
        return Err(StorageError::InvalidKey("empty"));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(StorageError::InvalidKey("longer than 512 bytes"));
    }
    if key.chars().any(char::is_control) {
        return Err(StorageError::InvalidKey("contains a control character"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn open(quota: u64) -> (tempfile::TempDir, AppStorage) {
        let tmp = tempfile::tempdir().unwrap();
        let s = AppStorage::open(&tmp.path().join("app"), quota).unwrap();
        (tmp, s)
    }

    #[test]
    fn round_trip_and_persistence() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("app");
        {
            let mut s = AppStorage::open(&dir, DEFAULT_QUOTA_BYTES).unwrap();
            s.set("note:1", &json!({"text": "hi"})).unwrap();
            s.set("note:1", &json!({"text": "hello"})).unwrap();
            assert_eq!(s.get("missing").unwrap(), None);
        }
        let mut s = AppStorage::open(&dir, DEFAULT_QUOTA_BYTES).unwrap();
        assert_eq!(s.get("note:1").unwrap(), Some(json!({"text": "hello"})));
        assert_eq!(
            s.used().unwrap(),
            ("note:1".len() + r#"{"text":"hello"}"#.len()) as u64
        );
        assert!(s.delete("note:1").unwrap());
        assert!(!s.delete("note:1").unwrap());
        assert_eq!(s.used().unwrap(), 0);
        assert!(dir.join(STORAGE_FILE).is_file());
    }

    #[test]
    fn quota_is_exact_and_a_refused_write_changes_nothing() {
        let (_t, mut s) = open(20);
        s.set("a", &json!("0123456789")).unwrap(); // 1 + 12 = 13 bytes
        let e = s.set("b", &json!("0123456789")).unwrap_err();
        assert!(matches!(e, StorageError::QuotaExceeded { .. }), "{e}");
        assert_eq!(e.app_code(), "APP_E201");
        assert_eq!(s.get("b").unwrap(), None);
        assert_eq!(s.used().unwrap(), 13);
        // Shrinking an existing value is always allowed, and frees space.
        s.set("a", &json!(1)).unwrap();
        assert_eq!(s.used().unwrap(), 2);
        s.set("b", &json!("0123456789")).unwrap();
    }

    #[test]
    fn listing_pages_by_prefix_in_byte_order() {
        let (_t, mut s) = open(DEFAULT_QUOTA_BYTES);
        for k in ["n:3", "n:1", "n:2", "o:1", "m:9", "n:10"] {
            s.set(k, &json!(k)).unwrap();
        }
        let p1 = s.list("n:", None, 2).unwrap();
        let keys: Vec<_> = p1.items.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(keys, ["n:1", "n:10"]);
        let p2 = s.list("n:", p1.next_cursor.as_deref(), 2).unwrap();
        let keys: Vec<_> = p2.items.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(keys, ["n:2", "n:3"]);
        assert_eq!(p2.next_cursor, None);
        assert_eq!(s.list("", None, 1000).unwrap().items.len(), 6);
        assert!(s.list("n:", None, 0).is_err());
    }

    #[test]
    fn bad_keys_and_values_are_refused() {
        let (_t, mut s) = open(DEFAULT_QUOTA_BYTES);
        assert!(matches!(
            s.set("", &json!(1)),
            Err(StorageError::InvalidKey(_))
        ));
        assert!(matches!(
            s.set(&"k".repeat(513), &json!(1)),
            Err(StorageError::InvalidKey(_))
        ));
        assert!(matches!(
            s.set("a\nb", &json!(1)),
            Err(StorageError::InvalidKey(_))
        ));
        assert!(matches!(
            s.set("big", &json!("x".repeat(MAX_VALUE_BYTES))),
            Err(StorageError::ValueTooLarge(_))
        ));
    }

    #[test]
    fn app_sql_cannot_attach_another_database() {
        let tmp = tempfile::tempdir().unwrap();
        let host_db = tmp.path().join("host.db");
        Connection::open(&host_db)
            .unwrap()
            .execute_batch("CREATE TABLE secrets (v TEXT); INSERT INTO secrets VALUES ('x');")
            .unwrap();
        let mut s = AppStorage::open(&tmp.path().join("app"), DEFAULT_QUOTA_BYTES).unwrap();
        let sql = format!("ATTACH DATABASE '{}' AS host;", host_db.display());
        assert!(s.connection().execute_batch(&sql).is_err());
        assert!(s
            .connection()
            .execute_batch("SELECT load_extension('/lib/x.so');")
            .is_err());
    }
}
