//! TypeScript from JSON Schema (draft 2020-12, as schemars writes it): the one emitter behind
//! the generated TypeScript of the Host Bridge (`bridge/schema.rs` → `bridge-sdk`) and of the
//! host API (`api/schema.rs` → `ui-host`). It knows the subset the Rust wire types use and
//! panics on anything else, so a new construct is taught here once, for both.

use serde_json::{json, Map, Value};

/// One `export interface` / `export type` per definition, sorted by name.
pub fn declarations(defs: &Map<String, Value>) -> String {
    let mut names: Vec<&String> = defs.keys().collect();
    names.sort();
    let mut out = String::new();
    for name in names {
        let def = &defs[name.as_str()];
        out.push_str(&doc_comment(def, ""));
        if def.get("type") == Some(&json!("object")) && def.get("properties").is_some() {
            out.push_str(&format!("export interface {name} "));
            out.push_str(&object_body(def, ""));
            out.push_str("\n\n");
        } else {
            let t = ts_type(def, "");
            let sep = if t.starts_with('\n') { "" } else { " " };
            out.push_str(&format!("export type {name} ={sep}{t};\n\n"));
        }
    }
    out
}

pub fn join(v: &[Value]) -> String {
    v.iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn doc_comment(def: &Value, indent: &str) -> String {
    match def.get("description").and_then(Value::as_str) {
        Some(d) => {
            let d = d.replace("*/", "* /");
            if d.contains('\n') {
                let mut s = format!("{indent}/**\n");
                for line in d.lines() {
                    s.push_str(&format!("{indent} * {line}\n").replace(" \n", "\n"));
                }
                s.push_str(&format!("{indent} */\n"));
                s
            } else {
                format!("{indent}/** {d} */\n")
            }
        }
        None => String::new(),
    }
}

pub fn object_body(def: &Value, indent: &str) -> String {
    let required: Vec<&str> = def["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let inner = format!("{indent}  ");
    let mut s = String::from("{\n");
    for (k, v) in def["properties"].as_object().into_iter().flatten() {
        s.push_str(&doc_comment(v, &inner));
        let opt = if required.contains(&k.as_str()) {
            ""
        } else {
            "?"
        };
        s.push_str(&format!(
            "{inner}{}{opt}: {};\n",
            ts_key(k),
            ts_type(v, &inner)
        ));
    }
    s.push_str(&format!("{indent}}}"));
    s
}

fn ts_key(k: &str) -> String {
    if k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !k.starts_with(|c: char| c.is_ascii_digit())
    {
        k.to_owned()
    } else {
        json!(k).to_string()
    }
}

/// Keywords that describe a schema without constraining it.
const ANNOTATIONS: &[&str] = &["description", "title", "examples", "default"];

/// The TypeScript type of a schema, for the subset the wire types use. Anything else panics,
/// so a new construct in the Rust types forces this generator to learn it.
pub fn ts_type(s: &Value, indent: &str) -> String {
    match s {
        Value::Bool(true) => return "unknown".into(),
        Value::Object(o) if o.is_empty() => return "unknown".into(),
        _ => {}
    }
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        return r.rsplit('/').next().expect("a ref name").to_owned();
    }
    if let Some(c) = s.get("const") {
        return c.to_string();
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        return e
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(" | ");
    }
    if let Some(alts) = s
        .get("oneOf")
        .or_else(|| s.get("anyOf"))
        .and_then(Value::as_array)
    {
        if alts.iter().any(|a| a.get("description").is_some()) {
            // One documented member per line.
            let inner = format!("{indent}  ");
            return alts
                .iter()
                .map(|a| {
                    format!(
                        "\n{}\n{inner}| {}",
                        doc_comment(a, &inner).trim_end_matches('\n'),
                        ts_type(a, &inner)
                    )
                })
                .collect::<String>();
        }
        return alts
            .iter()
            .map(|a| ts_type(a, indent))
            .collect::<Vec<_>>()
            .join(" | ");
    }
    match s.get("type") {
        Some(Value::Array(types)) => types
            .iter()
            .map(|t| {
                let mut one = s.clone();
                one["type"] = t.clone();
                ts_type(&one, indent)
            })
            .collect::<Vec<_>>()
            .join(" | "),
        Some(Value::String(t)) => match t.as_str() {
            "string" => "string".into(),
            "integer" | "number" => "number".into(),
            "boolean" => "boolean".into(),
            "null" => "null".into(),
            "array" => format!("Array<{}>", ts_type(&s["items"], indent)),
            "object" => {
                if s.get("properties").is_some() {
                    object_body(s, indent)
                } else {
                    match s.get("additionalProperties") {
                        Some(ap @ Value::Object(_)) => {
                            format!("Record<string, {}>", ts_type(ap, indent))
                        }
                        Some(Value::Bool(false)) => "Record<string, never>".into(),
                        _ => "Record<string, unknown>".into(),
                    }
                }
            }
            other => panic!("typescript: no TypeScript for type {other}"),
        },
        None if s
            .as_object()
            .is_some_and(|o| o.keys().all(|k| ANNOTATIONS.contains(&k.as_str()))) =>
        {
            "unknown".into()
        }
        _ => panic!("typescript: no TypeScript for {s}"),
    }
}
