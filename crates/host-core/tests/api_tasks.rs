//! The host UI's task activity (`host_core::api::tasks`, docs/host-api.md "Agent tasks") over a
//! real store and the bridge's own runtime with a scripted model: tasks started by two apps
//! through the bridge are listed across apps and per app, read in detail (events, the pending
//! approval's tool input), approved and rejected as the host's user, cancelled and retried;
//! another app's task id is `task.not_found`; every action is audited and announced as
//! `tasks:changed`; bad arguments get their documented codes; without a model, reading works and
//! retry is `model.not_configured`.

mod support;

use std::time::Duration;

use host_core::api::{self, Session};
use host_core::foundation::error::ErrorCode;
use host_core::foundation::paths::DataDir;
use host_core::hosting::bridge::message::PROTOCOL;
use runtime_core::backend::{BackendEvent, ScriptStep};
use serde_json::{json, Value};
use support::agent::{
    agent_app, call, scripted_backend, session, set_placeholder_model, wait_status,
};
use support::install;

fn code(s: &Session, command: &str, args: Value) -> ErrorCode {
    api::call(s, command, args.clone())
        .map(|v| panic!("{command} {args} answered {v}"))
        .unwrap_err()
        .code
}

/// Starts a task from a mounted frame of `app` (as the app would), returns its id.
fn start_task(s: &Session, app: &str, input: &str) -> String {
    s.with_bridge(|host, store| {
        let m = host.mount(store, app, "notes").unwrap();
        let send = |host: &mut host_core::hosting::bridge::host::BridgeHost,
                    id: &str,
                    kind: &str,
                    p: Value| {
            let raw = json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
                             "appId": app, "entryKey": "notes", "payload": p})
            .to_string();
            host.handle(store, &m.mount_id, &m.origin, &raw)
        };
        send(host, "r0", "app:ready", json!({}));
        let out = send(
            host,
            "r1",
            "capability:invoke",
            json!({"capability": "lime.agent", "method": "startTask", "args": {"input": input}}),
        );
        let v = serde_json::to_value(&out).unwrap();
        let posted = v
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o.to_string().contains("host:response"))
            .unwrap_or_else(|| panic!("no response: {v}"))
            .to_string();
        let at = posted.find("\"taskId\":\"").unwrap() + 10;
        posted[at..at + posted[at..].find('"').unwrap()].to_owned()
    })
    .unwrap()
}

