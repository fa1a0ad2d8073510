//! The window's door (`host_core::api::door`, docs/app-server.md "The door"): an app's
//! `lime.agent` task and an external App Server client share one runtime. A task started by a
//! frame is read over the socket, its run's events carry the task's `traceId` and the bridge
//! call's `requestId` (one trace), and a cancel from the socket client ends the app's task.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use host_core::foundation::paths::DataDir;
use host_core::hosting::bridge::message::PROTOCOL;
use runtime_core::backend::{BackendEvent, ScriptStep};
use serde_json::{json, Value};
use support::agent::{agent_app, scripted_backend, session, set_placeholder_model, wait_status};
use support::install;

/// `startTask` from a mounted frame of `app` with bridge request id `request`: its answer.
fn start_task(s: &host_core::api::Session, app: &str, request: &str) -> Value {
    s.with_bridge(|host, store| {
        let m = host.mount(store, app, "notes").unwrap();
        let mut send = |id: &str, kind: &str, p: Value| {
            let raw = json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
                             "appId": app, "entryKey": "notes", "payload": p})
            .to_string();
            serde_json::to_value(host.handle(store, &m.mount_id, &m.origin, &raw)).unwrap()
        };
        send("r0", "app:ready", json!({}));
        let out = send(
            request,
            "capability:invoke",
            json!({"capability": "lime.agent", "method": "startTask", "args": {"input": "save it"}}),
        );
        let text = out.to_string();
        let at = text.find("\"taskId\"").expect("a host:response");
        let start = text[..at].rfind('{').unwrap();
        let end = start + text[start..].find('}').unwrap() + 1;
        serde_json::from_str(&text[start..end].replace("\\\"", "\"")).unwrap_or_else(|e| {
            panic!("{e}: {}", &text[start..end]);
        })
    })
    .unwrap()
}

struct Door {
    w: UnixStream,
    r: BufReader<UnixStream>,
    id: u64,
}

impl Door {
    fn connect(dir: &DataDir) -> Door {
        let rt = dir.root().join("runtime");
        let s = UnixStream::connect(rt.join("app-server.sock")).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut d = Door {
            w: s.try_clone().unwrap(),
            r: BufReader::new(s),
            id: 0,
        };
        let token = std::fs::read_to_string(rt.join("app-server.token")).unwrap();
        d.ok(
            "initialize",
            json!({"clientInfo": {"name": "door"}, "authToken": token}),
        );
        writeln!(
            d.w,
            "{}",
            json!({"jsonrpc": "2.0", "method": "initialized"})
        )
        .unwrap();
        d
    }

    fn ok(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params});
        writeln!(self.w, "{msg}").unwrap();
        loop {
            let mut line = String::new();
            assert!(self.r.read_line(&mut line).unwrap() > 0, "closed");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == self.id {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }
}

#[test]
fn an_apps_task_is_read_and_cancelled_through_the_door_with_one_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &agent_app(tmp.path(), "agent-a"));
    set_placeholder_model(&dir);
    let s = session(&dir);
    let backend = scripted_backend(&s);
    // A risky tool call: the run waits for the user's approval.
    backend.push(vec![
        ScriptStep::Emit(BackendEvent::ToolCallDelta {
            index: 0,
            id: Some("c1".into()),
            name: Some("storage_write".into()),
            arguments_delta: r#"{"path":"a.txt","content":"x"}"#.into(),
        }),
        ScriptStep::Emit(BackendEvent::Finished {
            reason: "tool_calls".into(),
        }),
    ]);
    let door = host_core::api::door::open(&s).unwrap();
    let started = start_task(&s, "agent-a", "req-42");
    let task = started["taskId"].as_str().unwrap().to_owned();
    let session_id = started["sessionId"].as_str().unwrap().to_owned();
    let trace = started["traceId"].as_str().unwrap().to_owned();
    wait_status(&s, "agent-a", &task, "waiting_approval");

    let mut c = Door::connect(&dir);
    let read = c.ok("agentSession/read", json!({"sessionId": session_id}));
    assert_eq!(read["session"]["appId"], "agent-a");
    let turn = read["turns"][0]["turnId"].as_str().unwrap().to_owned();
    assert_eq!(read["turns"][0]["status"], "waitingAction", "{read}");
    let export = c.ok(
        "evidence/export",
        json!({"sessionId": session_id, "turnId": turn, "includeEvents": true}),
    );
    assert_eq!(export["runtimeCorrelation"]["traceId"], trace, "{export}");
    assert!(
        export["runtimeCorrelation"]["taskId"].is_string(),
        "{export}"
    );
    let events = export["events"].as_array().unwrap();
    assert!(events.len() >= 4, "{export}");
    for e in events.iter().filter(|e| e.get("turnId").is_some()) {
        assert_eq!(e["traceId"], trace, "{e}");
        assert_eq!(e["requestId"], "req-42", "{e}");
    }

    c.ok(
        "agentSession/turn/cancel",
        json!({"sessionId": session_id, "turnId": turn}),
    );
    wait_status(&s, "agent-a", &task, "cancelled");
    drop(door);
    assert!(!dir.root().join("runtime/app-server.sock").exists());
}
