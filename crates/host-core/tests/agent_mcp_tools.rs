//! An agent task that binds MCP tools (`startTask({tools: [...]})`) gets them in its turns under
//! namespaced names, with the server's schema; each call goes through the broker with the app
//! as the caller (grant, policy, audit with the arguments' hash); a destructive tool pauses the
//! turn for the user's answer, which the app cannot give. Attacks: a tool not declared or not
//! granted (refused at start, nothing created), another server's tool under a squatted name, a
//! server that hangs / floods / answers malformed JSON during a task, approval answered by the
//! app, a grant revoked mid-task, and a cancel that must reach the server. A task's knowledge
//! and tool bindings survive a host restart (`retryTask` in a new session offers them again).
//! Uses the real stdio test server `fixtures/mcp/test_server.py`.

mod support;

use std::time::{Duration, Instant};

use host_core::api::Session;
use host_core::foundation::paths::DataDir;
use host_core::hosting::app_knowledge;
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::tools::policy::AdminPolicy;
use host_core::hosting::tools::{registry, ServerSpec, ToolRef, Transport};
use host_core::install::store::Store;
use runtime_core::backend::{BackendEvent, ScriptStep, ScriptedBackend};
use serde_json::{json, Value};
use support::agent::{call, scripted_backend, session, set_placeholder_model};
use support::{hello_app_as, install, repo_root};

const APP: &str = "mcp-agent";

fn spec(timeout_ms: u64) -> ServerSpec {
    ServerSpec {
        transport: Transport::Stdio {
            command: "/usr/bin/python3".into(),
            args: vec![repo_root()
                .join("fixtures/mcp/test_server.py")
                .display()
                .to_string()],
            env: Default::default(),
        },
        secrets: Default::default(),
        timeout_ms: Some(timeout_ms),
    }
}

struct Host {
    _tmp: tempfile::TempDir,
    dir: DataDir,
    s: Session,
    backend: ScriptedBackend,
}

/// The app declares t/echo, t/delete_note (provider form), t/hang, t/flood, t/malformed,
/// t/secret_digest (not granted) and the knowledge template `handbook` (bound); server `t`
/// (and a squatter `u` listing the same tools) are added; the declared ones but
/// secret_digest are granted, and t/add is granted but not declared.
fn host() -> Host {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let refs = "toolRefs:\n  - {key: t/echo}\n  - {key: delete_note, provider: t}\n  - {key: t/hang}\n  - {key: t/flood}\n  - {key: t/malformed}\n  - {key: t/secret_digest}\nknowledgeTemplates:\n  - {key: handbook, standard: agentknowledge, type: pack}\nruntimePackage:";
    let pkg = hello_app_as(
        tmp.path(),
        APP,
        &[
            ("runtimePackage:", refs),
            (
                "    lime.storage: \"^0.10.0\"\n",
                "    lime.storage: \"^0.10.0\"\n    lime.agent: \"^0.10.0\"\n    lime.tools: \"^0.10.0\"\n    lime.knowledge: \"^0.10.0\"\n",
            ),
            (
                "requiredCapabilities: [lime.ui, lime.storage]",
                "requiredCapabilities: [lime.ui, lime.storage, lime.agent]",
            ),
        ],
    );
    install(&dir, &pkg);
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
        let policy = AdminPolicy::default();
        registry::add(&store, &policy, "t", &spec(1500)).unwrap();
        registry::add(&store, &policy, "u", &spec(1500)).unwrap();
        for t in [
            "t/echo",
            "t/delete_note",
            "t/hang",
            "t/flood",
            "t/malformed",
            "t/add",
        ] {
            registry::grant(&store, &policy, APP, &ToolRef::parse(t).unwrap()).unwrap();
        }
        app_knowledge::bind(&store, APP, "handbook", &docs).unwrap();
    }
    let s = session(&dir);
    let backend = scripted_backend(&s);
    Host {
        _tmp: tmp,
        dir,
        s,
        backend,
    }
}

