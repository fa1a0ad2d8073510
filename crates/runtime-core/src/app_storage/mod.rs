//! `lime.storage`: one SQLite file per app, in the app's own data area.
//!
//! The file is `apps/<app>/storage.sqlite`, never the host's database. It holds the key-value
//! data (`lime_kv`, values are JSON), the app's own tables (created by its migrations, reached
//! through [`tables`] on the tables its `storage/schema.json` declares) and the record of applied
//! migrations (`lime_migrations`, see [`migrate`]). Names starting with `lime_` are the host's.
//!
//! **Quota.** The quota bounds the whole database file: SQLite's `max_page_count` is set to
//! `quota / page_size`, so any statement (a key-value write, a table insert, a migration, a
//! trigger) that would grow the file past it fails with `SQLITE_FULL`, which rolls back its
//! transaction; that is reported as [`StorageError::QuotaExceeded`] (`APP_E201`) and changes
//! nothing. Space freed by deletes is reused. The WAL file is transient (checkpointed back into
//! the database every 1000 pages) and not counted.
//!
//! The agent's `files/` sub-area ([`crate::app_area::files`]) counts against the same quota: its
//! bytes are recorded in `lime_area` ([`AppStorage::account_files`], under the database's write
//! lock, recounted from disk on every write), and every call sets `max_page_count` to the quota
//! minus those bytes, so the database and `files/` together never pass it.
//!
//! **Hardening.** The connection is fenced because migrations run SQL the app ships
//! ([`guard`]): no `ATTACH` (also the attached-database limit is 0), no extension loading,
//! `trusted_schema` off, defensive mode, no pragma changes or transaction control from app SQL,
//! no access to `lime_*` from app SQL or from triggers and views, and a deadline on every
//! statement.

pub mod guard;
pub mod migrate;
pub mod tables;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::app_area::{AppArea, Db};
use crate::sqlite::{SqliteOpen, Synchronous};

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use serde_json::Value;

use guard::{Guard, Mode};
pub use migrate::{AppliedMigration, Migration, MigrationFailure};
pub use tables::{Query, TableDecl, MAX_QUERY_LIMIT};

