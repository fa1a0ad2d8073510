//! The Agent App standard's call shapes (its Capability SDK examples), mapped onto the one
//! internal form each service validates.
//!
//! - `lime.artifacts.create({kind, title?, content, mimeType?})` and
//!   `create({type, data, title?, mimeType?})` → `{name, mimeType, text}`: the name is the
//!   `title`, else the `kind` / `type`; a string content is stored as its UTF-8 text
//!   (`text/plain` unless `mimeType` says otherwise), any other JSON value as its compact JSON
//!   (`application/json`).
//! - `lime.evidence.record({kind, message?, refs?})` → `{kind, summary: message, data: {refs}}`;
//!   `record({subject, sources?, kind?})` → `{kind: kind ?? "source", summary: subject (a
//!   string) or "", data: {subject, sources}}`.
//!
//! A call mixing two shapes (a field of the host's form with one of a standard form, or fields
//! of both standard forms) is refused with `<capability>.ambiguous_shape` (`APP_E900`): the host
//! never guesses which one wins. Every form stays a closed object.

use serde_json::{json, Map, Value};

use super::artifacts::{invalid, object};
use super::err;
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{Allowed, CallError};

/// `APP_E900` with `cause` (`artifacts.ambiguous_shape`, `evidence.ambiguous_shape`).
fn ambiguous(a: &Allowed, cause: &'static str, what: &str) -> CallError {
    err(
        a,
        ErrorCode::InvalidArgument,
        &format!("the arguments mix two call shapes ({what}); use one"),
        Some(cause),
    )
}

fn has_any(o: &Map<String, Value>, keys: &[&str]) -> bool {
    keys.iter().any(|k| o.contains_key(*k))
}

fn opt_string(a: &Allowed, o: &Map<String, Value>, key: &str) -> Result<Option<String>, CallError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid(a, &format!("args.{key} must be a string"))),
    }
}

fn req_string(a: &Allowed, o: &Map<String, Value>, key: &str) -> Result<String, CallError> {
    opt_string(a, o, key)?.ok_or_else(|| invalid(a, &format!("args.{key} is required")))
}

const ARTIFACT_HOST: &[&str] = &["name", "text", "base64"];
const ARTIFACT_KIND: &[&str] = &["kind", "content"];
const ARTIFACT_TYPE: &[&str] = &["type", "data"];

/// `lime.artifacts.create` arguments in the host's form (`args` itself when already in it).
pub(super) fn artifact_create(a: &Allowed, args: &Value) -> Result<Value, CallError> {
    let Value::Object(o) = args else {
        return Ok(args.clone());
    };
    let kind_form = has_any(o, ARTIFACT_KIND);
    let type_form = has_any(o, ARTIFACT_TYPE);
    let title = o.contains_key("title");
    if !kind_form && !type_form && !title {
        return Ok(args.clone());
    }
    let cause = "artifacts.ambiguous_shape";
    if has_any(o, ARTIFACT_HOST) {
        return Err(ambiguous(a, cause, "name/text/base64 with a standard form"));
    }
    if kind_form && type_form {
        return Err(ambiguous(a, cause, "{kind, content} with {type, data}"));
    }
    let (label_key, content_key) = if type_form {
        ("type", "data")
    } else {
        ("kind", "content")
    };
    let o = object(a, args, &[label_key, content_key, "title", "mimeType"])?;
    let label = req_string(a, o, label_key)?;
    let name = opt_string(a, o, "title")?.unwrap_or(label);
    let mime = opt_string(a, o, "mimeType")?;
    let (text, default_mime) = match o.get(content_key) {
        None | Some(Value::Null) => {
            return Err(invalid(a, &format!("args.{content_key} is required")))
        }
        Some(Value::String(s)) => (s.clone(), "text/plain"),
        Some(v) => (v.to_string(), "application/json"),
    };
    Ok(json!({
        "name": name,
        "mimeType": mime.unwrap_or_else(|| default_mime.to_owned()),
        "text": text,
    }))
}

const EVIDENCE_HOST: &[&str] = &["summary", "data", "artifactIds"];
const EVIDENCE_MESSAGE: &[&str] = &["message", "refs"];
const EVIDENCE_SUBJECT: &[&str] = &["subject", "sources"];

/// `lime.evidence.record` arguments in the host's form (`args` itself when already in it).
pub(super) fn evidence_record(a: &Allowed, args: &Value) -> Result<Value, CallError> {
    let Value::Object(o) = args else {
        return Ok(args.clone());
    };
    let message_form = has_any(o, EVIDENCE_MESSAGE);
    let subject_form = has_any(o, EVIDENCE_SUBJECT);
    if !message_form && !subject_form {
        return Ok(args.clone());
    }
    let cause = "evidence.ambiguous_shape";
    if has_any(o, EVIDENCE_HOST) {
        return Err(ambiguous(
            a,
            cause,
            "summary/data/artifactIds with a standard form",
        ));
    }
    if message_form && subject_form {
        return Err(ambiguous(
            a,
            cause,
            "{message, refs} with {subject, sources}",
        ));
    }
    if message_form {
        let o = object(a, args, &["kind", "message", "refs"])?;
        let kind = req_string(a, o, "kind")?;
        let summary = opt_string(a, o, "message")?.unwrap_or_default();
        let data = match o.get("refs") {
            None | Some(Value::Null) => Value::Null,
            Some(r @ Value::Array(_)) => json!({ "refs": r }),
            Some(_) => return Err(invalid(a, "args.refs must be an array")),
        };
        return Ok(json!({ "kind": kind, "summary": summary, "data": data }));
    }
    let o = object(a, args, &["kind", "subject", "sources"])?;
    let kind = opt_string(a, o, "kind")?.unwrap_or_else(|| "source".to_owned());
    let subject = o.get("subject").cloned().unwrap_or(Value::Null);
    if subject.is_null() {
        return Err(invalid(a, "args.subject is required"));
    }
    let sources = match o.get("sources") {
        None | Some(Value::Null) => Value::Array(Vec::new()),
        Some(s @ Value::Array(_)) => s.clone(),
        Some(_) => return Err(invalid(a, "args.sources must be an array")),
    };
    let summary = subject.as_str().unwrap_or("").to_owned();
    Ok(json!({
        "kind": kind,
        "summary": summary,
        "data": { "subject": subject, "sources": sources },
    }))
}
