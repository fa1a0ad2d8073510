//! `lime.files`: documents the user chose for this app, by opaque refs (`fref_…`, kept per app
//! in `host.db`: `store/file_refs.rs`). The app never sees a path: `list` answers its refs with
//! name, kind, size and a MIME type guessed from the name; `readRef` reads a file ref (or a file
//! under a folder ref, by a relative `path`) at most [`MAX_READ_BYTES`] at a time, with
//! `offset`/`length` ranges for larger files; `stat` and `listFolder` describe without reading.
//! Everything is reached through `hosting::user_files::access` (from `/`, `O_NOFOLLOW`, confined
//! to the grant). Every read is audited (`files.read`: ref, relative path, offset, bytes) before
//! its content is answered.
//!
//! Stable causes: `files.ref_not_found` (APP_E904; unknown, revoked and other apps' refs
//! alike), `files.path_not_allowed` (APP_E900; a path or URL handed in as a ref, or a relative
//! path leaving its folder), `files.path_not_found` (APP_E904), `files.too_large` (APP_E900),
//! `files.changed` (APP_E002; now a link, a special file or a hard-linked file under a folder),
//! `files.wrong_kind`, `files.not_text`, `files.invalid_argument` (APP_E900),
//! `files.read_failed` (APP_E999, retryable; the host's message is not shown).

use base64::Engine as _;
use serde_json::{json, Map, Value};

use super::args::{invalid, object, opt_str, req_str};
use super::err;
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{Allowed, CallError};
use crate::hosting::capability::method::FilesMethod;
use crate::hosting::user_files::access::{self, AccessError};
use crate::install::store::{FileRef, FileRefKind, Store};

/// Most bytes one `readRef` answers (before encoding): 4 MiB. A larger file is read in ranges.
pub const MAX_READ_BYTES: u64 = 4 * 1024 * 1024;

/// What `requestFiles` asks the user for (shown by the host's picker).
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PickRequest {
    /// More than one file may be chosen.
    pub multiple: bool,
    /// A folder is asked for instead of files.
    pub folder: bool,
    /// File name suffixes or MIME types the app would like (`.md`, `text/plain`): a hint
    /// shown to the user, never enforced on what they choose.
    pub accept: Vec<String>,
}

/// Most `accept` items, and the longest one.
const MAX_ACCEPT: usize = 16;
const MAX_ACCEPT_CHARS: usize = 64;

pub(super) fn call_with(
    store: &Store,
    a: &Allowed,
    method: FilesMethod,
    args: &Value,
) -> Result<super::Reply, CallError> {
    if method == FilesMethod::RequestFiles {
        let o = object(a, args, &["multiple", "folder", "accept"])?;
        let flag = |k: &str| match o.get(k) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(invalid(a, &format!("args.{k} must be true or false"))),
        };
        let accept = match o.get("accept") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(v)) if v.len() <= MAX_ACCEPT => v
                .iter()
                .map(|x| {
                    x.as_str()
                        .filter(|s| {
                            !s.is_empty()
                                && s.chars().count() <= MAX_ACCEPT_CHARS
                                && !s.chars().any(char::is_control)
                        })
                        .map(str::to_owned)
                        .ok_or_else(|| invalid(a, "args.accept items are short strings"))
                })
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(invalid(
                    a,
                    &format!("args.accept must be an array of at most {MAX_ACCEPT} strings"),
                ))
            }
        };
        return Ok(super::Reply {
            value: Value::Null,
            effect: Some(super::Effect::PickFiles(PickRequest {
                multiple: flag("multiple")?,
                folder: flag("folder")?,
                accept,
            })),
        });
    }
    call(store, a, method, args).map(super::Reply::value)
}

