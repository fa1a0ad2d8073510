//! Workflows: an app's declared state machine, as data, validated before anything runs.
//!
//! - [`definition`]: the typed form of a manifest `workflows[]` entry, parsed with bounds;
//! - [`expr`]: the budgeted expression language (CEL) for guards and data mapping;
//! - [`template`]: step settings whose strings are expressions;
//! - [`validate`]: graph, recovery, capability and reference checks, with stable codes;
//! - [`machine`]: the sans-IO run machine (definition + facts -> next effect);
//! - [`runs`]: durable runs: facts in the event log, replay on open, steps via a host executor.
//!
//! Apart from [`runs`], this module reads no clock, file or network; capability calls are the
//! host's (through [`runs::StepExecutor`]). The language is documented in
//! `docs/package-format.md` ("Workflows").

pub mod definition;
pub mod expr;
pub mod finding;
pub mod limits;
pub mod machine;
pub mod runs;
pub mod template;
pub mod validate;

use std::collections::BTreeSet;

pub use definition::Definition;
pub use finding::{Finding, Severity};

/// The outcome of checking one workflow: its definition when it can run, and every finding.
#[derive(Debug)]
pub struct Checked {
    /// `Some` only when no finding is an error.
    pub definition: Option<Definition>,
    pub findings: Vec<Finding>,
    /// Findings left out past [`finding::Findings::MAX`].
    pub dropped: usize,
}

impl Checked {
    /// A blocked workflow has at least one error finding; its entry is `blocked` with them.
    pub fn blocked(&self) -> bool {
        self.definition.is_none()
    }
}

/// Parses and validates one `workflows[]` entry against the app's declared capabilities (the
/// names under `requires.capabilities`, list entries or map keys).
pub fn check(value: &serde_json::Value, declared: &BTreeSet<String>) -> Checked {
    // One expression thread for every expression of the workflow (see `expr::on_expr_stack`).
    expr::on_expr_stack(|| check_here(value, declared)).unwrap_or_else(|e| Checked {
        definition: None,
        findings: vec![Finding::error(e.code, "", e.message)],
        dropped: 0,
    })
}

fn check_here(value: &serde_json::Value, declared: &BTreeSet<String>) -> Checked {
    let (def, mut f) = definition::parse(value);
    if let Some(d) = &def {
        validate::validate(d, declared, &mut f);
    }
    let blocked = f.has_errors();
    let dropped = f.dropped();
    Checked {
        definition: if blocked { None } else { def },
        findings: f.into_vec(),
        dropped,
    }
}
