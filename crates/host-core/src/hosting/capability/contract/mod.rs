//! The typed contract of every implemented `lime.*` method: one argument and one result JSON
//! Schema per method, the single source of `schemas/capabilities/<namespace>.schema.json` and of
//! the SDK's `src/generated/capabilities.ts` (emitted by [`emit`], drift-tested by
//! `tests/capability_schemas.rs`, checked against real service answers there too).
//!
//! Each namespace keeps its rows in its own file (`storage.rs`, `artifacts.rs`, …) and is listed
//! once in [`NAMESPACES`]; a new namespace adds a file and one line there. Argument schemas accept
//! both the host's forms and the standard's object shapes where the host accepts both
//! (`services/shapes.rs`); result schemas describe what the service answers.

mod agent;
mod artifacts;
mod capabilities;
pub mod emit;
mod events;
mod evidence;
mod files;
mod knowledge;
mod model_settings;
mod policy;
mod secrets;
mod services;
mod storage;
mod tools;
mod ui;
mod workflow;
mod workspace;

use serde_json::{json, Map, Value};

/// One method's contract.
pub struct MethodContract {
    /// The method name (`get`, `tableQuery`, …).
    pub method: &'static str,
    /// One line for the schema and the TypeScript doc comment.
    pub doc: &'static str,
    /// The JSON Schema of `args`.
    pub args: Value,
    /// The JSON Schema of `host:response`'s `value`.
    pub result: Value,
}

/// One namespace's rows.
pub struct NamespaceContract {
    /// `lime.storage`, …
    pub capability: &'static str,
    pub rows: Vec<MethodContract>,
}

/// Every namespace this build serves, each from its own file.
pub const NAMESPACES: &[fn() -> NamespaceContract] = &[
    ui::contract,
    storage::contract,
    secrets::contract,
    events::contract,
    policy::contract,
    artifacts::contract,
    evidence::contract,
    agent::contract,
    files::contract,
    tools::contract,
    workflow::contract,
    knowledge::contract,
    model_settings::contract,
    capabilities::contract,
    workspace::contract,
    services::contract,
];

/// All namespaces' contracts, in [`NAMESPACES`] order.
pub fn all() -> Vec<NamespaceContract> {
    NAMESPACES.iter().map(|f| f()).collect()
}

/// The contract of `capability.method`, if the table has it.
pub fn find(capability: &str, method: &str) -> Option<MethodContract> {
    all()
        .into_iter()
        .find(|n| n.capability == capability)
        .and_then(|n| n.rows.into_iter().find(|r| r.method == method))
}

// ---- small schema builders shared by the namespace files ----

/// A closed object: `props` (name, schema), of which `required` must be present.
pub(crate) fn closed(props: &[(&str, Value)], required: &[&str]) -> Value {
    let mut o = object(props, required);
    o["additionalProperties"] = json!(false);
    o
}

/// An object with these properties that may carry more (results the host may extend).
pub(crate) fn object(props: &[(&str, Value)], required: &[&str]) -> Value {
    let mut p = Map::new();
    for (k, v) in props {
        p.insert((*k).to_owned(), v.clone());
    }
    json!({"type": "object", "properties": p, "required": required})
}

/// The same with a description.
pub(crate) fn described(mut schema: Value, doc: &str) -> Value {
    schema["description"] = json!(doc);
    schema
}

pub(crate) fn string() -> Value {
    json!({"type": "string"})
}
pub(crate) fn bounded(min: u64, max: u64) -> Value {
    json!({"type": "string", "minLength": min, "maxLength": max})
}
pub(crate) fn boolean() -> Value {
    json!({"type": "boolean"})
}
pub(crate) fn integer(min: i64, max: Option<i64>) -> Value {
    match max {
        Some(m) => json!({"type": "integer", "minimum": min, "maximum": m}),
        None => json!({"type": "integer", "minimum": min}),
    }
}
pub(crate) fn nullable(s: Value) -> Value {
    json!({"anyOf": [s, {"type": "null"}]})
}
pub(crate) fn array(items: Value) -> Value {
    json!({"type": "array", "items": items})
}
pub(crate) fn any() -> Value {
    json!({})
}
/// A JSON object of any members.
pub(crate) fn any_object() -> Value {
    json!({"type": "object"})
}
/// No arguments: absent, `null` or `{}`.
pub(crate) fn no_args() -> Value {
    json!({"anyOf": [{"type": "object", "additionalProperties": false}, {"type": "null"}]})
}
/// Documented alternatives (closed shapes, so a mix of two matches none).
pub(crate) fn one_of(alts: &[(&str, Value)]) -> Value {
    let alts: Vec<Value> = alts
        .iter()
        .map(|(doc, s)| described(s.clone(), doc))
        .collect();
    json!({"anyOf": alts})
}
/// `limit` of a listing: 1–1000.
pub(crate) fn limit() -> Value {
    integer(1, Some(1000))
}

pub(crate) fn row(
    method: &'static str,
    doc: &'static str,
    args: Value,
    result: Value,
) -> MethodContract {
    MethodContract {
        method,
        doc,
        args,
        result,
    }
}
