//! `host.db`: AppHost's own state. App data never lives here (invariant: host core state and
//! app state never mix); each app's data is under `apps/<name>/`.

use runtime_core::sqlite::SqliteOpen;
use rusqlite::Connection;

use crate::foundation::error::{ErrorCode, HostError, HostResult};

pub const SCHEMA_VERSION: i64 = 4;

/// Version 1, as first released. A new database is created at version 1 and migrated like an
/// old one, so every migration runs on every fresh store (and in every test).
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

/// Whether `e` is SQLite's busy refusal (`SQLITE_BUSY` / `SQLITE_LOCKED` by result code, see
/// [`runtime_core::sqlite::is_busy`]) surfacing through a path where the connection's busy
/// handler is not asked (a journal-mode switch or schema creation racing another process that
/// opens the same new data directory).
pub fn is_busy(e: &HostError) -> bool {
    e.code == ErrorCode::StoreDb && e.is_sqlite_busy()
}

/// Opens `host.db`, creating or migrating its schema. Two processes opening a brand-new data
/// directory at once (the window or `apphost serve`, and `apphost dev`) may be refused as busy
/// without SQLite waiting: that is tried again for up to 10 s.
pub fn open(path: &std::path::Path) -> HostResult<Connection> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match open_once(path) {
            Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50))
            }
            other => return other,
        }
    }
}

