//! A `user-input` answer's checks, before anything is recorded: its size
//! (`limits::MAX_STEP_OUTPUT_BYTES`: the answer becomes the state's output) and the state's
//! JSON Schema. Shared by [`WorkflowRuns::respond`](super::WorkflowRuns::respond) and the host's
//! `lime.workflow.respond` (which shows the path to the app).

use serde_json::Value;

use super::{code, RunError};

/// Longest text of one schema violation in a refusal (a violation may quote the value).
const MAX_PROBLEM_CHARS: usize = 300;

/// Why an input answer is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputRefusal {
    /// `workflow.input_too_large` or `workflow.input_invalid`.
    pub code: &'static str,
    /// The JSON pointer of the first violation in the answer (`""`: the whole answer).
    pub path: String,
    pub message: String,
}

impl From<InputRefusal> for RunError {
    fn from(r: InputRefusal) -> RunError {
        let at = if r.path.is_empty() { "/" } else { &r.path };
        RunError::new(r.code, format!("{} (at {at})", r.message))
    }
}

/// Checks `data` against the input state's `schema` (none: any JSON value).
pub fn check_input(schema: Option<&Value>, data: &Value) -> Result<(), InputRefusal> {
    let size = serde_json::to_vec(data).map_or(usize::MAX, |b| b.len());
    let max = crate::workflow::limits::MAX_STEP_OUTPUT_BYTES;
    if size > max {
        return Err(InputRefusal {
            code: code::INPUT_TOO_LARGE,
            path: String::new(),
            message: format!("the answer is {size} bytes; at most {max}"),
        });
    }
    let Some(schema) = schema.filter(|s| !s.is_null()) else {
        return Ok(());
    };
    let validator = jsonschema::validator_for(schema).map_err(|e| InputRefusal {
        code: code::INPUT_INVALID,
        path: String::new(),
        message: clip(format!(
            "the state's schema is not a valid JSON Schema: {e}"
        )),
    })?;
    let first = validator
        .iter_errors(data)
        .next()
        .map(|e| (e.instance_path().to_string(), e.to_string()));
    match first {
        None => Ok(()),
        Some((path, message)) => Err(InputRefusal {
            code: code::INPUT_INVALID,
            path,
            message: clip(message),
        }),
    }
}

fn clip(text: String) -> String {
    match text.char_indices().nth(MAX_PROBLEM_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_answer_is_checked_against_the_schema_with_its_path_and_bounded() {
        let schema = json!({"type": "object", "required": ["n"],
            "properties": {"n": {"type": "integer", "maximum": 5}}});
        assert_eq!(check_input(Some(&schema), &json!({"n": 3})), Ok(()));
        let bad = check_input(Some(&schema), &json!({"n": 9})).unwrap_err();
        assert_eq!((bad.code, bad.path.as_str()), (code::INPUT_INVALID, "/n"));
        let missing = check_input(Some(&schema), &json!({})).unwrap_err();
        assert_eq!(missing.code, code::INPUT_INVALID);
        let big = json!("x".repeat(crate::workflow::limits::MAX_STEP_OUTPUT_BYTES + 1));
        assert_eq!(
            check_input(None, &big).unwrap_err().code,
            code::INPUT_TOO_LARGE
        );
        assert_eq!(check_input(None, &json!([1, 2])), Ok(()));
        let broken = json!({"type": 7});
        assert_eq!(
            check_input(Some(&broken), &json!(1)).unwrap_err().code,
            code::INPUT_INVALID
        );
    }
}
