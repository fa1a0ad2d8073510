//! `lime.agent` through the choke point and the bridge, over a real store and a real runtime
//! (a scripted model backend): needs-setup without a model, a prompt `startTask` answer, task
//! events delivered asynchronously to the calling frame (each valid against the published
//! schema), and a second app that can neither read, cancel nor follow the first app's task.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::host::{BridgeHost, Outgoing};
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::capability::services::Services;
use host_core::hosting::model_settings::{self, KeyChange};
use host_core::hosting::surface::origin::OriginStyle;
use host_core::install::store::Store;
use runtime_core::backend::{BackendEvent, ExecutionBackend, ScriptStep, ScriptedBackend};
use serde_json::{json, Value};
use support::agent::{agent_app, set_placeholder_model};
use support::{hello_app_as, install, repo_root};

/// hello-app renamed `name`, listing lime.agent only in `capabilities[]` (optional).
fn optional_agent_app(tmp: &Path, name: &str) -> PathBuf {
    hello_app_as(
        tmp,
        name,
        &[(
            "runtimeTargets: [local]\n",
            "runtimeTargets: [local]\ncapabilities: [lime.agent]\n",
        )],
    )
}

fn msg(app: &str, kind: &str, id: &str, payload: Value) -> String {
    json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
           "appId": app, "entryKey": "notes", "payload": payload})
    .to_string()
}

fn invoke(app: &str, id: &str, method: &str, args: Value) -> String {
    msg(
        app,
        "capability:invoke",
        id,
        json!({"capability": "lime.agent", "method": method, "args": args}),
    )
}

