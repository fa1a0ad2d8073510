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
    let entries = m.view().list(Key::Entries);
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

/// A 64 KiB string and 2,000 aliases to it: ~128 MB once expanded, in a ~75 KB document.
fn alias_bomb(top: &str) -> String {
    let long = "w".repeat(64 * 1024);
    format!(
        "x-big: &s {long}\nx-refs: [{}]\n{top}",
        ["*s"; 2000].join(", ")
    )
}

#[test]
fn every_yaml_file_read_bounds_alias_expansion_with_its_own_code() {
    let front = format!("---\n{}---\n", alias_bomb(""));
    let head = GOOD.split("---\n").nth(1).unwrap();
    for (file, text) in [
        ("APP.md", front),
        ("app.entries.yaml", alias_bomb("entries: []\n")),
        ("app.permissions.yaml", alias_bomb("permissions: []\n")),
        ("app.runtime.yaml", alias_bomb("")),
        ("app.requirements.yaml", alias_bomb("")),
        ("app.signature.yaml", alias_bomb("signature: {}\n")),
        ("evals/readiness.yaml", alias_bomb("readiness: {}\n")),
        ("evals/health.yaml", alias_bomb("health: {}\n")),
    ] {
        let good = format!("---\n{head}---\n");
        let mut files = vec![("APP.md", good.as_str())];
        if file == "APP.md" {
            files = vec![("APP.md", text.as_str())];
        } else {
            files.push((file, text.as_str()));
        }
        let err = load(&pkg(&files), &Limits::default()).unwrap_err();
        assert_eq!(
            err.code,
            ErrorCode::ManifestYamlExpansionLimit,
            "{file}: {err:?}"
        );
        assert_eq!(err.details["file"], file);
        assert_eq!(err.details["limit"], 1024 * 1024);
    }
    // The limit is a `Limits` field: 10 aliases to 200 KiB (2.2 MB copied) need it raised.
    let small = format!(
        "---\n{head}x-big: &s {}\nx-refs: [{}]\n---\n",
        "v".repeat(200 * 1024),
        ["*s"; 10].join(", ")
    );
    assert_eq!(
        load(&pkg(&[("APP.md", &small)]), &Limits::default())
            .unwrap_err()
            .code,
        ErrorCode::ManifestYamlExpansionLimit
    );
    let raised = Limits {
        max_yaml_alias_bytes: 4 * 1024 * 1024,
        ..Limits::default()
    };
    let m = load(&pkg(&[("APP.md", &small)]), &raised).unwrap();
    assert_eq!(m.data["x-refs"][9].as_str().map(str::len), Some(200 * 1024));
}

#[test]
fn long_package_controlled_lists_cost_linear_time() {
    // 20,000 permissions in APP.md and again (changed) in app.permissions.yaml, an entry that
    // needs all of them, and 20,000 referenced paths among 20,000 files. Matching these by
    // scanning the other list was quadratic (minutes); by key it takes seconds in a debug build.
    const N: usize = 20_000;
    let head = GOOD.split("---\n").nth(1).unwrap();
    let mut front = format!("---\n{head}permissions:\n");
    let mut layered = String::from("permissions:\n");
    for i in 0..N {
        front.push_str(&format!("  - {{key: p{i}, scope: network}}\n"));
        layered.push_str(&format!("  - {{key: p{i}, scope: storage}}\n"));
    }
    let all: Vec<String> = (0..N).map(|i| format!("p{i}")).collect();
    front = front.replace(
        "entries:\n  - {key: home, kind: page, title: Home, route: /}\n",
        &format!(
            "entries:\n  - {{key: home, kind: page, title: Home, route: /, permissions: [{}]}}\n",
            all.join(", ")
        ),
    );
    front.push_str("skillRefs:\n");
    for i in 0..N {
        front.push_str(&format!("  - {{key: s{i}, path: skills/s{i}.md}}\n"));
    }
    front.push_str("---\n# Demo\n");
    let files: Vec<crate::foundation::hashing::FileRecord> = (0..N)
        .map(|i| crate::foundation::hashing::FileRecord {
            path: format!("skills/s{}.md", N - 1 - i),
            size: 1,
            sha256: [0; 32],
        })
        .collect();
    // And 10,000 more entries (in app.entries.yaml, first, then APP.md's `home`).
    let mut entries = String::from("entries:\n");
    for i in 0..N / 2 {
        entries.push_str(&format!(
            "  - {{key: e{i}, kind: page, title: E, route: /e{i}}}\n"
        ));
    }
    let limits = Limits {
        max_yaml_nodes: 1_000_000,
        ..Limits::default()
    };
    let started = thread_cpu();
    let m = load(
        &pkg(&[
            ("APP.md", &front),
            ("app.permissions.yaml", &layered),
            ("app.entries.yaml", &entries),
        ]),
        &limits,
    )
    .unwrap();
    assert_eq!(m.view().list(Key::Entries).len(), N / 2 + 1);
    let conflicts = m
        .findings
        .iter()
        .filter(|f| f.code == "manifest.layered_conflict")
        .count();
    assert_eq!(conflicts, N);
    assert_eq!(m.view().list(Key::Permissions).len(), N);
    assert_eq!(m.view().list(Key::Permissions)[N - 1]["scope"], "storage");
    let report = crate::install::readiness::evaluate(
        &m,
        &files,
        &crate::foundation::profile::HostProfile::current(),
        &crate::install::readiness::HostState::preview(jiff::Timestamp::UNIX_EPOCH),
    );
    let missing = report
        .checks
        .iter()
        .filter(|c| c.code == Some("package.missing_path"))
        .count();
    assert_eq!(missing, 0);
    // `home` needs N optional permissions, not granted: degraded, and it says by which.
    let home = report.entries.last().unwrap();
    assert_eq!(home.entry_key, "home");
    assert_eq!(
        home.status,
        crate::install::readiness::Status::ReadyDegraded
    );
    assert_eq!(home.missing.len(), N);
    assert_eq!(
        report.entries[0].status,
        crate::install::readiness::Status::Ready
    );
    assert_eq!(report.setup_actions.len(), N);
    // About 3 s of CPU in a debug build; the merge by scanning alone took over 160 s.
    let used = thread_cpu() - started;
    assert!(
        used < std::time::Duration::from_secs(30),
        "{N} permissions, entry permissions and paths took {used:?} of CPU"
    );
}

/// CPU time used by this thread (user + system, from `/proc/thread-self/stat`): unlike
/// wall-clock time, it does not grow when other processes share the cores.
fn thread_cpu() -> std::time::Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    // After "pid (comm) ", fields start at 3 (state); utime and stime are fields 14 and 15.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    std::time::Duration::from_millis(ticks * 10) // USER_HZ is 100 on Linux
}
