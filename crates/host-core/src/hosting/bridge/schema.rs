//! Generates the Host Bridge v1 schemas and the SDK's TypeScript types from [`super::wire`]:
//!
//! - `schemas/bridge/app-to-host.schema.json`: every message a frame may send (one `oneOf`
//!   branch per `type`, closed envelope, closed payloads), with `examples`;
//! - `schemas/bridge/host-to-app.schema.json`: every message the host posts to a frame;
//! - `bridge-sdk/src/generated/bridge.ts`: the same types for TypeScript, emitted from those two
//!   schemas by [`typescript`] (one direction only: Rust → schema → TS).
//!
//! `tests/bridge_schemas.rs` fails when the committed files differ from what this produces.

use schemars::generate::SchemaSettings;
use schemars::generate::{Contract, SchemaGenerator};
use schemars::JsonSchema;
use serde_json::{json, Map, Value};

use super::message::{MAX_MESSAGE_BYTES, PROTOCOL, VERSION};
use super::wire::*;
use crate::foundation::typescript::{declarations, join, ts_type};

/// Where each generated file lives, relative to the repository root.
pub const APP_TO_HOST_PATH: &str = "schemas/bridge/app-to-host.schema.json";
pub const HOST_TO_APP_PATH: &str = "schemas/bridge/host-to-app.schema.json";
pub const TYPESCRIPT_PATH: &str = "bridge-sdk/src/generated/bridge.ts";
/// How to regenerate them (printed by the drift test).
pub const REGENERATE: &str = "APPHOST_BLESS=1 cargo test -p host-core --test bridge_schemas";

/// `requestId` on a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestIdRule {
    Required,
    Optional,
}

/// One message type of one direction.
pub struct MessageSpec {
    pub kind: &'static str,
    pub doc: &'static str,
    pub request_id: RequestIdRule,
    /// The payload must be present (its schema has required fields); otherwise it may be
    /// absent or `null`.
    pub payload_required: bool,
    payload: fn(&mut SchemaGenerator) -> Value,
}

fn sub<T: JsonSchema>(g: &mut SchemaGenerator) -> Value {
    serde_json::to_value(g.subschema_for::<T>()).expect("schemas serialize")
}
fn any(_: &mut SchemaGenerator) -> Value {
    json!({})
}

macro_rules! spec {
    ($kind:literal, $t:ty, $rid:ident, $req:literal, $doc:literal) => {
        MessageSpec {
            kind: $kind,
            doc: $doc,
            request_id: RequestIdRule::$rid,
            payload_required: $req,
            payload: sub::<$t>,
        }
    };
}

/// What an app frame may send, in the decoder's vocabulary.
pub fn app_messages() -> Vec<MessageSpec> {
    vec![
        spec!("app:ready", EmptyPayload, Optional, false, "Initialisation finished; answered by `host:snapshot`."),
        spec!("host:getSnapshot", EmptyPayload, Optional, false, "Pull the current snapshot; answered by `host:snapshot`."),
        spec!("host:navigate", NavigatePayload, Optional, true, "Navigate to one of the app's own routes; `host:response` or `host:error`."),
        spec!("host:toast", ToastPayload, Optional, true, "A non-technical notification; no answer."),
        spec!("host:openExternal", OpenExternalPayload, Optional, true, "Open an http(s) URL after the user confirms."),
        spec!("host:download", DownloadPayload, Required, true, "Save an artifact of the app's own, or bytes, into the user's download folder after the user confirms; `host:response` `{saved, fileName?}` or `host:error`."),
        spec!("capability:invoke", InvokePayload, Required, true, "Call a `lime.*` method: zero or more `host:event`, then one `host:response` or `host:error`."),
        spec!("capability:cancel", CancelPayload, Optional, true, "Cancel the frame's own pending call (AppHost extension)."),
    ]
}

/// What the host posts to a frame.
pub fn host_messages() -> Vec<MessageSpec> {
    vec![
        spec!("host:snapshot", HostSnapshot, Optional, true, "The frame's context; echoes the `requestId` of `app:ready` / `host:getSnapshot`."),
        spec!("theme:update", ThemeSnapshot, Optional, true, "The theme changed."),
        spec!("host:visibility", VisibilityPayload, Optional, true, "The frame was shown or hidden."),
        spec!("ui:launch", UiLaunchPayload, Optional, true, "The host opened this frame for a route, a command entry or an artifact (AppHost extension; queued until `app:ready`)."),
        spec!("host:response", ResponsePayload, Optional, true, "A call succeeded (same `requestId`)."),
        spec!("host:error", ErrorPayload, Optional, true, "A call failed (same `requestId`)."),
        MessageSpec {
            kind: "host:event",
            doc: "A progress event of a pending call (same `requestId`), or an app event delivered to a `lime.events` subscription.",
            request_id: RequestIdRule::Optional,
            payload_required: true,
            payload: any,
        },
    ]
}

