//! Shared by the integration tests: the Lime profile event validator, with the base schema
//! registered under the `$id` the profile's relative `$ref` resolves to (the published base
//! schema declares another `$id`, so a validator that registers by `$id` alone cannot resolve it).

#![allow(dead_code)]

use serde_json::Value;
use std::path::PathBuf;

/// `../shared/standards/agentruntime` beside the checkout, or `$APPHOST_STANDARDS_DIR` (a
/// checkout elsewhere, e.g. a git worktree).
pub fn standards_dir() -> PathBuf {
    match std::env::var_os("APPHOST_STANDARDS_DIR") {
        Some(d) => PathBuf::from(d).join("agentruntime"),
        None => {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/standards/agentruntime")
        }
    }
}

fn read_json(p: PathBuf) -> Value {
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

pub fn profile_event_validator() -> jsonschema::Validator {
    let dir = standards_dir().join("schemas");
    let base = read_json(dir.join("agentruntime-event.schema.json"));
    let profile = read_json(dir.join("agentruntime-lime-profile-event.schema.json"));
    let profile_id = profile["$id"].as_str().unwrap();
    let base_alias = profile_id.replace(
        "agentruntime-lime-profile-event.schema.json",
        "agentruntime-event.schema.json",
    );
    let registry = jsonschema::Registry::new()
        .add(base["$id"].as_str().unwrap(), base.clone())
        .unwrap()
        .add(base_alias, base)
        .unwrap()
        .prepare()
        .unwrap();
    jsonschema::options()
        .with_registry(&registry)
        .should_validate_formats(true)
        .build(&profile)
        .unwrap()
}

pub fn schema_errors(v: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

pub fn assert_profile_valid(v: &jsonschema::Validator, instance: &Value) {
    let errors = schema_errors(v, instance);
    assert!(
        errors.is_empty(),
        "event does not validate against the Lime profile:\n{instance}\n{}",
        errors.join("\n")
    );
}
