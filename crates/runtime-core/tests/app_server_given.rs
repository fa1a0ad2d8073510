//! What the App Server used to ignore (issue 19 §3): `businessObjectRef` kept and echoed,
//! `input.attachments`, `runtimeOptions.capabilityId` and `metadata` kept in `turn.submitted`
//! (bounded; an unknown capability is `-32020`), `agentSession/read` refusing a session of
//! another workspace; and one trace: a task's run carries the task's `traceId` and the request
//! that started it on every event.

mod support_client;

use std::sync::Arc;
use std::time::Duration;

use runtime_core::agent_task::{AgentTasks, StartTask};
use runtime_core::backend::*;
use runtime_core::ids::AppId;
use serde_json::{json, Value};
use support_client::*;

fn scripted() -> Arc<dyn ExecutionBackend> {
    let b = ScriptedBackend::new();
    for _ in 0..4 {
        b.push_text(&["ok"]);
    }
    Arc::new(b)
}

async fn stored_events(c: &mut Client, session: &str) -> usize {
    let r = c
        .ok("agentSession/read", json!({"sessionId": session}))
        .await;
    r["session"]["lastSequence"].as_u64().unwrap() as usize
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn business_refs_attachments_capability_and_metadata_are_kept_and_echoed() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = runtime(tmp.path(), Some(scripted()));
    let mut c = Client::start(rt.clone());
    c.init().await;
    let bor = json!({"kind": "invoice", "id": "42", "title": "March"});
    let started = c
        .ok(
            "agentSession/start",
            json!({"appId": "app.x", "workspaceId": "w1", "businessObjectRef": bor}),
        )
        .await;
    assert_eq!(started["session"]["businessObjectRef"], bor, "{started}");
    let s = started["session"]["sessionId"].as_str().unwrap().to_owned();
    let created = c.wait_type("session.created").await;
    assert_eq!(created["payload"]["businessObjectRef"], bor);
    let read = c.ok("agentSession/read", json!({"sessionId": s})).await;
    assert_eq!(read["session"]["businessObjectRef"], bor);
    assert_eq!(read["detail"]["session"]["businessObjectRef"], bor);

    let att = json!([{"kind": "file", "uri": "file://a.txt", "metadata": {"bytes": 3}}]);
    let meta = json!({"origin": "door-test", "n": 1});
    c.ok(
        "agentSession/turn/start",
        json!({"sessionId": s, "input": {"text": "hi", "attachments": att},
               "runtimeOptions": {"capabilityId": "tool.storage_read", "metadata": meta}}),
    )
    .await;
    let sub = c.wait_type("turn.submitted").await;
    assert_eq!(sub["payload"]["attachments"], att, "{sub}");
    assert_eq!(sub["payload"]["capabilityId"], "tool.storage_read");
    assert_eq!(sub["payload"]["metadata"], meta);
    c.wait_type("turn.completed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_capabilities_and_oversized_or_malformed_extras_are_refused_and_record_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = runtime(tmp.path(), Some(scripted()));
    let mut c = Client::start(rt.clone());
    c.init().await;
    let s = c.ok("agentSession/start", json!({"appId": "app.x"})).await["session"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let before = stored_events(&mut c, &s).await;
    let refusals = [
        (
            json!({"text": "x"}),
            json!({"capabilityId": "tool.rm_rf"}),
            -32020,
            "appserver.capability_denied",
        ),
        (
            json!({"text": "x"}),
            json!({"capabilityId": "lime.secrets"}),
            -32020,
            "appserver.capability_denied",
        ),
        (
            json!({"text": "x", "attachments": vec![json!({"kind": "file"}); 17]}),
            json!({}),
            -32602,
            "appserver.invalid_field",
        ),
        (
            json!({"text": "x", "attachments": [{"kind": "f", "uri": "a".repeat(20_000)}]}),
            json!({}),
            -32602,
            "appserver.invalid_field",
        ),
        (
            json!({"text": "x", "attachments": ["not an object"]}),
            json!({}),
            -32602,
            "appserver.invalid_field",
        ),
        (
            json!({"text": "x", "attachments": [{"uri": "no kind"}]}),
            json!({}),
            -32602,
            "appserver.invalid_field",
        ),
        (
            json!({"text": "x"}),
            json!({"metadata": {"big": "m".repeat(20_000)}}),
            -32602,
            "appserver.invalid_field",
        ),
        (
            json!({"text": "x"}),
            json!({"metadata": {"esc": "\u{1b}[2J"}}),
            -32602,
            "appserver.invalid_field",
        ),
    ];
    for (input, opts, code, data_code) in refusals {
        let r = c
            .call(
                "agentSession/turn/start",
                json!({"sessionId": s, "input": input, "runtimeOptions": opts}),
            )
            .await;
        assert_eq!(r["error"]["code"], code, "{r}");
        assert_eq!(r["error"]["data"]["code"], data_code, "{r}");
        assert!(
            !r.to_string().contains("mmmmmmmm"),
            "a refusal echoed the value"
        );
    }
    assert_eq!(
        stored_events(&mut c, &s).await,
        before,
        "a refused turn recorded something"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_of_another_workspace_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = runtime(tmp.path(), None);
    let mut c = Client::start(rt.clone());
    c.init().await;
    let s = c
        .ok(
            "agentSession/start",
            json!({"appId": "app.x", "workspaceId": "w1"}),
        )
        .await["session"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let plain = c.ok("agentSession/start", json!({"appId": "app.x"})).await["session"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    for (session, ws) in [(&s, "w2"), (&plain, "w1")] {
        let r = c
            .call(
                "agentSession/read",
                json!({"sessionId": session, "workspaceId": ws}),
            )
            .await;
        assert_eq!(r["error"]["code"], -32010, "{r}");
        assert_eq!(r["error"]["data"]["code"], "appserver.workspace_mismatch");
        assert!(r.get("result").is_none());
    }
    let r = c
        .ok(
            "agentSession/read",
            json!({"sessionId": s, "workspaceId": "w1"}),
        )
        .await;
    assert_eq!(r["session"]["workspaceId"], "w1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_run_carries_the_tasks_trace_and_the_request_that_started_it() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = runtime(tmp.path(), Some(scripted()));
    let tasks = AgentTasks::open(rt.clone()).unwrap();
    let app = AppId::new("app.x").unwrap();
    let started = tasks
        .start(
            &app,
            StartTask {
                input: "go".into(),
                request_id: Some("req-7".into()),
                ..Default::default()
            },
        )
        .unwrap();
    let session = runtime_core::ids::SessionId::new(started.session_id.clone()).unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let events = loop {
        let evs = rt.log().read(&session, 1, 1000).unwrap();
        if evs.iter().any(|e| e.kind().as_str() == "turn.completed") {
            break evs;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the run did not end"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let turn_events: Vec<Value> = events
        .iter()
        .filter(|e| e.scope.turn_id.is_some())
        .map(|e| e.to_json())
        .collect();
    assert!(turn_events.len() >= 4, "{turn_events:?}");
    for e in &turn_events {
        assert_eq!(e["traceId"], started.trace_id, "{e}");
        assert_eq!(e["requestId"], "req-7", "{e}");
    }
}
