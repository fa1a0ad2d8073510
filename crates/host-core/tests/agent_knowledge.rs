//! An agent task that declares a knowledge binding (`startTask({knowledge: [...]})`) gets the
//! `knowledge_search` host tool; its citations are in the task's events (the tool result) and in
//! an evidence record. A task that names an undeclared or unbound template is refused with a
//! stable code and starts nothing; a task without the binding has no such tool.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use host_core::api::Session;
use host_core::foundation::paths::DataDir;
use host_core::hosting::app_knowledge;
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::install::store::Store;
use runtime_core::backend::{BackendEvent, ScriptStep, ScriptedBackend};
use serde_json::{json, Value};
use support::agent::{call, scripted_backend, session, set_placeholder_model};
use support::{copy_dir, fixture, install};

const APP: &str = "kb-agent";

fn package(tmp: &Path) -> PathBuf {
    let pkg = tmp.join("pkg");
    copy_dir(&fixture("good/hello-app"), &pkg);
    let app_md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&app_md)
        .unwrap()
        .replace("hello-app", APP)
        .replace(
            "    lime.storage: \"^0.10.0\"\n",
            "    lime.storage: \"^0.10.0\"\n    lime.agent: \"^0.10.0\"\n    lime.knowledge: \"^0.10.0\"\n",
        )
        .replace(
            "requiredCapabilities: [lime.ui, lime.storage]",
            "requiredCapabilities: [lime.ui, lime.storage, lime.agent]",
        )
        .replacen(
            "runtimePackage:",
            "knowledgeTemplates:\n  - {key: handbook, standard: agentknowledge, type: pack, required: true}\n  - {key: extra, standard: agentknowledge, type: pack}\nruntimePackage:",
            1,
        );
    std::fs::write(&app_md, text).unwrap();
    pkg
}

fn invoke(s: &Session, capability: &str, method: &str, args: Value) -> Value {
    s.with_bridge(|host, store| {
        let m = host.mount(store, APP, "notes").unwrap();
        let mut send = |id: &str, kind: &str, p: Value| {
            let raw = json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
                             "appId": APP, "entryKey": "notes", "payload": p})
            .to_string();
            host.handle(store, &m.mount_id, &m.origin, &raw)
        };
        send("r0", "app:ready", json!({}));
        let out = send(
            "r1",
            "capability:invoke",
            json!({"capability": capability, "method": method, "args": args}),
        );
        let v = serde_json::to_value(&out).unwrap();
        find_payload(&v).unwrap_or_else(|| panic!("no response: {v}"))
    })
    .unwrap()
}

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

fn wait_end(s: &Session, task: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let d = call(s, "task_detail", json!({"appId": APP, "taskId": task}));
        if matches!(d["task"]["status"].as_str(), Some("succeeded" | "failed")) {
            return d;
        }
        assert!(Instant::now() < deadline, "task stuck: {d}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

struct Host {
    _tmp: tempfile::TempDir,
    dir: DataDir,
    s: Session,
    backend: ScriptedBackend,
    docs: PathBuf,
}

fn host() -> Host {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &package(tmp.path()));
    set_placeholder_model(&dir);
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(
        docs.join("refunds.md"),
        "# Refunds\nRefunds reach the card in five days.\n",
    )
    .unwrap();
    {
        let (store, _) = Store::open_locked(&dir).unwrap();
        app_knowledge::bind(&store, APP, "handbook", &docs).unwrap();
    }
    let s = session(&dir);
    let backend = scripted_backend(&s);
    Host {
        _tmp: tmp,
        dir,
        s,
        backend,
        docs,
    }
}

#[test]
fn a_task_with_a_knowledge_binding_searches_and_its_citations_reach_events_and_evidence() {
    let h = host();
    h.backend.push(tool_call(
        "c1",
        "knowledge_search",
        &json!({"query": "refunds card"}),
    ));
    h.backend
        .push(text("Refunds take five days [refunds.md § Refunds]."));
    let started = invoke(
        &h.s,
        "lime.agent",
        "startTask",
        json!({"input": "how long do refunds take?", "knowledge": ["handbook"]}),
    );
    let task = started["value"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{started}"))
        .to_owned();
    let d = wait_end(&h.s, &task);
    assert_eq!(d["task"]["status"], "succeeded", "{d}");
    let events = d["events"].to_string();
    assert!(
        events.contains("refunds.md")
            && events.contains("Refunds")
            && events.contains("\\\"start\\\""),
        "citations in the tool result: {events}"
    );
    // The model was offered the tool (its spec went out with the request).
    let offered = h
        .backend
        .requests()
        .iter()
        .any(|r| r.tools.iter().any(|t| t.name == "knowledge_search"));
    assert!(offered);
    // The evidence record.
    // lime.evidence is not declared by this app: read its evidence store directly.
    let records =
        runtime_core::app_evidence::AppEvidence::open_read_only(&h.dir.apps_data().join(APP))
            .unwrap()
            .unwrap()
            .list(Some("knowledge.citations"), None, 10)
            .unwrap();
    let r = &records.items[0];
    assert_eq!(r.data["template"], "handbook");
    assert_eq!(r.data["citations"][0]["document"], "refunds.md");
    assert_eq!(r.data["citations"][0]["section"], "Refunds");
    let _ = &h.docs;
}

#[test]
fn undeclared_or_unbound_templates_are_refused_and_plain_tasks_have_no_search_tool() {
    let h = host();
    for (knowledge, code, cause) in [
        (
            json!(["nope"]),
            "APP_E002",
            "knowledge.template_not_declared",
        ),
        (json!(["extra"]), "APP_E003", "knowledge.not_bound"),
        (json!("handbook"), "APP_E900", "agent.invalid_argument"),
        (json!([42]), "APP_E900", "agent.invalid_argument"),
    ] {
        let e = invoke(
            &h.s,
            "lime.agent",
            "startTask",
            json!({"input": "x", "knowledge": knowledge}),
        );
        assert_eq!(
            (e["code"].as_str(), e["causeCode"].as_str()),
            (Some(code), Some(cause)),
            "{knowledge}: {e}"
        );
    }
    let listed = call(&h.s, "list_tasks", json!({}));
    assert_eq!(
        listed.as_array().map(Vec::len),
        Some(0),
        "nothing started: {listed}"
    );
    // Without the binding, the model is not offered the tool, and calling it anyway fails.
    h.backend.push(tool_call(
        "c2",
        "knowledge_search",
        &json!({"query": "refunds"}),
    ));
    h.backend.push(text("done"));
    let started = invoke(&h.s, "lime.agent", "startTask", json!({"input": "plain"}));
    let task = started["value"]["taskId"].as_str().unwrap().to_owned();
    let d = wait_end(&h.s, &task);
    assert!(!h
        .backend
        .requests()
        .iter()
        .any(|r| r.tools.iter().any(|t| t.name == "knowledge_search")));
    assert!(!d["events"].to_string().contains("refunds.md"), "{d}");
}
