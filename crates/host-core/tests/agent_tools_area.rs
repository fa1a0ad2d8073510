//! The agent's host tools through the bridge's own runtime, against the attacks of the review:
//! an approved `storage_write {path: "storage.sqlite"}` lands in `files/` and `lime.storage`
//! keeps answering; a write over the manifest's `storage.quota` is `quota_exceeded` and writes
//! nothing; `artifact_write` asks for approval by default (host setting
//! `agent.artifactWriteApproval`) and makes an artifact that `lime.artifacts.list` shows, with
//! the run and tool call in its provenance.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use host_core::api::Session;
use host_core::foundation::paths::DataDir;
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::install::store::Store;
use runtime_core::backend::{BackendEvent, ScriptStep, ScriptedBackend};
use serde_json::{json, Value};
use support::agent::{call, scripted_backend, session, set_placeholder_model, wait_status};
use support::{copy_dir, fixture, install};

const APP: &str = "agent-a";

/// hello-app as `agent-a`: lime.agent and lime.artifacts on `notes`, a 128 KB storage quota.
fn package(tmp: &Path) -> PathBuf {
    let pkg = tmp.join("pkg");
    copy_dir(&fixture("good/hello-app"), &pkg);
    let app_md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&app_md)
        .unwrap()
        .replace("hello-app", APP)
        .replace(
            "    lime.storage: \"^0.10.0\"\n",
            "    lime.storage: \"^0.10.0\"\n    lime.agent: \"^0.10.0\"\n    lime.artifacts: \"^0.10.0\"\n",
        )
        .replace(
            "requiredCapabilities: [lime.ui, lime.storage]",
            "requiredCapabilities: [lime.ui, lime.storage, lime.agent, lime.artifacts]",
        )
        .replace(
            "permissions: [notes_storage]",
            "permissions: [notes_storage, notes_artifacts]",
        )
        .replace(
            "  placement: local-sqlite\n",
            "  placement: local-sqlite\n  quota: 128KB\n",
        );
    std::fs::write(&app_md, text).unwrap();
    let perms = pkg.join("app.permissions.yaml");
    let mut p = std::fs::read_to_string(&perms).unwrap();
    p.push_str("  - key: notes_artifacts\n    scope: artifact\n    access: read-write\n    required: true\n    reason: Save reports.\n");
    std::fs::write(&perms, p).unwrap();
    pkg
}

/// One capability call from a mounted `notes` frame: the `host:response` / `host:error` payload.
fn invoke(s: &Session, capability: &str, method: &str, args: Value) -> Value {
    s.with_bridge(|host, store| {
        let m = host.mount(store, APP, "notes").unwrap();
        let send = |host: &mut host_core::hosting::bridge::host::BridgeHost,
                    id: &str,
                    kind: &str,
                    p: Value| {
            let raw = json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
                             "appId": APP, "entryKey": "notes", "payload": p})
            .to_string();
            host.handle(store, &m.mount_id, &m.origin, &raw)
        };
        send(host, "r0", "app:ready", json!({}));
        let out = send(
            host,
            "r1",
            "capability:invoke",
            json!({"capability": capability, "method": method, "args": args}),
        );
        let v = serde_json::to_value(&out).unwrap();
        find_payload(&v).unwrap_or_else(|| panic!("no response: {v}"))
    })
    .unwrap()
}

/// The payload of the first `host:response` / `host:error` message in `v`, wherever it sits.
fn find_payload(v: &Value) -> Option<Value> {
    match v {
        Value::Object(o) => {
            if matches!(
                o.get("type").and_then(Value::as_str),
                Some("host:response" | "host:error")
            ) {
                return o.get("payload").cloned();
            }
            o.values().find_map(find_payload)
        }
        Value::Array(a) => a.iter().find_map(find_payload),
        Value::String(t) if t.contains("host:") => serde_json::from_str::<Value>(t)
            .ok()
            .and_then(|x| find_payload(&x)),
        _ => None,
    }
}

fn tool_call(id: &str, name: &str, args: &Value) -> Vec<ScriptStep> {
    vec![
        ScriptStep::Emit(BackendEvent::ToolCallDelta {
            index: 0,
            id: Some(id.into()),
            name: Some(name.into()),
            arguments_delta: args.to_string(),
        }),
        ScriptStep::Emit(BackendEvent::Finished {
            reason: "tool_calls".into(),
        }),
    ]
}

fn text(t: &str) -> Vec<ScriptStep> {
    vec![
        ScriptStep::Emit(BackendEvent::TextDelta(t.into())),
        ScriptStep::Emit(BackendEvent::Finished {
            reason: "stop".into(),
        }),
    ]
}

