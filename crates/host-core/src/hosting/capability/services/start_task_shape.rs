//! The standard's `lime.agent.startTask` request fields beside the host's own (`input`,
//! `idempotencyKey`, `expectedOutput`, `sessionPolicy`, `options`).
//!
//! - `appId`, `entry` / `entryKey`: the caller may restate who it is; the values are checked
//!   against the mount's (re-derived here, never taken from the message): another app or entry
//!   is refused `APP_E002` `agent.app_mismatch` / `agent.entry_mismatch`.
//! - `taskKind` (1–128 characters), `context` / `metadata` (objects), `businessObjectRef` (a
//!   string or an object) and `capabilityHints` (an array): accepted business context; the task
//!   does not record them yet.
//! - `files`: the app's `lime.files` refs attached to the task (`attachments.rs`).
//! - `knowledge`: the knowledge templates the task may search (`services/knowledge.rs`
//!   `task_templates`: declared and bound, else refused; the task's turns get `knowledge_search`).
//! - `tools`: the app's declared and granted MCP tools (`<server>/<tool>`) the task's model may
//!   call (`agent_tool_refs.rs`; else refused, nothing created).
//! - `secrets` and `expectedOutput.artifactKind` /
//!   `expectedOutput.materializer`: bindings the host understands but cannot honour yet. A
//!   non-empty one is refused `APP_E001` with `agent.binding_unsupported` and
//!   `details: {binding}` naming it (the message names it too); an absent, `null` or empty one
//!   binds nothing and is accepted.
//! - `expectedOutput.outputFormat: {type: "json_schema", schema | schemaRef,
//!   maxValidationRetries?}` is the same as `expectedOutput.schema` / `schemaRef`; giving the
//!   schema both ways is refused (`agent.invalid_argument`).
//!
//! Any other field stays refused as unknown (`agent.invalid_argument`).

use serde_json::{Map, Value};

use super::args::invalid;
use super::err;
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{Allowed, CallError};

/// Every field `startTask` accepts.
pub(super) const START_TASK_FIELDS: &[&str] = &[
    "input",
    "idempotencyKey",
    "expectedOutput",
    "sessionPolicy",
    "options",
    "appId",
    "entry",
    "entryKey",
    "taskKind",
    "context",
    "metadata",
    "businessObjectRef",
    "capabilityHints",
    "knowledge",
    "tools",
    "files",
    "secrets",
    "budget",
];

/// The bindings a task request may name that this host cannot honour yet.
const BINDINGS: &[&str] = &["secrets"];

/// Longest `taskKind`.
const MAX_TASK_KIND: usize = 128;

/// `APP_E001` `agent.binding_unsupported` naming `binding`.
pub(super) fn binding_unsupported(a: &Allowed, binding: &str) -> CallError {
    let mut e = err(
        a,
        ErrorCode::CapabilityNotAvailable,
        &format!("binding {binding:?} is not supported by this host yet"),
        Some("agent.binding_unsupported"),
    );
    e.details = Some(Box::new(serde_json::json!({ "binding": binding })));
    e
}

fn binds_something(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Array(x)) => !x.is_empty(),
        Some(Value::Object(x)) => !x.is_empty(),
        Some(_) => true,
    }
}

fn mismatch(a: &Allowed, what: &str, cause: &'static str) -> CallError {
    err(
        a,
        ErrorCode::PermissionDenied,
        &format!("args.{what} names another {what} than the calling one"),
        Some(cause),
    )
}

