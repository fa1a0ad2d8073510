//! Emits the contract table as `schemas/capabilities/<namespace>.schema.json` and as the SDK's
//! `src/generated/capabilities.ts` (through the one TypeScript emitter, `foundation/typescript.rs`).

use serde_json::{json, Map, Value};

use super::{all, NamespaceContract};
use crate::foundation::typescript::declarations;

/// How to regenerate the committed files (from the repository root).
pub const REGENERATE: &str = "APPHOST_BLESS=1 cargo test -p host-core --test capability_schemas";
/// The generated TypeScript, relative to the repository root.
pub const TYPESCRIPT_PATH: &str = "bridge-sdk/src/generated/capabilities.ts";
/// The folder of the per-namespace schema files.
pub const SCHEMA_DIR: &str = "schemas/capabilities";

/// `lime.storage` → `storage`.
pub fn short_name(capability: &str) -> &str {
    capability.strip_prefix("lime.").unwrap_or(capability)
}

/// `schemas/capabilities/storage.schema.json` for `lime.storage`.
pub fn schema_path(capability: &str) -> String {
    format!("{SCHEMA_DIR}/{}.schema.json", short_name(capability))
}

fn pascal(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

/// `StorageGetArgs` / `StorageGetResult`.
pub fn type_name(capability: &str, method: &str, part: &str) -> String {
    format!("{}{}{part}", pascal(short_name(capability)), pascal(method))
}

/// One namespace's schema document: `$defs` holds `<Ns><Method>Args` / `…Result`; `x-methods`
/// maps each method to its two refs.
pub fn namespace_schema(ns: &NamespaceContract) -> Value {
    let mut defs = Map::new();
    let mut methods = Map::new();
    for r in &ns.rows {
        let args = type_name(ns.capability, r.method, "Args");
        let result = type_name(ns.capability, r.method, "Result");
        let mut a = r.args.clone();
        if a.get("description").is_none() {
            a["description"] = json!(format!("Arguments of `{}.{}`.", ns.capability, r.method));
        }
        let mut v = r.result.clone();
        if v.is_object() && v.get("description").is_none() {
            v["description"] = json!(format!(
                "Result of `{}.{}`: {}",
                ns.capability, r.method, r.doc
            ));
        }
        defs.insert(args.clone(), a);
        defs.insert(result.clone(), v);
        methods.insert(
            r.method.to_owned(),
            json!({
                "description": r.doc,
                "args": {"$ref": format!("#/$defs/{args}")},
                "result": {"$ref": format!("#/$defs/{result}")},
            }),
        );
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("https://apphost.local/{}", schema_path(ns.capability)),
        "title": format!("{}: argument and result of each method", ns.capability),
        "description": format!(
            "Generated from crates/host-core/src/hosting/capability/contract/ ({REGENERATE}). `x-methods` names each method's `args` and `result` (the `value` of `host:response`). See docs/bridge-protocol.md §5."
        ),
        "x-capability": ns.capability,
        "x-methods": methods,
        "$defs": defs,
    })
}

/// A schema that validates one method's `part` (`"args"` or `"result"`) against its namespace
/// document (so `$ref`s resolve).
pub fn method_schema(doc: &Value, method: &str, part: &str) -> Option<Value> {
    let r = doc["x-methods"].get(method)?[part]["$ref"].clone();
    let mut one = doc.clone();
    let o = one.as_object_mut()?;
    o.remove("x-methods");
    o.insert("$ref".into(), r);
    Some(one)
}

/// `bridge-sdk/src/generated/capabilities.ts`.
pub fn typescript() -> String {
    let namespaces = all();
    let mut defs = Map::new();
    for ns in &namespaces {
        for (k, v) in namespace_schema(ns)["$defs"]
            .as_object()
            .into_iter()
            .flatten()
        {
            defs.insert(k.clone(), v.clone());
        }
    }
    let mut out = format!(
        "// GENERATED from crates/host-core/src/hosting/capability/contract/ by contract/emit.rs. DO NOT EDIT.\n\
         // Regenerate: {REGENERATE}\n// Schemas: {SCHEMA_DIR}/<namespace>.schema.json\n\n"
    );
    out.push_str(&declarations(&defs));
    out.push_str("/** Every implemented method: its arguments and its result. */\nexport interface CapabilityMethods {\n");
    for ns in &namespaces {
        out.push_str(&format!("  {}: {{\n", json!(ns.capability)));
        for r in &ns.rows {
            out.push_str(&format!(
                "    /** {} */\n    {}: {{ args: {}; result: {} }};\n",
                r.doc,
                r.method,
                type_name(ns.capability, r.method, "Args"),
                type_name(ns.capability, r.method, "Result"),
            ));
        }
        out.push_str("  };\n");
    }
    out.push_str("}\n\n");
    out.push_str(
        "/** A capability this host implements. */\nexport type CapabilityName = keyof CapabilityMethods;\n\n\
         /** A method of capability `C`. */\nexport type CapabilityMethod<C extends CapabilityName> = keyof CapabilityMethods[C] & string;\n\n\
         /** The arguments of `C.M`. */\nexport type CapabilityArgs<C extends CapabilityName, M extends CapabilityMethod<C>> =\n  \
         CapabilityMethods[C][M] extends { args: infer A } ? A : never;\n\n\
         /** The result of `C.M`. */\nexport type CapabilityResult<C extends CapabilityName, M extends CapabilityMethod<C>> =\n  \
         CapabilityMethods[C][M] extends { result: infer R } ? R : never;\n",
    );
    out
}
