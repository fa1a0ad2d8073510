//! Per-task token budgets from an app (issue 19 §2): `startTask({budget: {maxTokens}})` ends a
//! run that uses more with `error_max_budget`; the app's budget still applies (the lower wins);
//! a malformed budget is `APP_E900` `agent.invalid_budget` and starts nothing.

mod support;

use host_core::api::Session;
use host_core::foundation::paths::DataDir;
use host_core::hosting::bridge::message::PROTOCOL;
use runtime_core::backend::{BackendEvent, ScriptStep};
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

fn usage_answer() -> Vec<ScriptStep> {
    vec![
        ScriptStep::Emit(BackendEvent::TextDelta("answer".into())),
        ScriptStep::Emit(BackendEvent::Usage {
            input_tokens: 15,
            output_tokens: 10,
        }),
        ScriptStep::Emit(BackendEvent::Finished {
            reason: "stop".into(),
        }),
    ]
}

#[test]
fn a_task_over_its_budget_ends_error_max_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &app(tmp.path(), "bud"));
    set_placeholder_model(&dir);
    let s = session(&dir);
    let backend = scripted_backend(&s);
    backend.push(usage_answer());
    backend.push(usage_answer());
    let small = call(
        &s,
        "bud",
        "lime.agent",
        "startTask",
        json!({"input": "go", "budget": {"maxTokens": 5}}),
    )
    .unwrap();
    let task = small["taskId"].as_str().unwrap();
    let d = wait_status(&s, "bud", task, "failed");
    assert_eq!(d["task"]["result"]["errorCode"], "error_max_budget", "{d}");
    let roomy = call(
        &s,
        "bud",
        "lime.agent",
        "startTask",
        json!({"input": "go", "budget": {"maxTokens": 1000}}),
    )
    .unwrap();
    wait_status(&s, "bud", roomy["taskId"].as_str().unwrap(), "succeeded");
}

/// Attack: budgets that are not whole positive token counts (a negative, a float, a huge
/// number, an extra field, a string). Refused with `agent.invalid_budget`; no task starts.
#[test]
fn malformed_budgets_are_refused_and_start_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &app(tmp.path(), "bud"));
    set_placeholder_model(&dir);
    let s = session(&dir);
    let _backend = scripted_backend(&s);
    for bad in [
        json!({"maxTokens": 0}),
        json!({"maxTokens": -5}),
        json!({"maxTokens": 1.5}),
        json!({"maxTokens": 10_000_000_000_000u64}),
        json!({"maxTokens": "100"}),
        json!({"maxTokens": 10, "maxDollars": 1}),
        json!(100),
        json!([]),
    ] {
        let e = call(
            &s,
            "bud",
            "lime.agent",
            "startTask",
            json!({"input": "go", "budget": bad}),
        )
        .unwrap_err();
        assert_eq!(e["code"], "APP_E900", "{bad}: {e}");
        assert_eq!(e["causeCode"], "agent.invalid_budget", "{bad}: {e}");
    }
    let listed = call(&s, "bud", "lime.agent", "listTasks", json!({})).unwrap();
    assert_eq!(listed["items"], json!([]), "{listed}");
}
