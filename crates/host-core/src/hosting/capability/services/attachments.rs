//! `lime.agent.startTask({files: [...]})`: the app's `lime.files` refs attached to a task. Each
//! item is a ref (`"fref_…"`) or `{ref, path}` (a file under a folder ref). The task's input
//! becomes `{"input": <the app's input>, "attachments": [{ref, path?, name, mimeType, size,
//! sha256, bytes, truncated, text}]}`: the text of each file (UTF-8, at most
//! [`MAX_ATTACHMENT_BYTES`] read; `truncated` says the file is longer), with its ref, name and
//! the SHA-256 of the bytes given to the model, so the task's recorded input (its events, the
//! Tasks page) names each attachment and never its path. Every read is audited (`files.read`
//! with `for: "agent.startTask"`).
//!
//! The app must declare `lime.files` (re-derived from the installed manifest the call was
//! allowed on: `APP_E002` `files.not_declared`); refs resolve as in `lime.files` (another app's
//! or a revoked ref: `files.ref_not_found`; a path: `files.path_not_allowed`; a link or special
//! file: `files.changed`; not UTF-8: `files.not_text`). At most [`MAX_ATTACHMENTS`] files.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::err;
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{Allowed, CallError};
use crate::hosting::user_files::access;
use crate::install::store::Store;

/// Most files one task may attach.
pub const MAX_ATTACHMENTS: usize = 8;
/// Most bytes of one attached file given to the task (the task's whole input stays within
/// RuntimeCore's `MAX_INPUT_BYTES`).
pub const MAX_ATTACHMENT_BYTES: u64 = 64 * 1024;

/// The task input with `files` attached (`None`: nothing attached, the input is unchanged).
pub(super) fn attach(
    store: &Store,
    a: &Allowed,
    files: Option<&Value>,
    input: &Value,
) -> Result<Option<String>, CallError> {
    let items = match files {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(v)) if v.is_empty() => return Ok(None),
        Some(Value::Object(m)) if m.is_empty() => return Ok(None),
        Some(Value::Array(v)) => v,
        Some(_) => return Err(bad(a, "args.files must be an array of file refs")),
    };
    if !a.manifest().view().requires().has_capability("lime.files") {
        return Err(err(
            a,
            ErrorCode::PermissionDenied,
            "the app does not declare lime.files, so it has no file refs to attach",
            Some("files.not_declared"),
        ));
    }
    if items.len() > MAX_ATTACHMENTS {
        return Err(bad(
            a,
            &format!("at most {MAX_ATTACHMENTS} files can be attached to a task"),
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let (handle, rel) = match item {
            Value::String(r) => (r.as_str(), None),
            Value::Object(o) if o.keys().all(|k| k == "ref" || k == "path") => (
                o.get("ref").and_then(Value::as_str).unwrap_or(""),
                o.get("path")
                    .and_then(Value::as_str)
                    .filter(|p| !p.is_empty()),
            ),
            _ => return Err(bad(a, "each of args.files is a ref or {ref, path}")),
        };
        let args = json!({ "ref": handle });
        let r = super::files::the_ref(store, a, args.as_object().expect("an object"))?;
        let f = access::open_file(&r, rel).map_err(|e| super::files::access_err(a, e))?;
        let bytes = access::read_range(&f, 0, MAX_ATTACHMENT_BYTES)
            .map_err(|e| super::files::access_err(a, e))?;
        let text = match std::str::from_utf8(&bytes) {
            Ok(t) => t.to_owned(),
            // A cut at the limit may split a character: keep the valid prefix.
            Err(e) if bytes.len() as u64 == MAX_ATTACHMENT_BYTES && e.error_len().is_none() => {
                String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned()
            }
            Err(_) => {
                return Err(err(
                    a,
                    ErrorCode::InvalidArgument,
                    "an attached file is not UTF-8 text",
                    Some("files.not_text"),
                ))
            }
        };
        let sha256 = hex::encode(Sha256::digest(text.as_bytes()));
        store
            .record_audit(
                "files.read",
                Some(a.app()),
                Some(a.version()),
                &json!({
                    "ref": r.handle, "path": rel, "offset": 0, "bytes": text.len(),
                    "for": "agent.startTask", "entryKey": a.entry(), "traceId": a.trace_id(),
                }),
            )
            .map_err(|e| {
                tracing::warn!(error = %e.message, "cannot audit an attachment read");
                let mut out = err(
                    a,
                    ErrorCode::UnknownError,
                    "the host could not record the read",
                    Some("files.read_failed"),
                );
                out.retryable = true;
                out
            })?;
        let name = if rel.is_some() {
            f.name.clone()
        } else {
            r.display_name.clone()
        };
        let mut v = json!({
            "ref": r.handle, "name": name, "mimeType": access::mime_guess(&name),
            "size": f.size, "sha256": sha256, "bytes": text.len(),
            "truncated": f.size > text.len() as u64, "text": text,
        });
        if let Some(p) = rel {
            v["path"] = json!(p);
        }
        out.push(v);
    }
    Ok(Some(
        json!({ "input": input, "attachments": out }).to_string(),
    ))
}

fn bad(a: &Allowed, message: &str) -> CallError {
    err(
        a,
        ErrorCode::InvalidArgument,
        message,
        Some("agent.invalid_argument"),
    )
}
