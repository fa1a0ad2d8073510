//! Approval belongs to the user, not the app (ARCHITECTURE.md, "Approval belongs to the user"):
//! the attack review's app approved its own risky `storage_write` through
//! `lime.agent.respondAction` and chose the path and content with `updatedInput`. Here an app
//! tries exactly that through the bridge: every approve / answer / `remember: "session"` /
//! `updatedInput` is refused with a stable code (`APP_E002`, `agent.approval_requires_user` or
//! `agent.updated_input_unsupported`), the action stays pending, the tool does not run and the
//! app's storage is unchanged; the app may reject; the host's user approves (`task_respond`,
//! audited `by: host-user`) and the tool runs with the model's input, or with the user's edit.

mod support;

use std::path::Path;
use std::time::Duration;

use host_core::api::{self, Session};
use host_core::foundation::paths::DataDir;
use host_core::hosting::bridge::host::Outgoing;
use host_core::hosting::bridge::message::PROTOCOL;
use runtime_core::backend::{BackendEvent, ScriptStep, ScriptedBackend};
use serde_json::{json, Value};
use support::agent::{
    agent_app, call, scripted_backend, session, set_placeholder_model, wait_status,
};
use support::install;

const APP: &str = "agent-a";

/// A session over a data directory with `APP` installed, a model set up and a scripted backend.
fn setup(tmp: &Path) -> (DataDir, Session, ScriptedBackend) {
    let dir = DataDir::at(tmp.join("data"));
    install(&dir, &agent_app(tmp, APP));
    set_placeholder_model(&dir);
    let s = session(&dir);
    let backend = scripted_backend(&s);
    (dir, s, backend)
}

/// One mounted frame of `APP`: sends `lime.agent` calls as the app would.
struct Frame {
    mount_id: String,
    origin: String,
}

impl Frame {
    fn mount(s: &Session) -> Frame {
        let f = s
            .with_bridge(|host, store| {
                let m = host.mount(store, APP, "notes").unwrap();
                Frame {
                    mount_id: m.mount_id.clone(),
                    origin: m.origin.clone(),
                }
            })
            .unwrap();
        f.send(s, "app:ready", json!({}));
        f
    }

    fn send(&self, s: &Session, kind: &str, payload: Value) -> Value {
        let raw = json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": "r",
                         "appId": APP, "entryKey": "notes", "payload": payload})
        .to_string();
        let out = s
            .with_bridge(|host, store| host.handle(store, &self.mount_id, &self.origin, &raw))
            .unwrap();
        out.iter()
            .find_map(|o| match o {
                Outgoing::Post { message, .. }
                    if message["type"] == "host:response" || message["type"] == "host:error" =>
                {
                    Some(message.clone())
                }
                _ => None,
            })
            .unwrap_or(Value::Null)
    }

    /// A `lime.agent` call: `Ok(value)` or `Err((code, causeCode))`.
    fn agent(&self, s: &Session, method: &str, args: Value) -> Result<Value, (String, String)> {
        let m = self.send(
            s,
            "capability:invoke",
            json!({"capability": "lime.agent", "method": method, "args": args}),
        );
        match m["type"].as_str() {
            Some("host:response") => Ok(m["payload"]["value"].clone()),
            Some("host:error") => Err((
                m["payload"]["code"].as_str().unwrap_or("").to_owned(),
                m["payload"]["causeCode"].as_str().unwrap_or("").to_owned(),
            )),
            _ => panic!("{method}: no answer: {m}"),
        }
    }
}

fn push_write(backend: &ScriptedBackend, path: &str, content: &str) {
    let args = json!({"path": path, "content": content}).to_string();
    backend.push(vec![
        ScriptStep::Emit(BackendEvent::ToolCallDelta {
            index: 0,
            id: Some("c1".into()),
            name: Some("storage_write".into()),
            arguments_delta: args,
        }),
        ScriptStep::Emit(BackendEvent::Finished {
            reason: "tool_calls".into(),
        }),
    ]);
    backend.push(vec![
        ScriptStep::Emit(BackendEvent::TextDelta("Done.".into())),
        ScriptStep::Emit(BackendEvent::Finished {
            reason: "stop".into(),
        }),
    ]);
}