fn generator(contract: Contract) -> SchemaGenerator {
    let mut s = SchemaSettings::draft2020_12();
    s.contract = contract;
    s.into_generator()
}

fn bundle(
    file: &str,
    title: &str,
    description: &str,
    specs: &[MessageSpec],
    mut g: SchemaGenerator,
    examples: Vec<Value>,
    results: fn(&mut SchemaGenerator) -> Value,
) -> Value {
    let request_id = sub::<RequestId>(&mut g);
    let results = results(&mut g);
    let mut branches = Vec::new();
    for s in specs {
        let payload = (s.payload)(&mut g);
        let mut required = vec!["protocol", "version", "type", "appId", "entryKey"];
        if s.request_id == RequestIdRule::Required {
            required.push("requestId");
        }
        let payload = if s.payload_required {
            required.push("payload");
            payload
        } else {
            json!({"anyOf": [payload, {"type": "null"}]})
        };
        branches.push(json!({
            "title": s.kind,
            "description": s.doc,
            "type": "object",
            "additionalProperties": false,
            "required": required,
            "properties": {
                "protocol": {"const": PROTOCOL},
                "version": {"const": VERSION},
                "type": {"const": s.kind},
                "requestId": request_id,
                "appId": {"type": "string", "minLength": 1},
                "entryKey": {"type": "string", "minLength": 1},
                "payload": payload,
            },
        }));
    }
    let defs = g.take_definitions(true);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("https://apphost.local/{file}"),
        "title": title,
        "description": description,
        "oneOf": branches,
        "examples": examples,
        "x-results": results,
        "$defs": defs,
    })
}

fn envelope(kind: &str, request_id: Option<&str>, payload: Value) -> Value {
    let mut m = json!({
        "protocol": PROTOCOL, "version": VERSION, "type": kind,
        "appId": "hello-app", "entryKey": "notes", "payload": payload,
    });
    if let Some(id) = request_id {
        m["requestId"] = json!(id);
    }
    m
}

/// Messages a frame may send; each is accepted by the decoder for the mount
/// `hello-app`/`notes` (tests/bridge_schemas.rs checks both).
pub fn app_examples() -> Vec<Value> {
    vec![
        envelope("app:ready", Some("r-0"), json!({})),
        envelope("host:getSnapshot", None, Value::Null),
        envelope("host:navigate", Some("r-1"), json!({"route": "/notes/42"})),
        envelope(
            "host:toast",
            None,
            json!({"message": "Saved", "level": "success"}),
        ),
        envelope(
            "host:openExternal",
            None,
            json!({"url": "https://example.com/help"}),
        ),
        envelope(
            "host:download",
            Some("r-2"),
            json!({"artifactId": "art_1", "fileName": "report.pdf"}),
        ),
        envelope(
            "host:download",
            Some("r-2b"),
            json!({"text": "# Notes", "fileName": "notes.md", "mimeType": "text/markdown"}),
        ),
        envelope(
            "capability:invoke",
            Some("r-3"),
            json!({"capability": "lime.storage", "method": "set", "args": {"key": "note:1", "value": {"text": "hi"}}}),
        ),
        envelope(
            "capability:invoke",
            Some("r-4"),
            json!({"capability": "lime.ui", "method": "getLocale"}),
        ),
        envelope("capability:cancel", None, json!({"requestId": "r-3"})),
    ]
}

fn host_examples() -> Vec<Value> {
    vec![
        envelope(
            "host:response",
            Some("r-3"),
            json!({"value": null, "traceId": "trace_1"}),
        ),
        envelope(
            "host:error",
            Some("r-3"),
            json!({"code": "APP_E002", "message": "the user denied lime.storage.set", "causeCode": "permission.denied",
                   "capability": "lime.storage", "method": "set", "retryable": false}),
        ),
        envelope("host:visibility", None, json!({"visible": false})),
    ]
}

/// The `value` of `host:response` for the `lime.ui` methods the host answers itself (the other
/// capabilities' results are documented in docs/bridge-protocol.md §5).
fn ui_results(g: &mut SchemaGenerator) -> Value {
    json!({
        "lime.ui.getSnapshot": sub::<HostSnapshot>(g),
        "lime.ui.getLocale": sub::<LocaleInfo>(g),
        "lime.ui.getTheme": sub::<ThemeSnapshot>(g),
        "host:download": sub::<DownloadResult>(g),
    })
}

/// `schemas/bridge/app-to-host.schema.json`.
pub fn app_to_host_schema() -> Value {
    bundle(
        APP_TO_HOST_PATH,
        "Host Bridge v1: app → host messages",
        &format!(
            "Generated from crates/host-core/src/bridge/wire.rs ({REGENERATE}). What an app frame may post to the host (lime.agentApp.bridge, version 1); the decoder (bridge/message.rs) also requires appId/entryKey to equal the mount's, app:ready first, and at most {MAX_MESSAGE_BYTES} bytes of JSON text (length limits are in bytes there). See docs/bridge-protocol.md."
        ),
        &app_messages(),
        generator(Contract::Deserialize),
        app_examples(),
        |_| json!({}),
    )
}

