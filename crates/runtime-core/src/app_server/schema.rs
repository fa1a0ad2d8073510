//! The published JSON Schemas, generated from the Rust wire types: `schemas/appserver/
//! appserver.v0.schema.json` (every method's params and result, the notification, the error
//! codes) and `schemas/runtime/read-model.schema.json` (what `agentSession/read` returns in
//! `detail`). `tests/schemas.rs` fails when the committed files drift from these.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{json, Map, Value};

use super::protocol::*;
use crate::event::*;
use crate::read_model::SessionReadModel;

fn generator() -> schemars::SchemaGenerator {
    SchemaSettings::draft2020_12().into_generator()
}

pub(super) fn sub<T: JsonSchema>(g: &mut schemars::SchemaGenerator) -> Value {
    serde_json::to_value(g.subschema_for::<T>()).expect("schemas serialize")
}

/// `(method, params schema, result schema)` from the method table; `None` params = no params;
/// `None` result = a notification.
fn methods(g: &mut schemars::SchemaGenerator) -> Vec<(&'static str, Option<Value>, Option<Value>)> {
    super::methods::TABLE
        .iter()
        .map(|m| (m.name, m.params.map(|f| f(g)), m.result.map(|f| f(g))))
        .collect()
}

/// The App Server protocol bundle.
pub fn appserver_schema() -> Value {
    let mut g = generator();
    let mut m = Map::new();
    for (name, params, result) in methods(&mut g) {
        let mut entry = Map::new();
        entry.insert("params".into(), params.unwrap_or(Value::Null));
        entry.insert("result".into(), result.unwrap_or(Value::Null));
        m.insert(name.into(), Value::Object(entry));
    }
    let defs = g.take_definitions(true);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://apphost.local/schemas/appserver/appserver.v0.schema.json",
        "title": "AppHost App Server appserver.v0",
        "description": "Generated from crates/runtime-core/src/app_server/protocol.rs. Each method's params and result are under x-methods; agentSession/event notifications carry {event} in the Lime profile envelope (agentruntime-lime-profile-event.schema.json).",
        "x-methods": m,
        "x-notifications": {"agentSession/event": {"params": {"type": "object", "required": ["event"], "properties": {"event": {"type": "object"}}}}},
        "x-errorCodes": codes::ALL,
        "$defs": defs,
    })
}

/// The read models (`agentSession/read` `detail`) and the typed event payloads.
pub fn runtime_schema() -> Value {
    let mut g = generator();
    let read_model = sub::<SessionReadModel>(&mut g);
    let mut payloads = Map::new();
    macro_rules! p {
        ($($t:ty => [$($k:literal),+]),* $(,)?) => {$(
            let s = sub::<$t>(&mut g);
            $(payloads.insert($k.into(), s.clone());)+
        )*};
    }
    p!(
        SessionPayload => ["session.created"], ThreadPayload => ["thread.started"],
        TurnSubmitted => ["turn.submitted"], TurnStarted => ["turn.started"],
        TurnCompleted => ["turn.completed"], TurnFailed => ["turn.failed"],
        QueueChanged => ["queue.changed"],
        TaskPayload => ["task.created", "task.started", "task.completed", "task.failed", "task.cancel_requested", "task.cancelled", "task.retrying"],
        TaskAttemptPayload => ["task.attempt.started", "task.attempt.completed", "task.attempt.failed"],
        ModelRequested => ["model.requested"], TextDelta => ["model.delta", "reasoning.delta"],
        ModelCompleted => ["model.completed"],
        Failure => ["model.failed", "tool.failed", "runtime.warning", "runtime.error"],
        ToolStarted => ["tool.started"], ToolArgs => ["tool.args"], ToolResult => ["tool.result"],
        OutputSpilled => ["output.spilled"], PermissionEvaluated => ["permission.evaluated"],
        ActionRequired => ["action.required"], ActionResolved => ["action.resolved"],
        ArtifactChanged => ["artifact.changed"], EvidenceChanged => ["evidence.changed"],
        Routing => ["routing.single_candidate"], SnapshotPayload => ["snapshot.repaired"],
    );
    let defs = g.take_definitions(true);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://apphost.local/schemas/runtime/read-model.schema.json",
        "title": "AppHost RuntimeCore read models and event payloads",
        "description": "Generated from crates/runtime-core/src/read_model and src/event/payload.rs. The root validates agentSession/read detail; x-payloads maps each emitted event type to its payload schema.",
        "allOf": [read_model],
        "x-payloads": payloads,
        "$defs": defs,
    })
}
