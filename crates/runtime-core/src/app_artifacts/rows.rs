//! Row mapping and keyset paging of the artifact database (shared with the evidence store).

use rusqlite::Connection;

use super::*;

pub(super) fn row_meta(r: &rusqlite::Row<'_>) -> rusqlite::Result<ArtifactMeta> {
    let prov: String = r.get(6)?;
    Ok(ArtifactMeta {
        id: r.get(0)?,
        name: r.get(1)?,
        mime_type: r.get(2)?,
        size: r.get::<_, i64>(3)?.max(0) as u64,
        sha256: r.get(4)?,
        created_at: r.get(5)?,
        provenance: serde_json::from_str(&prov).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(6, rusqlite::types::Type::Text, Box::new(e))
        })?,
    })
}

pub(super) fn meta(conn: &Connection, name: &str) -> Result<u64, rusqlite::Error> {
    Ok(conn
        .query_row("SELECT value FROM lime_meta WHERE name = ?1", [name], |r| {
            r.get::<_, i64>(0)
        })?
        .max(0) as u64)
}

/// Cursors are `c<seq>`, opaque to callers.
/// One keyset page from rows fetched with `LIMIT limit + 1` as `(item, seq)`: at most `limit`
/// items, and the cursor of the last one (`c<seq>`, read back by [`parse_cursor`]) when more follow.
pub(crate) fn seq_page<T>(
    rows: impl Iterator<Item = rusqlite::Result<(T, i64)>>,
    limit: u32,
) -> rusqlite::Result<(Vec<T>, Option<String>)> {
    let mut items = Vec::new();
    let mut last = None;
    for row in rows {
        let (item, seq) = row?;
        if items.len() == limit as usize {
            return Ok((items, last.map(|s| format!("c{s}"))));
        }
        items.push(item);
        last = Some(seq);
    }
    Ok((items, None))
}

pub(crate) fn parse_cursor(cursor: Option<&str>) -> Result<i64, ArtifactError> {
    match cursor {
        None => Ok(0),
        Some(c) => c
            .strip_prefix('c')
            .filter(|d| !d.is_empty() && d.len() <= 19 && d.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|d| d.parse::<i64>().ok())
            .ok_or_else(|| ArtifactError::InvalidArgument("unknown cursor".into())),
    }
}