/// Starts a task whose model asks to write `path`; answers the task id and the pending action id.
fn waiting_task(s: &Session, f: &Frame, backend: &ScriptedBackend, path: &str) -> (String, String) {
    push_write(backend, path, "the model's content");
    let started = f
        .agent(s, "startTask", json!({"input": "save the triage"}))
        .unwrap();
    let task = started["taskId"].as_str().unwrap().to_owned();
    let d = wait_status(s, APP, &task, "waiting_approval");
    let pending = &d["task"]["pendingActions"][0];
    assert_eq!(pending["toolName"], "storage_write", "{d}");
    assert_eq!(pending["actionType"], "tool_confirmation", "{d}");
    (task, pending["actionId"].as_str().unwrap().to_owned())
}

/// Every file under the app's storage (its top folder and `files/`, where the agent's tools
/// write), with its content.
fn storage(dir: &DataDir) -> Vec<(String, String)> {
    let root = dir.apps_data().join(APP);
    let mut out = Vec::new();
    for (prefix, folder) in [("", root.clone()), ("files/", root.join("files"))] {
        let Ok(rd) = std::fs::read_dir(&folder) else {
            continue;
        };
        for e in rd.flatten() {
            if e.path().is_file() {
                out.push((
                    format!("{prefix}{}", e.file_name().to_string_lossy()),
                    std::fs::read_to_string(e.path()).unwrap_or_default(),
                ));
            }
        }
    }
    out.sort();
    out
}

fn respond_audits(dir: &DataDir) -> Vec<Value> {
    let conn = rusqlite::Connection::open(dir.db_path()).unwrap();
    let mut stmt = conn
        .prepare("SELECT details FROM audit_log WHERE action = 'task.respond' ORDER BY rowid")
        .unwrap();
    let rows = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|d| serde_json::from_str(&d.unwrap()).unwrap())
        .collect();
    rows
}

#[test]
fn an_app_cannot_approve_its_own_risky_tool_call_nor_rewrite_its_input() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, s, backend) = setup(tmp.path());
    let f = Frame::mount(&s);
    let (task, action) = waiting_task(&s, &f, &backend, "triage.txt");
    let before = storage(&dir);
    let events_before =
        call(&s, "task_detail", json!({"appId": APP, "taskId": task}))["nextAfterSequence"].clone();

    // The attack: approve, answer, allow for the session, each with and without the app's own
    // path and content. Every one is refused with its stable code and changes nothing.
    let evil = json!({"path": "../../escape.txt", "content": "the app's content"});
    let attempts = [
        (
            json!({"decision": "approve"}),
            "agent.approval_requires_user",
        ),
        (
            json!({"decision": "approve", "remember": "call"}),
            "agent.approval_requires_user",
        ),
        (
            json!({"decision": "approve", "remember": "session"}),
            "agent.approval_requires_user",
        ),
        (
            json!({"decision": "answer"}),
            "agent.approval_requires_user",
        ),
        (
            json!({"decision": "reject", "remember": "session"}),
            "agent.approval_requires_user",
        ),
        (
            json!({"decision": "approve", "updatedInput": evil}),
            "agent.updated_input_unsupported",
        ),
        (
            json!({"decision": "answer", "updatedInput": evil}),
            "agent.updated_input_unsupported",
        ),
        (
            json!({"decision": "reject", "updatedInput": evil}),
            "agent.updated_input_unsupported",
        ),
        (
            json!({"decision": "approve", "remember": "session", "updatedInput": {"path": "a", "content": ""}}),
            "agent.updated_input_unsupported",
        ),
    ];
    for (mut args, cause) in attempts {
        args["taskId"] = json!(task);
        args["actionId"] = json!(action);
        assert_eq!(
            f.agent(&s, "respondAction", args.clone()),
            Err(("APP_E002".to_owned(), cause.to_owned())),
            "{args}"
        );
        let d = call(&s, "task_detail", json!({"appId": APP, "taskId": task}));
        assert_eq!(d["task"]["status"], "waiting_approval", "{args}: {d}");
        assert_eq!(d["task"]["pendingActions"][0]["actionId"], action.as_str());
        assert_eq!(
            d["nextAfterSequence"], events_before,
            "{args}: no event was written"
        );
    }
    // Nothing ran: the app's storage is as it was, the escape target does not exist.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(storage(&dir), before);
    assert!(!dir
        .apps_data()
        .join(APP)
        .join("files")
        .join("triage.txt")
        .exists());
    assert!(!tmp.path().join("escape.txt").exists());
    assert!(!dir.root().join("escape.txt").exists());
    assert!(
        respond_audits(&dir).is_empty(),
        "no host answer was recorded"
    );

    // Shapes are still checked first (bounded, documented codes); an unknown action is not found.
    for (args, cause) in [
        (json!({"decision": "maybe"}), "agent.invalid_argument"),
        (
            json!({"decision": "approve", "remember": "forever"}),
            "agent.invalid_argument",
        ),
        (
            json!({"decision": "approve", "updatedInput": "rm -rf"}),
            "agent.invalid_argument",
        ),
    ] {
        let mut args = args;
        args["taskId"] = json!(task);
        args["actionId"] = json!(action);
        assert_eq!(
            f.agent(&s, "respondAction", args.clone()).unwrap_err().1,
            cause,
            "{args}"
        );
    }
    assert_eq!(
        f.agent(
            &s,
            "respondAction",
            json!({"taskId": task, "actionId": "act_nope", "decision": "approve"})
        ),
        Err(("APP_E904".to_owned(), "agent.action_not_found".to_owned()))
    );

    // The host's user approves (the host-drawn prompt and the Tasks page call task_respond):
    // the tool runs with the model's input, audited as the user's answer.
    assert_eq!(
        call(
            &s,
            "task_respond",
            json!({"appId": APP, "taskId": task, "actionId": action, "decision": "approve"})
        ),
        json!({"responded": true})
    );
    let d = wait_status(&s, APP, &task, "succeeded");
    assert_eq!(d["task"]["pendingActions"], json!([]));
    assert_eq!(
        std::fs::read_to_string(dir.apps_data().join(APP).join("files").join("triage.txt"))
            .unwrap(),
        "the model's content"
    );
    let audits = respond_audits(&dir);
    assert_eq!(audits.len(), 1, "{audits:?}");
    assert_eq!(audits[0]["by"], "host-user");
    assert_eq!(audits[0]["decision"], "approve");
    // Answered: the app's late approve finds nothing pending.
    assert_eq!(
        f.agent(
            &s,
            "respondAction",
            json!({"taskId": task, "actionId": action, "decision": "approve"})
        )
        .unwrap_err()
        .1,
        "agent.action_not_found"
    );
}

