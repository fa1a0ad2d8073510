//! Contract tests: what we emit validates against the standard's published JSON schemas
//! (`../shared/standards/agentapp/schemas`), and our own published schemas (`schemas/apphost`).

mod support;

use serde_json::Value;
use support::{fixture, inspect_path, repo_root, standards_dir};

fn schema(path: std::path::PathBuf) -> jsonschema::Validator {
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&v).unwrap()
}

/// Validators for the standard's schemas, with every sibling schema registered so that
/// cross-file `$ref`s (`app-install.schema.json#/properties/install`, …) resolve offline.
fn agentapp(name: &str) -> jsonschema::Validator {
    let dir = standards_dir().join("agentapp/schemas");
    let mut registry = jsonschema::Registry::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let id = doc["$id"].as_str().unwrap().to_owned();
        registry = registry.add(id, doc).unwrap();
    }
    let registry = registry.prepare().unwrap();
    let root: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap();
    jsonschema::options()
        .with_registry(&registry)
        .build(&root)
        .unwrap()
}

fn assert_valid(v: &jsonschema::Validator, instance: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not validate:\n{}",
        errors.join("\n")
    );
}

const PACKAGES: &[&str] = &["good/hello-app", "vectors/ordering"];

#[test]
fn projections_validate_against_app_projection_schema() {
    let v = agentapp("app-projection.schema.json");
    for p in PACKAGES {
        let i = inspect_path(&fixture(p));
        assert_valid(&v, &i.projection, p);
        // Every projected object carries provenance.
        for key in ["entries", "permissions", "uiRoutes"] {
            for item in i.projection[key].as_array().unwrap() {
                assert_eq!(item["provenance"], i.projection["provenance"], "{p} {key}");
            }
        }
    }
}

#[test]
fn readiness_validates_against_app_readiness_schema() {
    let v = agentapp("app-readiness.schema.json");
    for p in PACKAGES {
        let i = inspect_path(&fixture(p));
        assert_valid(&v, &i.readiness.to_json(), p);
    }
}

#[test]
fn merged_manifests_validate_against_app_manifest_schema() {
    let v = agentapp("app-manifest.schema.json");
    for p in PACKAGES {
        let i = inspect_path(&fixture(p));
        assert_valid(&v, &Value::Object(i.manifest.data.clone()), p);
    }
}

#[test]
fn our_lock_file_validates_against_its_published_schema() {
    let v = schema(repo_root().join("schemas/apphost/app-lock.schema.json"));
    let i = inspect_path(&fixture("good/hello-app"));
    let lock: Value =
        serde_json::from_str(&host_core::install::lockfile::render(&i.read.files)).unwrap();
    assert_valid(&v, &lock, "app.lock.json");
    // And the schema rejects a lock without files.
    assert!(!v.is_valid(&serde_json::json!({"lockVersion": 1, "algorithm": "sha256"})));
}

#[test]
fn errors_validate_against_the_published_error_schema() {
    let v = schema(repo_root().join("schemas/apphost/error.schema.json"));
    for code in host_core::foundation::error::ErrorCode::ALL {
        let e = host_core::HostError::new(*code, "message").with("path", "x");
        assert_valid(&v, &serde_json::to_value(&e).unwrap(), code.as_str());
    }
    assert!(
        !v.is_valid(&serde_json::json!({"code": "no.such_code", "message": "m", "details": {}}))
    );
}

#[test]
fn error_schema_lists_exactly_the_error_codes() {
    let text =
        std::fs::read_to_string(repo_root().join("schemas/apphost/error.schema.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let listed: Vec<&str> = v["properties"]["code"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let codes: Vec<&str> = host_core::foundation::error::ErrorCode::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    assert_eq!(
        listed, codes,
        "schemas/apphost/error.schema.json is out of date with ErrorCode"
    );
}

#[test]
fn every_error_code_is_documented_in_docs_cli_md() {
    let doc = std::fs::read_to_string(repo_root().join("docs/cli.md")).unwrap();
    for code in host_core::foundation::error::ErrorCode::ALL {
        assert!(
            doc.contains(&format!("| `{}` |", code.as_str())),
            "{} is missing from docs/cli.md",
            code.as_str()
        );
    }
}
