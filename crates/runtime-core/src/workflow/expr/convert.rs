//! JSON <-> CEL values. Into CEL: everything JSON has. Out of CEL: only what JSON has, within a
//! byte budget and a depth bound, counted while converting (never after building something big).

use std::collections::HashMap;
use std::sync::Arc;

use cel::objects::{Key, Map};
use serde_json::Value;

use super::{ExprError, EVAL_FAILED, RESULT_TOO_LARGE};

/// Deepest result an expression may return.
const MAX_RESULT_DEPTH: usize = 64;

pub fn to_cel(v: &Value) -> cel::Value {
    match v {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                cel::Value::Int(i)
            } else if let Some(u) = n.as_u64() {
                cel::Value::UInt(u)
            } else {
                cel::Value::Float(n.as_f64().unwrap_or(0.0))
            }
        }
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(a) => cel::Value::List(Arc::new(a.iter().map(to_cel).collect())),
        Value::Object(o) => map_to_cel(o),
    }
}

pub fn map_to_cel(o: &serde_json::Map<String, Value>) -> cel::Value {
    let map: HashMap<Key, cel::Value> = o
        .iter()
        .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v)))
        .collect();
    cel::Value::Map(Map { map: Arc::new(map) })
}

/// Converts a result back to JSON, refusing it once it passes `budget` serialized bytes.
pub fn to_json(v: &cel::Value, budget: usize) -> Result<Value, ExprError> {
    let mut left = budget;
    convert(v, &mut left, 0)
}

fn spend(left: &mut usize, n: usize) -> Result<(), ExprError> {
    if n > *left {
        return Err(ExprError {
            code: RESULT_TOO_LARGE,
            message: "the expression's result is over its size budget".into(),
        });
    }
    *left -= n;
    Ok(())
}

fn unsupported(what: &str) -> ExprError {
    ExprError {
        code: EVAL_FAILED,
        message: format!("a result cannot hold {what}"),
    }
}

fn convert(v: &cel::Value, left: &mut usize, depth: usize) -> Result<Value, ExprError> {
    if depth > MAX_RESULT_DEPTH {
        return Err(ExprError {
            code: RESULT_TOO_LARGE,
            message: "result nested too deep".into(),
        });
    }
    Ok(match v {
        cel::Value::Null => {
            spend(left, 4)?;
            Value::Null
        }
        cel::Value::Bool(b) => {
            spend(left, 5)?;
            Value::Bool(*b)
        }
        cel::Value::Int(i) => {
            spend(left, 20)?;
            Value::from(*i)
        }
        cel::Value::UInt(u) => {
            spend(left, 20)?;
            Value::from(*u)
        }
        cel::Value::Float(f) => {
            spend(left, 24)?;
            serde_json::Number::from_f64(*f)
                .map(Value::Number)
                .ok_or_else(|| unsupported("NaN or infinity"))?
        }
        cel::Value::String(s) => {
            spend(left, s.len() + 2)?;
            Value::String(s.as_str().to_owned())
        }
        cel::Value::List(items) => {
            spend(left, 2)?;
            let mut out = Vec::with_capacity(items.len().min(1024));
            for item in items.iter() {
                spend(left, 1)?;
                out.push(convert(item, left, depth + 1)?);
            }
            Value::Array(out)
        }
        cel::Value::Map(m) => {
            spend(left, 2)?;
            let mut entries: Vec<(String, &cel::Value)> = Vec::with_capacity(m.map.len().min(1024));
            for (k, val) in m.map.iter() {
                let key = match k {
                    Key::String(s) => s.as_str().to_owned(),
                    Key::Int(i) => i.to_string(),
                    Key::Uint(u) => u.to_string(),
                    Key::Bool(b) => b.to_string(),
                };
                spend(left, key.len() + 4)?;
                entries.push((key, val));
            }
            // HashMap order is random: sort so a result is the same every time.
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut out = serde_json::Map::new();
            for (k, val) in entries {
                let val = convert(val, left, depth + 1)?;
                out.insert(k, val);
            }
            Value::Object(out)
        }
        cel::Value::Bytes(_) => return Err(unsupported("bytes")),
        _ => return Err(unsupported("a function, type or opaque value")),
    })
}
