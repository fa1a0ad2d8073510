//! Crash: SIGKILL the App Server while the provider is streaming (or abort it inside a
//! group-commit batch), restart it on the same data directory: no sequence is reused (deltas
//! a client saw that never became durable lie in a gap the log declares), read models are
//! rebuilt, the interrupted turn is recorded as failed with a recovery fact, and new turns work.

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
        Server::start_with(dir, mode, None)
    }

    fn start_with(dir: &std::path::Path, mode: &str, crash_at: Option<&str>) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_scripted_app_server"));
        if let Some(at) = crash_at {
            cmd.env("APPHOST_LOG_CRASH_AT", at);
        }
        let mut child = cmd
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
        self.try_read().expect("server closed stdout")
    }

    fn try_read(&mut self) -> Option<Value> {
        let mut line = String::new();
        if self.stdout.read_line(&mut line).unwrap() == 0 {
            return None;
        }
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("non-JSON on stdout {line:?}: {e}"));
        if v["method"] == "agentSession/event" {
            self.events.push(v["params"]["event"].clone());
        }
        Some(v)
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let v = self.call_raw(method, params);
        assert!(v.get("error").is_none(), "{method}: {v}");
        v["result"].clone()
    }

    /// The whole response (result or error).
    fn call_raw(&mut self, method: &str, params: Value) -> Value {
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
                return v;
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

/// The ranges of sequences the log declares lost (`snapshot.repaired` right after each gap);
/// panics on an undeclared gap.
fn declared_gaps(events: &[Value]) -> Vec<(u64, u64)> {
    let mut gaps = Vec::new();
    let mut prev = 0;
    for e in events {
        let n = e["sequence"].as_u64().unwrap();
        if n != prev + 1 {
            assert_eq!(e["type"], "snapshot.repaired", "undeclared gap before {e}");
            assert_eq!(e["payload"]["lostSequenceFrom"], prev + 1, "{e}");
            assert_eq!(e["payload"]["lostSequenceThrough"], n - 1, "{e}");
            gaps.push((prev + 1, n - 1));
        }
        prev = n;
    }
    gaps
}

/// Kills the server after a few deltas (however `crash` does it), restarts it and checks
/// recovery.
fn crash_then_restart(crash_at: Option<&str>, crash: impl FnOnce(&mut Server)) {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_with(tmp.path(), "slow", crash_at);
    let sid = s.call("agentSession/start", json!({"appId": "demo"}))["session"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    s.call(
        "agentSession/turn/start",
        json!({"sessionId": sid, "turnId": "turn_crash", "input": {"text": "stream"}}),
    );
    crash(&mut s);
    s.child.wait().unwrap();
    let before: Vec<Value> = s.events.clone();
    assert!(before.iter().any(|e| e["type"] == "model.delta"));
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
    // Consecutive, except across gaps the log declares.
    let gaps = declared_gaps(&events);
    // Everything a client saw before the crash is still there with the same ids, or was a
    // delta in a declared gap: no sequence was reused.
    for e in &before {
        let n = e["sequence"].as_u64().unwrap();
        match events.iter().find(|x| x["sequence"] == n) {
            Some(x) => assert_eq!(x["eventId"], e["eventId"], "sequence {n} reused"),
            None => {
                assert!(
                    gaps.iter().any(|(a, b)| (*a..=*b).contains(&n)),
                    "{n} lost, undeclared"
                );
                assert_eq!(e["type"], "model.delta", "only deltas may be lost: {e}");
            }
        }
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
    // Read models were rebuilt from the log: the durable deltas are a prefix of the stream.
    let th = read["session"]["threadId"].as_str().unwrap();
    let stream: String = (0..1000).map(|i| format!("d{i} ")).collect();
    let text = read["detail"]["threads"][th]["turns"][0]["outputText"]
        .as_str()
        .unwrap();
    assert!(stream.starts_with(text), "{text:?}");
    // One repair for the interrupted turn, one per declared gap.
    assert_eq!(read["detail"]["session"]["repairs"], 1 + gaps.len() as u64);
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

#[test]
fn sigkill_mid_stream_then_restart() {
    crash_then_restart(None, |s| {
        // Kill while the provider is streaming (after a few deltas).
        s.wait(|e| e["type"] == "model.delta" && e["payload"]["text"] == "d5 ");
        s.child.kill().unwrap(); // SIGKILL
    });
}

#[test]
fn crash_inside_a_group_commit_batch_then_restart() {
    crash_then_restart(Some("flush-mid-batch"), |s| {
        // The server aborts inside its first group-commit batch (half its rows written, not
        // committed), after publishing at least one delta: read until stdout closes.
        while s.try_read().is_some() {}
        let delta = s
            .events
            .iter()
            .filter(|e| e["type"] == "model.delta")
            .count();
        assert!(delta >= 1);
    });
}

#[test]
fn queued_turns_survive_a_restart_paused_until_resumed() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start(tmp.path(), "slow");
    let sid = s.call("agentSession/start", json!({"appId": "demo"}))["session"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    s.call(
        "agentSession/turn/start",
        json!({"sessionId": sid, "turnId": "turn_run", "input": {"text": "stream"}}),
    );
    for t in ["turn_q1", "turn_q2"] {
        let r = s.call(
            "agentSession/turn/start",
            json!({"sessionId": sid, "turnId": t, "input": {"text": t}, "queueIfBusy": true}),
        );
        assert_eq!(r["turn"]["status"], "queued");
    }
    s.wait(|e| e["type"] == "model.delta" && e["payload"]["text"] == "d2 ");
    s.child.kill().unwrap();
    s.child.wait().unwrap();

    let mut s = Server::start(tmp.path(), "fast");
    let read = s.call("agentSession/read", json!({"sessionId": sid}));
    let status = |read: &Value, t: &str| {
        read["turns"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["turnId"] == t)
            .unwrap()["status"]
            .clone()
    };
    // The running turn was interrupted; the queue survived, paused.
    assert_eq!(status(&read, "turn_run"), "failed");
    assert_eq!(status(&read, "turn_q1"), "queued");
    assert_eq!(status(&read, "turn_q2"), "queued");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let read = s.call("agentSession/read", json!({"sessionId": sid}));
    assert_eq!(
        status(&read, "turn_q1"),
        "queued",
        "nothing starts on its own"
    );
    let ex = s.call(
        "evidence/export",
        json!({"sessionId": sid, "includeEvents": true}),
    );
    let restored = ex["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "queue.changed" && e["payload"]["change"] == "restored")
        .cloned()
        .expect("a queue.changed restored fact");
    assert_eq!(restored["payload"]["status"], "paused");
    assert_eq!(restored["payload"]["queueLength"], 2);
    // A new turn cannot jump the paused queue...
    let busy = s.call_raw(
        "agentSession/turn/start",
        json!({"sessionId": sid, "turnId": "turn_new", "input": {"text": "x"}}),
    );
    assert_eq!(busy["error"]["code"], -32012, "{busy}");
    assert_eq!(busy["error"]["data"]["code"], "runtime.queue_paused");
    assert_eq!(
        busy["error"]["data"]["queuedTurnIds"],
        json!(["turn_q1", "turn_q2"])
    );
    // ...but may queue behind it.
    let r = s.call(
        "agentSession/turn/start",
        json!({"sessionId": sid, "turnId": "turn_q3", "input": {"text": "x"}, "queueIfBusy": true}),
    );
    assert_eq!(r["turn"]["status"], "queued");
    // An explicit resume runs the queue in order.
    let r = s.call("agentSession/thread/resume", json!({"sessionId": sid}));
    assert_eq!(r["resumed"], true);
    for t in ["turn_q1", "turn_q2", "turn_q3"] {
        let done = s.wait(|e| {
            e["turnId"] == t && (e["type"] == "turn.completed" || e["type"] == "turn.failed")
        });
        assert_eq!(done["type"], "turn.completed", "{done}");
    }
    let order: Vec<String> = s
        .events
        .iter()
        .filter(|e| e["type"] == "turn.started")
        .map(|e| e["turnId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(order, ["turn_q1", "turn_q2", "turn_q3"]);
    // Nothing left to resume.
    let r = s.call("agentSession/thread/resume", json!({"sessionId": sid}));
    assert_eq!(r["resumed"], false);
    drop(s.stdin);
    s.child.wait().unwrap();
}