/// The storage file name inside an app's data directory.
pub const STORAGE_FILE: &str = "storage.sqlite";
/// Default quota when the manifest sets none: 64 MiB.
pub const DEFAULT_QUOTA_BYTES: u64 = 64 * 1024 * 1024;
/// The most an app may ask for in its manifest (`storage.quota`): 1 GiB.
pub const MAX_QUOTA_BYTES: u64 = 1024 * 1024 * 1024;
/// The least quota an app gets (the host's own tables need a few pages): 64 KiB.
pub const MIN_QUOTA_BYTES: u64 = 64 * 1024;
pub const MAX_KEY_BYTES: usize = 512;
pub const MAX_VALUE_BYTES: usize = 1024 * 1024;
pub const MAX_LIST_LIMIT: u32 = 1000;
/// Time any one call from the app may take before its statement is interrupted.
pub const CALL_BUDGET: Duration = Duration::from_secs(2);

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("storage quota exceeded: the database uses {used} of {quota} bytes")]
    QuotaExceeded { used: u64, quota: u64 },
    #[error("invalid key: {0}")]
    InvalidKey(&'static str),
    #[error("value too large: {0} bytes (at most {MAX_VALUE_BYTES})")]
    ValueTooLarge(usize),
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A table the app's `storage/schema.json` does not declare, or a reserved one.
    #[error("table {0:?} is not declared in the app's storage schema")]
    UndeclaredTable(String),
    /// A declared table (or a column named in a call) that the database does not have.
    #[error("schema mismatch: {0}")]
    SchemaMismatch(String),
    /// A migration was refused or failed; nothing of the batch was applied.
    #[error("migration {id} {failure}: {message}")]
    Migration {
        id: String,
        failure: MigrationFailure,
        message: String,
    },
    /// A statement ran past its deadline and was interrupted (rolled back).
    #[error("storage call took longer than allowed and was stopped")]
    TimedOut,
    #[error("storage database error: {0}")]
    Db(#[from] rusqlite::Error),
    #[error("storage i/o error on {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl StorageError {
    /// The standard's error code for the Host Bridge: `APP_E201` quota, `APP_E202` a migration
    /// could not be applied, `APP_E203` the database does not match the declared schema,
    /// `APP_E900` bad arguments, `APP_E999` host failures.
    pub fn app_code(&self) -> &'static str {
        match self {
            StorageError::QuotaExceeded { .. } => "APP_E201",
            StorageError::Migration { .. } => "APP_E202",
            StorageError::SchemaMismatch(_) => "APP_E203",
            StorageError::InvalidKey(_)
            | StorageError::ValueTooLarge(_)
            | StorageError::InvalidArgument(_)
            | StorageError::UndeclaredTable(_) => "APP_E900",
            StorageError::TimedOut | StorageError::Db(_) | StorageError::Io { .. } => "APP_E999",
        }
    }

    /// A stable machine-readable cause (`storage.*`).
    pub fn cause(&self) -> &'static str {
        match self {
            StorageError::QuotaExceeded { .. } => "storage.quota_exceeded",
            StorageError::InvalidKey(_) => "storage.invalid_key",
            StorageError::ValueTooLarge(_) => "storage.value_too_large",
            StorageError::InvalidArgument(_) => "storage.invalid_argument",
            StorageError::UndeclaredTable(_) => "storage.undeclared_table",
            StorageError::SchemaMismatch(_) => "storage.schema_mismatch",
            StorageError::Migration { failure, .. } => failure.cause(),
            StorageError::TimedOut => "storage.timed_out",
            StorageError::Db(_) => "storage.db",
            StorageError::Io { .. } => "storage.io",
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
    guard: Guard,
    quota: u64,
    path: PathBuf,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS lime_kv (
    key        TEXT PRIMARY KEY NOT NULL,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lime_migrations (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    sha256      TEXT NOT NULL,
    app_version TEXT NOT NULL,
    applied_at  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS lime_area (
    name  TEXT PRIMARY KEY NOT NULL,
    value INTEGER NOT NULL
) WITHOUT ROWID;
";

impl AppStorage {
    /// Opens (creating if needed) the storage file in `app_dir`, the app's data directory, with
    /// `quota` bytes (clamped to [`MIN_QUOTA_BYTES`]..=[`MAX_QUOTA_BYTES`]).
    pub fn open(app_dir: &Path, quota: u64) -> Result<AppStorage, StorageError> {
        let area = AppArea::open(app_dir).map_err(|source| StorageError::Io {
            path: app_dir.to_owned(),
            source,
        })?;
        Self::open_in(&area, quota)
    }

    /// [`AppStorage::open`] on an open app data area.
    pub fn open_in(area: &AppArea, quota: u64) -> Result<AppStorage, StorageError> {
        let path = area
            .prepare_db(Db::Storage)
            .map_err(|source| StorageError::Io {
                path: area.db_path(Db::Storage),
                source,
            })?;
        // No `ATTACH`, no untrusted schema functions, defensive mode; extension loading is off
        // (SQLite's default; rusqlite is built without `load_extension`). The authorizer and
        // the deadline are installed by [`Guard::install`].
        let mut conn = SqliteOpen::app_records()
            .synchronous(Synchronous::Normal)
            .open(&path)?;
        let quota = quota.clamp(MIN_QUOTA_BYTES, MAX_QUOTA_BYTES);
        let page_size: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
        let pages = quota / page_size.max(512) as u64;
        conn.query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()))?;
        conn.execute_batch(SCHEMA)
            .map_err(|e| StorageError::from_sql(&conn, quota, e))?;
        let guard = Guard::install(&mut conn)?;
        let s = AppStorage {
            conn,
            guard,
            quota,
            path,
        };
        s.apply_page_limit()?;
        Ok(s)
    }

    /// Bytes the agent's `files/` sub-area holds, as last recorded.
    pub fn files_bytes(&self) -> Result<u64, StorageError> {
        let v: Option<i64> = self
            .conn
            .query_row(
                "SELECT value FROM lime_area WHERE name = 'files_bytes'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        Ok(v.unwrap_or(0).max(0) as u64)
    }

    /// `max_page_count` = (quota - the bytes of `files/`) / page size: the database may grow
    /// only into what `files/` leaves of the quota.
    fn apply_page_limit(&self) -> Result<(), StorageError> {
        let page_size: i64 = self
            .conn
            .pragma_query_value(None, "page_size", |r| r.get(0))?;
        let room = self.quota.saturating_sub(self.files_bytes()?);
        let pages = (room / page_size.max(512) as u64).max(1);
        self.conn
            .query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()))?;
        Ok(())
    }

    /// Runs a write to the `files/` sub-area under the database's write lock: `write` gets the
    /// bytes the quota leaves for `files/` (quota minus the database's own size) and returns the
    /// new byte total of `files/`, which is recorded. An error from `write` records nothing.
    pub fn account_files<T, E: From<StorageError>>(
        &mut self,
        write: impl FnOnce(u64) -> Result<(u64, T), E>,
    ) -> Result<T, E> {
        self.begin_call();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(StorageError::from)?;
        let room = self.quota.saturating_sub(used_bytes(&tx)?);
        let (total, out) = write(room)?;
        self.guard.set_deadline(CALL_BUDGET);
        tx.execute(
            "INSERT INTO lime_area (name, value) VALUES ('files_bytes', ?1)
             ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            [total.min(i64::MAX as u64) as i64],
        )
        .map_err(StorageError::from)?;
        tx.commit().map_err(StorageError::from)?;
        Ok(out)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn quota(&self) -> u64 {
        self.quota
    }

    /// Bytes the database file occupies (pages in use or free for reuse): what the quota bounds.
    pub fn used(&self) -> Result<u64, StorageError> {
        used_bytes(&self.conn)
    }

    /// Starts a call from the app: host SQL, under the per-call deadline.
    fn begin_call(&self) {
        self.guard.set_mode(Mode::Host);
        self.guard.set_deadline(CALL_BUDGET);
        // `files/` may have grown since the last call (the agent's tools write it).
        if let Err(e) = self.apply_page_limit() {
            tracing::warn!(error = %e, "cannot apply the storage page limit");
        }
    }

    fn sql_err(&self, e: rusqlite::Error) -> StorageError {
        StorageError::from_sql(&self.conn, self.quota, e)
    }

    pub fn get(&self, key: &str) -> Result<Option<Value>, StorageError> {
        check_key(key)?;
        self.begin_call();
        let text: Option<String> = self
            .conn
            .query_row("SELECT value FROM lime_kv WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.sql_err(e))?;
        Ok(text.map(|t| serde_json::from_str(&t).unwrap_or(Value::String(t))))
    }

    /// Stores `value` under `key`. Fails with `QuotaExceeded`, changing nothing, when the
    /// database would grow past the quota.
    pub fn set(&mut self, key: &str, value: &Value) -> Result<(), StorageError> {
        check_key(key)?;
        let text = serde_json::to_string(value)
            .map_err(|e| StorageError::InvalidArgument(e.to_string()))?;
        if text.len() > MAX_VALUE_BYTES {
            return Err(StorageError::ValueTooLarge(text.len()));
        }
        self.begin_call();
        let r = self.conn.execute(
            "INSERT INTO lime_kv (key, value) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value,
                 updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
            params![key, text],
        );
        r.map(|_| ()).map_err(|e| self.sql_err(e))
    }

    /// Removes `key`; returns whether it existed.
    pub fn delete(&mut self, key: &str) -> Result<bool, StorageError> {
        check_key(key)?;
        self.begin_call();
        let n = self
            .conn
            .execute("DELETE FROM lime_kv WHERE key = ?1", [key])
            .map_err(|e| self.sql_err(e))?;
        Ok(n > 0)
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
        self.begin_call();
        let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.sql_err(e))?;
        let rows = stmt
            .query_map(params![lower, i64::from(limit) + 1], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(|e| self.sql_err(e))?;
        let mut items = Vec::new();
        let mut more = false;
        for row in rows {
            let (key, text) = row.map_err(|e| self.sql_err(e))?;
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

    /// The connection, for tests that try hostile SQL on it (hardened, host mode).
    #[cfg(test)]
    pub(crate) fn connection(&mut self) -> &mut Connection {
        &mut self.conn
    }
}

impl StorageError {
    /// Classifies an SQLite error: `SQLITE_FULL` is the quota, an interrupt
    /// is the deadline.
    fn from_sql(conn: &Connection, quota: u64, e: rusqlite::Error) -> StorageError {
        use rusqlite::ErrorCode as C;
        match e.sqlite_error_code() {
            // The page limit is the quota. (A full disk is also SQLITE_FULL: either way the
            // app cannot store more here, and nothing was changed.)
            Some(C::DiskFull) => StorageError::QuotaExceeded {
                used: used_bytes(conn).unwrap_or(0),
                quota,
            },
            Some(C::OperationInterrupted) => StorageError::TimedOut,
            _ => StorageError::Db(e),
        }
    }
}

fn used_bytes(conn: &Connection) -> Result<u64, StorageError> {
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    Ok((pages.max(0) * size.max(0)) as u64)
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
        assert!(s.delete("note:1").unwrap());
        assert!(!s.delete("note:1").unwrap());
        assert!(dir.join(STORAGE_FILE).is_file());
    }

    /// The quota bounds the whole database file: a write that would grow it past the quota is
    /// APP_E201 and changes nothing; space freed by a delete is reused.
    #[test]
    fn quota_bounds_the_database_and_a_refused_write_changes_nothing() {
        let (_t, mut s) = open(MIN_QUOTA_BYTES);
        assert_eq!(s.quota(), MIN_QUOTA_BYTES);
        let chunk = json!("x".repeat(8 * 1024));
        let mut stored = 0;
        let err = loop {
            match s.set(&format!("k{stored}"), &chunk) {
                Ok(()) => stored += 1,
                Err(e) => break e,
            }
            assert!(stored < 100, "the quota never bit");
        };
        assert!(matches!(err, StorageError::QuotaExceeded { .. }), "{err}");
        assert_eq!(err.app_code(), "APP_E201");
        assert!(stored >= 2, "only {stored} values fit in 64 KiB");
        assert!(s.used().unwrap() <= MIN_QUOTA_BYTES);
        assert_eq!(s.get(&format!("k{stored}")).unwrap(), None);
        for i in 0..stored {
            assert_eq!(s.get(&format!("k{i}")).unwrap(), Some(chunk.clone()));
        }
        // Space a delete frees is reused.
        assert!(s.delete("k0").unwrap());
        s.set("again", &chunk).unwrap();
        // Quotas are clamped to the host's bounds.
        let (_t2, s2) = open(u64::MAX);
        assert_eq!(s2.quota(), MAX_QUOTA_BYTES);
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
