//! Tool arguments kept once, behind a reference.
//!
//! A model may send megabytes of tool arguments, and several events mention the same call
//! (`tool.args`, `action.required`, the `tool.args` of an approval's `updatedInput`). Inline,
//! every such event would carry the whole value again. So, when the log appends a batch, the
//! `arguments` of `tool.args` and `action.required` whose compact JSON is over
//! [`ARGS_INLINE_LIMIT`] bytes are stored **once** in `arg_blobs` (content-addressed: the SHA-256
//! of those bytes) and the event carries a reference object instead:
//!
//! ```json
//! {"$argsRef": "sha256:<64 hex>", "size": 1048576, "preview": "<first 512 characters>"}
//! ```
//!
//! * `size` is the byte length of the stored JSON text, `preview` its first
//!   [`ARGS_PREVIEW_CHARS`] characters (a JSON fragment, for display only).
//! * The blob row (and the session's row in `arg_blob_refs`) is written in the **same
//!   transaction** as the first event that references it, and such events are never
//!   group-committed: whoever sees the event can resolve it (durability rule).
//! * An argument value that itself looks like a reference (an object with a `$argsRef` key),
//!   whatever its size, is also stored behind one, so every `$argsRef` in a stored event was
//!   written by the log, never by a model; resolution is one level deep.
//! * A reference resolves only for a session that recorded it (`arg_blob_refs`), and the
//!   bytes are re-hashed on every read. A malformed, unknown or corrupt reference is an
//!   [`ArgsRefError`] with a stable code, never a panic.
//! * Purging an app's sessions ([`purge_sessions`]) drops their `arg_blob_refs` rows and every
//!   blob no session references any more.

use rusqlite::{params, OptionalExtension, Transaction};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::event::EventBody;
use crate::ids::SessionId;

/// Arguments whose compact JSON is longer than this (bytes) are stored behind a reference.
pub const ARGS_INLINE_LIMIT: usize = 8 * 1024;
/// Characters of the stored JSON text a reference shows as its `preview`.
pub const ARGS_PREVIEW_CHARS: usize = 512;
/// The key that marks a reference object.
pub const ARGS_REF_KEY: &str = "$argsRef";

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS arg_blobs(
  hash TEXT PRIMARY KEY,
  size INTEGER NOT NULL,
  body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS arg_blob_refs(
  hash TEXT NOT NULL,
  session_id TEXT NOT NULL,
  PRIMARY KEY(hash, session_id)
) WITHOUT ROWID;
";

/// Why a reference could not be resolved (stable codes: [`ArgsRefError::code`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArgsRefError {
    #[error("args_ref.malformed: {0}")]
    Malformed(String),
    #[error("args_ref.missing: no stored arguments {0} for this session")]
    Missing(String),
    #[error("args_ref.corrupt: the stored arguments {0} do not match their hash")]
    Corrupt(String),
}

impl ArgsRefError {
    pub fn code(&self) -> &'static str {
        match self {
            ArgsRefError::Malformed(_) => "args_ref.malformed",
            ArgsRefError::Missing(_) => "args_ref.missing",
            ArgsRefError::Corrupt(_) => "args_ref.corrupt",
        }
    }
}

/// Arguments to store with the batch that references them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ArgsBlob {
    pub hash: String,
    pub body: String,
}

/// True when `v` is a reference object (has the `$argsRef` key).
pub fn is_args_ref(v: &Value) -> bool {
    v.as_object().is_some_and(|m| m.contains_key(ARGS_REF_KEY))
}

fn sha256_ref(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(7 + 64);
    s.push_str("sha256:");
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Replaces the large (or reference-shaped) arguments of `body` by a reference, pushing the
/// blob to store onto `out`. Other event types are left alone.
pub(crate) fn externalize(body: &mut EventBody, out: &mut Vec<ArgsBlob>) {
    let slot = match body {
        EventBody::ToolArgs(_, p) => &mut p.arguments,
        EventBody::ActionRequired(_, p) => &mut p.arguments,
        _ => return,
    };
    let Some(v) = slot.as_mut() else { return };
    let Ok(text) = serde_json::to_string(v) else {
        return;
    };
    if text.len() <= ARGS_INLINE_LIMIT && !is_args_ref(v) {
        return;
    }
    let hash = sha256_ref(text.as_bytes());
    let preview: String = text.chars().take(ARGS_PREVIEW_CHARS).collect();
    *v = json!({ARGS_REF_KEY: hash, "size": text.len(), "preview": preview});
    if !out.iter().any(|b| b.hash == hash) {
        out.push(ArgsBlob { hash, body: text });
    }
}

/// Writes `blobs` (once per content) and the session's references to them, inside the
/// transaction that appends the events naming them.
pub(crate) fn store(
    tx: &Transaction<'_>,
    session: &SessionId,
    blobs: &[ArgsBlob],
) -> rusqlite::Result<()> {
    if blobs.is_empty() {
        return Ok(());
    }
    let mut put =
        tx.prepare_cached("INSERT OR IGNORE INTO arg_blobs(hash, size, body) VALUES(?1, ?2, ?3)")?;
    let mut link =
        tx.prepare_cached("INSERT OR IGNORE INTO arg_blob_refs(hash, session_id) VALUES(?1, ?2)")?;
    for b in blobs {
        put.execute(params![b.hash, b.body.len() as i64, b.body])?;
        link.execute(params![b.hash, session.as_str()])?;
    }
    Ok(())
}

/// The `sha256:<hex>` of a reference object, checked.
fn parse_ref(v: &Value) -> Result<&str, ArgsRefError> {
    let hash = v
        .get(ARGS_REF_KEY)
        .and_then(Value::as_str)
        .ok_or_else(|| ArgsRefError::Malformed(format!("{ARGS_REF_KEY} must be a string")))?;
    let hex = hash.strip_prefix("sha256:").unwrap_or("");
    if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        let shown: String = hash.chars().take(80).collect();
        return Err(ArgsRefError::Malformed(format!(
            "{shown:?} is not sha256:<64 lowercase hex>"
        )));
    }
    Ok(hash)
}

