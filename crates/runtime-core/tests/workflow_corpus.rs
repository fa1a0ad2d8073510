//! The workflow corpus: every malformed workflow under `fixtures/workflows/malformed/` is blocked
//! with exactly the error code its file name gives; every sample under `valid/` validates clean.

use std::collections::BTreeSet;
use std::path::PathBuf;

use runtime_core::workflow::{check, Severity};
use serde_json::Value;

const DECLARED: &[&str] = &[
    "lime.agent",
    "lime.workflow",
    "lime.storage",
    "lime.artifacts",
    "lime.tools",
    "lime.knowledge",
];

fn dir(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/workflows")
        .join(sub)
}

fn load(path: &PathBuf) -> (Value, BTreeSet<String>) {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let declared = match v.get("x-test-declared").and_then(Value::as_array) {
        Some(list) => list
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        None => DECLARED.iter().map(|s| s.to_string()).collect(),
    };
    (v, declared)
}

fn files(sub: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir(sub))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    out.sort();
    out
}

#[test]
fn every_malformed_workflow_is_blocked_with_exactly_its_code() {
    let files = files("malformed");
    assert!(
        files.len() >= 30,
        "the corpus has at least 30 malformed workflows, found {}",
        files.len()
    );
    let mut codes_seen = BTreeSet::new();
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_stem().unwrap().to_str().unwrap();
        let expected = format!("workflow.{}", name.split("--").next().unwrap());
        let (v, declared) = load(path);
        let checked = check(&v, &declared);
        let errors: BTreeSet<&str> = checked
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| f.code)
            .collect();
        if !checked.blocked() || errors != BTreeSet::from([expected.as_str()]) {
            failures.push(format!(
                "{name}: expected only {expected}, got {:#?}",
                checked.findings
            ));
        }
        codes_seen.insert(expected);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The corpus covers every code the brief names.
    for code in [
        "workflow.unknown_kind",
        "workflow.undeclared_capability",
        "workflow.unreachable_state",
        "workflow.cycle_without_wait",
        "workflow.missing_recovery",
        "workflow.expression_over_budget",
        "workflow.unknown_state",
        "workflow.duplicate_key",
        "workflow.no_start",
    ] {
        assert!(codes_seen.contains(code), "no malformed fixture for {code}");
    }
}

#[test]
fn every_valid_sample_validates_clean() {
    let files = files("valid");
    assert!(files.len() >= 3);
    for path in &files {
        let (v, declared) = load(path);
        let checked = check(&v, &declared);
        assert!(
            !checked.blocked() && checked.findings.is_empty(),
            "{}: {:#?}",
            path.display(),
            checked.findings
        );
    }
}

#[test]
fn the_issue_sample_is_blocked_when_a_capability_is_not_declared() {
    let (v, _) = load(&dir("valid").join("draft-review-publish.json"));
    let declared: BTreeSet<String> = ["lime.agent", "lime.workflow", "lime.storage"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let checked = check(&v, &declared);
    assert!(checked.blocked());
    let f: Vec<(&str, &str)> = checked
        .findings
        .iter()
        .map(|f| (f.code, f.path.as_str()))
        .collect();
    assert_eq!(
        f,
        vec![("workflow.undeclared_capability", "/states/6/kind")]
    );
}