/// Runs one task whose model makes one tool call, approving it when asked; returns the detail
/// and whether an approval was asked.
fn run_tool(
    s: &Session,
    backend: &ScriptedBackend,
    id: &str,
    tool: &str,
    args: Value,
) -> (Value, bool) {
    backend.push(tool_call(id, tool, &args));
    backend.push(text("done"));
    let started = invoke(
        s,
        "lime.agent",
        "startTask",
        json!({"input": format!("run {id}")}),
    );
    let task = started["value"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{started}"))
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut asked = false;
    loop {
        let d = call(s, "task_detail", json!({"appId": APP, "taskId": &task}));
        match d["task"]["status"].as_str().unwrap() {
            "waiting_approval" => {
                asked = true;
                if let Some(action) = d["task"]["pendingActions"][0]["actionId"].as_str() {
                    call(
                        s,
                        "task_respond",
                        json!({"appId": APP, "taskId": &task, "actionId": action, "decision": "approve"}),
                    );
                }
            }
            "succeeded" | "failed" => return (wait_status(s, APP, &task, "succeeded"), asked),
            _ => {}
        }
        assert!(Instant::now() < deadline, "task stuck: {d}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn tool_failure(detail: &Value) -> Option<String> {
    let t = detail["events"].to_string();
    ["quota_exceeded", "link_refused", "invalid_path"]
        .into_iter()
        .find(|c| t.contains(c))
        .map(str::to_owned)
}

#[test]
fn the_agent_tools_stay_in_files_under_quota_and_make_real_artifacts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &package(tmp.path()));
    set_placeholder_model(&dir);
    let s = session(&dir);
    let backend = scripted_backend(&s);
    let app_dir = dir.apps_data().join(APP);
    let set = invoke(
        &s,
        "lime.storage",
        "set",
        json!({"key": "k", "value": "v1"}),
    );
    assert!(set.get("code").is_none(), "{set}");

    // 1. The attack: an approved write to `storage.sqlite`. It lands in files/.
    let (d, asked) = run_tool(
        &s,
        &backend,
        "c1",
        "storage_write",
        json!({"path": "storage.sqlite", "content": "hello"}),
    );
    assert!(asked);
    assert_eq!(tool_failure(&d), None, "{d}");
    assert_eq!(
        std::fs::read(app_dir.join("files/storage.sqlite")).unwrap(),
        b"hello"
    );
    let got = invoke(&s, "lime.storage", "get", json!({"key": "k"}));
    assert_eq!(got["value"], "v1", "lime.storage still answers: {got}");

    // 2. Over the manifest's 128 KB quota: refused, nothing written.
    let before = std::fs::read_dir(app_dir.join("files")).unwrap().count();
    let (d, _) = run_tool(
        &s,
        &backend,
        "c2",
        "storage_write",
        json!({"path": "big.txt", "content": "x".repeat(200_000)}),
    );
    assert_eq!(tool_failure(&d).as_deref(), Some("quota_exceeded"), "{d}");
    assert!(!app_dir.join("files/big.txt").exists());
    assert_eq!(
        std::fs::read_dir(app_dir.join("files")).unwrap().count(),
        before
    );

    // 3. artifact_write asks by default and makes a listed artifact with its provenance.
    let (d, asked) = run_tool(
        &s,
        &backend,
        "c3",
        "artifact_write",
        json!({"title": "Weekly report", "content": "# Report", "kind": "markdown"}),
    );
    assert!(asked, "the default policy asks");
    assert_eq!(tool_failure(&d), None, "{d}");
    let list = invoke(&s, "lime.artifacts", "list", json!({}));
    let items = list["value"]["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"));
    assert_eq!(items.len(), 1, "{list}");
    assert_eq!(items[0]["name"], "Weekly report");
    assert_eq!(items[0]["provenance"]["appVersion"], "1.0.0");
    let agent = &items[0]["provenance"]["agent"];
    let (run, call_id) = (
        agent["runId"].as_str().unwrap(),
        agent["toolCallId"].as_str().unwrap(),
    );
    assert!(!run.is_empty() && call_id.starts_with("call_"), "{agent}");
    assert!(
        d["task"].to_string().contains(run),
        "the task's run: {agent} {d}"
    );
    assert!(
        d["events"].to_string().contains(call_id),
        "the tool call: {agent}"
    );
    assert!(!app_dir.join("artifacts").exists());

    // 4. With the host setting `allow`, the next one runs without asking.
    {
        let (locked, _) = Store::open_locked(&dir).unwrap();
        locked
            .set_setting(
                host_core::foundation::setting_keys::ARTIFACT_WRITE_APPROVAL,
                Some("allow"),
            )
            .unwrap();
        assert!(locked
            .set_setting(
                host_core::foundation::setting_keys::ARTIFACT_WRITE_APPROVAL,
                Some("sometimes")
            )
            .is_err());
    }
    let (d, asked) = run_tool(
        &s,
        &backend,
        "c4",
        "artifact_write",
        json!({"title": "Second", "content": "two"}),
    );
    assert!(!asked, "{d}");
    let list = invoke(&s, "lime.artifacts", "list", json!({}));
    assert_eq!(
        list["value"]["items"].as_array().unwrap().len(),
        2,
        "{list}"
    );
}
