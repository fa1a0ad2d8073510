//! Structured output: an answer must be one JSON value satisfying the turn's output schema, and
//! tool arguments must satisfy the tool's parameter schema.
#![deny(clippy::disallowed_methods)]

use serde_json::Value;

/// Longest text of one schema violation in a `tool.failed` message (and the tool message the
/// model gets back): a violation quotes the offending value, which may be megabytes of model
/// output.
pub const SCHEMA_PROBLEM_CHARS: usize = 300;

fn clip(text: String, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

pub(super) fn check_schema(schema: &Value, value: &Value) -> Result<(), String> {
    let v = jsonschema::validator_for(schema).map_err(|e| format!("the schema is invalid: {e}"))?;
    let errors: Vec<String> = v
        .iter_errors(value)
        .take(5)
        .map(|e| {
            clip(
                format!("{} at {}", e, e.instance_path()),
                SCHEMA_PROBLEM_CHARS,
            )
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// The answer must be one JSON value (the whole text, no prose) satisfying `schema`.
pub fn check_structured(schema: &Value, text: &str) -> Result<Value, String> {
    let value: Value = serde_json::from_str(text.trim())
        .map_err(|_| "the answer is not a JSON value".to_owned())?;
    check_schema(schema, &value)?;
    Ok(value)
}