/// `v` with its reference (if it is one) replaced by the stored arguments of `session`.
pub(crate) fn resolve(
    conn: &rusqlite::Connection,
    session: &SessionId,
    v: &Value,
) -> Result<Result<Value, ArgsRefError>, rusqlite::Error> {
    if !is_args_ref(v) {
        return Ok(Ok(v.clone()));
    }
    let hash = match parse_ref(v) {
        Ok(h) => h,
        Err(e) => return Ok(Err(e)),
    };
    if !has_tables(conn)? {
        return Ok(Err(ArgsRefError::Missing(hash.to_owned())));
    }
    let body: Option<String> = conn
        .prepare_cached(
            "SELECT b.body FROM arg_blobs b JOIN arg_blob_refs r ON r.hash = b.hash \
             WHERE b.hash = ?1 AND r.session_id = ?2",
        )?
        .query_row(params![hash, session.as_str()], |r| r.get(0))
        .optional()?;
    let Some(body) = body else {
        return Ok(Err(ArgsRefError::Missing(hash.to_owned())));
    };
    if sha256_ref(body.as_bytes()) != hash {
        return Ok(Err(ArgsRefError::Corrupt(hash.to_owned())));
    }
    Ok(serde_json::from_str(&body).map_err(|_| ArgsRefError::Corrupt(hash.to_owned())))
}

fn has_tables(conn: &rusqlite::Connection) -> rusqlite::Result<bool> {
    conn.prepare_cached(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'arg_blob_refs'",
    )?
    .exists([])
}

/// Drops `sessions`' references and every blob no session references any more (an app's
/// data purge; inside the purge's transaction). Returns how many blobs were removed.
pub fn purge_sessions(tx: &Transaction<'_>, sessions: &[String]) -> rusqlite::Result<usize> {
    if !has_tables(tx)? {
        return Ok(0);
    }
    for s in sessions {
        tx.execute("DELETE FROM arg_blob_refs WHERE session_id = ?1", [s])?;
    }
    tx.execute(
        "DELETE FROM arg_blobs WHERE hash NOT IN (SELECT hash FROM arg_blob_refs)",
        [],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{ActionRequired, EventType, ToolArgs};

    fn tool_args(v: Value) -> EventBody {
        EventBody::ToolArgs(
            EventType::ToolArgs,
            ToolArgs {
                arguments: Some(v),
                ..Default::default()
            },
        )
    }

    fn args_of(b: &EventBody) -> &Value {
        match b {
            EventBody::ToolArgs(_, p) => p.arguments.as_ref().unwrap(),
            EventBody::ActionRequired(_, p) => p.arguments.as_ref().unwrap(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn small_arguments_stay_inline_and_large_ones_become_one_blob() {
        let mut blobs = Vec::new();
        let mut small = tool_args(json!({"key": "x"}));
        externalize(&mut small, &mut blobs);
        assert_eq!(args_of(&small), &json!({"key": "x"}));
        assert!(blobs.is_empty());

        let big = json!({"value": "a".repeat(ARGS_INLINE_LIMIT)});
        let mut a = tool_args(big.clone());
        let mut b = EventBody::ActionRequired(
            EventType::ActionRequired,
            ActionRequired {
                arguments: Some(big.clone()),
                ..Default::default()
            },
        );
        externalize(&mut a, &mut blobs);
        externalize(&mut b, &mut blobs);
        assert_eq!(blobs.len(), 1, "same content, one blob");
        let r = args_of(&a);
        assert_eq!(r, args_of(&b));
        assert!(is_args_ref(r));
        assert_eq!(r["size"], json!(blobs[0].body.len()));
        assert_eq!(
            r["preview"].as_str().unwrap().chars().count(),
            ARGS_PREVIEW_CHARS
        );
        assert_eq!(serde_json::from_str::<Value>(&blobs[0].body).unwrap(), big);
        assert!(parse_ref(r).is_ok());
    }

    #[test]
    fn a_model_made_lookalike_reference_is_itself_stored_behind_a_real_one() {
        let fake = json!({ARGS_REF_KEY: format!("sha256:{}", "0".repeat(64))});
        let mut body = tool_args(fake.clone());
        let mut blobs = Vec::new();
        externalize(&mut body, &mut blobs);
        assert_eq!(blobs.len(), 1);
        assert_ne!(args_of(&body), &fake);
        assert_eq!(serde_json::from_str::<Value>(&blobs[0].body).unwrap(), fake);
    }

    #[test]
    fn malformed_references_are_refused_with_a_stable_code() {
        for bad in [
            json!({ARGS_REF_KEY: 7}),
            json!({ARGS_REF_KEY: "sha256:xyz"}),
            json!({ARGS_REF_KEY: format!("md5:{}", "0".repeat(64))}),
            json!({ARGS_REF_KEY: format!("sha256:{}", "A".repeat(64))}),
            json!({ARGS_REF_KEY: "é".repeat(100_000)}),
        ] {
            assert_eq!(parse_ref(&bad).unwrap_err().code(), "args_ref.malformed");
        }
    }
}
