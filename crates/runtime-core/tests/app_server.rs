//! The App Server over `serve_stdio`, driven through in-process pipes.

mod support_client;
mod support_schema;

use std::sync::Arc;
use std::time::Duration;

use runtime_core::backend::*;
use serde_json::{json, Value};
use support_client::*;

fn scripted() -> (ScriptedBackend, Option<Arc<dyn ExecutionBackend>>) {
    let b = ScriptedBackend::new();
    (b.clone(), Some(Arc::new(b) as Arc<dyn ExecutionBackend>))
}

fn slow_text(chunks: usize, every: Duration) -> Vec<ScriptStep> {
    let mut s = Vec::new();
    for i in 0..chunks {
        s.push(ScriptStep::Sleep(every));
        s.push(ScriptStep::Emit(BackendEvent::TextDelta(format!("c{i} "))));
    }
    s.push(ScriptStep::Emit(BackendEvent::Finished {
        reason: "stop".into(),
    }));
    s
}

fn assert_gap_free(events: &[Value], session: &str) {
    let seqs: Vec<u64> = events
        .iter()
        .filter(|e| e["sessionId"] == session)
        .map(|e| e["sequence"].as_u64().unwrap())
        .collect();
    assert_eq!(
        seqs,
        (1..=seqs.len() as u64).collect::<Vec<_>>(),
        "gap-free, no duplicates"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_gating_and_protocol_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, backend) = scripted();
    let mut c = Client::start(runtime(tmp.path(), backend));
    assert_eq!(
        c.err("agentSession/start", json!({"appId": "demo"})).await,
        -32002
    );
    assert_eq!(
        c.err("initialize", json!({"clientInfo": {}})).await,
        -32602,
        "clientInfo.name is required"
    );
    c.ok("initialize", json!({"clientInfo": {"name": "t"}}))
        .await;
    assert_eq!(
        c.err("agentSession/start", json!({"appId": "demo"})).await,
        -32002,
        "initialized not yet sent"
    );
    c.send_raw(r#"{"method":"initialized"}"#).await;
    assert_eq!(
        c.err("initialize", json!({"clientInfo": {"name": "t"}}))
            .await,
        -32003
    );
    assert_eq!(c.err("no/such", json!({})).await, -32601);
    // Malformed JSON, wrong shapes, wrong types: answered, and the server keeps serving.
    c.send_raw("{not json").await;
    let m = c.read_message().await;
    assert_eq!(m["error"]["code"], -32700);
    assert_eq!(m["id"], Value::Null);
    c.send_raw("[1,2]").await;
    assert_eq!(c.read_message().await["error"]["code"], -32600);
    c.send_raw(r#"{"id": {"x":1}, "method": "capability/list"}"#)
        .await;
    assert_eq!(c.read_message().await["error"]["code"], -32600);
    c.send_raw(r#"{"id": 77, "method": 5}"#).await;
    assert_eq!(c.read_message().await["error"]["code"], -32600);
    assert_eq!(
        c.err("agentSession/start", json!({"appId": 5})).await,
        -32602
    );
    assert_eq!(
        c.err("agentSession/start", json!({"appId": "../etc"}))
            .await,
        -32602
    );
    assert_eq!(
        c.err("agentSession/read", json!({"sessionId": "sess_missing"}))
            .await,
        -32010
    );
    assert_eq!(
        c.err("agentSession/read", json!({"sessionId": "bad id"}))
            .await,
        -32602
    );
    // A notification for an unknown method is ignored (no answer); the next call works.
    c.send_raw(r#"{"method":"whatever"}"#).await;
    let caps = c.ok("capability/list", json!({})).await;
    assert!(caps["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["id"] == "tool.storage_write" && c["requiresApproval"] == true));
}

/// The method table answers every name: an unknown one (or `initialized` sent as a request)
/// is `-32601` whatever the state, a business method before `initialized` is `-32002`, and
/// `capability/list` advertises exactly the table's business methods.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_method_table_drives_dispatch_and_discovery() {
    use runtime_core::app_server::methods::{Phase, TABLE};
    use runtime_core::app_server::METHODS;
    let tmp = tempfile::tempdir().unwrap();
    let (_, backend) = scripted();
    let mut c = Client::start(runtime(tmp.path(), backend));
    let unknown = c.call("agentSession/delete", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601);
    assert_eq!(
        unknown["error"]["message"],
        "Method not found: agentSession/delete"
    );
    assert_eq!(c.err("initialized", json!({})).await, -32002);
    c.init().await;
    assert_eq!(c.err("initialized", json!({})).await, -32601);
    assert_eq!(c.err("", json!({})).await, -32601);
    assert_eq!(c.err("AGENTSESSION/START", json!({})).await, -32601);
    let caps = c.ok("capability/list", json!({})).await;
    let advertised: Vec<&str> = caps["capabilities"][0]["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let business: Vec<&str> = TABLE
        .iter()
        .filter(|m| m.phase == Phase::Business)
        .map(|m| m.name)
        .collect();
    assert_eq!(advertised, business);
    assert_eq!(&METHODS[..2], ["initialize", "initialized"]);
    assert_eq!(&METHODS[2..], business.as_slice());
    for m in TABLE {
        assert_eq!(
            m.run.is_some(),
            m.phase != Phase::Notification,
            "{}",
            m.name
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_lines_are_refused_without_stalling() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, backend) = scripted();
    let mut cfg = runtime_core::app_server::ServeConfig::new(runtime(tmp.path(), backend));
    cfg.max_line_bytes = 1024;
    let mut c = Client::start_with(cfg);
    c.init().await;
    let big = format!(
        r#"{{"id":1,"method":"capability/list","params":{{"x":"{}"}}}}"#,
        "a".repeat(100_000)
    );
    c.send_raw(&big).await;
    let m = c.read_message().await;
    assert_eq!(m["error"]["code"], -32600);
    c.ok("capability/list", json!({})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_backend_the_runtime_needs_setup_and_turns_fail_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = Client::start(runtime(tmp.path(), None));
    let init = c.init().await;
    assert_eq!(init["runtime"]["status"], "needs-setup");
    let s = c.ok("agentSession/start", json!({"appId": "demo"})).await;
    let sid = s["session"]["sessionId"].clone();
    let r = c
        .call(
            "agentSession/turn/start",
            json!({"sessionId": sid, "input": {"text": "hi"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32030, "{r}");
    assert_eq!(r["error"]["data"]["code"], "runtime.needs_setup");
    let read = c.ok("agentSession/read", json!({"sessionId": sid})).await;
    assert_eq!(read["turns"], json!([]), "no turn, no canned answer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_streams_profile_events_and_reads_back() {
    let tmp = tempfile::tempdir().unwrap();
    let (b, backend) = scripted();
    b.push_text(&["Hel", "lo"]);
    let mut c = Client::start(runtime(tmp.path(), backend));
    let init = c.init().await;
    assert_eq!(init["serverInfo"]["protocolVersion"], "appserver.v0");
    assert_eq!(init["runtime"]["status"], "ready");
    let s = c.ok("agentSession/start", json!({"appId": "demo"})).await;
    let sid = s["session"]["sessionId"].as_str().unwrap().to_owned();
    assert!(s["session"]["threadId"].is_string());
    let t = c
        .ok(
            "agentSession/turn/start",
            json!({"sessionId": sid, "turnId": "turn_a", "input": {"text": "say hello"}}),
        )
        .await;
    assert_eq!(t["turn"]["turnId"], "turn_a");
    assert!(["accepted", "running", "completed"].contains(&t["turn"]["status"].as_str().unwrap()));
    c.wait_type("turn.completed").await;
    let read = c.ok("agentSession/read", json!({"sessionId": sid})).await;
    assert_eq!(read["turns"][0]["status"], "completed");
    let th = read["session"]["threadId"].as_str().unwrap();
    assert_eq!(
        read["detail"]["threads"][th]["turns"][0]["outputText"],
        "Hello"
    );
    // Idempotent turnId: the same turn, no second submission.
    let again = c
        .ok(
            "agentSession/turn/start",
            json!({"sessionId": sid, "turnId": "turn_a", "input": {"text": "say hello"}}),
        )
        .await;
    assert_eq!(again["turn"]["status"], "completed");
    let v = support_schema::profile_event_validator();
    let events = c.events();
    for e in &events {
        support_schema::assert_profile_valid(&v, e);
    }
    assert_eq!(
        events
            .iter()
            .filter(|e| e["type"] == "turn.submitted")
            .count(),
        1
    );
    assert_gap_free(&events, &sid);
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types[..3],
        ["session.created", "thread.started", "turn.submitted"]
    );
    // The standard's order: the terminal fact, then `snapshot.updated` for the thread read model,
    // then the thread is idle again.
    assert_eq!(
        types[types.len() - 3..],
        ["turn.completed", "snapshot.updated", "thread.updated"]
    );
    assert_eq!(events.last().unwrap()["payload"]["status"], "idle");
    // The prompt text is not in any event.
    assert!(!events.iter().any(|e| e.to_string().contains("say hello")));
    // The second turn sees the first in its context.
    b.push_text(&["ok"]);
    c.ok(
        "agentSession/turn/start",
        json!({"sessionId": sid, "input": {"text": "again"}}),
    )
    .await;
    c.wait_event(|e| e["type"] == "turn.completed" && e["turnId"] != "turn_a")
        .await;
    let req = b.requests().last().unwrap().clone();
    assert_eq!(req.messages.len(), 3, "{:?}", req.messages);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn risky_tools_wait_for_action_respond() {
    let tmp = tempfile::tempdir().unwrap();
    let (b, backend) = scripted();
    b.push_tool_call(
        "p1",
        "storage_write",
        r#"{"path":"notes/a.txt","content":"written"}"#,
    );
    b.push_text(&["saved"]);
    let mut c = Client::start(runtime(tmp.path(), backend));
    c.init().await;
    let sid =
        c.ok("agentSession/start", json!({"appId": "demo"})).await["session"]["sessionId"].clone();
    c.ok(
        "agentSession/turn/start",
        json!({"sessionId": sid, "input": {"text": "write it"}}),
    )
    .await;
    let action = c.wait_type("action.required").await;
    let file = tmp.path().join("apps/demo/files/notes/a.txt");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!file.exists(), "an unanswered action is not an approval");
    let read = c.ok("agentSession/read", json!({"sessionId": sid})).await;
    assert_eq!(read["turns"][0]["status"], "waitingAction");
    assert_eq!(
        c.err(
            "agentSession/action/respond",
            json!({"sessionId": sid, "requestId": "action_nope", "confirmed": true})
        )
        .await,
        -32014
    );
    assert_eq!(
        c.err(
            "agentSession/action/respond",
            json!({"sessionId": sid, "requestId": action["actionId"]})
        )
        .await,
        -32602
    );
    c.ok("agentSession/action/respond", json!({"sessionId": sid, "requestId": action["actionId"], "actionType": "tool_confirmation", "decision": "allow_once"})).await;
    c.wait_type("turn.completed").await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "written");
    let types: Vec<String> = c
        .events()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect();
    let i = types.iter().position(|t| t == "action.required").unwrap();
    assert_eq!(types[i + 1], "action.resolved");
    assert_eq!(types[i + 2], "tool.result");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_for_session_is_remembered_for_the_session_across_turns_and_restarts() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |n: u32| format!(r#"{{"path":"a.txt","content":"v{n}"}}"#);
    let file = tmp.path().join("apps/demo/files/a.txt");
    let turn_done = |t: &'static str| {
        move |e: &Value| {
            e["turnId"] == t && (e["type"] == "turn.completed" || e["type"] == "turn.failed")
        }
    };
    let (b, backend) = scripted();
    for n in 1..=2 {
        b.push_tool_call("p1", "storage_write", &write(n));
        b.push_text(&["saved"]);
    }
    let mut c = Client::start(runtime(tmp.path(), backend));
    c.init().await;
    let sid =
        c.ok("agentSession/start", json!({"appId": "demo"})).await["session"]["sessionId"].clone();
    c.ok(
        "agentSession/turn/start",
        json!({"sessionId": sid, "turnId": "turn_a", "input": {"text": "write"}}),
    )
    .await;
    let action = c.wait_type("action.required").await;
    c.ok("agentSession/action/respond", json!({"sessionId": sid, "requestId": action["actionId"], "actionType": "tool_confirmation", "decision": "allow_for_session"})).await;
    assert_eq!(
        c.wait_event(turn_done("turn_a")).await["type"],
        "turn.completed"
    );
    let resolved = c.wait_type("action.resolved").await;
    assert_eq!(resolved["payload"]["scope"], "session");
    assert_eq!(resolved["payload"]["toolName"], "storage_write");
    // The next turn's write runs without asking.
    c.ok(
        "agentSession/turn/start",
        json!({"sessionId": sid, "turnId": "turn_b", "input": {"text": "again"}}),
    )
    .await;
    assert_eq!(
        c.wait_event(turn_done("turn_b")).await["type"],
        "turn.completed"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v2");
    let asked = |c: &Client, t: &str| {
        c.events()
            .iter()
            .filter(|e| e["turnId"] == t && e["type"] == "action.required")
            .count()
    };
    assert_eq!(asked(&c, "turn_b"), 0);
    let granted = c
        .events()
        .into_iter()
        .find(|e| e["turnId"] == "turn_b" && e["type"] == "permission.evaluated")
        .unwrap();
    assert_eq!(granted["payload"]["decisionSource"], "session_grant");
    let read = c.ok("agentSession/read", json!({"sessionId": sid})).await;
    assert_eq!(
        read["detail"]["permissionSandbox"]["sessionAllowedTools"],
        json!(["storage_write"])
    );
    c.shutdown().await;
    // After a restart the answer still holds for this session (rebuilt from the log)...
    let (b, backend) = scripted();
    b.push_tool_call("p1", "storage_write", &write(3));
    b.push_text(&["saved"]);
    let mut c = Client::start(runtime(tmp.path(), backend));
    c.init().await;
    c.ok(
        "agentSession/turn/start",
        json!({"sessionId": sid, "turnId": "turn_c", "input": {"text": "third"}}),
    )
    .await;
    assert_eq!(
        c.wait_event(turn_done("turn_c")).await["type"],
        "turn.completed"
    );
    assert_eq!(asked(&c, "turn_c"), 0);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v3");
    // ...and only for this session: another session asks.
    b.push_tool_call("p1", "storage_write", &write(4));
    let other =
        c.ok("agentSession/start", json!({"appId": "demo"})).await["session"]["sessionId"].clone();
    c.ok(
        "agentSession/turn/start",
        json!({"sessionId": other, "turnId": "turn_d", "input": {"text": "other"}}),
    )
    .await;
    let a = c
        .wait_event(|e| e["turnId"] == "turn_d" && e["type"] == "action.required")
        .await;
    assert_eq!(a["sessionId"], other);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_sessions_queue_or_refuse_and_cancel_ends_turns() {
    let tmp = tempfile::tempdir().unwrap();
    let (b, backend) = scripted();
    b.push(slow_text(50, Duration::from_millis(20)));
    b.push_text(&["second"]);
    let mut c = Client::start(runtime(tmp.path(), backend));
    c.init().await;
    let sid =
        c.ok("agentSession/start", json!({"appId": "demo"})).await["session"]["sessionId"].clone();
    c.ok(
        "agentSession/turn/start",
        json!({"sessionId": sid, "turnId": "turn_1", "input": {"text": "long"}}),
    )
    .await;
    assert_eq!(
        c.err(
            "agentSession/turn/start",
            json!({"sessionId": sid, "input": {"text": "x"}})
        )
        .await,
        -32012
    );
    let q = c.ok("agentSession/turn/start", json!({"sessionId": sid, "turnId": "turn_2", "input": {"text": "next"}, "queueIfBusy": true})).await;
    assert_eq!(q["turn"]["status"], "queued");
    c.wait_type("model.delta").await;
    c.ok(
        "agentSession/turn/cancel",
        json!({"sessionId": sid, "turnId": "turn_1"}),
    )
    .await;
    let end = c
        .wait_event(|e| e["turnId"] == "turn_1" && e["type"] == "turn.failed")
        .await;
    assert_eq!(end["payload"]["status"], "cancelled");
    c.wait_event(|e| e["turnId"] == "turn_2" && e["type"] == "turn.completed")
        .await;
    let read = c.ok("agentSession/read", json!({"sessionId": sid})).await;
    assert_eq!(read["turns"][0]["status"], "cancelled");
    assert_eq!(read["turns"][1]["status"], "completed");
    // Cancelling an ended turn is a no-op; an unknown one is an error.
    c.ok(
        "agentSession/turn/cancel",
        json!({"sessionId": sid, "turnId": "turn_1"}),
    )
    .await;
    assert_eq!(
        c.err(
            "agentSession/turn/cancel",
            json!({"sessionId": sid, "turnId": "turn_x"})
        )
        .await,
        -32011
    );
    // Nothing of turn 1 follows its terminal event but the `snapshot.updated` the standard puts
    // there.
    let events = c.events();
    let term = events
        .iter()
        .position(|e| e["turnId"] == "turn_1" && e["type"] == "turn.failed")
        .unwrap();
    let after: Vec<&str> = events[term + 1..]
        .iter()
        .filter(|e| e["turnId"] == "turn_1")
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(after, ["snapshot.updated"]);
    assert_gap_free(&events, sid.as_str().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evidence_and_spilled_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let app_dir = tmp.path().join("apps/demo/files");
    std::fs::create_dir_all(&app_dir).unwrap();
    let big: String = (0..2000).map(|i| format!("row {i}\n")).collect();
    std::fs::write(app_dir.join("big.txt"), &big).unwrap();
    let (b, backend) = scripted();
    b.push_tool_call("p1", "storage_read", r#"{"path":"big.txt"}"#);
    b.push_text(&["read it"]);
    let mut c = Client::start(runtime(tmp.path(), backend));
    c.init().await;
    let sid =
        c.ok("agentSession/start", json!({"appId": "demo"})).await["session"]["sessionId"].clone();
    c.ok(
        "agentSession/turn/start",
        json!({"sessionId": sid, "turnId": "turn_e", "input": {"text": "read"}}),
    )
    .await;
    c.wait_type("turn.completed").await;
    let spilled = c.wait_type("output.spilled").await;
    assert_eq!(spilled["payload"]["bytes"], big.len());
    let arts = c
        .ok(
            "artifact/read",
            json!({"sessionId": sid, "includeContent": true}),
        )
        .await;
    let a = &arts["artifacts"][0];
    assert_eq!(a["kind"], "tool_output");
    assert_eq!(
        a["content"].as_str().unwrap(),
        big,
        "the whole output is kept"
    );
    let ex = c
        .ok(
            "evidence/export",
            json!({"sessionId": sid, "turnId": "turn_e", "includeEvents": true}),
        )
        .await;
    let corr = &ex["runtimeCorrelation"];
    for k in [
        "runtimeId",
        "sessionId",
        "threadId",
        "turnId",
        "taskId",
        "runId",
        "traceId",
    ] {
        assert!(corr[k].is_string(), "{k} in {corr}");
    }
    assert_eq!(corr["missing"], json!([]));
    assert!(ex["events"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["turnId"] == "turn_e"));
    assert!(ex["events"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["type"] == "evidence.changed"));
    let whole = c.ok("evidence/export", json!({"sessionId": sid})).await;
    assert!(whole.get("events").is_none());
    assert_eq!(
        whole["runtimeCorrelation"]["missing"],
        json!(["turnId", "taskId", "runId", "traceId"]),
        "missing correlation is named, not guessed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_read_methods_page_with_a_cursor_and_a_bounded_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let (b, backend) = scripted();
    for i in 0..5 {
        b.push_tool_call(
            &format!("p{i}"),
            "artifact_write",
            &format!(r#"{{"title":"doc {i}","content":"body {i}"}}"#),
        );
    }
    b.push_text(&["done"]);
    // The host's policy lets artifact_write run without asking (the default asks).
    #[derive(Debug)]
    struct NoAsk;
    impl runtime_core::tools::ToolPolicy for NoAsk {
        fn artifact_write_needs_approval(&self) -> bool {
            false
        }
    }
    let mut config = runtime_core::runtime::RuntimeConfig::new(tmp.path());
    config.tool_policy = Arc::new(NoAsk);
    let mut c = Client::start(runtime_core::runtime::Runtime::open(config, backend).unwrap());
    c.init().await;
    let sid =
        c.ok("agentSession/start", json!({"appId": "demo"})).await["session"]["sessionId"].clone();
    c.ok(
        "agentSession/turn/start",
        json!({"sessionId": sid, "input": {"text": "write five"}}),
    )
    .await;
    c.wait_type("turn.completed").await;

    // capability/list: pages of 2 add up to the whole list.
    let all = c.ok("capability/list", json!({})).await["capabilities"].clone();
    let (mut got, mut cursor) = (Vec::new(), None::<Value>);
    loop {
        let mut p = json!({"limit": 2});
        if let Some(cur) = &cursor {
            p["cursor"] = cur.clone();
        }
        let r = c.ok("capability/list", p).await;
        let page = r["capabilities"].as_array().unwrap().clone();
        assert!(page.len() <= 2);
        got.extend(page);
        match r.get("nextCursor") {
            Some(n) => cursor = Some(n.clone()),
            None => break,
        }
    }
    assert_eq!(Value::Array(got), all);

    // artifact/read: pages of 2, in log order, no loss, no duplicate.
    let (mut refs, mut cursor, mut pages) = (Vec::new(), None::<Value>, 0);
    loop {
        let mut p = json!({"sessionId": sid, "limit": 2, "includeContent": true});
        if let Some(cur) = &cursor {
            p["cursor"] = cur.clone();
        }
        let r = c.ok("artifact/read", p).await;
        pages += 1;
        let page = r["artifacts"].as_array().unwrap();
        assert!(page.len() <= 2, "{r}");
        for a in page {
            assert_eq!(a["contentStatus"], "available");
            refs.push((a["sequence"].as_u64().unwrap(), a["title"].clone()));
        }
        match r.get("nextCursor") {
            Some(n) => cursor = Some(n.clone()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(
        refs.iter().map(|r| r.1.clone()).collect::<Vec<_>>(),
        (0..5)
            .map(|i| json!(format!("doc {i}")))
            .collect::<Vec<_>>()
    );
    assert!(refs.windows(2).all(|w| w[0].0 < w[1].0));
    // A limit over the maximum is clamped, zero means one; a foreign cursor is refused.
    let r = c
        .ok("artifact/read", json!({"sessionId": sid, "limit": 100000}))
        .await;
    assert_eq!(r["artifacts"].as_array().unwrap().len(), 5);
    assert!(r.get("nextCursor").is_none());
    let r = c
        .ok("artifact/read", json!({"sessionId": sid, "limit": 0}))
        .await;
    assert_eq!(r["artifacts"].as_array().unwrap().len(), 1);
    assert_eq!(
        c.err("artifact/read", json!({"sessionId": sid, "cursor": "x"}))
            .await,
        -32602
    );

    // evidence/export events: pages of 7 cover the log exactly once, in order.
    let total = c.ok("evidence/export", json!({"sessionId": sid})).await["evidencePack"]
        ["eventCount"]
        .as_u64()
        .unwrap();
    let (mut seqs, mut cursor) = (Vec::new(), None::<Value>);
    loop {
        let mut p = json!({"sessionId": sid, "includeEvents": true, "eventsLimit": 7});
        if let Some(cur) = &cursor {
            p["eventsCursor"] = cur.clone();
        }
        let r = c.ok("evidence/export", p).await;
        let page = r["events"].as_array().unwrap();
        assert!(page.len() <= 7);
        seqs.extend(page.iter().map(|e| e["sequence"].as_u64().unwrap()));
        match r.get("nextEventsCursor") {
            Some(n) => cursor = Some(n.clone()),
            None => break,
        }
    }
    // Each export records one evidence.changed, so the log grew while we paged; every event
    // up to the count the first export saw is there once.
    assert!(seqs.len() as u64 > total);
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    assert_eq!(
        c.err(
            "evidence/export",
            json!({"sessionId": sid, "includeEvents": true, "eventsCursor": 5})
        )
        .await,
        -32602
    );
}
