//! The host API's schema and the host UI's TypeScript types are generated from the Rust types of
//! `api/` (`api/schema.rs`). This test fails when the committed files drift (regenerate with
//! `APPHOST_BLESS=1 cargo test -p host-core --test host_api_schemas`), when a command of the
//! tables or of docs/host-api.md is missing from the catalog (or the doc names one that does not
//! exist), and when real answers of a session over a real store do not validate.

mod support;

use std::collections::BTreeSet;

use host_core::api::schema::{self, REGENERATE};
use host_core::api::{self, Session};
use host_core::foundation::error::ErrorCode;
use host_core::foundation::paths::DataDir;
use host_core::hosting::bridge::message::PROTOCOL;
use serde_json::{json, Value};
use support::agent::session_config;
use support::{fixture, install, repo_root};

fn check(rel: &str, generated: &str) {
    let path = repo_root().join(rel);
    if std::env::var_os("APPHOST_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{rel} drifted from the Rust types of crates/host-core/src/api/; regenerate with \
         `{REGENERATE}` (from the repository root) and commit the result"
    );
}

#[test]
fn committed_schema_and_typescript_match_the_rust_types() {
    let s = schema::host_api_schema();
    check(
        schema::SCHEMA_PATH,
        &(serde_json::to_string_pretty(&s).unwrap() + "\n"),
    );
    check(schema::TYPESCRIPT_PATH, &schema::typescript());
}

#[test]
fn every_command_of_the_tables_is_in_the_schema_and_nothing_else() {
    let tables: BTreeSet<&str> = api::command_names().collect();
    let catalog: BTreeSet<&str> = schema::catalog().iter().map(|c| c.name).collect();
    assert_eq!(
        tables, catalog,
        "api/schema.rs's catalog must list every command"
    );
    let s = schema::host_api_schema();
    for name in &tables {
        let c = &s["commands"][*name];
        assert!(
            c["args"].is_object() && !c["answer"].is_null(),
            "{name}: {c}"
        );
    }
    // The TypeScript map names every command too.
    let ts = schema::typescript();
    for name in &tables {
        assert!(
            ts.contains(&format!("  {name}: {{ args: ")),
            "{name} not in HostCommands"
        );
    }
}

/// The command names of docs/host-api.md's `| command | args | answer |` tables (every
/// backquoted name in the first cell).
fn documented_commands() -> BTreeSet<String> {
    let doc = std::fs::read_to_string(repo_root().join("docs/host-api.md")).unwrap();
    let mut names = BTreeSet::new();
    let mut in_table = false;
    for line in doc.lines() {
        if line.starts_with("| command | args | answer |") {
            in_table = true;
            continue;
        }
        if !line.starts_with('|') {
            in_table = false;
            continue;
        }
        if !in_table || line.starts_with("| ---") {
            continue;
        }
        let first = line.split('|').nth(1).unwrap_or("");
        for (i, part) in first.split('`').enumerate() {
            if i % 2 == 1 {
                let name = part.split_whitespace().next().unwrap_or("");
                names.insert(name.to_owned());
            }
        }
    }
    names
}

#[test]
fn docs_host_api_lists_exactly_the_real_commands() {
    let documented = documented_commands();
    let mut real: BTreeSet<String> = api::command_names().map(str::to_owned).collect();
    real.extend(schema::raw_commands().iter().map(|c| c.name.to_owned()));
    let missing: Vec<_> = real.difference(&documented).collect();
    let unknown: Vec<_> = documented.difference(&real).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "docs/host-api.md: undocumented commands {missing:?}, documented but unknown {unknown:?}"
    );
}

fn validator(schema: &Value, command: &str, part: &str) -> jsonschema::Validator {
    let s = schema::standalone(schema, command, part).unwrap_or_else(|| panic!("{command}"));
    jsonschema::validator_for(&s).unwrap_or_else(|e| panic!("{command}.{part}: {e}"))
}

fn assert_valid(schema: &Value, command: &str, part: &str, value: &Value) {
    let v = validator(schema, command, part);
    let errors: Vec<String> = v
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{command} {part} does not validate: {errors:#?}\n{value:#}"
    );
}

fn session() -> (tempfile::TempDir, Session) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &fixture("good/hello-app"));
    (tmp, Session::new(dir, session_config()))
}

/// Calls `command` with `args`, checking that the arguments fit the schema and that the real
/// answer validates against it.
fn call(schema: &Value, s: &Session, command: &str, args: Value) -> Value {
    // `null` counts as `{}` (api::args).
    let as_object = if args.is_null() {
        json!({})
    } else {
        args.clone()
    };
    assert_valid(schema, command, "args", &as_object);
    let answer = api::call(s, command, args).unwrap_or_else(|e| panic!("{command}: {e:?}"));
    assert_valid(schema, command, "answer", &answer);
    answer
}