/// `schemas/bridge/host-to-app.schema.json`.
pub fn host_to_app_schema() -> Value {
    bundle(
        HOST_TO_APP_PATH,
        "Host Bridge v1: host → app messages",
        &format!("Generated from crates/host-core/src/bridge/wire.rs ({REGENERATE}). What the host posts to an app frame. See docs/bridge-protocol.md."),
        &host_messages(),
        generator(Contract::Serialize),
        host_examples(),
        ui_results,
    )
}

/// `bridge-sdk/src/generated/bridge.ts`.
pub fn typescript() -> String {
    let app = app_to_host_schema();
    let host = host_to_app_schema();
    let mut defs: Map<String, Value> = Map::new();
    for schema in [&app, &host] {
        for (name, def) in schema["$defs"].as_object().into_iter().flatten() {
            if let Some(prev) = defs.get(name) {
                assert_eq!(prev, def, "{name} differs between the two directions");
            }
            defs.insert(name.clone(), def.clone());
        }
    }
    let mut out = String::new();
    out.push_str(&format!(
        "// GENERATED from crates/host-core/src/bridge/wire.rs by bridge/schema.rs. DO NOT EDIT.\n\
         // Regenerate: {REGENERATE}\n\
         // Schemas: {APP_TO_HOST_PATH}, {HOST_TO_APP_PATH}\n\n"
    ));
    out.push_str(&format!(
        "/** The `protocol` field of every bridge message. */\nexport const BRIDGE_PROTOCOL = {} as const;\n\n",
        json!(PROTOCOL)
    ));
    out.push_str(&format!(
        "/** The bridge protocol version. */\nexport const BRIDGE_VERSION = {VERSION} as const;\n\n"
    ));
    out.push_str(&format!(
        "/** Largest message the host acts on, in bytes of JSON text. */\nexport const MAX_MESSAGE_BYTES = {MAX_MESSAGE_BYTES};\n\n"
    ));
    out.push_str(&declarations(&defs));
    let codes: Vec<Value> = ErrorCode::ALL.iter().map(|c| json!(c.as_str())).collect();
    out.push_str(&format!(
        "/** Every error code, in documentation order. */\nexport const ERROR_CODES = [{}] as const satisfies readonly ErrorCode[];\n\n",
        join(&codes)
    ));
    for (direction, specs, schema) in [
        ("App", app_messages(), &app),
        ("Host", host_messages(), &host),
    ] {
        let kinds: Vec<Value> = specs.iter().map(|s| json!(s.kind)).collect();
        let lower = direction.to_lowercase();
        out.push_str(&format!(
            "/** Message types {}. */\nexport const {}_MESSAGE_TYPES = [{}] as const;\nexport type {direction}MessageType = (typeof {}_MESSAGE_TYPES)[number];\n\n",
            if lower == "app" { "an app frame sends" } else { "the host sends" },
            direction.to_uppercase(),
            join(&kinds),
            direction.to_uppercase(),
        ));
        out.push_str(&format!("/** The payload of each {lower} → {} message type. */\nexport interface {direction}MessagePayloads {{\n",
            if lower == "app" { "host" } else { "app" }));
        for (s, branch) in specs
            .iter()
            .zip(schema["oneOf"].as_array().expect("branches"))
        {
            let p = &branch["properties"]["payload"];
            let p = if s.payload_required {
                p.clone()
            } else {
                p["anyOf"][0].clone()
            };
            out.push_str(&format!(
                "  /** {} */\n  {}: {};\n",
                s.doc,
                json!(s.kind),
                ts_type(&p, "  ")
            ));
        }
        out.push_str("}\n\n");
        let required: Vec<String> = specs
            .iter()
            .filter(|s| s.request_id == RequestIdRule::Required)
            .map(|s| json!(s.kind).to_string())
            .collect();
        out.push_str(&format!(
            "/** {direction} message types that must carry a `requestId`. */\nexport type {direction}RequestIdRequired = {};\n\n",
            if required.is_empty() { "never".to_owned() } else { required.join(" | ") }
        ));
    }
    out.push_str(
        "/** The envelope of every bridge message (postMessage). */\n\
         export interface BridgeEnvelope<TType extends string = string, TPayload = unknown> {\n  \
         protocol: typeof BRIDGE_PROTOCOL;\n  version: typeof BRIDGE_VERSION;\n  type: TType;\n  \
         requestId?: string;\n  appId: string;\n  entryKey: string;\n  payload?: TPayload;\n}\n\n\
         /** A message an app frame sends. */\n\
         export type AppMessage = { [K in AppMessageType]: BridgeEnvelope<K, AppMessagePayloads[K]> }[AppMessageType];\n\n\
         /** A message the host sends. */\n\
         export type HostMessage = { [K in HostMessageType]: BridgeEnvelope<K, HostMessagePayloads[K]> }[HostMessageType];\n",
    );
    out
}