#[test]
fn an_app_may_reject_and_the_user_may_edit_the_input_or_allow_for_the_session() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, s, backend) = setup(tmp.path());
    let f = Frame::mount(&s);

    // The app rejects (its own Reject button beside the host's prompt): the tool never runs.
    let (task, action) = waiting_task(&s, &f, &backend, "wipe.txt");
    assert_eq!(
        f.agent(
            &s,
            "respondAction",
            json!({"taskId": task, "actionId": action, "decision": "reject"})
        ),
        Ok(json!({"responded": true}))
    );
    wait_status(&s, APP, &task, "succeeded");
    assert!(!dir
        .apps_data()
        .join(APP)
        .join("files")
        .join("wipe.txt")
        .exists());

    // The user's edited input is the user's choice: allowed on the host path.
    let (task, action) = waiting_task(&s, &f, &backend, "draft.txt");
    call(
        &s,
        "task_respond",
        json!({"appId": APP, "taskId": task, "actionId": action, "decision": "approve",
               "updatedInput": {"path": "final.txt", "content": "the user's content"}}),
    );
    wait_status(&s, APP, &task, "succeeded");
    assert!(!dir
        .apps_data()
        .join(APP)
        .join("files")
        .join("draft.txt")
        .exists());
    assert_eq!(
        std::fs::read_to_string(dir.apps_data().join(APP).join("files").join("final.txt")).unwrap(),
        "the user's content"
    );

    // Allow for the session comes from the user too; `remember` is checked.
    let (task, action) = waiting_task(&s, &f, &backend, "one.txt");
    let bad = api::call(
        &s,
        "task_respond",
        json!({"appId": APP, "taskId": task, "actionId": action, "decision": "approve", "remember": "forever"}),
    )
    .unwrap_err();
    assert_eq!(
        bad.code,
        host_core::foundation::error::ErrorCode::ApiBadArguments
    );
    call(
        &s,
        "task_respond",
        json!({"appId": APP, "taskId": task, "actionId": action, "decision": "approve", "remember": "session"}),
    );
    wait_status(&s, APP, &task, "succeeded");
    assert!(dir
        .apps_data()
        .join(APP)
        .join("files")
        .join("one.txt")
        .exists());
    let audits = respond_audits(&dir);
    assert_eq!(audits.last().unwrap()["remember"], "session", "{audits:?}");
    assert!(audits.iter().all(|a| a["by"] == "host-user"), "{audits:?}");
}