fn posted(out: &[Outgoing]) -> Vec<Value> {
    out.iter()
        .filter_map(|o| match o {
            Outgoing::Post { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

fn schema() -> jsonschema::Validator {
    let p = repo_root().join("schemas/apphost/agent-task-event.schema.json");
    let s: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    jsonschema::validator_for(&s).unwrap()
}

#[test]
fn agent_tasks_need_a_model_then_stream_to_the_calling_frame_only() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &agent_app(tmp.path(), "agent-a"));
    install(&dir, &agent_app(tmp.path(), "agent-b"));
    install(&dir, &optional_agent_app(tmp.path(), "agent-c"));
    let store = Store::open(&dir).unwrap();
    let profile = HostProfile::current();

    // No model: needs-setup with the "Set up a model" action; calls are refused, nothing opens.
    let report = serde_json::to_value(store.readiness("agent-a", &profile).unwrap()).unwrap();
    assert_eq!(report["status"], "needs-setup", "{report}");
    assert!(report.to_string().contains("Set up a model"), "{report}");
    let backend = ScriptedBackend::new();
    backend.push(vec![
        ScriptStep::Sleep(Duration::from_millis(1500)),
        ScriptStep::Emit(BackendEvent::TextDelta("tri".into())),
        ScriptStep::Emit(BackendEvent::TextDelta("aged".into())),
        ScriptStep::Emit(BackendEvent::Finished {
            reason: "stop".into(),
        }),
    ]);
    let mut services = Services::new(dir.apps_data());
    services.set_agent_backend(Arc::new(backend) as Arc<dyn ExecutionBackend>);
    let mut host = BridgeHost::new(services, profile.clone(), OriginStyle::Scheme);
    let refused = host.mount(&store, "agent-a", "notes").unwrap_err();
    assert_eq!(refused.details["status"], "needs-setup");
    assert!(refused.details.to_string().contains("Set up a model"));
    // An app for which the agent is optional is ready-degraded; its calls fail with APP_E012.
    let c = host.mount(&store, "agent-c", "notes").unwrap();
    host.handle(
        &store,
        &c.mount_id,
        &c.origin,
        &msg("agent-c", "app:ready", "r0", json!({})),
    );
    let out = posted(&host.handle(
        &store,
        &c.mount_id,
        &c.origin,
        &invoke(
            "agent-c",
            "r1",
            "startTask",
            json!({"input": "triage", "idempotencyKey": "k"}),
        ),
    ));
    assert_eq!(out[0]["type"], "host:error", "{out:?}");
    assert_eq!(out[0]["payload"]["code"], "APP_E012");
    assert_eq!(out[0]["payload"]["causeCode"], "agent.needs_setup");
    let out = posted(&host.handle(
        &store,
        &c.mount_id,
        &c.origin,
        &invoke("agent-c", "r2", "listTasks", json!({})),
    ));
    assert_eq!(
        out[0]["payload"]["value"]["items"],
        json!([]),
        "nothing was recorded"
    );

    // A model is set: ready, and startTask answers before the model does.
    {
        let (locked, _) = Store::open_locked(&dir).unwrap();
        model_settings::set(
            &locked,
            "http://127.0.0.1:9/v1",
            "test-model",
            KeyChange::Keep,
        )
        .unwrap();
    }
    let report = serde_json::to_value(store.readiness("agent-a", &profile).unwrap()).unwrap();
    // hello-app's own optional network check keeps it ready-degraded; the model check passes.
    assert_eq!(report["status"], "ready-degraded", "{report}");
    assert!(
        !report.to_string().contains("model.not_configured"),
        "{report}"
    );
    let a = host.mount(&store, "agent-a", "notes").unwrap();
    host.handle(
        &store,
        &a.mount_id,
        &a.origin,
        &msg("agent-a", "app:ready", "r0", json!({})),
    );
    let t0 = Instant::now();
    let out = posted(&host.handle(
        &store,
        &a.mount_id,
        &a.origin,
        &invoke(
            "agent-a",
            "r2",
            "startTask",
            json!({"input": {"items": ["a", "b"]}, "idempotencyKey": "k1"}),
        ),
    ));
    let answered = t0.elapsed();
    eprintln!("startTask answered in {answered:?} (the model answers after 1.5 s)");
    assert!(
        answered < Duration::from_millis(1000),
        "startTask waited for the model"
    );
    assert_eq!(out[0]["type"], "host:response", "{out:?}");
    let task = out[0]["payload"]["value"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(out[0]["payload"]["value"]["traceId"].is_string());
    assert!(out[0]["payload"]["value"]["sessionId"].is_string());

    // The same key: the same task.
    let again = posted(&host.handle(
        &store,
        &a.mount_id,
        &a.origin,
        &invoke(
            "agent-a",
            "r3",
            "startTask",
            json!({"input": "other", "idempotencyKey": "k1"}),
        ),
    ));
    assert_eq!(again[0]["payload"]["value"]["taskId"], task.as_str());

    // Task events arrive asynchronously, to this frame, in order, until the result.
    let validator = schema();
    let outbox = host.async_outbox();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut events: Vec<Value> = Vec::new();
    while !events.iter().any(|e| e["type"] == "result") {
        assert!(Instant::now() < deadline, "no result: {events:?}");
        for o in outbox.wait(Duration::from_millis(200)) {
            let Outgoing::Post { mount_id, message } = o else {
                panic!("only posts are asynchronous")
            };
            assert_eq!(mount_id, a.mount_id);
            assert_eq!(message["type"], "host:event");
            assert!(message.get("requestId").is_none());
            assert_eq!(message["payload"]["capability"], "lime.agent");
            let e = message["payload"]["event"].clone();
            if let Err(err) = validator.validate(&e) {
                panic!("{e} does not validate: {err}");
            }
            events.push(e);
        }
    }
    // Two watches of the same task by the same frame (start, then start again with the key)
    // restart from the beginning: the events arrive in order per watch, never interleaved
    // out of order within the last one.
    let seqs: Vec<u64> = events
        .iter()
        .filter(|e| e["taskId"] == task.as_str())
        .map(|e| e["sequence"].as_u64().unwrap())
        .collect();
    assert!(!seqs.is_empty());
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "assistant:delta")
        .map(|e| e["payload"]["text"].as_str().unwrap())
        .collect();
    assert!(text.ends_with("triaged"), "{text}");
    assert_eq!(events.last().unwrap()["subtype"], "success");

    // Another app: unknown task everywhere; its own list is empty.
    let b = host.mount(&store, "agent-b", "notes").unwrap();
    host.handle(
        &store,
        &b.mount_id,
        &b.origin,
        &msg("agent-b", "app:ready", "r0", json!({})),
    );
    for (i, method) in [
        "getTask",
        "cancelTask",
        "retryTask",
        "watchTask",
        "getTaskEvents",
    ]
    .iter()
    .enumerate()
    {
        let out = posted(&host.handle(
            &store,
            &b.mount_id,
            &b.origin,
            &invoke("agent-b", &format!("b{i}"), method, json!({"taskId": task})),
        ));
        assert_eq!(out[0]["type"], "host:error", "{method}: {out:?}");
        assert_eq!(out[0]["payload"]["code"], "APP_E904", "{method}");
        assert_eq!(out[0]["payload"]["causeCode"], "agent.task_not_found");
    }
    let out = posted(&host.handle(
        &store,
        &b.mount_id,
        &b.origin,
        &invoke("agent-b", "b9", "listTasks", json!({})),
    ));
    assert_eq!(out[0]["payload"]["value"]["items"], json!([]));
    assert!(host
        .take_async_outgoing()
        .iter()
        .all(|o| !matches!(o, Outgoing::Post { mount_id, .. } if *mount_id == b.mount_id)));

    // The owner reads it back; the events can be re-read from any sequence.
    let out = posted(&host.handle(
        &store,
        &a.mount_id,
        &a.origin,
        &invoke("agent-a", "r4", "getTask", json!({"taskId": task})),
    ));
    assert_eq!(out[0]["payload"]["value"]["status"], "succeeded");
    let out = posted(&host.handle(
        &store,
        &a.mount_id,
        &a.origin,
        &invoke(
            "agent-a",
            "r5",
            "getTaskEvents",
            json!({"taskId": task, "afterSequence": 0}),
        ),
    ));
    let all = out[0]["payload"]["value"]["events"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(all.last().unwrap()["type"], "result");
    let mid = all[all.len() / 2]["sequence"].as_u64().unwrap();
    let out = posted(&host.handle(
        &store,
        &a.mount_id,
        &a.origin,
        &invoke(
            "agent-a",
            "r6",
            "getTaskEvents",
            json!({"taskId": task, "afterSequence": mid}),
        ),
    ));
    let rest = out[0]["payload"]["value"]["events"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(rest[..], all[all.len() / 2 + 1..]);

    // Bad arguments are refused with stable codes.
    for (args, cause) in [
        (json!({}), "agent.invalid_argument"),
        (
            json!({"input": "x", "sessionPolicy": "fork"}),
            "agent.session_policy_not_declared",
        ),
        (
            json!({"input": "x", "expectedOutput": {"schema": 5}}),
            "agent.invalid_argument",
        ),
        (
            json!({"input": "x", "expectedOutput": {"schemaRef": "../x.json"}}),
            "agent.invalid_argument",
        ),
        (
            json!({"input": "x", "expectedOutput": {"schemaRef": "missing.json"}}),
            "agent.schema_not_found",
        ),
        (json!({"input": "x", "bogus": 1}), "agent.invalid_argument"),
    ] {
        let out = posted(&host.handle(
            &store,
            &a.mount_id,
            &a.origin,
            &invoke("agent-a", "r7", "startTask", args.clone()),
        ));
        assert_eq!(out[0]["type"], "host:error", "{args}");
        assert_eq!(out[0]["payload"]["causeCode"], cause, "{args}");
    }

    // Unmounting stops the forwarding and drops what was queued for the frame.
    host.unmount(&a.mount_id);
    assert!(host.take_async_outgoing().is_empty());
}

/// The sample app `fixtures/apps/review-queue` (signed with the fixture key): needs-setup
/// without a model, ready with one; a triage task with its package's schemaRef retries an
/// invalid answer and ends with the typed result, which the app then writes back.
#[test]
fn the_review_queue_sample_app_triages_into_its_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &repo_root().join("fixtures/apps/review-queue"));
    let store = Store::open(&dir).unwrap();
    let profile = HostProfile::current();
    let report = serde_json::to_value(store.readiness("review-queue", &profile).unwrap()).unwrap();
    assert_eq!(report["status"], "needs-setup");
    assert_eq!(report["setupActions"][0]["title"], "Set up a model");
    {
        let (locked, _) = Store::open_locked(&dir).unwrap();
        model_settings::set(
            &locked,
            "http://127.0.0.1:9/v1",
            "test-model",
            KeyChange::Keep,
        )
        .unwrap();
    }
    let report = serde_json::to_value(store.readiness("review-queue", &profile).unwrap()).unwrap();
    assert_eq!(report["status"], "ready", "{report}");

    let backend = ScriptedBackend::new();
    backend.push_text(&[r#"{"items": [{"item": "crash on save", "label": "urgent"}]}"#]);
    backend.push_text(&[
        r#"{"items": [{"item": "crash on save", "label": "bug", "priority": "high", "#,
        r#""summary": "Saving crashes the app"}]}"#,
    ]);
    let mut services = Services::new(dir.apps_data());
    services.set_agent_backend(Arc::new(backend) as Arc<dyn ExecutionBackend>);
    let mut host = BridgeHost::new(services, profile, OriginStyle::Scheme);
    let m = host.mount(&store, "review-queue", "queue").unwrap();
    let send = |host: &mut BridgeHost, id: &str, kind: &str, payload: Value| {
        let raw = json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
                         "appId": "review-queue", "entryKey": "queue", "payload": payload})
        .to_string();
        posted(&host.handle(&store, &m.mount_id, &m.origin, &raw))
    };
    send(&mut host, "r0", "app:ready", json!({}));
    let out = send(
        &mut host,
        "r1",
        "capability:invoke",
        json!({"capability": "lime.agent", "method": "startTask", "args": {
            "input": {"items": ["crash on save"]},
            "expectedOutput": {"schemaRef": "./schemas/triage.schema.json"}}}),
    );
    assert_eq!(out[0]["type"], "host:response", "{out:?}");
    let outbox = host.async_outbox();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut result = None;
    let mut warned = false;
    while result.is_none() {
        assert!(Instant::now() < deadline, "no result");
        for o in outbox.wait(Duration::from_millis(200)) {
            let Outgoing::Post { message, .. } = o else {
                continue;
            };
            let e = &message["payload"]["event"];
            warned |= e["type"] == "task:progress" && e["subtype"] == "warning";
            if e["type"] == "result" {
                result = Some(e.clone());
            }
        }
    }
    let result = result.unwrap();
    assert!(warned, "the invalid first answer was retried");
    assert_eq!(result["subtype"], "success");
    let items = &result["payload"]["structuredOutput"]["items"];
    assert_eq!(items[0]["label"], "bug");
    // What the app does on "Accept": a row and an artifact.
    let out = send(
        &mut host,
        "r2",
        "capability:invoke",
        json!({"capability": "lime.storage", "method": "tableInsert", "args": {"table": "reviews",
            "row": {"id": "t-0", "item": items[0]["item"], "label": items[0]["label"],
                    "priority": items[0]["priority"], "summary": items[0]["summary"],
                    "task_id": "t", "created_at": "2026-11-23T00:00:00Z"}}}),
    );
    assert_eq!(out[0]["type"], "host:response", "{out:?}");
    let out = send(
        &mut host,
        "r3",
        "capability:invoke",
        json!({"capability": "lime.artifacts", "method": "create", "args": {
            "name": "triage.json", "mimeType": "application/json", "text": result["payload"]["structuredOutput"].to_string()}}),
    );
    assert_eq!(out[0]["type"], "host:response", "{out:?}");
}

/// Disabling (or updating, uninstalling) an app ends its mounts and stops its running tasks.
#[test]
fn closing_an_app_cancels_its_running_tasks() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &agent_app(tmp.path(), "agent-a"));
    set_placeholder_model(&dir);
    let store = Store::open(&dir).unwrap();
    let backend = ScriptedBackend::new();
    backend.push(vec![
        ScriptStep::Emit(BackendEvent::TextDelta("slow".into())),
        ScriptStep::Sleep(Duration::from_secs(60)),
    ]);
    let mut services = Services::new(dir.apps_data());
    services.set_agent_backend(Arc::new(backend) as Arc<dyn ExecutionBackend>);
    let mut host = BridgeHost::new(services, HostProfile::current(), OriginStyle::Scheme);
    let a = host.mount(&store, "agent-a", "notes").unwrap();
    host.handle(
        &store,
        &a.mount_id,
        &a.origin,
        &msg("agent-a", "app:ready", "r0", json!({})),
    );
    let out = posted(&host.handle(
        &store,
        &a.mount_id,
        &a.origin,
        &invoke("agent-a", "r1", "startTask", json!({"input": "x"})),
    ));
    let task = out[0]["payload"]["value"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let outbox = host.async_outbox();
    let deadline = Instant::now() + Duration::from_secs(10);
    'delta: loop {
        assert!(Instant::now() < deadline);
        for o in outbox.wait(Duration::from_millis(100)) {
            if let Outgoing::Post { message, .. } = o {
                if message["payload"]["event"]["type"] == "assistant:delta" {
                    break 'delta;
                }
            }
        }
    }
    host.unmount_app("agent-a");
    // The run ends cancelled; a new mount reads it back.
    let b = host.mount(&store, "agent-a", "notes").unwrap();
    host.handle(
        &store,
        &b.mount_id,
        &b.origin,
        &msg("agent-a", "app:ready", "r0", json!({})),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = posted(&host.handle(
            &store,
            &b.mount_id,
            &b.origin,
            &invoke("agent-a", "g", "getTask", json!({"taskId": task})),
        ));
        if out[0]["payload"]["value"]["status"] == "cancelled" {
            break;
        }
        assert!(Instant::now() < deadline, "{out:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Uninstalling with `--delete-data` removes the app's agent tasks and their sessions' events
/// (RuntimeCore keeps them beside, not inside, `apps/<app>/`); `--keep-data` keeps them; another
/// app's tasks are never touched.
#[test]
fn deleting_an_apps_data_removes_its_agent_tasks_and_their_events() {
    use host_core::install::store::DataMode;
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &agent_app(tmp.path(), "agent-a"));
    install(&dir, &agent_app(tmp.path(), "agent-b"));
    set_placeholder_model(&dir);
    let store = Store::open(&dir).unwrap();
    let backend = ScriptedBackend::new();
    for _ in 0..2 {
        backend.push(vec![ScriptStep::Emit(BackendEvent::TextDelta(
            "done".into(),
        ))]);
    }
    let mut services = Services::new(dir.apps_data());
    services.set_agent_backend(Arc::new(backend) as Arc<dyn ExecutionBackend>);
    let mut host = BridgeHost::new(services, HostProfile::current(), OriginStyle::Scheme);
    let mut sessions = Vec::new();
    for app in ["agent-a", "agent-b"] {
        let m = host.mount(&store, app, "notes").unwrap();
        host.handle(
            &store,
            &m.mount_id,
            &m.origin,
            &msg(app, "app:ready", "r0", json!({})),
        );
        let out = posted(&host.handle(
            &store,
            &m.mount_id,
            &m.origin,
            &invoke(app, "r1", "startTask", json!({"input": "x"})),
        ));
        sessions.push(
            out[0]["payload"]["value"]["sessionId"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let runtime = dir.root().join("runtime");
    let count = |sql: &str, arg: &str| -> i64 {
        let db = if sql.contains("events") {
            "events.db"
        } else {
            "agent-tasks.sqlite"
        };
        let conn = rusqlite::Connection::open(runtime.join(db)).unwrap();
        conn.query_row(sql, [arg], |r| r.get(0)).unwrap()
    };
    // Both tasks have left events in the log (the turn machine appends as it runs).
    let deadline = Instant::now() + Duration::from_secs(10);
    while sessions
        .iter()
        .any(|s| count("SELECT count(*) FROM events WHERE session_id = ?1", s) == 0)
    {
        assert!(Instant::now() < deadline, "no events were logged");
        std::thread::sleep(Duration::from_millis(20));
    }
    host.unmount_app("agent-a");
    drop(host);
    {
        let (locked, _) = Store::open_locked(&dir).unwrap();
        locked
            .uninstall("agent-a", DataMode::DeleteData, None)
            .unwrap();
    }
    assert_eq!(
        count("SELECT count(*) FROM tasks WHERE app_id = ?1", "agent-a"),
        0
    );
    assert_eq!(
        count(
            "SELECT count(*) FROM events WHERE session_id = ?1",
            &sessions[0]
        ),
        0
    );
    assert_eq!(
        count("SELECT count(*) FROM tasks WHERE app_id = ?1", "agent-b"),
        1
    );
    assert!(
        count(
            "SELECT count(*) FROM events WHERE session_id = ?1",
            &sessions[1]
        ) > 0
    );
    {
        let (locked, _) = Store::open_locked(&dir).unwrap();
        locked
            .uninstall("agent-b", DataMode::KeepData, None)
            .unwrap();
    }
    assert_eq!(
        count("SELECT count(*) FROM tasks WHERE app_id = ?1", "agent-b"),
        1,
        "kept"
    );
}

/// `agent_app` plus an `app.runtime.yaml` declaring `agentRuntime.sessionPolicy.modes`.
fn agent_app_with_modes(tmp: &Path, name: &str, modes: &str) -> PathBuf {
    let pkg = agent_app(tmp, name);
    std::fs::write(
        pkg.join("app.runtime.yaml"),
        format!("agentRuntime:\n  sessionPolicy:\n    modes: {modes}\n"),
    )
    .unwrap();
    pkg
}

/// `sessionPolicy` through the bridge: a declared `resume` runs a new task in the earlier
/// conversation (by business object ref, then by task id) and its events are its own; an
/// undeclared mode is refused from the installed manifest; `fork` is refused even declared;
/// another app's task id is not found; a bad shape is an invalid argument.
#[test]
fn session_policy_modes_are_gated_by_the_manifest_and_resume_shares_the_conversation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(
        &dir,
        &agent_app_with_modes(tmp.path(), "agent-r", "[new, resume, fork]"),
    );
    install(&dir, &agent_app(tmp.path(), "agent-a"));
    set_placeholder_model(&dir);
    let store = Store::open(&dir).unwrap();
    let backend = ScriptedBackend::new();
    backend.push_text(&["answer one"]);
    backend.push_text(&["answer two"]);
    backend.push_text(&["answer a"]);
    let mut services = Services::new(dir.apps_data());
    services.set_agent_backend(Arc::new(backend.clone()) as Arc<dyn ExecutionBackend>);
    let mut host = BridgeHost::new(services, HostProfile::current(), OriginStyle::Scheme);
    let mut mounts = std::collections::HashMap::new();
    for app in ["agent-r", "agent-a"] {
        let m = host.mount(&store, app, "notes").unwrap();
        host.handle(
            &store,
            &m.mount_id,
            &m.origin,
            &msg(app, "app:ready", "r0", json!({})),
        );
        mounts.insert(app, m);
    }
    let mut call = |app: &str, method: &str, args: Value| -> Value {
        let m = &mounts[app];
        let out = posted(&host.handle(
            &store,
            &m.mount_id,
            &m.origin,
            &invoke(app, "q", method, args),
        ));
        out[0].clone()
    };
    let wait_ok = |call: &mut dyn FnMut(&str, &str, Value) -> Value, app: &str, id: &str| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let v = call(app, "getTask", json!({ "taskId": id }));
            if v["payload"]["value"]["status"] == "succeeded" {
                return v["payload"]["value"].clone();
            }
            assert!(Instant::now() < deadline, "{v}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let policy = json!({"mode": "resume", "businessObjectRef": "doc-1"});
    let r1 = call(
        "agent-r",
        "startTask",
        json!({"input": "one", "sessionPolicy": policy}),
    );
    assert_eq!(r1["type"], "host:response", "{r1}");
    let t1 = r1["payload"]["value"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let v1 = wait_ok(&mut call, "agent-r", &t1);
    let r2 = call(
        "agent-r",
        "startTask",
        json!({"input": "two", "sessionPolicy": {"mode": "resume", "taskId": t1}}),
    );
    assert_eq!(r2["type"], "host:response", "{r2}");
    let t2 = r2["payload"]["value"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(t1, t2);
    assert_eq!(r2["payload"]["value"]["sessionId"], v1["sessionId"]);
    let v2 = wait_ok(&mut call, "agent-r", &t2);
    assert_eq!(v2["result"]["text"], "answer two");
    let users: Vec<String> = backend.requests()[1]
        .messages
        .iter()
        .filter_map(|m| match m {
            runtime_core::backend::ChatMessage::User { content } => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        users,
        ["one", "two"],
        "the model saw the first conversation"
    );
    // Task 2's events are its own run's only (no system:init: the session is task 1's).
    let ev = call("agent-r", "getTaskEvents", json!({ "taskId": t2 }));
    let events = ev["payload"]["value"]["events"].as_array().unwrap().clone();
    let turn2 = v2["runs"][0]["turnId"].clone();
    assert!(!events.is_empty());
    let v = schema();
    for e in &events {
        assert!(v.is_valid(e), "{e}");
        assert_eq!(e["taskId"], t2.as_str());
        assert_eq!(e["turnId"], turn2, "{e}");
    }
    assert_eq!(events.iter().filter(|e| e["type"] == "result").count(), 1);

    // agent-a declares no mode: anything but "new" is refused from its installed manifest,
    // whatever the message says; "new" always works.
    for p in [
        json!("resume"),
        json!({"mode": "resume", "businessObjectRef": "doc-1"}),
        json!({"mode": "continue", "taskId": t1}),
        json!("fork"),
    ] {
        let out = call(
            "agent-a",
            "startTask",
            json!({"input": "x", "sessionPolicy": p}),
        );
        assert_eq!(out["type"], "host:error", "{p}");
        assert_eq!(out["payload"]["code"], "APP_E002", "{p}");
        assert_eq!(
            out["payload"]["causeCode"], "agent.session_policy_not_declared",
            "{p}"
        );
    }
    let out = call(
        "agent-a",
        "startTask",
        json!({"input": "x", "sessionPolicy": {"mode": "new"}}),
    );
    assert_eq!(out["type"], "host:response", "{out}");
    let ta = out["payload"]["value"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    wait_ok(&mut call, "agent-a", &ta);

    // agent-r: another app's task is not found; fork is declared but unsupported; bad shapes.
    for (p, code, cause) in [
        (
            json!({"mode": "resume", "taskId": ta}),
            "APP_E904",
            "agent.task_not_found",
        ),
        (
            json!({"mode": "fork", "taskId": t1}),
            "APP_E900",
            "agent.session_policy_unsupported",
        ),
        (
            json!({"mode": "continue", "taskId": t1}),
            "APP_E002",
            "agent.session_policy_not_declared",
        ),
        (
            json!({"mode": "resume"}),
            "APP_E900",
            "agent.invalid_argument",
        ),
        (
            json!({"mode": "resume", "taskId": t1, "businessObjectRef": "doc-1"}),
            "APP_E900",
            "agent.invalid_argument",
        ),
        (
            json!({"mode": "resume", "businessObjectRef": "x".repeat(201)}),
            "APP_E900",
            "agent.invalid_argument",
        ),
        (
            json!({"mode": "resume", "taskId": t1, "extra": 1}),
            "APP_E900",
            "agent.invalid_argument",
        ),
        (
            json!({"mode": "later"}),
            "APP_E900",
            "agent.invalid_argument",
        ),
        (json!(7), "APP_E900", "agent.invalid_argument"),
    ] {
        let out = call(
            "agent-r",
            "startTask",
            json!({"input": "x", "sessionPolicy": p}),
        );
        assert_eq!(out["type"], "host:error", "{p}");
        assert_eq!(out["payload"]["code"], code, "{p}");
        assert_eq!(out["payload"]["causeCode"], cause, "{p}");
    }
    let listed = call("agent-r", "listTasks", json!({}));
    assert_eq!(
        listed["payload"]["value"]["items"]
            .as_array()
            .unwrap()
            .len(),
        2,
        "refused calls recorded nothing"
    );
}
