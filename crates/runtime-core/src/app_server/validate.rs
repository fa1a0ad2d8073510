//! Checks on the free-form fields of `agentSession/start` (`workspaceId`, `locale`,
//! `businessObjectRef`) and `agentSession/update` (`title`): bounded size, no control characters. A refusal is `-32602` with
//! `data: {code: "appserver.invalid_field", field, maxBytes}` and never echoes the value;
//! nothing is recorded.

use serde_json::{json, Value};

use super::protocol::{codes, SessionStartParams, SessionUpdateParams};
use super::RpcError;

/// Bytes of a `workspaceId`.
pub const MAX_WORKSPACE_ID_BYTES: usize = 128;
/// Bytes of a `locale` (a BCP 47 tag: ASCII letters, digits, `-`, `_`).
pub const MAX_LOCALE_BYTES: usize = 35;
/// Bytes of a `businessObjectRef` as compact JSON (a string, or an object of strings, numbers,
/// booleans, ...).
pub const MAX_BUSINESS_OBJECT_REF_BYTES: usize = 1024;

fn invalid(field: &str, max: usize, why: &str) -> RpcError {
    let mut e = RpcError::new(
        codes::INVALID_PARAMS,
        format!("invalid params: {field} {why} (at most {max} bytes, no control characters)"),
    );
    e.data = Some(json!({"code": "appserver.invalid_field", "field": field, "maxBytes": max}));
    e
}

fn plain_text(s: &str) -> bool {
    !s.chars().any(char::is_control)
}

/// Bytes of a session `title` (`agentSession/update`).
pub const MAX_TITLE_BYTES: usize = 200;

/// Checks `agentSession/update`: something to change, a bounded plain-text title.
pub fn session_update(p: &SessionUpdateParams) -> Result<(), RpcError> {
    if p.title.is_none() && p.archived.is_none() {
        let mut e = RpcError::new(
            codes::INVALID_PARAMS,
            "invalid params: nothing to update (give title or archived)",
        );
        e.data = Some(json!({"code": "appserver.nothing_to_update"}));
        return Err(e);
    }
    if let Some(w) = &p.workspace_id {
        workspace_id(w)?;
    }
    if let Some(t) = &p.title {
        if t.len() > MAX_TITLE_BYTES {
            return Err(invalid("title", MAX_TITLE_BYTES, "is too long"));
        }
        if !plain_text(t) {
            return Err(invalid("title", MAX_TITLE_BYTES, "has control characters"));
        }
    }
    Ok(())
}

/// Checks every bounded field of `agentSession/start`.
pub fn session_start(p: &SessionStartParams) -> Result<(), RpcError> {
    if let Some(w) = &p.workspace_id {
        workspace_id(w)?;
    }
    if let Some(l) = &p.locale {
        locale(l)?;
    }
    if let Some(r) = &p.business_object_ref {
        business_object_ref(r)?;
    }
    Ok(())
}

pub fn workspace_id(w: &str) -> Result<(), RpcError> {
    const F: &str = "workspaceId";
    if w.is_empty() || w.len() > MAX_WORKSPACE_ID_BYTES {
        return Err(invalid(
            F,
            MAX_WORKSPACE_ID_BYTES,
            "must not be empty or too long",
        ));
    }
    if !plain_text(w) {
        return Err(invalid(F, MAX_WORKSPACE_ID_BYTES, "has control characters"));
    }
    Ok(())
}

pub fn locale(l: &str) -> Result<(), RpcError> {
    const F: &str = "locale";
    if l.is_empty() || l.len() > MAX_LOCALE_BYTES {
        return Err(invalid(
            F,
            MAX_LOCALE_BYTES,
            "must not be empty or too long",
        ));
    }
    if !l
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(invalid(F, MAX_LOCALE_BYTES, "is not a language tag"));
    }
    Ok(())
}

pub fn business_object_ref(r: &Value) -> Result<(), RpcError> {
    const F: &str = "businessObjectRef";
    let bytes = serde_json::to_vec(r).map(|v| v.len()).unwrap_or(usize::MAX);
    if bytes > MAX_BUSINESS_OBJECT_REF_BYTES || r.as_str().is_some_and(str::is_empty) {
        return Err(invalid(
            F,
            MAX_BUSINESS_OBJECT_REF_BYTES,
            "must not be empty or too long",
        ));
    }
    if !strings_are_plain(r) {
        return Err(invalid(
            F,
            MAX_BUSINESS_OBJECT_REF_BYTES,
            "has control characters",
        ));
    }
    Ok(())
}

/// Attachments a turn keeps at most.
pub const MAX_ATTACHMENTS: usize = 16;
/// Bytes of `input.attachments` together, and of `runtimeOptions.metadata`, as compact JSON.
pub const MAX_GIVEN_BYTES: usize = 16 * 1024;