fn tool_call(id: &str, name: &str, args: &str) -> Vec<ScriptStep> {
    vec![
        ScriptStep::Emit(BackendEvent::TextDelta("Saving the triage".into())),
        ScriptStep::Emit(BackendEvent::ToolCallDelta {
            index: 0,
            id: Some(id.into()),
            name: Some(name.into()),
            arguments_delta: args.into(),
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

fn changed_events(s: &Session) -> Vec<Value> {
    let batch = call(s, "next_events", json!({"after": 0}));
    batch["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "tasks:changed")
        .map(|e| e["payload"].clone())
        .collect()
}

fn audit_actions(dir: &DataDir) -> Vec<(String, Value)> {
    let conn = rusqlite::Connection::open(dir.db_path()).unwrap();
    let mut stmt = conn
        .prepare("SELECT action, details FROM audit_log WHERE action LIKE 'task.%' ORDER BY rowid")
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                serde_json::from_str(&r.get::<_, String>(1)?).unwrap(),
            ))
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

#[test]
fn the_host_lists_reads_approves_rejects_cancels_and_retries_tasks_of_every_app() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &agent_app(tmp.path(), "agent-a"));
    install(&dir, &agent_app(tmp.path(), "agent-b"));
    set_placeholder_model(&dir);
    let s = session(&dir);
    let backend = scripted_backend(&s);
    assert_eq!(call(&s, "list_tasks", json!({})), json!([]));

    // 1. A risky tool call waits for approval; the host shows its input and approves it.
    backend.push(tool_call(
        "c1",
        "storage_write",
        r#"{"path":"triage.txt","content":"bug: crash on save"}"#,
    ));
    backend.push(text("Saved."));
    let t1 = start_task(&s, "agent-a", "triage the queue");
    let d = wait_status(&s, "agent-a", &t1, "waiting_approval");
    let pending = &d["task"]["pendingActions"][0];
    assert_eq!(pending["toolName"], "storage_write", "{d}");
    assert_eq!(pending["input"]["path"], "triage.txt", "{d}");
    assert_eq!(d["task"]["input"], "triage the queue");
    let kinds: Vec<&str> = d["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"assistant:delta"), "{kinds:?}");
    assert!(kinds.contains(&"approval:requested"), "{kinds:?}");
    let listed = call(&s, "list_tasks", json!({"status": "waiting_approval"}));
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["pendingApprovals"], 1);
    assert_eq!(listed[0]["appId"], "agent-a");
    assert_eq!(listed[0]["inputPreview"], "triage the queue");
    let action = pending["actionId"].as_str().unwrap().to_owned();
    // Another app's task id, and an action id that is not pending: not found, nothing done.
    assert_eq!(
        code(
            &s,
            "task_respond",
            json!({"appId": "agent-b", "taskId": t1, "actionId": action, "decision": "approve"})
        ),
        ErrorCode::TaskNotFound
    );
    assert_eq!(
        code(
            &s,
            "task_respond",
            json!({"appId": "agent-a", "taskId": t1, "actionId": "act_nope", "decision": "approve"})
        ),
        ErrorCode::TaskActionNotFound
    );
    let after = d["nextAfterSequence"].as_u64().unwrap();
    assert_eq!(
        call(
            &s,
            "task_respond",
            json!({"appId": "agent-a", "taskId": t1, "actionId": action, "decision": "approve"})
        ),
        json!({"responded": true})
    );
    let d = wait_status(&s, "agent-a", &t1, "succeeded");
    assert_eq!(d["task"]["pendingActions"], json!([]));
    assert_eq!(d["task"]["result"]["text"], "Saved.");
    assert_eq!(
        std::fs::read_to_string(dir.apps_data().join("agent-a/files/triage.txt")).unwrap(),
        "bug: crash on save",
        "the approved tool ran in the app's storage"
    );
    // Reading from a sequence gives only what came after it.
    let rest = call(
        &s,
        "task_detail",
        json!({"appId": "agent-a", "taskId": t1, "afterSequence": after}),
    );
    let rest = rest["events"].as_array().unwrap();
    assert!(rest.iter().all(|e| e["sequence"].as_u64().unwrap() > after));
    assert_eq!(rest.last().unwrap()["type"], "result");
    assert_eq!(rest.last().unwrap()["subtype"], "success");

    // 2. Rejected via the host: the tool never runs.
    backend.push(tool_call(
        "c2",
        "storage_write",
        r#"{"path":"wipe.txt","content":""}"#,
    ));
    backend.push(text("Understood, nothing written."));
    let t2 = start_task(&s, "agent-a", "wipe it");
    let d = wait_status(&s, "agent-a", &t2, "waiting_approval");
    let action = d["task"]["pendingActions"][0]["actionId"]
        .as_str()
        .unwrap()
        .to_owned();
    call(
        &s,
        "task_respond",
        json!({"appId": "agent-a", "taskId": t2, "actionId": action, "decision": "reject"}),
    );
    let d = wait_status(&s, "agent-a", &t2, "succeeded");
    assert!(!dir.apps_data().join("agent-a/files/wipe.txt").exists());
    assert!(d["events"].to_string().contains("approval_resolved"), "{d}");

    // 3. Another app's task: cancelled while it streams, then retried as a new run.
    backend.push(vec![
        ScriptStep::Emit(BackendEvent::TextDelta("slow".into())),
        ScriptStep::Sleep(Duration::from_secs(60)),
    ]);
    let t3 = start_task(&s, "agent-b", "a long job");
    wait_status(&s, "agent-b", &t3, "running");
    assert_eq!(
        code(&s, "task_retry", json!({"appId": "agent-b", "taskId": t3})),
        ErrorCode::TaskBusy
    );
    for cmd in ["task_cancel", "task_retry", "task_detail"] {
        assert_eq!(
            code(&s, cmd, json!({"appId": "agent-a", "taskId": t3})),
            ErrorCode::TaskNotFound,
            "{cmd}: agent-a cannot reach agent-b's task"
        );
    }
    call(&s, "task_cancel", json!({"appId": "agent-b", "taskId": t3}));
    let d = wait_status(&s, "agent-b", &t3, "cancelled");
    assert_eq!(
        d["events"].as_array().unwrap().last().unwrap()["subtype"],
        "cancelled"
    );
    backend.push(text("Done this time."));
    let retried = call(&s, "task_retry", json!({"appId": "agent-b", "taskId": t3}));
    assert_eq!(retried["runs"].as_array().unwrap().len(), 2, "{retried}");
    let d = wait_status(&s, "agent-b", &t3, "succeeded");
    assert_eq!(d["task"]["runs"][0]["status"], "cancelled");
    assert_eq!(d["task"]["result"]["text"], "Done this time.");

    // Lists: across apps newest first, per app, by status, bounded.
    let all = call(&s, "list_tasks", json!({}));
    let ids: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [t3.as_str(), t2.as_str(), t1.as_str()]);
    let a = call(&s, "list_tasks", json!({"appId": "agent-a"}));
    assert_eq!(a.as_array().unwrap().len(), 2);
    assert!(a
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["appId"] == "agent-a" && t["pendingApprovals"] == 0));
    assert_eq!(
        call(&s, "list_tasks", json!({"limit": 1}))
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        call(&s, "list_tasks", json!({"limit": 0}))
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        call(&s, "list_tasks", json!({"status": "cancelled"})),
        json!([])
    );

    // Every host action is audited and announced.
    let audited = audit_actions(&dir);
    let names: Vec<&str> = audited.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(
        names,
        ["task.respond", "task.respond", "task.cancel", "task.retry"],
        "{audited:?}"
    );
    assert_eq!(audited[0].1["decision"], "approve");
    assert_eq!(audited[1].1["decision"], "reject");
    assert_eq!(audited[0].1["by"], "host-user");
    let changed = changed_events(&s);
    for (reason, task) in [
        ("task.respond", &t1),
        ("task.cancel", &t3),
        ("task.retry", &t3),
    ] {
        assert!(
            changed
                .iter()
                .any(|c| c["reason"] == reason && c["taskId"] == task.as_str()),
            "{reason}: {changed:?}"
        );
    }
    // The frames' own task events announce status changes too (not each delta).
    assert!(
        changed
            .iter()
            .any(|c| c["reason"] == "result" && c["taskId"] == t1.as_str()),
        "{changed:?}"
    );
    assert!(changed.iter().all(|c| c["reason"] != "assistant:delta"));
    drop(s);

    // Without a model: reading works, retry is model.not_configured.
    {
        let conn = rusqlite::Connection::open(dir.db_path()).unwrap();
        conn.execute("DELETE FROM settings WHERE key LIKE 'model.%'", [])
            .unwrap();
    }
    let s = session(&dir);
    assert_eq!(
        call(&s, "list_tasks", json!({})).as_array().unwrap().len(),
        3
    );
    assert_eq!(
        call(&s, "task_detail", json!({"appId": "agent-a", "taskId": t1}))["task"]["status"],
        "succeeded"
    );
    assert_eq!(
        code(&s, "task_retry", json!({"appId": "agent-a", "taskId": t1})),
        ErrorCode::ModelNotConfigured
    );
    assert_eq!(
        audit_actions(&dir).len(),
        4,
        "a refused retry is not audited"
    );
}