fn invoke(s: &Session, method: &str, args: Value) -> Value {
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
            json!({"capability": "lime.agent", "method": method, "args": args}),
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

fn start(h: &Host, args: Value) -> String {
    let started = invoke(&h.s, "startTask", args);
    started["value"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{started}"))
        .to_owned()
}

fn wait(s: &Session, task: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let d = call(s, "task_detail", json!({"appId": APP, "taskId": task}));
        if done(&d) {
            return d;
        }
        assert!(Instant::now() < deadline, "task stuck: {d}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_end(s: &Session, task: &str) -> Value {
    wait(s, task, |d| {
        matches!(
            d["task"]["status"].as_str(),
            Some("succeeded" | "failed" | "cancelled")
        )
    })
}

fn wait_pending(s: &Session, task: &str) -> String {
    let d = wait(s, task, |d| {
        d["task"]["pendingActions"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
    });
    d["task"]["pendingActions"][0]["actionId"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The `tool.failed` codes in a task's events, in order.
fn failed_codes(d: &Value) -> Vec<String> {
    d["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "tool:call" && e["subtype"] == "failed")
        .map(|e| {
            e["payload"]["code"]
                .as_str()
                .or_else(|| e["payload"]["error"]["code"].as_str())
                .unwrap_or_else(|| panic!("no code: {e}"))
                .to_owned()
        })
        .collect()
}

fn tool_audits(dir: &DataDir) -> Vec<Value> {
    Store::open(dir)
        .unwrap()
        .audit_log(Some(APP), 1000)
        .unwrap()
        .into_iter()
        .filter(|r| r["action"] == "tools.call")
        .collect()
}

fn offered(b: &ScriptedBackend, name: &str) -> Option<bool> {
    b.requests()
        .iter()
        .flat_map(|r| r.tools.clone())
        .find(|t| t.name == name)
        .map(|t| t.risky)
}

#[test]
fn a_granted_mcp_tool_runs_through_the_broker_and_a_destructive_one_waits_for_the_user() {
    let h = host();
    h.backend.push(tool_call(
        "c1",
        "mcp__t__echo",
        &json!({"text": "hello mcp"}),
    ));
    h.backend
        .push(tool_call("c2", "mcp__t__delete_note", &json!({"id": "n1"})));
    h.backend.push(text("done"));
    let task = start(
        &h,
        json!({"input": "go", "tools": ["t/echo", {"key": "delete_note"}]}),
    );
    let action = wait_pending(&h.s, &task);
    // The schema came from the server's listing; delete_note is destructive (annotation).
    assert_eq!(offered(&h.backend, "mcp__t__echo"), Some(false));
    assert_eq!(offered(&h.backend, "mcp__t__delete_note"), Some(true));
    let schema = h.backend.requests()[0]
        .tools
        .iter()
        .find(|t| t.name == "mcp__t__echo")
        .unwrap()
        .parameters
        .clone();
    assert_eq!(schema["required"], json!(["text"]));
    // Nothing destructive ran yet: one audited call (echo).
    assert_eq!(tool_audits(&h.dir).len(), 1);
    // The app cannot approve it.
    let refused = invoke(
        &h.s,
        "respondAction",
        json!({"taskId": task, "actionId": action, "decision": "approve"}),
    );
    assert_eq!(
        refused["causeCode"], "agent.approval_requires_user",
        "{refused}"
    );
    assert_eq!(tool_audits(&h.dir).len(), 1);
    // The user approves in the host's prompt.
    call(
        &h.s,
        "task_respond",
        json!({"appId": APP, "taskId": task, "actionId": action, "decision": "approve"}),
    );
    let d = wait_end(&h.s, &task);
    assert_eq!(d["task"]["status"], "succeeded", "{d}");
    let events = d["events"].to_string();
    assert!(events.contains("hello mcp"), "echo's result: {events}");
    assert!(events.contains("deleted"), "delete_note's result: {events}");
    let audits = tool_audits(&h.dir);
    assert_eq!(audits.len(), 2, "{audits:?}");
    let del = &audits[0]["details"];
    assert_eq!(del["tool"], "delete_note");
    assert_eq!(del["caller"], "agent");
    assert_eq!(del["approval"], "user");
    assert_eq!(del["outcome"], "ok");
    assert_eq!(
        del["argumentsSha256"],
        host_core::hosting::tools::broker::arguments_sha256(&json!({"id": "n1"}))
    );
    assert_eq!(audits[1]["details"]["approval"], "none");
}

#[test]
fn tool_refs_not_declared_not_granted_or_malformed_refuse_the_start_and_create_nothing() {
    let h = host();
    let cases = [
        (json!(["t/secret_digest"]), "tools.not_granted"),
        (json!(["t/add"]), "tools.not_declared"),
        (json!(["u/echo"]), "tools.not_declared"),
        (json!([{"key": "nope"}]), "tools.not_declared"),
        (json!(["t/bad name"]), "tools.invalid"),
        (json!([42]), "agent.invalid_argument"),
        (json!("t/echo"), "agent.invalid_argument"),
    ];
    for (tools, code) in cases {
        let out = invoke(&h.s, "startTask", json!({"input": "x", "tools": tools}));
        assert_eq!(out["causeCode"], code, "{tools}: {out}");
    }
    let listed = invoke(&h.s, "listTasks", json!({}));
    assert_eq!(listed["value"]["items"], json!([]), "{listed}");
    assert!(tool_audits(&h.dir).is_empty());
    assert!(h.backend.requests().is_empty());
}

#[test]
fn another_server_s_tool_under_a_squatted_or_bare_name_is_unknown_and_reaches_no_server() {
    let h = host();
    for (i, name) in ["mcp__u__echo", "echo", "t/echo", "mcp__t__secret_digest"]
        .iter()
        .enumerate()
    {
        h.backend
            .push(tool_call(&format!("c{i}"), name, &json!({"text": "x"})));
    }
    h.backend.push(text("done"));
    let task = start(&h, json!({"input": "go", "tools": ["t/echo"]}));
    let d = wait_end(&h.s, &task);
    assert_eq!(d["task"]["status"], "succeeded", "{d}");
    assert_eq!(failed_codes(&d), vec!["unknown_tool"; 4], "{d}");
    assert_eq!(offered(&h.backend, "mcp__u__echo"), None);
    assert!(tool_audits(&h.dir).is_empty());
}

#[test]
fn a_server_that_hangs_floods_or_answers_malformed_json_fails_the_call_not_the_task() {
    let h = host();
    // One task each: a broken session waits out its restart backoff before the next call.
    for (tool, code) in [
        ("hang", "tools.timeout"),
        ("flood", "tools.bad_response"),
        ("malformed", "tools.bad_response"),
    ] {
        h.backend
            .push(tool_call("c1", &format!("mcp__t__{tool}"), &json!({})));
        h.backend.push(text("survived"));
        let started = Instant::now();
        let task = start(&h, json!({"input": "go", "tools": [format!("t/{tool}")]}));
        let d = wait_end(&h.s, &task);
        assert_eq!(d["task"]["status"], "succeeded", "{tool}: {d}");
        assert_eq!(failed_codes(&d), vec![code], "{tool}");
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(tool_audits(&h.dir)[0]["details"]["code"], code);
        std::thread::sleep(Duration::from_millis(1200));
    }
    assert_eq!(tool_audits(&h.dir).len(), 3);
}

#[test]
fn a_grant_revoked_while_the_task_waits_is_refused_when_the_user_approves() {
    let h = host();
    h.backend
        .push(tool_call("c1", "mcp__t__delete_note", &json!({"id": "n1"})));
    h.backend.push(text("done"));
    let task = start(&h, json!({"input": "go", "tools": ["t/delete_note"]}));
    let action = wait_pending(&h.s, &task);
    {
        let (store, _) = Store::open_locked(&h.dir).unwrap();
        registry::revoke(&store, APP, &ToolRef::parse("t/delete_note").unwrap()).unwrap();
    }
    call(
        &h.s,
        "task_respond",
        json!({"appId": APP, "taskId": task, "actionId": action, "decision": "approve"}),
    );
    let d = wait_end(&h.s, &task);
    assert_eq!(failed_codes(&d), vec!["tools.not_granted"], "{d}");
    let audits = tool_audits(&h.dir);
    assert_eq!(audits.len(), 1);
    assert_eq!(audits[0]["details"]["code"], "tools.not_granted");
}

#[test]
fn cancelling_the_task_cancels_its_running_tool_call_at_the_server() {
    let h = host();
    h.backend.push(tool_call("c1", "mcp__t__hang", &json!({})));
    let task = start(&h, json!({"input": "go", "tools": ["t/hang"]}));
    // The call is running once the tool started (the server hangs for 1.5 s at most).
    wait(&h.s, &task, |d| {
        d["events"].to_string().contains("tool.started") || d["task"]["status"] != "running"
    });
    std::thread::sleep(Duration::from_millis(300));
    let out = invoke(&h.s, "cancelTask", json!({"taskId": task}));
    assert!(out.get("causeCode").is_none(), "{out}");
    let d = wait_end(&h.s, &task);
    assert_eq!(d["task"]["status"], "cancelled", "{d}");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let audits = tool_audits(&h.dir);
        if let Some(a) = audits.first() {
            assert_eq!(a["details"]["code"], "tools.cancelled", "{a}");
            assert!(a["details"]["durationMs"].as_u64().unwrap() < 1400, "{a}");
            break;
        }
        assert!(Instant::now() < deadline, "no audit of the cancelled call");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_task_s_knowledge_and_tool_bindings_survive_a_host_restart() {
    let h = host();
    // The first run fails (no model answer is queued: `script_exhausted`), so it can be retried.
    let task = start(
        &h,
        json!({"input": "go", "tools": ["t/echo"], "knowledge": ["handbook"]}),
    );
    let d = wait_end(&h.s, &task);
    assert_eq!(d["task"]["status"], "failed", "{d}");
    let Host {
        _tmp,
        dir,
        s,
        backend: _,
    } = h;
    drop(s);
    // A new host session over the same data: a new agent runtime.
    let s = session(&dir);
    let backend = scripted_backend(&s);
    backend.push(text("again"));
    let out = s
        .with_bridge(|host, store| {
            let m = host.mount(store, APP, "notes").unwrap();
            let raw = |id: &str, kind: &str, p: Value| {
                json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
                       "appId": APP, "entryKey": "notes", "payload": p})
                .to_string()
            };
            host.handle(store, &m.mount_id, &m.origin, &raw("r0", "app:ready", json!({})));
            let out = host.handle(
                store,
                &m.mount_id,
                &m.origin,
                &raw(
                    "r1",
                    "capability:invoke",
                    json!({"capability": "lime.agent", "method": "retryTask", "args": {"taskId": task}}),
                ),
            );
            serde_json::to_value(&out).unwrap()
        })
        .unwrap();
    assert!(!out.to_string().contains("host:error"), "{out}");
    let d = wait_end(&s, &task);
    assert_eq!(d["task"]["status"], "succeeded", "{d}");
    assert_eq!(offered(&backend, "knowledge_search"), Some(false));
    assert_eq!(offered(&backend, "mcp__t__echo"), Some(false));
}
