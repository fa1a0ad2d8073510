//! The app-facing evidence pack (`lime.evidence.export`) carries the Agent Runtime standard's
//! `runtimeCorrelation` (issue 19 §3): with `taskId` the ids of the app's task's latest run
//! (runtime, session, thread, turn, task, run, trace), without it the call's trace id and every
//! other id named `missing`. Contract: the object has exactly the standard's ids (its fixture
//! `benchmark-trial-pack.json`) plus `missing`. Attacks: another app's task id, a malformed id.

mod support;

use host_core::api::Session;
use host_core::foundation::paths::DataDir;
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::capability::services::CORRELATION_IDS;
use serde_json::{json, Value};
use support::agent::{scripted_backend, session, set_placeholder_model, wait_status};
use support::{hello_app_as, install};

/// hello-app renamed `name`, requiring lime.agent and lime.evidence on its `notes` entry.
fn app(tmp: &std::path::Path, name: &str) -> std::path::PathBuf {
    hello_app_as(
        tmp,
        name,
        &[
            (
                "    lime.storage: \"^0.10.0\"\n",
                "    lime.storage: \"^0.10.0\"\n    lime.agent: \"^0.10.0\"\n    lime.evidence: \"^0.10.0\"\n",
            ),
            (
                "requiredCapabilities: [lime.ui, lime.storage]",
                "requiredCapabilities: [lime.ui, lime.storage, lime.agent, lime.evidence]",
            ),
        ],
    )
}

/// Calls `capability.method` from a fresh mount of `app`'s `notes` entry: `Ok(value)` or
/// `Err(host:error payload)`.
fn call(
    s: &Session,
    app: &str,
    capability: &str,
    method: &str,
    args: Value,
) -> Result<Value, Value> {
    s.with_bridge(|host, store| {
        let m = host.mount(store, app, "notes").unwrap();
        let send = |host: &mut host_core::hosting::bridge::host::BridgeHost,
                    id: &str,
                    kind: &str,
                    p: Value| {
            let raw = json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
                             "appId": app, "entryKey": "notes", "payload": p})
            .to_string();
            serde_json::to_value(host.handle(store, &m.mount_id, &m.origin, &raw)).unwrap()
        };
        send(host, "r0", "app:ready", json!({}));
        let out = send(
            host,
            "r1",
            "capability:invoke",
            json!({"capability": capability, "method": method, "args": args}),
        );
        for o in out.as_array().unwrap() {
            let msg = o.get("message").unwrap_or(o);
            if msg["requestId"] == "r1" {
                return match msg["type"].as_str() {
                    Some("host:response") => Ok(msg["payload"]["value"].clone()),
                    _ => Err(msg["payload"].clone()),
                };
            }
        }
        panic!("no answer: {out}");
    })
    .unwrap()
}

