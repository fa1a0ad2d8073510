//! The index database: `docs` (one row per indexed file: size, mtime, content hash, and the
//! rowid range of its chunks) and `fts` (FTS5, `unicode61`, BM25 ranked): one row per chunk,
//! the section title and text indexed, the document path, byte span and chunk hash stored
//! beside them (`UNINDEXED`), so a chunk is one row and a search reads no second table.
//! Opened with the `app_records` preset on a file prepared in the app area's `knowledge/`
//! directory; `user_version` names the layout (an index of another layout is rebuilt).

use rusqlite::{params, Connection, OptionalExtension};

use super::chunk::Chunk;
use super::KnowledgeError;

/// The layout's `user_version`.
pub(super) const LAYOUT: i64 = 2;

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS docs (
  path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
  hash TEXT NOT NULL, first_chunk INTEGER NOT NULL, last_chunk INTEGER NOT NULL,
  chunks INTEGER NOT NULL
) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5 (
  title, body, path UNINDEXED, start UNINDEXED, end UNINDEXED, hash UNINDEXED,
  tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
PRAGMA user_version = 2;
";

/// Drops every table of an index of another layout (derived data: the next run rebuilds it).
pub(super) const DROP: &str = "
DROP TABLE IF EXISTS docs; DROP TABLE IF EXISTS chunks; DROP TABLE IF EXISTS fts;
DROP TABLE IF EXISTS meta;
";

/// What the index holds of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DocRow {
    pub size: u64,
    pub mtime_ns: i64,
    pub hash: String,
}

pub(super) fn doc(conn: &Connection, path: &str) -> Result<Option<DocRow>, KnowledgeError> {
    Ok(conn
        .prepare_cached("SELECT size, mtime_ns, hash FROM docs WHERE path = ?1")?
        .query_row([path], |r| {
            Ok(DocRow {
                size: r.get::<_, i64>(0)? as u64,
                mtime_ns: r.get(1)?,
                hash: r.get(2)?,
            })
        })
        .optional()?)
}

pub(super) fn all_paths(conn: &Connection) -> Result<Vec<String>, KnowledgeError> {
    let mut stmt = conn.prepare("SELECT path FROM docs")?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub(super) fn touch(
    conn: &Connection,
    path: &str,
    size: u64,
    mtime_ns: i64,
) -> Result<(), KnowledgeError> {
    conn.execute(
        "UPDATE docs SET size = ?2, mtime_ns = ?3 WHERE path = ?1",
        params![path, size as i64, mtime_ns],
    )?;
    Ok(())
}

pub(super) fn remove(conn: &Connection, path: &str) -> Result<(), KnowledgeError> {
    let range: Option<(i64, i64)> = conn
        .prepare_cached("SELECT first_chunk, last_chunk FROM docs WHERE path = ?1")?
        .query_row([path], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    if let Some((first, last)) = range {
        conn.prepare_cached("DELETE FROM fts WHERE rowid BETWEEN ?1 AND ?2 AND path = ?3")?
            .execute(params![first, last, path])?;
    }
    conn.prepare_cached("DELETE FROM docs WHERE path = ?1")?
        .execute([path])?;
    Ok(())
}

pub(super) fn insert(
    conn: &Connection,
    path: &str,
    size: u64,
    mtime_ns: i64,
    hash: &str,
    chunks: &[Chunk],
    replacing: bool,
) -> Result<(), KnowledgeError> {
    if replacing {
        remove(conn, path)?;
    }
    let mut fts_stmt = conn.prepare_cached(
        "INSERT INTO fts (title, body, path, start, end, hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let (mut first, mut last) = (i64::MAX, 0);
    for c in chunks {
        fts_stmt.execute(params![
            c.section,
            c.text,
            path,
            c.start as i64,
            c.end as i64,
            super::hex_sha256(c.text.as_bytes(), 16)
        ])?;
        let id = conn.last_insert_rowid();
        first = first.min(id);
        last = last.max(id);
    }
    conn.prepare_cached(
        "INSERT INTO docs (path, size, mtime_ns, hash, first_chunk, last_chunk, chunks) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        path,
        size as i64,
        mtime_ns,
        hash,
        first,
        last,
        chunks.len() as i64
    ])?;
    Ok(())
}

pub(super) fn meta(conn: &Connection, key: &str) -> Result<Option<String>, KnowledgeError> {
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()?)
}

pub(super) fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<(), KnowledgeError> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )?;
    Ok(())
}

/// The search statement: BM25 with the title weighted twice the body; `score` is `-bm25`
/// (higher is better).
pub const SEARCH_SQL: &str = "SELECT path, title, start, end, \
     snippet(fts, 1, '[', ']', '…', 16), -bm25(fts, 2.0, 1.0) AS score \
     FROM fts WHERE fts MATCH ?1 ORDER BY bm25(fts, 2.0, 1.0) LIMIT ?2";
