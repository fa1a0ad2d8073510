//! Crash: SIGKILL the App Server while the provider is streaming, restart it on the same data
//! directory: no sequence is reused, read models are rebuilt, the interrupted turn is recorded
//! as failed with a recovery fact, and new turns work.

mod support_schema;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: i64,
    events: Vec<Value>,
}

impl Server {
    fn start(dir: &std::path::Path, mode: &str) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_scripted_app_server"))
            .arg(dir)
            .arg(mode)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut s = Server {
            child,
            stdin,
            stdout,
            next: 1,
            events: Vec::new(),
        };
        s.call("initialize", json!({"clientInfo": {"name": "crash-test"}}));
        writeln!(s.stdin, r#"{{"method":"initialized"}}"#).unwrap();
        s
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        assert!(
            self.stdout.read_line(&mut line).unwrap() > 0,
            "server closed stdout"
        );
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("non-JSON on stdout {line:?}: {e}"));
        if v["method"] == "agentSession/event" {
            self.events.push(v["params"]["event"].clone());
        }
        v
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        writeln!(
            self.stdin,
            "{}",
            json!({"id": id, "method": method, "params": params})
        )
        .unwrap();
        loop {
            let v = self.read();
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    fn wait(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(e) = self.events.iter().find(|e| pred(e)) {
            return e.clone();
        }
        loop {
            let v = self.read();
            if v["method"] == "agentSession/event" && pred(&v["params"]["event"]) {
                return v["params"]["event"].clone();
            }
        }
    }
}

#[test]
fn sigkill_mid_stream_then_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start(tmp.path(), "slow");
    let sid = s.call("agentSession/start", json!({"appId": "demo"}))["session"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    s.call(
        "agentSession/turn/start",
        json!({"sessionId": sid, "turnId": "turn_crash", "input": {"text": "stream"}}),
    );
    // Kill while the provider is streaming (after a few deltas).
    s.wait(|e| e["type"] == "model.delta" && e["payload"]["text"] == "d5 ");
    s.child.kill().unwrap(); // SIGKILL
    s.child.wait().unwrap();
    let before: Vec<Value> = s.events.clone();
    let max_seen = before
        .iter()
        .map(|e| e["sequence"].as_u64().unwrap())
        .max()
        .unwrap();

    let mut s = Server::start(tmp.path(), "fast");
    let read = s.call("agentSession/read", json!({"sessionId": sid}));
    let turn = &read["turns"][0];
    assert_eq!(turn["turnId"], "turn_crash");
    assert_eq!(turn["status"], "failed");
    assert_eq!(turn["errorCode"], "interrupted_by_restart");
    let ex = s.call(
        "evidence/export",
        json!({"sessionId": sid, "includeEvents": true}),
    );
    let events = ex["events"].as_array().unwrap().clone();
    let seqs: Vec<u64> = events
        .iter()
        .map(|e| e["sequence"].as_u64().unwrap())
        .collect();
    assert_eq!(
        seqs,
        (1..=seqs.len() as u64).collect::<Vec<_>>(),
        "gap-free after the crash"
    );
    // Everything a client saw before the crash is still there, with the same ids: no
    // sequence was reused.
    for e in &before {
        let n = e["sequence"].as_u64().unwrap() as usize;
        assert_eq!(
            events[n - 1]["eventId"],
            e["eventId"],
            "sequence {n} reused"
        );
    }
    let repaired = events
        .iter()
        .position(|e| e["type"] == "snapshot.repaired")
        .expect("a recovery fact");
    assert!(events[repaired]["sequence"].as_u64().unwrap() > max_seen);
    let failed = events
        .iter()
        .position(|e| e["type"] == "turn.failed" && e["turnId"] == "turn_crash")
        .unwrap();
    assert!(failed > repaired);
    let v = support_schema::profile_event_validator();
    for e in &events {
        support_schema::assert_profile_valid(&v, e);
    }
    // Read models were rebuilt from the log: the deltas streamed before the crash are there.
    let th = read["session"]["threadId"].as_str().unwrap();
    assert!(read["detail"]["threads"][th]["turns"][0]["outputText"]
        .as_str()
        .unwrap()
        .starts_with("d0 d1 d2 d3 d4 d5 "));
    assert_eq!(read["detail"]["session"]["repairs"], 1);
    assert_eq!(
        read["detail"]["tasks"]
            .as_object()
            .unwrap()
            .values()
            .next()
            .unwrap()["status"],
        "failed"
    );
    // New turns work.
    s.call(
        "agentSession/turn/start",
        json!({"sessionId": sid, "turnId": "turn_after", "input": {"text": "again"}}),
    );
    let done = s.wait(|e| {
        e["turnId"] == "turn_after" && (e["type"] == "turn.completed" || e["type"] == "turn.failed")
    });
    assert_eq!(done["type"], "turn.completed", "{done}");
    let last = events.last().unwrap()["sequence"].as_u64().unwrap();
    assert!(s
        .events
        .iter()
        .filter(|e| e["turnId"] == "turn_after")
        .all(|e| e["sequence"].as_u64().unwrap() > last));
    drop(s.stdin);
    s.child.wait().unwrap();
}
