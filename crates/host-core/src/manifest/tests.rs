use std::collections::BTreeMap;

use super::*;

fn pkg(files: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
    files
        .iter()
        .map(|(p, c)| (p.to_string(), c.as_bytes().to_vec()))
        .collect()
}

const GOOD: &str = "---\nname: demo\ndescription: A demo.\nversion: 1.0.0\nstatus: ready\nappType: agent-app\nmanifestVersion: \"0.10.0\"\nx-custom: {deep: [1, 2]}\nentries:\n  - {key: home, kind: page, title: Home, route: /}\n---\n# Demo\n";

fn codes(m: &Manifest) -> Vec<&'static str> {
    m.findings.iter().map(|f| f.code).collect()
}

#[test]
fn a_good_manifest_has_no_findings_and_keeps_unknown_fields() {
    let m = load(&pkg(&[("APP.md", GOOD)]), &Limits::default()).unwrap();
    assert!(m.findings.is_empty(), "{:?}", m.findings);
    assert_eq!(m.name(), "demo");
    assert_eq!(m.data["x-custom"], serde_json::json!({"deep": [1, 2]}));
    assert_eq!(m.body, "# Demo\n");
    assert_eq!(m.manifest_version, "0.10.0");
}

#[test]
fn missing_and_unknown_fields_are_errors_with_their_own_codes() {
    let m = load(
        &pkg(&[("APP.md", "---\nname: demo\nstatus: shipped\nappType: toy\nmanifestVersion: \"1.0.0\"\nentries:\n  - {key: a, kind: scene2, title: A}\n---\n")]),
        &Limits::default(),
    )
    .unwrap();
    let c = codes(&m);
    assert!(c.contains(&"manifest.missing_field"));
    assert!(c.contains(&"manifest.unknown_status"));
    assert!(c.contains(&"manifest.unknown_app_type"));
    assert!(c.contains(&"manifest.unsupported_version"));
    assert!(c.contains(&"manifest.unknown_entry_kind"));
    assert!(m.has_errors());
    assert_eq!(
        m.first_error().unwrap().code,
        ErrorCode::ManifestMissingField
    );
}

#[test]
fn unquoted_manifest_version_is_explained() {
    let text = GOOD.replace("\"0.10.0\"", "0.10");
    let m = load(&pkg(&[("APP.md", &text)]), &Limits::default()).unwrap();
    let f = m
        .findings
        .iter()
        .find(|f| f.code == "manifest.invalid_field")
        .unwrap();
    assert!(f.message.contains("quoted"), "{}", f.message);
}

#[test]
fn layered_file_wins_and_the_conflict_is_a_warning() {
    let m = load(
        &pkg(&[
            ("APP.md", GOOD),
            ("app.entries.yaml", "entries:\n  - {key: home, kind: page, title: Start, route: /start}\n  - {key: extra, kind: settings, title: Settings}\n"),
            ("app.install.yaml", "install:\n  modes: [in_lime]\n"),
        ]),
        &Limits::default(),
    )
    .unwrap();
    let entries = m.array("entries");
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["title"], "Start");
    assert_eq!(m.data["install"]["modes"][0], "in_lime");
    assert_eq!(codes(&m), vec!["manifest.layered_conflict"]);
    assert_eq!(
        m.layered_files,
        vec!["app.entries.yaml", "app.install.yaml"]
    );
}

#[test]
fn yaml_limits_have_their_own_codes() {
    let bomb = format!(
        "---\nname: a\na0: &a0 [x,x,x,x,x,x,x,x,x,x]\n{}---\n",
        (1..8)
            .map(|i| format!(
                "a{i}: &a{i} [{}]\n",
                vec![format!("*a{}", i - 1); 10].join(",")
            ))
            .collect::<String>()
    );
    assert_eq!(
        load(&pkg(&[("APP.md", &bomb)]), &Limits::default())
            .unwrap_err()
            .code,
        ErrorCode::ManifestYamlAliasLimit
    );
    let deep = format!("---\nname: {}{}\n---\n", "[".repeat(200), "]".repeat(200));
    assert_eq!(
        load(&pkg(&[("APP.md", &deep)]), &Limits::default())
            .unwrap_err()
            .code,
        ErrorCode::ManifestYamlDepthLimit
    );
    let bad_layer = pkg(&[
        ("APP.md", GOOD),
        ("app.permissions.yaml", "permissions: [\n"),
    ]);
    let e = load(&bad_layer, &Limits::default()).unwrap_err();
    assert_eq!(e.code, ErrorCode::ManifestYamlSyntax);
    assert_eq!(e.details["file"], "app.permissions.yaml");
}

#[test]
fn duplicate_entry_keys_are_rejected() {
    let text = GOOD.replace(
        "entries:\n",
        "entries:\n  - {key: home, kind: settings, title: Again}\n",
    );
    let m = load(&pkg(&[("APP.md", &text)]), &Limits::default()).unwrap();
    assert!(codes(&m).contains(&"manifest.duplicate_key"));
}

#[test]
fn numeric_version_is_kept_as_text_with_a_warning() {
    let text = GOOD.replace("version: 1.0.0", "version: 1.5");
    let m = load(&pkg(&[("APP.md", &text)]), &Limits::default()).unwrap();
    assert_eq!(m.version(), "1.5");
    assert!(codes(&m).contains(&"manifest.version_not_string"));
    assert!(!m.has_errors());
}

#[test]
fn a_non_boolean_required_is_an_invalid_field() {
    for (value, bad) in [
        ("true", false),
        ("false", false),
        ("\"yes\"", true),
        ("\"true\"", true),
        ("1", true),
        ("~", true),
    ] {
        let text = GOOD.replace(
            "entries:",
            &format!("secrets:\n  - {{key: token, required: {value}}}\nskills:\n  references:\n    - {{id: s, required: true}}\nentries:"),
        );
        let m = load(&pkg(&[("APP.md", &text)]), &Limits::default()).unwrap();
        let f = m
            .findings
            .iter()
            .find(|f| f.code == "manifest.invalid_field");
        assert_eq!(f.is_some(), bad, "required: {value}: {:?}", m.findings);
        if let Some(f) = f {
            assert_eq!(f.path, "APP.md#/secrets/0/required");
        }
    }
    let text = GOOD.replace(
        "entries:",
        "skills:\n  references:\n    - {id: s, required: \"yes\"}\nentries:",
    );
    let m = load(&pkg(&[("APP.md", &text)]), &Limits::default()).unwrap();
    assert!(m.has_errors());
    assert!(!is_required(&serde_json::json!({"required": "true"})));
    assert!(!is_required(&serde_json::json!({"required": 1})));
    assert!(is_required(&serde_json::json!({"required": true})));
}