fn open_once(path: &std::path::Path) -> HostResult<Connection> {
    let conn = SqliteOpen::host_store()
        .open(path)
        .map_err(|e| HostError::from_sqlite(&e, format!("cannot open {}: {e}", path.display())))?;
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    match version {
        0..SCHEMA_VERSION => {
            // BEGIN IMMEDIATE: another process may be creating or migrating it right now.
            let tx = rusqlite::Transaction::new_unchecked(
                &conn,
                rusqlite::TransactionBehavior::Immediate,
            )?;
            let mut at: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
            if at == 0 {
                tx.execute_batch(SCHEMA)?;
                at = 1;
            }
            if at == 1 {
                migrate_1_to_2(&tx)?;
                at = 2;
            }
            if at == 2 {
                migrate_2_to_3(&tx)?;
                at = 3;
            }
            if at == 3 {
                migrate_3_to_4(&tx)?;
                at = 4;
            }
            if at == SCHEMA_VERSION {
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

/// Version 2: publishers are identified by their full public key.
/// - `trusted_keys` is keyed by the public key (the short key id is display only, and two keys
///   may share one);
/// - `app_versions.public_key` records the full key that signed each version;
/// - `publishers` pins, per app name, the key that signed the active version. The pin outlives
///   `uninstall --keep-data`, so kept data is reattached only to the same publisher.
///
/// Existing rows are filled in from what the store already holds: a version's key comes from
/// the signature block kept in its stored manifest, else from the trusted key with its id.
fn migrate_1_to_2(tx: &rusqlite::Transaction) -> HostResult<()> {
    tx.execute_batch(
        r#"
CREATE TABLE trusted_keys_v2 (
    public_key TEXT PRIMARY KEY,
    key_id     TEXT NOT NULL,
    name       TEXT NOT NULL,
    added_at   TEXT NOT NULL
);
INSERT OR IGNORE INTO trusted_keys_v2 (public_key, key_id, name, added_at)
    SELECT public_key, key_id, name, added_at FROM trusted_keys;
DROP TABLE trusted_keys;
ALTER TABLE trusted_keys_v2 RENAME TO trusted_keys;
CREATE INDEX trusted_keys_id ON trusted_keys (key_id);
ALTER TABLE app_versions ADD COLUMN public_key TEXT;
CREATE TABLE publishers (
    app        TEXT PRIMARY KEY,
    key_id     TEXT,
    public_key TEXT,
    pinned_at  TEXT NOT NULL
);
"#,
    )?;
    let rows: Vec<(String, String, String, String)> = {
        let mut stmt = tx.prepare(
            "SELECT name, version, key_id, manifest_json FROM app_versions WHERE key_id IS NOT NULL",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    for (name, version, key_id, manifest_json) in rows {
        let embedded = serde_json::from_str::<serde_json::Value>(&manifest_json)
            .ok()
            .and_then(|m| {
                m.pointer("/signature/ed25519/publicKey")
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned)
            });
        let from_trusted = || -> HostResult<Option<String>> {
            let mut stmt = tx.prepare("SELECT public_key FROM trusted_keys WHERE key_id = ?1")?;
            let first = stmt
                .query_map([&key_id], |r| r.get::<_, String>(0))?
                .filter_map(Result::ok)
                .next();
            Ok(first)
        };
        let candidate = match embedded {
            Some(k) => Some(k),
            None => from_trusted()?,
        };
        // Only a key that really has this version's id is recorded.
        let key = candidate
            .and_then(|k| crate::install::signature::parse_public_key(&k).ok())
            .filter(|k| crate::install::signature::key_id(k) == key_id)
            .map(|k| crate::install::signature::encode_public_key(&k));
        tx.execute(
            "UPDATE app_versions SET public_key = ?3 WHERE name = ?1 AND version = ?2",
            rusqlite::params![name, version, key],
        )?;
    }
    // Pin the signer of every installed app's active version. A signed version whose full key
    // could not be found keeps its key id with no key: any update then counts as a change of
    // publisher (the id alone never proves identity).
    tx.execute_batch(
        "INSERT INTO publishers (app, key_id, public_key, pinned_at)
             SELECT a.name, v.key_id, v.public_key, a.updated_at
             FROM apps a JOIN app_versions v ON v.name = a.name AND v.version = a.active_version;",
    )?;
    Ok(())
}

/// Version 3: `storage_failures` records, per app version, why its storage migrations could
/// not be applied (readiness shows that version `blocked` with the reason). Keyed by version, so
/// an update or a rollback to another version is not blocked by it; removed with the version.
fn migrate_2_to_3(tx: &rusqlite::Transaction) -> HostResult<()> {
    tx.execute_batch(
        r#"
CREATE TABLE storage_failures (
    name      TEXT NOT NULL,
    version   TEXT NOT NULL,
    cause     TEXT NOT NULL,
    migration TEXT NOT NULL,
    message   TEXT NOT NULL,
    failed_at TEXT NOT NULL,
    PRIMARY KEY (name, version),
    FOREIGN KEY (name, version) REFERENCES app_versions (name, version) ON DELETE CASCADE
);
"#,
    )?;
    Ok(())
}

/// Version 4: `file_refs`, the `lime.files` refs (`store/file_refs.rs`): per app, an opaque
/// random ref for a file or folder the user chose; the path never leaves the host. A revoked
/// ref keeps its row with `revoked_at`; uninstall deletes the app's rows.
fn migrate_3_to_4(tx: &rusqlite::Transaction) -> HostResult<()> {
    tx.execute_batch(
        r#"
CREATE TABLE file_refs (
    ref          TEXT PRIMARY KEY,
    app          TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('file', 'folder')),
    path         TEXT NOT NULL,
    display_name TEXT NOT NULL,
    size         INTEGER NOT NULL,
    mtime        INTEGER NOT NULL,
    origin       TEXT NOT NULL CHECK (origin IN ('path', 'upload')),
    created_at   TEXT NOT NULL,
    revoked_at   TEXT
);
CREATE INDEX file_refs_app ON file_refs (app, revoked_at);
"#,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::params;

    /// A busy refusal is recognised by SQLite's result code, through `From<rusqlite::Error>`;
    /// a message that merely says "database is locked" is not.
    #[test]
    fn busy_is_recognised_by_result_code_not_text() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("host.db");
        let holder = open(&path).unwrap();
        holder.execute_batch("BEGIN EXCLUSIVE;").unwrap();
        let other = Connection::open(&path).unwrap();
        other.busy_timeout(std::time::Duration::ZERO).unwrap();
        let e: HostError = other
            .execute("DELETE FROM ops", [])
            .map(|_| ())
            .unwrap_err()
            .into();
        assert!(is_busy(&e), "{e:?}");
        let text = HostError::new(ErrorCode::StoreDb, "database is locked");
        assert!(!is_busy(&text));
        let syntax: HostError = other.execute_batch("NOT SQL").unwrap_err().into();
        assert!(!is_busy(&syntax));
    }

    /// A version-1 host.db opens, and its apps get their publisher pinned by full key: from the
    /// signature kept in the stored manifest, else from the trusted key with that id; a key that
    /// cannot be found is never guessed from the id.
    #[test]
    fn a_version_1_store_is_migrated_and_pins_publishers() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("host.db");
        let embedded = crate::install::signature::generate_key().unwrap();
        let by_id = crate::install::signature::generate_key().unwrap();
        let id =
            |k: &ed25519_dalek::SigningKey| crate::install::signature::key_id(&k.verifying_key());
        let pk = |k: &ed25519_dalek::SigningKey| {
            crate::install::signature::encode_public_key(&k.verifying_key())
        };
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(SCHEMA).unwrap();
            c.pragma_update(None, "user_version", 1).unwrap();
            c.execute(
                "INSERT INTO trusted_keys (key_id, public_key, name, added_at) VALUES (?1, ?2, 'ById', 't')",
                params![id(&by_id), pk(&by_id)],
            )
            .unwrap();
            let app = |name: &str, key_id: Option<String>, manifest: serde_json::Value| {
                c.execute(
                    "INSERT INTO apps (name, active_version, enabled, installed_at, updated_at) VALUES (?1, '1.0.0', 1, 't', 't')",
                    [name],
                )
                .unwrap();
                c.execute(
                    "INSERT INTO app_versions (name, version, package_hash, manifest_hash, files_digest, trust, key_id, sideloaded,
                         source_kind, source_uri, manifest_json, projection_json, file_count, total_bytes, installed_at)
                     VALUES (?1, '1.0.0', 'h', 'm', 'f', 'unknown-key', ?2, 1, 'folder', 'u', ?3, '{}', 0, 0, 't')",
                    params![name, key_id, manifest.to_string()],
                )
                .unwrap();
            };
            app(
                "embedded",
                Some(id(&embedded)),
                serde_json::json!({"signature": {"ed25519": {"publicKey": pk(&embedded)}}}),
            );
            app("by-id", Some(id(&by_id)), serde_json::json!({}));
            app(
                "lost",
                Some("ed25519:0123456789abcdef".into()),
                serde_json::json!({}),
            );
            app("unsigned", None, serde_json::json!({}));
        }
        let c = open(&path).unwrap();
        let v: i64 = c
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION);
        let pin = |app: &str| -> (Option<String>, Option<String>) {
            c.query_row(
                "SELECT key_id, public_key FROM publishers WHERE app = ?1",
                [app],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
        };
        assert_eq!(pin("embedded"), (Some(id(&embedded)), Some(pk(&embedded))));
        assert_eq!(pin("by-id"), (Some(id(&by_id)), Some(pk(&by_id))));
        assert_eq!(pin("lost"), (Some("ed25519:0123456789abcdef".into()), None));
        assert_eq!(pin("unsigned"), (None, None));
        let keys: i64 = c
            .query_row(
                "SELECT COUNT(*) FROM trusted_keys WHERE public_key = ?1 AND name = 'ById'",
                [pk(&by_id)],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(keys, 1);
        drop(c);
        // Opening again is a no-op.
        open(&path).unwrap();
    }
}