fn standard_ids() -> Vec<String> {
    let dir = std::env::var_os("APPHOST_STANDARDS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(support::standards_dir);
    let pack: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("agentruntime/fixtures/benchmark-trial-pack.json"))
            .unwrap(),
    )
    .unwrap();
    pack["runtimeCorrelation"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

/// The standard's ids, each a non-empty string or `null`, and `missing` naming exactly the
/// `null` ones.
fn assert_contract(corr: &Value) {
    let mut ids = standard_ids();
    ids.sort();
    let mut ours: Vec<String> = CORRELATION_IDS.iter().map(|s| s.to_string()).collect();
    ours.sort();
    assert_eq!(ours, ids, "the host's ids are the standard's");
    let obj = corr.as_object().expect("an object");
    let mut keys: Vec<&String> = obj.keys().filter(|k| *k != "missing").collect();
    keys.sort();
    assert_eq!(keys, ids.iter().collect::<Vec<_>>(), "{corr}");
    let mut nulls = Vec::new();
    for k in &ids {
        match &corr[k] {
            Value::Null => nulls.push(k.clone()),
            Value::String(s) => assert!(!s.is_empty(), "{k} in {corr}"),
            other => panic!("{k} is {other}"),
        }
    }
    let mut missing: Vec<String> = corr["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_owned())
        .collect();
    missing.sort();
    nulls.sort();
    assert_eq!(
        missing, nulls,
        "missing names exactly the absent ids: {corr}"
    );
}

#[test]
fn an_export_for_a_task_carries_its_runs_runtime_correlation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &app(tmp.path(), "ev-a"));
    set_placeholder_model(&dir);
    let s = session(&dir);
    let backend = scripted_backend(&s);
    backend.push_text(&["done"]);
    let started = call(
        &s,
        "ev-a",
        "lime.agent",
        "startTask",
        json!({"input": "go"}),
    )
    .unwrap();
    let task = started["taskId"].as_str().unwrap().to_owned();
    let detail = wait_status(&s, "ev-a", &task, "succeeded");

    let pack = call(
        &s,
        "ev-a",
        "lime.evidence",
        "export",
        json!({"taskId": task}),
    )
    .unwrap();
    let corr = &pack["runtimeCorrelation"];
    assert_contract(corr);
    assert_eq!(corr["taskId"], task.as_str());
    assert_eq!(corr["sessionId"], started["sessionId"]);
    assert_eq!(corr["traceId"], started["traceId"]);
    assert_eq!(
        corr["turnId"], detail["task"]["runs"][0]["turnId"],
        "{corr} {detail}"
    );
    for k in [
        "runtimeId",
        "sessionId",
        "threadId",
        "turnId",
        "taskId",
        "traceId",
    ] {
        assert!(corr[k].is_string(), "{k}: {corr}");
    }
    assert_eq!(pack["schemaVersion"], "apphost.evidence-pack.v1");
    assert_valid_pack(&pack);

    // Without a task: the export call's own trace, the rest named missing.
    let plain = call(&s, "ev-a", "lime.evidence", "export", json!({})).unwrap();
    let corr = &plain["runtimeCorrelation"];
    assert_contract(corr);
    assert!(
        corr["traceId"].as_str().unwrap().starts_with("trace"),
        "{corr}"
    );
    assert_eq!(corr["missing"].as_array().unwrap().len(), 6, "{corr}");
    assert_valid_pack(&plain);
}

/// The pack validates against the published result schema of `lime.evidence.export`.
fn assert_valid_pack(pack: &Value) {
    use host_core::hosting::capability::contract::{self, emit};
    let ns = contract::all()
        .into_iter()
        .find(|n| n.capability == "lime.evidence")
        .unwrap();
    let doc = emit::namespace_schema(&ns);
    let schema = emit::method_schema(&doc, "export", "result").unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(pack).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{pack}: {errors:?}");
}

/// Attack: an app asks for the correlation of another app's task (ids it may have seen in a
/// shared event or guessed). `APP_E904` `evidence.task_not_found`, no pack, nothing of the
/// other task's ids; a malformed id is `APP_E900`.
#[test]
fn another_apps_task_is_not_found_and_leaks_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &app(tmp.path(), "ev-a"));
    install(&dir, &app(tmp.path(), "ev-b"));
    set_placeholder_model(&dir);
    let s = session(&dir);
    let backend = scripted_backend(&s);
    backend.push_text(&["done"]);
    let started = call(
        &s,
        "ev-a",
        "lime.agent",
        "startTask",
        json!({"input": "go"}),
    )
    .unwrap();
    let task = started["taskId"].as_str().unwrap().to_owned();
    wait_status(&s, "ev-a", &task, "succeeded");

    let e = call(
        &s,
        "ev-b",
        "lime.evidence",
        "export",
        json!({"taskId": task}),
    )
    .unwrap_err();
    assert_eq!(e["code"], "APP_E904", "{e}");
    assert_eq!(e["causeCode"], "evidence.task_not_found", "{e}");
    let text = e.to_string();
    for leak in [&started["sessionId"], &started["traceId"]] {
        assert!(!text.contains(leak.as_str().unwrap()), "{text}");
    }
    for bad in [
        json!(7),
        json!(""),
        json!("x".repeat(129)),
        json!({"id": 1}),
    ] {
        let e = call(
            &s,
            "ev-a",
            "lime.evidence",
            "export",
            json!({"taskId": bad}),
        )
        .unwrap_err();
        assert_eq!(e["code"], "APP_E900", "{bad}: {e}");
        assert_eq!(e["causeCode"], "evidence.invalid_argument", "{bad}: {e}");
    }
    let e = call(
        &s,
        "ev-a",
        "lime.evidence",
        "export",
        json!({"taskId": "task_nope"}),
    )
    .unwrap_err();
    assert_eq!(e["causeCode"], "evidence.task_not_found", "{e}");
}
