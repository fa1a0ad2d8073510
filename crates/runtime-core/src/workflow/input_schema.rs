//! A `user-input` answer checked against the state's `schema` (the app's JSON Schema) before it
//! is recorded: a bad answer is refused, never stored. No remote references are fetched (the
//! crate is built without them); the message quotes at most [`MAX_PROBLEM_CHARS`] characters.

use serde_json::Value;

pub const MAX_PROBLEM_CHARS: usize = 300;

/// `Ok` when `data` is valid under `schema`; else what is wrong (bounded).
pub fn check(schema: &Value, data: &Value) -> Result<(), String> {
    let cut = |s: String| s.chars().take(MAX_PROBLEM_CHARS).collect::<String>();
    let v = jsonschema::validator_for(schema)
        .map_err(|e| cut(format!("the state's schema is not usable: {e}")))?;
    let first = v
        .iter_errors(data)
        .next()
        .map(|e| format!("{} (at {})", e, e.instance_path()));
    match first {
        None => Ok(()),
        Some(problem) => Err(cut(problem)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_are_checked_against_the_schema() {
        let s = json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}});
        assert!(check(&s, &json!({"n": 1})).is_ok());
        assert!(check(&s, &json!({"n": "x"})).is_err());
        assert!(check(&s, &json!([])).is_err());
        assert!(check(&json!({"type": 7}), &json!(1)).is_err());
    }
}