pub(super) fn call(
    store: &Store,
    a: &Allowed,
    method: FilesMethod,
    args: &Value,
) -> Result<Value, CallError> {
    match method {
        FilesMethod::RequestFiles => Err(invalid(a, "requestFiles asks the user (call_with)")),
        FilesMethod::List => {
            object(a, args, &[])?;
            let refs = store.file_refs(a.app()).map_err(|e| host_failure(a, &e))?;
            let refs: Vec<Value> = refs.iter().map(describe).collect();
            Ok(json!({ "refs": refs }))
        }
        FilesMethod::Stat => {
            let o = object(a, args, &["ref", "path"])?;
            let r = the_ref(store, a, o)?;
            match rel_path(a, o)? {
                None if r.kind == FileRefKind::Folder => Ok(describe(&r)),
                rel => {
                    let f = access::open_file(&r, rel).map_err(|e| access_err(a, e))?;
                    Ok(file_meta(&r, rel, &f))
                }
            }
        }
        FilesMethod::ListFolder => {
            let o = object(a, args, &["ref", "path"])?;
            let r = the_ref(store, a, o)?;
            let rel = rel_path(a, o)?;
            let listing = access::list_folder(&r, rel).map_err(|e| access_err(a, e))?;
            let entries: Vec<Value> = listing
                .entries
                .iter()
                .map(|c| {
                    let mut v = json!({ "name": c.name, "kind": c.kind, "mtime": c.mtime });
                    if c.kind == "file" {
                        v["size"] = json!(c.size);
                        v["mimeType"] = json!(access::mime_guess(&c.name));
                    }
                    v
                })
                .collect();
            Ok(json!({
                "ref": r.handle, "path": rel.unwrap_or(""), "entries": entries,
                "skipped": listing.skipped, "truncated": listing.truncated,
            }))
        }
        FilesMethod::ReadRef => read_ref(store, a, args),
    }
}

fn read_ref(store: &Store, a: &Allowed, args: &Value) -> Result<Value, CallError> {
    let o = object(a, args, &["ref", "path", "offset", "length", "encoding"])?;
    let text = match opt_str(a, o, "encoding")? {
        None | Some("base64") => false,
        Some("text") => true,
        Some(_) => return Err(invalid(a, "args.encoding must be \"base64\" or \"text\"")),
    };
    let offset = opt_u64(a, o, "offset")?.unwrap_or(0);
    let length = opt_u64(a, o, "length")?;
    if let Some(n) = length {
        if n > MAX_READ_BYTES {
            return Err(too_large(a, n, None));
        }
    }
    let r = the_ref(store, a, o)?;
    let rel = rel_path(a, o)?;
    let f = access::open_file(&r, rel).map_err(|e| access_err(a, e))?;
    let rest = f.size.saturating_sub(offset);
    let length = match length {
        Some(n) => n,
        None if rest > MAX_READ_BYTES => return Err(too_large(a, rest, Some(f.size))),
        None => rest,
    };
    let bytes = access::read_range(&f, offset, length).map_err(|e| access_err(a, e))?;
    let eof = offset.saturating_add(bytes.len() as u64) >= f.size;
    let audit = json!({
        "ref": r.handle, "path": rel, "offset": offset, "bytes": bytes.len(),
        "entryKey": a.entry(), "traceId": a.trace_id(),
    });
    store
        .record_audit("files.read", Some(a.app()), Some(a.version()), &audit)
        .map_err(|e| host_failure(a, &e))?;
    let returned = bytes.len();
    let content = if text {
        String::from_utf8(bytes).map_err(|_| {
            let mut e = invalid(
                a,
                "the bytes are not UTF-8 text (or the range splits a character); read them as base64",
            );
            e.cause_code = Some("files.not_text");
            e
        })?
    } else {
        base64::engine::general_purpose::STANDARD.encode(&bytes)
    };
    let mut v = file_meta(&r, rel, &f);
    v["offset"] = json!(offset);
    v["length"] = json!(returned);
    v["eof"] = json!(eof);
    v["encoding"] = json!(if text { "text" } else { "base64" });
    v["content"] = Value::String(content);
    Ok(v)
}

/// The ref named by `args.ref`, live and the calling app's.
pub(super) fn the_ref(
    store: &Store,
    a: &Allowed,
    o: &Map<String, Value>,
) -> Result<FileRef, CallError> {
    let handle = req_str(a, o, "ref")?;
    if !crate::install::store::file_refs::is_ref_shape(handle) && looks_like_path(handle) {
        return Err(err(
            a,
            ErrorCode::InvalidArgument,
            "args.ref must be a ref the host gave this app, never a path or URL",
            Some("files.path_not_allowed"),
        ));
    }
    match store.file_ref(a.app(), handle) {
        Ok(Some(r)) => Ok(r),
        Ok(None) => Err(ref_not_found(a)),
        Err(e) => Err(host_failure(a, &e)),
    }
}

