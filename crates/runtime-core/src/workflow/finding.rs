//! Findings: what validation says about a workflow definition, each with a stable code.
//!
//! An `error` finding blocks the workflow (its entry is `blocked` with the finding as the
//! reason); a `warning` does not. The codes are documented in `docs/package-format.md`
//! ("Workflows"); tests assert them exactly, so a code never changes meaning.

use serde::Serialize;

/// Stable finding codes.
pub mod code {
    pub const TOO_LARGE: &str = "workflow.too_large";
    pub const INVALID_FIELD: &str = "workflow.invalid_field";
    pub const MISSING_FIELD: &str = "workflow.missing_field";
    pub const UNKNOWN_FIELD: &str = "workflow.unknown_field";
    pub const UNKNOWN_KIND: &str = "workflow.unknown_kind";
    pub const INVALID_KEY: &str = "workflow.invalid_key";
    pub const DUPLICATE_KEY: &str = "workflow.duplicate_key";
    pub const DUPLICATE_OUTPUT: &str = "workflow.duplicate_output";
    pub const NO_START: &str = "workflow.no_start";
    pub const MULTIPLE_START: &str = "workflow.multiple_start";
    pub const NO_END: &str = "workflow.no_end";
    pub const MISSING_NEXT: &str = "workflow.missing_next";
    pub const UNKNOWN_STATE: &str = "workflow.unknown_state";
    pub const UNREACHABLE_STATE: &str = "workflow.unreachable_state";
    pub const CYCLE_WITHOUT_WAIT: &str = "workflow.cycle_without_wait";
    pub const MISSING_RECOVERY: &str = "workflow.missing_recovery";
    pub const CONFLICTING_RETRY: &str = "workflow.conflicting_retry";
    pub const UNDECLARED_CAPABILITY: &str = "workflow.undeclared_capability";
    pub const UNKNOWN_METHOD: &str = "workflow.unknown_method";
    pub const EXPRESSION_OVER_BUDGET: &str = "workflow.expression_over_budget";
    pub const EXPRESSION_INVALID: &str = "workflow.expression_invalid";
    pub const EXPRESSION_FORBIDDEN: &str = "workflow.expression_forbidden";
    pub const UNKNOWN_VARIABLE: &str = "workflow.unknown_variable";
    pub const UNKNOWN_OUTPUT: &str = "workflow.unknown_output";
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One finding: a stable code, where (a JSON pointer into the workflow object) and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub code: &'static str,
    pub severity: Severity,
    pub path: String,
    pub message: String,
}

impl Finding {
    pub fn error(code: &'static str, path: impl Into<String>, message: impl Into<String>) -> Self {
        Finding {
            code,
            severity: Severity::Error,
            path: path.into(),
            message: message.into(),
        }
    }

    pub fn warning(
        code: &'static str,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            code,
            severity: Severity::Warning,
            path: path.into(),
            message: message.into(),
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The first `max` bytes of `s`, cut at a character boundary (for messages quoting input).
pub fn clip(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// Keeps the first findings and counts the rest, so a hostile definition cannot make the
/// report itself unbounded.
#[derive(Debug, Default)]
pub struct Findings {
    list: Vec<Finding>,
    dropped: usize,
}

impl Findings {
    pub const MAX: usize = 200;

    pub fn push(&mut self, f: Finding) {
        if self.list.len() < Self::MAX {
            self.list.push(f);
        } else {
            self.dropped += 1;
        }
    }

    pub fn error(&mut self, code: &'static str, path: impl Into<String>, msg: impl Into<String>) {
        self.push(Finding::error(code, path, msg));
    }

    pub fn warning(&mut self, code: &'static str, path: impl Into<String>, msg: impl Into<String>) {
        self.push(Finding::warning(code, path, msg));
    }

    pub fn has_errors(&self) -> bool {
        self.list.iter().any(Finding::is_error)
    }

    pub fn into_vec(self) -> Vec<Finding> {
        self.list
    }

    pub fn as_slice(&self) -> &[Finding] {
        &self.list
    }

    pub fn dropped(&self) -> usize {
        self.dropped
    }
}
