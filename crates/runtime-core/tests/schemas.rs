//! The published schemas are generated from the Rust types; this test fails when the committed
//! files drift (regenerate with `APPHOST_BLESS=1 cargo test -p runtime-core --test schemas`),
//! and checks real outputs against them.

mod support_client;

use std::path::PathBuf;
use std::sync::Arc;

use runtime_core::app_server::schema::{appserver_schema, runtime_schema};
use runtime_core::backend::*;
use serde_json::{json, Value};
use support_client::*;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn check(rel: &str, generated: Value) {
    let path = repo().join(rel);
    let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
    if std::env::var_os("APPHOST_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "{rel} drifted from the Rust types; regenerate with APPHOST_BLESS=1"
    );
}

#[test]
fn committed_schemas_match_the_rust_types() {
    check(
        "schemas/appserver/appserver.v0.schema.json",
        appserver_schema(),
    );
    check("schemas/runtime/read-model.schema.json", runtime_schema());
}

#[test]
fn every_error_code_and_method_is_documented() {
    let doc = std::fs::read_to_string(repo().join("docs/app-server.md")).unwrap();
    for code in runtime_core::app_server::protocol::codes::ALL {
        assert!(
            doc.contains(&format!("`{code}`")),
            "docs/app-server.md lacks error code {code}"
        );
    }
    for m in runtime_core::app_server::METHODS {
        assert!(
            doc.contains(&format!("`{m}`")),
            "docs/app-server.md lacks method {m}"
        );
    }
    for t in [
        "turn.submitted",
        "turn.failed",
        "output.spilled",
        "action.required",
        "snapshot.repaired",
        "evidence.changed",
    ] {
        assert!(
            doc.contains(&format!("`{t}`")),
            "docs/app-server.md lacks event {t}"
        );
    }
}

fn validator_for_def(bundle: &Value, pointer: &str) -> jsonschema::Validator {
    let mut root = bundle.clone();
    let target = bundle
        .pointer(pointer)
        .unwrap_or_else(|| panic!("{pointer}"))
        .clone();
    root.as_object_mut().unwrap().remove("allOf");
    root.as_object_mut()
        .unwrap()
        .insert("allOf".into(), json!([target]));
    jsonschema::validator_for(&root).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_results_validate_against_the_published_schemas() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.push_text(&["hi"]);
    let mut c = Client::start(runtime(
        tmp.path(),
        Some(Arc::new(b) as Arc<dyn ExecutionBackend>),
    ));
    let init = c.init().await;
    let bundle = appserver_schema();
    let rt = runtime_schema();
    let check = |v: &jsonschema::Validator, inst: &Value, what: &str| {
        let errs: Vec<String> = v
            .iter_errors(inst)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errs.is_empty(), "{what}: {errs:?}\n{inst}");
    };
    check(
        &validator_for_def(&bundle, "/x-methods/initialize/result"),
        &init,
        "initialize",
    );
    let s = c.ok("agentSession/start", json!({"appId": "demo"})).await;
    check(
        &validator_for_def(&bundle, "/x-methods/agentSession~1start/result"),
        &s,
        "start",
    );
    let sid = s["session"]["sessionId"].clone();
    let t = c
        .ok(
            "agentSession/turn/start",
            json!({"sessionId": sid, "input": {"text": "x"}}),
        )
        .await;
    check(
        &validator_for_def(&bundle, "/x-methods/agentSession~1turn~1start/result"),
        &t,
        "turn/start",
    );
    c.wait_type("turn.completed").await;
    let r = c.ok("agentSession/read", json!({"sessionId": sid})).await;
    check(
        &validator_for_def(&bundle, "/x-methods/agentSession~1read/result"),
        &r,
        "read",
    );
    check(
        &validator_for_def(&rt, "/allOf/0"),
        &r["detail"],
        "read model",
    );
    let e = c
        .ok(
            "evidence/export",
            json!({"sessionId": sid, "includeEvents": true}),
        )
        .await;
    check(
        &validator_for_def(&bundle, "/x-methods/evidence~1export/result"),
        &e,
        "export",
    );
}
