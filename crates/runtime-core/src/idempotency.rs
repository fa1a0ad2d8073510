//! Idempotency keys of an app's record writes (`lime.artifacts.create`, `lime.evidence.record`).
//!
//! A caller (a workflow step re-issued after a crash, a frame retrying) passes the same key for
//! the same intended write; the store remembers `key -> (id, fingerprint)` in a table of the
//! same database, written in the same transaction as the row it names. A write whose key is
//! known returns the row it created then (no second row); the same key with different content
//! (another fingerprint) is refused (`*.idempotency_conflict`) and writes nothing. Keys are per
//! app (each app has its own databases) and per store (an artifact key says nothing about
//! evidence).

use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};

/// The table, created with each store's schema.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS lime_idempotency (
    key         TEXT PRIMARY KEY NOT NULL,
    id          TEXT NOT NULL,
    fingerprint TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS lime_idempotency_by_id ON lime_idempotency (id);
";

/// Longest key (bytes).
pub const MAX_KEY_BYTES: usize = 256;

/// Whether `key` is a usable key: 1..=256 bytes of printable ASCII.
pub fn valid_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_KEY_BYTES && key.bytes().all(|b| (0x20..0x7f).contains(&b))
}

/// A fingerprint of a write's content: the SHA-256 of its parts, each length-prefixed.
pub fn fingerprint(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    crate::app_artifacts::hex(&h.finalize())
}

/// What a key is known for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Known {
    /// Not seen: write, and [`remember`] it in the same transaction.
    New,
    /// Seen with the same content: the id written then.
    Same(String),
    /// Seen with other content.
    Conflict,
}

/// What `key` is known for, given the new write's `fingerprint`.
pub fn lookup(conn: &Connection, key: &str, fingerprint: &str) -> rusqlite::Result<Known> {
    let row: Option<(String, String)> = conn
        .query_row(
            "SELECT id, fingerprint FROM lime_idempotency WHERE key = ?1",
            [key],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    Ok(match row {
        None => Known::New,
        Some((id, f)) if f == fingerprint => Known::Same(id),
        Some(_) => Known::Conflict,
    })
}

/// Records `key -> id` (inside the transaction that writes `id`).
pub fn remember(conn: &Connection, key: &str, id: &str, fingerprint: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO lime_idempotency (key, id, fingerprint) VALUES (?1, ?2, ?3)",
        params![key, id, fingerprint],
    )?;
    Ok(())
}

/// Forgets the keys of a removed row (inside the transaction that removes `id`).
pub fn forget_id(conn: &Connection, id: &str) -> rusqlite::Result<()> {
    conn.execute("DELETE FROM lime_idempotency WHERE id = ?1", [id])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_bounded_printable_ascii() {
        assert!(valid_key("wf:r1:draft:1:1"));
        assert!(!valid_key(""));
        assert!(!valid_key(&"k".repeat(MAX_KEY_BYTES + 1)));
        assert!(!valid_key("a\nb"));
        assert!(!valid_key("ключ"));
    }

    #[test]
    fn a_key_is_new_then_same_then_conflicting_and_forgotten_with_its_row() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        let f = fingerprint(&[b"a", b"bc"]);
        assert_ne!(f, fingerprint(&[b"ab", b"c"]), "parts are length-prefixed");
        assert_eq!(lookup(&conn, "k", &f).unwrap(), Known::New);
        remember(&conn, "k", "id1", &f).unwrap();
        assert_eq!(lookup(&conn, "k", &f).unwrap(), Known::Same("id1".into()));
        assert_eq!(lookup(&conn, "k", "other").unwrap(), Known::Conflict);
        assert!(remember(&conn, "k", "id2", &f).is_err(), "one row per key");
        forget_id(&conn, "id1").unwrap();
        assert_eq!(lookup(&conn, "k", &f).unwrap(), Known::New);
    }
}