#[test]
fn bad_arguments_get_their_documented_codes_and_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let s = session(&dir);
    // No data directory yet: nothing to list, nothing created.
    assert_eq!(call(&s, "list_tasks", json!({})), json!([]));
    assert_eq!(
        code(
            &s,
            "task_detail",
            json!({"appId": "agent-a", "taskId": "t"})
        ),
        ErrorCode::TaskNotFound
    );
    assert!(!dir.root().exists(), "reading created the data directory");
    install(&dir, &agent_app(tmp.path(), "agent-a"));
    let long = "x".repeat(300);
    for (cmd, args, want) in [
        (
            "list_tasks",
            json!({"status": "done"}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "list_tasks",
            json!({"appId": "Not An App"}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "list_tasks",
            json!({"limit": -1}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "list_tasks",
            json!({"bogus": 1}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "task_detail",
            json!({"appId": "agent-a"}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "task_detail",
            json!({"appId": "agent-a", "taskId": "t", "afterSequence": "x"}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "task_detail",
            json!({"appId": "agent-a", "taskId": long}),
            ErrorCode::TaskNotFound,
        ),
        (
            "task_detail",
            json!({"appId": "agent-a", "taskId": "task_missing"}),
            ErrorCode::TaskNotFound,
        ),
        (
            "task_cancel",
            json!({"appId": "agent-a", "taskId": "task_missing"}),
            ErrorCode::TaskNotFound,
        ),
        (
            "task_retry",
            json!({"appId": "agent-a", "taskId": "task_missing"}),
            ErrorCode::TaskNotFound,
        ),
        (
            "task_respond",
            json!({"appId": "agent-a", "taskId": "t", "actionId": "a", "decision": "maybe"}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "task_respond",
            json!({"appId": "agent-a", "taskId": "t", "actionId": "a", "decision": "answer"}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "task_respond",
            json!({"appId": "agent-a", "taskId": "t", "actionId": "a", "decision": "reject", "updatedInput": {}}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "task_respond",
            json!({"appId": "agent-a", "taskId": "t", "actionId": "a", "decision": "approve", "updatedInput": [1]}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "task_respond",
            json!({"appId": "agent-a", "taskId": "t", "actionId": "a", "decision": "approve", "updatedInput": {"content": "y".repeat(300 * 1024)}}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "task_respond",
            json!({"appId": "agent-a", "taskId": "t", "actionId": "a", "decision": "approve"}),
            ErrorCode::TaskNotFound,
        ),
    ] {
        assert_eq!(code(&s, cmd, args.clone()), want, "{cmd} {args}");
    }
    assert!(changed_events(&s).is_empty());
    assert!(audit_actions(&dir).is_empty());
    assert!(
        !dir.root().join("runtime").exists(),
        "refused commands opened no agent runtime"
    );
}
