//! `host.db`: AppHost's own state. App data never lives here (invariant: host core state and
//! app state never mix); each app's data is under `apps/<name>/`.

use rusqlite::Connection;

use crate::error::{ErrorCode, HostError, HostResult};

pub const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = r#"
CREATE TABLE apps (
    name             TEXT PRIMARY KEY,
    active_version   TEXT NOT NULL,
    previous_version TEXT,
    enabled          INTEGER NOT NULL DEFAULT 1,
    installed_at     TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE TABLE app_versions (
    name            TEXT NOT NULL,
    version         TEXT NOT NULL,
    package_hash    TEXT NOT NULL,
    manifest_hash   TEXT NOT NULL,
    files_digest    TEXT NOT NULL,
    trust           TEXT NOT NULL CHECK (trust IN ('trusted', 'unknown-key', 'unsigned')),
    key_id          TEXT,
    sideloaded      INTEGER NOT NULL,
    source_kind     TEXT NOT NULL,
    source_uri      TEXT NOT NULL,
    manifest_json   TEXT NOT NULL,
    projection_json TEXT NOT NULL,
    file_count      INTEGER NOT NULL,
    total_bytes     INTEGER NOT NULL,
    installed_at    TEXT NOT NULL,
    PRIMARY KEY (name, version)
);
CREATE TABLE packs (
    id         TEXT PRIMARY KEY,
    size       INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE blobs (
    sha256 TEXT PRIMARY KEY,
    pack   TEXT NOT NULL REFERENCES packs (id),
    offset INTEGER NOT NULL,
    size   INTEGER NOT NULL
);
CREATE INDEX blobs_pack ON blobs (pack);
CREATE TABLE version_files (
    name    TEXT NOT NULL,
    version TEXT NOT NULL,
    path    TEXT NOT NULL,
    blob    TEXT NOT NULL REFERENCES blobs (sha256),
    size    INTEGER NOT NULL,
    PRIMARY KEY (name, version, path),
    FOREIGN KEY (name, version) REFERENCES app_versions (name, version) ON DELETE CASCADE
);
CREATE INDEX version_files_blob ON version_files (blob);
CREATE TABLE grants (
    app                 TEXT NOT NULL,
    permission          TEXT NOT NULL,
    granted_at          TEXT NOT NULL,
    granted_for_version TEXT NOT NULL,
    PRIMARY KEY (app, permission)
);
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE trusted_keys (
    key_id     TEXT PRIMARY KEY,
    public_key TEXT NOT NULL,
    name       TEXT NOT NULL,
    added_at   TEXT NOT NULL
);
CREATE TABLE audit_log (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    at      TEXT NOT NULL,
    action  TEXT NOT NULL,
    app     TEXT,
    version TEXT,
    details TEXT NOT NULL
);
CREATE TABLE ops (
    op_id        TEXT PRIMARY KEY,
    kind         TEXT NOT NULL,
    app          TEXT,
    committed_at TEXT NOT NULL
);
"#;

pub fn open(path: &std::path::Path) -> HostResult<Connection> {
    let conn = Connection::open(path).map_err(|e| {
        HostError::new(
            ErrorCode::StoreDb,
            format!("cannot open {}: {e}", path.display()),
        )
    })?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    match version {
        0 => {
            let tx = conn.unchecked_transaction()?;
            // Another process may have created it between our read and this write.
            let again: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
            if again == 0 {
                tx.execute_batch(SCHEMA)?;
                tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
            }
            tx.commit()?;
        }
        SCHEMA_VERSION => {}
        other => {
            return Err(HostError::new(
                ErrorCode::StoreSchemaMismatch,
                format!(
                    "{} has schema version {other}; this AppHost understands {SCHEMA_VERSION}",
                    path.display()
                ),
            ))
        }
    }
    Ok(conn)
}