/// A path or URL rather than a ref (`/etc/passwd`, `file:///…`, `~/x`, `C:\x`, `../x`).
fn looks_like_path(s: &str) -> bool {
    s.contains('/')
        || s.contains('\\')
        || s.starts_with('~')
        || s.starts_with('.')
        || s.contains(':')
}

fn ref_not_found(a: &Allowed) -> CallError {
    err(
        a,
        ErrorCode::NotFound,
        "this app has no such file ref (it may have been revoked)",
        Some("files.ref_not_found"),
    )
}

fn rel_path<'v>(a: &Allowed, o: &'v Map<String, Value>) -> Result<Option<&'v str>, CallError> {
    Ok(opt_str(a, o, "path")?.filter(|p| !p.is_empty()))
}

fn opt_u64(a: &Allowed, o: &Map<String, Value>, key: &str) -> Result<Option<u64>, CallError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| invalid(a, &format!("args.{key} must be a whole number ≥ 0"))),
    }
}

fn too_large(a: &Allowed, n: u64, size: Option<u64>) -> CallError {
    let mut e = err(
        a,
        ErrorCode::InvalidArgument,
        &format!(
            "{n} bytes asked; one read answers at most {MAX_READ_BYTES}: read in ranges (offset, length)"
        ),
        Some("files.too_large"),
    );
    let mut d = json!({ "limit": MAX_READ_BYTES });
    if let Some(s) = size {
        d["size"] = json!(s);
    }
    e.details = Some(Box::new(d));
    e
}

fn host_failure(a: &Allowed, e: &crate::foundation::error::HostError) -> CallError {
    tracing::warn!(error = %e.message, "lime.files failed");
    let mut out = err(
        a,
        ErrorCode::UnknownError,
        "the host could not read its file refs",
        Some("files.read_failed"),
    );
    out.retryable = true;
    out
}

pub(super) fn access_err(a: &Allowed, e: AccessError) -> CallError {
    match e {
        AccessError::PathNotAllowed(why) => err(
            a,
            ErrorCode::InvalidArgument,
            why,
            Some("files.path_not_allowed"),
        ),
        AccessError::NotFound => err(
            a,
            ErrorCode::NotFound,
            "nothing is at this place any more",
            Some("files.path_not_found"),
        ),
        AccessError::Changed(why) => {
            err(a, ErrorCode::PermissionDenied, why, Some("files.changed"))
        }
        AccessError::WrongKind(why) => {
            err(a, ErrorCode::InvalidArgument, why, Some("files.wrong_kind"))
        }
        AccessError::Io(msg) => {
            tracing::warn!(error = %msg, "lime.files read failed");
            let mut out = err(
                a,
                ErrorCode::UnknownError,
                "the file could not be read",
                Some("files.read_failed"),
            );
            out.retryable = true;
            out
        }
    }
}

/// A ref as the app sees it: no path.
pub fn describe(r: &FileRef) -> Value {
    let mut v = json!({
        "ref": r.handle, "name": r.display_name, "kind": r.kind.as_str(),
        "mtime": r.mtime, "grantedAt": r.created_at,
    });
    if r.kind == FileRefKind::File {
        v["size"] = json!(r.size);
        v["mimeType"] = json!(access::mime_guess(&r.display_name));
    }
    v
}

fn file_meta(r: &FileRef, rel: Option<&str>, f: &access::OpenFile) -> Value {
    let name = if rel.is_some() {
        f.name.as_str()
    } else {
        r.display_name.as_str()
    };
    let mut v = json!({
        "ref": r.handle, "name": name, "kind": "file", "size": f.size, "mtime": f.mtime,
        "mimeType": access::mime_guess(name),
    });
    if let Some(p) = rel {
        v["path"] = json!(p);
    }
    v
}