/// Checks the standard's fields of a `startTask` request (`o` holds only [`START_TASK_FIELDS`]).
pub(super) fn check_standard_fields(a: &Allowed, o: &Map<String, Value>) -> Result<(), CallError> {
    let s = |key: &str| match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(v)) => Ok(Some(v.as_str())),
        Some(_) => Err(invalid(a, &format!("args.{key} must be a string"))),
    };
    if s("appId")?.is_some_and(|id| id != a.app()) {
        return Err(mismatch(a, "appId", "agent.app_mismatch"));
    }
    let entry = match (s("entry")?, s("entryKey")?) {
        (Some(x), Some(y)) if x != y => {
            return Err(invalid(a, "args.entry and args.entryKey differ"))
        }
        (x, y) => x.or(y),
    };
    if entry.is_some_and(|e| e != a.entry()) {
        return Err(mismatch(a, "entryKey", "agent.entry_mismatch"));
    }
    if s("taskKind")?.is_some_and(|k| k.is_empty() || k.chars().count() > MAX_TASK_KIND) {
        return Err(invalid(
            a,
            &format!("args.taskKind must be 1-{MAX_TASK_KIND} characters"),
        ));
    }
    for key in ["context", "metadata"] {
        if !matches!(o.get(key), None | Some(Value::Null | Value::Object(_))) {
            return Err(invalid(a, &format!("args.{key} must be an object")));
        }
    }
    if !matches!(
        o.get("businessObjectRef"),
        None | Some(Value::Null | Value::Object(_) | Value::String(_))
    ) {
        return Err(invalid(
            a,
            "args.businessObjectRef must be a string or an object",
        ));
    }
    if !matches!(
        o.get("capabilityHints"),
        None | Some(Value::Null | Value::Array(_))
    ) {
        return Err(invalid(a, "args.capabilityHints must be an array"));
    }
    if let Some(b) = BINDINGS.iter().find(|b| binds_something(o.get(**b))) {
        return Err(binding_unsupported(a, b));
    }
    Ok(())
}

/// Where `expectedOutput` takes its JSON Schema from.
pub(super) enum OutputSchema<'v> {
    Inline(&'v Value),
    Ref(&'v str),
}

fn unknown_field(a: &Allowed, in_what: &str, k: &str) -> CallError {
    let shown: String = k.chars().take(64).collect();
    invalid(a, &format!("unknown {in_what} field {shown:?}"))
}

/// The schema `expectedOutput` asks for: `schema`, `schemaRef` or the same inside
/// `outputFormat` (exactly one).
pub(super) fn expected_output<'v>(
    a: &Allowed,
    e: &'v Map<String, Value>,
) -> Result<OutputSchema<'v>, CallError> {
    const TOP: &[&str] = &[
        "schema",
        "schemaRef",
        "outputFormat",
        "artifactKind",
        "materializer",
    ];
    if let Some(k) = e.keys().find(|k| !TOP.contains(&k.as_str())) {
        return Err(unknown_field(a, "expectedOutput", k));
    }
    for b in ["artifactKind", "materializer"] {
        if binds_something(e.get(b)) {
            return Err(binding_unsupported(a, &format!("expectedOutput.{b}")));
        }
    }
    let mut found: Vec<(&str, &'v Value)> = Vec::new();
    for k in ["schema", "schemaRef"] {
        if let Some(v) = e.get(k) {
            found.push((k, v));
        }
    }
    match e.get("outputFormat") {
        None | Some(Value::Null) => {}
        Some(Value::Object(f)) => {
            const FORMAT: &[&str] = &["type", "schema", "schemaRef", "maxValidationRetries"];
            if let Some(k) = f.keys().find(|k| !FORMAT.contains(&k.as_str())) {
                return Err(unknown_field(a, "expectedOutput.outputFormat", k));
            }
            if !matches!(f.get("type"), None | Some(Value::Null))
                && f.get("type").and_then(Value::as_str) != Some("json_schema")
            {
                return Err(invalid(
                    a,
                    "expectedOutput.outputFormat.type must be \"json_schema\"",
                ));
            }
            if !matches!(f.get("maxValidationRetries"), None | Some(Value::Null))
                && f.get("maxValidationRetries")
                    .and_then(Value::as_u64)
                    .is_none_or(|n| n > 10)
            {
                return Err(invalid(
                    a,
                    "expectedOutput.outputFormat.maxValidationRetries must be 0-10",
                ));
            }
            for k in ["schema", "schemaRef"] {
                if let Some(v) = f.get(k) {
                    found.push((k, v));
                }
            }
        }
        Some(_) => return Err(invalid(a, "expectedOutput.outputFormat must be an object")),
    }
    match found.as_slice() {
        [("schema", s @ Value::Object(_))] => Ok(OutputSchema::Inline(s)),
        [("schemaRef", Value::String(r))] => Ok(OutputSchema::Ref(r)),
        _ => Err(invalid(
            a,
            "expectedOutput needs exactly one of schema (an object) or schemaRef (a package path)",
        )),
    }
}
