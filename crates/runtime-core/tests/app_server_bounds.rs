//! The App Server's bounds (attack review): session caps per app and per workspace, the LRU
//! bound on sessions held in memory, the per-connection subscription cap, and the checks on
//! `agentSession/start`'s free-form fields. Each refusal has a stable code and stores nothing.

mod support_client;

use std::sync::Arc;

use runtime_core::app_server::ServeConfig;
use runtime_core::backend::*;
use runtime_core::runtime::{Runtime, RuntimeConfig};
use runtime_core::session_cache::SessionLimits;
use serde_json::{json, Value};
use support_client::*;

fn open(dir: &std::path::Path, limits: SessionLimits, b: Option<ScriptedBackend>) -> Runtime {
    let mut cfg = RuntimeConfig::new(dir);
    cfg.sessions = limits;
    Runtime::open(cfg, b.map(|b| Arc::new(b) as Arc<dyn ExecutionBackend>)).unwrap()
}

fn client(rt: &Runtime, max_subscriptions: usize) -> Client {
    let mut cfg = ServeConfig::new(rt.clone());
    cfg.max_subscriptions = max_subscriptions;
    Client::start_with(cfg)
}

fn stored_sessions(rt: &Runtime) -> usize {
    rt.log().sessions().unwrap().len()
}