#[test]
fn real_answers_of_a_session_validate_against_the_schema() {
    let schema = schema::host_api_schema();
    let (_t, s) = session();
    let apps = call(&schema, &s, "list_apps", json!({}));
    assert_eq!(apps[0]["name"], "hello-app");
    let mount = call(
        &schema,
        &s,
        "mount_entry",
        json!({"appId": "hello-app", "entryKey": "notes"}),
    );
    let (mount_id, origin) = (mount["mountId"].clone(), mount["origin"].clone());
    let ready = json!({"protocol": PROTOCOL, "version": 1, "type": "app:ready", "requestId": "r0",
                       "appId": "hello-app", "entryKey": "notes", "payload": {}});
    let out = call(
        &schema,
        &s,
        "bridge_message",
        json!({"mountId": mount_id, "origin": origin, "data": ready.to_string()}),
    );
    assert_eq!(out[0]["kind"], "post");
    call(
        &schema,
        &s,
        "bridge_refused",
        json!({"mountId": mount_id, "reason": "bridge.wrong_source", "bytes": 3}),
    );
    call(
        &schema,
        &s,
        "set_visibility",
        json!({"mountId": mount_id, "visible": false}),
    );
    let diag = call(&schema, &s, "bridge_diagnostics", Value::Null);
    assert_eq!(diag["mounts"], 1);
    call(&schema, &s, "sync_mounts", json!({}));
    call(&schema, &s, "launch_target", json!({}));
    let detail = call(&schema, &s, "app_detail", json!({"appId": "hello-app"}));
    assert_eq!(detail["summary"]["name"], "hello-app");
    call(&schema, &s, "list_grants", json!({}));
    for mode in ["disable", "keep-data", "delete-data", "export"] {
        call(
            &schema,
            &s,
            "uninstall_plan",
            json!({"appId": "hello-app", "mode": mode}),
        );
    }
    call(&schema, &s, "audit", json!({"limit": 20}));
    call(&schema, &s, "verify_store", json!({"quick": true}));
    call(&schema, &s, "trusted_keys", json!({}));
    call(&schema, &s, "host_settings", json!({}));
    call(&schema, &s, "dev_status", json!({}));
    call(&schema, &s, "model_settings", json!({}));
    call(
        &schema,
        &s,
        "set_theme",
        json!({"theme": "dark", "effective": "dark"}),
    );
    call(
        &schema,
        &s,
        "open_external",
        json!({"url": "https://example.com/help"}),
    );
    call(&schema, &s, "list_tasks", json!({}));
    let review = call(
        &schema,
        &s,
        "review_install",
        json!({"source": {"path": fixture("good/hello-app")}, "progressId": "p1"}),
    );
    assert_eq!(review["mode"], "update");
    call(
        &schema,
        &s,
        "cancel_review",
        json!({"reviewId": review["reviewId"]}),
    );
    let off = call(
        &schema,
        &s,
        "set_enabled",
        json!({"appId": "hello-app", "enabled": false}),
    );
    assert_eq!(off["enabled"], false);
    call(&schema, &s, "unmount", json!({"mountId": mount_id}));
    // The outbox's events (install progress of the review, store changes, ...) validate as
    // `Event`s, and each known kind's payload against its own schema.
    let batch = call(&schema, &s, "next_events", json!({"after": 0}));
    let events = batch["events"].as_array().unwrap();
    assert!(events.iter().any(|e| e["kind"] == "install:progress"));
    for e in events {
        let kind = e["kind"].as_str().unwrap();
        let mut payload = schema["events"][kind]["payload"].clone();
        assert!(!payload.is_null(), "event kind {kind} not in the schema");
        if payload == json!(true) {
            payload = json!({});
        }
        payload["$defs"] = schema["$defs"].clone();
        let v = jsonschema::validator_for(&payload).unwrap();
        assert!(v.is_valid(&e["payload"]), "{kind}: {}", e["payload"]);
    }
    let gone = call(
        &schema,
        &s,
        "uninstall",
        json!({"appId": "hello-app", "mode": "keep-data"}),
    );
    assert!(gone["kept"].is_string());
}

#[test]
fn arguments_the_schema_refuses_are_refused_by_the_command_too() {
    // A typo in an argument name or a wrong type: the schema (so the TypeScript types) and the
    // decoder agree, and the call changes nothing.
    let schema = schema::host_api_schema();
    let (_t, s) = session();
    for (command, bad) in [
        (
            "mount_entry",
            json!({"appId": "hello-app", "entrykey": "notes"}),
        ),
        (
            "set_enabled",
            json!({"appId": "hello-app", "enabled": "no"}),
        ),
        ("list_apps", json!({"extra": 1})),
        (
            "uninstall",
            json!({"appId": "hello-app", "mode": "everything"}),
        ),
        ("review_install", json!({"source": {"url": "https://x"}})),
        ("task_detail", json!({"appId": "hello-app"})),
    ] {
        assert!(
            !validator(&schema, command, "args").is_valid(&bad),
            "{command}: the schema accepts {bad}"
        );
        let e = api::call(&s, command, bad.clone()).expect_err(&bad.to_string());
        assert_eq!(e.code, ErrorCode::ApiBadArguments, "{command} {bad}");
    }
    let apps = api::call(&s, "list_apps", Value::Null).unwrap();
    assert_eq!(apps[0]["enabled"], true, "nothing changed");
}
