//! Checks on the raw text, before the CEL parser sees it: length and nesting.

use super::ExprError;
use crate::workflow::finding::code;
use crate::workflow::limits::{MAX_EXPR_BYTES, MAX_EXPR_NESTING};

/// Refuses text that is too long or nests too deep. Nesting counts open brackets, `?` of
/// conditionals still open and the current run of prefix operators (`!`, `-`); brackets inside
/// string literals count too (over-counting only refuses more).
pub fn check(source: &str) -> Result<(), ExprError> {
    if source.len() > MAX_EXPR_BYTES {
        return Err(ExprError::new(
            code::EXPRESSION_OVER_BUDGET,
            format!("{} bytes; at most {MAX_EXPR_BYTES}", source.len()),
        ));
    }
    if source.trim().is_empty() {
        return Err(ExprError::new(code::EXPRESSION_INVALID, "empty expression"));
    }
    let mut brackets = 0usize;
    let mut conditionals = 0usize;
    let mut prefix_run = 0usize;
    for b in source.bytes() {
        match b {
            b'(' | b'[' | b'{' => {
                brackets += 1;
                prefix_run = 0;
            }
            b')' | b']' | b'}' => {
                brackets = brackets.saturating_sub(1);
                prefix_run = 0;
            }
            b'?' => conditionals += 1,
            b'!' | b'-' => prefix_run += 1,
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => prefix_run = 0,
        }
        if brackets + conditionals + prefix_run > MAX_EXPR_NESTING {
            return Err(ExprError::new(
                code::EXPRESSION_OVER_BUDGET,
                format!("nested deeper than {MAX_EXPR_NESTING}"),
            ));
        }
    }
    Ok(())
}