/// The error of a call that must fail: (JSON-RPC code, `data.code`).
async fn refused(c: &mut Client, method: &str, params: Value) -> (i64, String, Value) {
    let r = c.call(method, params).await;
    let e = &r["error"];
    assert!(e.is_object(), "{method} should fail: {r}");
    (
        e["code"].as_i64().unwrap(),
        e["data"]["code"].as_str().unwrap_or_default().to_owned(),
        e["data"].clone(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_past_the_app_and_workspace_caps_are_refused_with_a_stable_code() {
    let tmp = tempfile::tempdir().unwrap();
    let limits = SessionLimits {
        resident: 4,
        per_app: 5,
        total: 8,
    };
    let rt = open(tmp.path(), limits, None);
    let mut c = client(&rt, 100);
    c.init().await;
    for _ in 0..5 {
        c.ok("agentSession/start", json!({"appId": "alpha"})).await;
    }
    // The attack: keep starting sessions. Each one past the cap is refused, nothing grows.
    for _ in 0..20 {
        let (code, data_code, data) =
            refused(&mut c, "agentSession/start", json!({"appId": "alpha"})).await;
        assert_eq!(
            (code, data_code.as_str()),
            (-32015, "runtime.app_session_limit")
        );
        assert_eq!(data["limit"], 5);
    }
    assert_eq!(stored_sessions(&rt), 5, "refused starts store nothing");
    for _ in 0..3 {
        c.ok("agentSession/start", json!({"appId": "beta"})).await;
    }
    let (code, data_code, _) =
        refused(&mut c, "agentSession/start", json!({"appId": "gamma"})).await;
    assert_eq!(
        (code, data_code.as_str()),
        (-32015, "runtime.workspace_session_limit")
    );
    assert_eq!(stored_sessions(&rt), 8);
    assert!(
        rt.resident_sessions() <= 4,
        "idle sessions are not all held"
    );
    // The server keeps serving.
    c.ok("capability/list", json!({})).await;
    c.shutdown().await;
    drop(rt);

    // The counts come back from the log after a restart: still full.
    let rt = open(tmp.path(), limits, None);
    let mut c = client(&rt, 100);
    c.init().await;
    let (code, data_code, _) =
        refused(&mut c, "agentSession/start", json!({"appId": "gamma"})).await;
    assert_eq!(
        (code, data_code.as_str()),
        (-32015, "runtime.workspace_session_limit")
    );
    assert_eq!(stored_sessions(&rt), 8);
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sessions_held_in_memory_stay_within_the_lru_bound_and_read_back_from_the_log() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.push_text(&["first ", "answer"]);
    b.push_text(&["second"]);
    let limits = SessionLimits {
        resident: 8,
        ..SessionLimits::default()
    };
    let rt = open(tmp.path(), limits, Some(b.clone()));
    let mut c = client(&rt, 1000);
    c.init().await;
    // A session with a completed turn, then many more sessions that push it out of memory.
    let first = c
        .ok(
            "agentSession/start",
            json!({"appId": "demo", "workspaceId": "ws-1", "locale": "en-US"}),
        )
        .await["session"]
        .clone();
    let sid = first["sessionId"].as_str().unwrap().to_owned();
    c.ok(
        "agentSession/turn/start",
        json!({"sessionId": sid, "input": {"text": "hello there"}}),
    )
    .await;
    c.wait_event(|e| e["type"] == "turn.completed" && e["sessionId"] == sid.as_str())
        .await;
    let before = c.ok("agentSession/read", json!({"sessionId": sid})).await;
    let mut max_resident = 0;
    for i in 0..200 {
        c.ok(
            "agentSession/start",
            json!({"appId": format!("app-{}", i % 7)}),
        )
        .await;
        max_resident = max_resident.max(rt.resident_sessions());
    }
    assert!(
        max_resident <= 8,
        "at most the LRU bound of idle sessions is held: {max_resident}"
    );
    assert_eq!(stored_sessions(&rt), 201);
    // The evicted session reads back exactly as it was (rebuilt from the log).
    let after = c.ok("agentSession/read", json!({"sessionId": sid})).await;
    assert_eq!(after["session"], before["session"]);
    assert_eq!(after["turns"], before["turns"]);
    assert_eq!(after["detail"], before["detail"]);
    assert_eq!(after["session"]["workspaceId"], "ws-1");
    // And it keeps its conversation: the next turn's request carries the first exchange.
    c.ok(
        "agentSession/turn/start",
        json!({"sessionId": sid, "input": {"text": "and again"}}),
    )
    .await;
    let second_turn_done = |e: &Value| {
        e["type"] == "turn.completed"
            && e["sessionId"] == sid.as_str()
            && e["sequence"].as_u64() > before["session"]["lastSequence"].as_u64()
    };
    c.wait_event(second_turn_done).await;
    let req = b.requests().last().cloned().unwrap();
    let text = serde_json::to_string(&req.messages).unwrap();
    assert!(
        text.contains("hello there") && text.contains("first answer"),
        "{text}"
    );
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_follows_a_bounded_number_of_sessions() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = open(tmp.path(), SessionLimits::default(), None);
    let mut c = client(&rt, 3);
    c.init().await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let s = c.ok("agentSession/start", json!({"appId": "demo"})).await;
        ids.push(s["session"]["sessionId"].as_str().unwrap().to_owned());
    }
    let (code, data_code, _) =
        refused(&mut c, "agentSession/start", json!({"appId": "demo"})).await;
    assert_eq!(
        (code, data_code.as_str()),
        (-32015, "appserver.subscription_limit")
    );
    assert_eq!(stored_sessions(&rt), 3, "the refused start stored nothing");
    // Sessions it already follows stay readable.
    c.ok("agentSession/read", json!({"sessionId": ids[0]}))
        .await;
    // Another connection may follow others; this one may not read a fourth.
    let mut other = client(&rt, 3);
    other.init().await;
    let s = other
        .ok("agentSession/start", json!({"appId": "demo"}))
        .await;
    let fourth = s["session"]["sessionId"].clone();
    let (code, data_code, _) =
        refused(&mut c, "agentSession/read", json!({"sessionId": fourth})).await;
    assert_eq!(
        (code, data_code.as_str()),
        (-32015, "appserver.subscription_limit")
    );
    assert_eq!(
        c.ok("capability/list", json!({})).await["capabilities"][0]["id"],
        "agentSession"
    );
    c.shutdown().await;
    other.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_or_control_character_fields_are_refused_and_nothing_is_stored() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = open(tmp.path(), SessionLimits::default(), None);
    let mut c = client(&rt, 100);
    c.init().await;
    let mega = "x".repeat(1 << 20);
    let cases: Vec<(&str, Value)> = vec![
        ("workspaceId", json!(mega)),
        ("workspaceId", json!("ws\u{0}1")),
        ("workspaceId", json!("ws\n\u{1b}[31mred")),
        ("locale", json!(mega)),
        ("locale", json!("en-US\r\n")),
        ("locale", json!("en\u{7f}")),
        ("businessObjectRef", json!(mega)),
        ("businessObjectRef", json!({"id": mega})),
        ("businessObjectRef", json!("order\u{0}42")),
        ("businessObjectRef", json!({"k\u{1}": "v"})),
    ];
    for (field, value) in cases {
        let mut p = json!({"appId": "demo"});
        p[field] = value;
        let r = c.call("agentSession/start", p).await;
        let e = &r["error"];
        assert_eq!(e["code"], -32602, "{field}: {r:.200}");
        assert_eq!(e["data"]["code"], "appserver.invalid_field");
        assert_eq!(e["data"]["field"], field);
        assert!(
            r.to_string().len() < 1024,
            "the refusal does not echo the value"
        );
    }
    assert_eq!(stored_sessions(&rt), 0, "nothing was stored");
    assert!(c.notifications.is_empty(), "no events");
    // Ordinary values still work, and workspaceId comes back as given.
    let s = c
        .ok(
            "agentSession/start",
            json!({"appId": "demo", "workspaceId": "team/é", "locale": "zh_Hans_CN",
                   "businessObjectRef": {"kind": "invoice", "id": 42}}),
        )
        .await;
    assert_eq!(s["session"]["workspaceId"], "team/é");
    c.shutdown().await;
}