/// Checks `agentSession/turn/start`'s `input.attachments` (at most [`MAX_ATTACHMENTS`] objects
/// with a non-empty string `kind`), `runtimeOptions.metadata` (at most [`MAX_GIVEN_BYTES`]) and
/// `runtimeOptions.capabilityId` (a capability `capability/list` offers, else `-32020`).
pub fn turn_given(
    attachments: Vec<Value>,
    capability_id: Option<String>,
    metadata: Option<Value>,
) -> Result<crate::event::facts::TurnGiven, RpcError> {
    let size = |v: &Value| serde_json::to_vec(v).map(|b| b.len()).unwrap_or(usize::MAX);
    if attachments.len() > MAX_ATTACHMENTS
        || attachments.iter().map(size).sum::<usize>() > MAX_GIVEN_BYTES
    {
        return Err(invalid(
            "input.attachments",
            MAX_GIVEN_BYTES,
            "too many or too large",
        ));
    }
    let shaped = |a: &Value| {
        a.get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| !k.is_empty() && k.len() <= 64)
    };
    if !attachments
        .iter()
        .all(|a| a.is_object() && shaped(a) && strings_are_plain(a))
    {
        return Err(invalid(
            "input.attachments",
            MAX_GIVEN_BYTES,
            "must be objects with a kind",
        ));
    }
    let metadata = metadata.filter(|m| !m.is_null());
    if let Some(m) = &metadata {
        if size(m) > MAX_GIVEN_BYTES || !strings_are_plain(m) {
            return Err(invalid(
                "runtimeOptions.metadata",
                MAX_GIVEN_BYTES,
                "is too large",
            ));
        }
    }
    if let Some(c) = &capability_id {
        let known = c == "agentSession"
            || c.strip_prefix("tool.")
                .is_some_and(|t| crate::tools::HostTools::specs().iter().any(|s| s.name == t));
        if !known {
            let shown: String = c.chars().take(64).collect();
            let mut e = RpcError::new(
                codes::CAPABILITY_DENIED,
                format!("Capability denied: {shown:?} is not offered by capability/list"),
            );
            e.data = Some(json!({"code": "appserver.capability_denied"}));
            return Err(e);
        }
    }
    Ok(crate::event::facts::TurnGiven {
        attachments,
        capability_id,
        metadata,
    })
}

/// Every string in `v` (object keys too) is free of control characters. `v` is at most
/// [`MAX_BUSINESS_OBJECT_REF_BYTES`] of JSON here, so the recursion is shallow.
fn strings_are_plain(v: &Value) -> bool {
    match v {
        Value::String(s) => plain_text(s),
        Value::Array(a) => a.iter().all(strings_are_plain),
        Value::Object(o) => o.iter().all(|(k, v)| plain_text(k) && strings_are_plain(v)),
        Value::Null | Value::Bool(_) | Value::Number(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(e: RpcError) -> String {
        assert_eq!(e.code, codes::INVALID_PARAMS);
        let d = e.data.unwrap();
        assert_eq!(d["code"], "appserver.invalid_field");
        d["field"].as_str().unwrap().to_owned()
    }

    #[test]
    fn accepts_ordinary_values() {
        workspace_id("local").unwrap();
        workspace_id("team/é projects").unwrap();
        locale("en-US").unwrap();
        locale("zh_Hans_CN").unwrap();
        business_object_ref(&json!("invoice:42")).unwrap();
        business_object_ref(&json!({"kind": "invoice", "id": 42})).unwrap();
    }

    #[test]
    fn refuses_oversized_empty_and_control_characters() {
        let big = "a".repeat(1 << 20);
        assert_eq!(field(workspace_id(&big).unwrap_err()), "workspaceId");
        assert_eq!(field(workspace_id("").unwrap_err()), "workspaceId");
        assert_eq!(field(workspace_id("a\nb").unwrap_err()), "workspaceId");
        assert_eq!(field(locale(&big).unwrap_err()), "locale");
        assert_eq!(field(locale("en US").unwrap_err()), "locale");
        assert_eq!(field(locale("en\u{7}").unwrap_err()), "locale");
        let r = business_object_ref;
        assert_eq!(field(r(&json!(big)).unwrap_err()), "businessObjectRef");
        assert_eq!(field(r(&json!("")).unwrap_err()), "businessObjectRef");
        assert_eq!(
            field(r(&json!({"k\u{0}": 1})).unwrap_err()),
            "businessObjectRef"
        );
        assert_eq!(
            field(r(&json!(["\u{1b}[2J"])).unwrap_err()),
            "businessObjectRef"
        );
    }
}
