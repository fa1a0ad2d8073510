//! A cancelled call (and a timed-out one) reaches the service process as `$/cancelRequest {id}`;
//! the caller gets `service.cancelled` at once, the service's late answer is dropped and the
//! process keeps serving (a cancel is not a crash).

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{supervise, Host};
use serde_json::{json, Value};
use service_sandbox::{AuditEvent, CancelToken, Supervisor};

/// Records every `$/cancelRequest` in `/service/cancelled`; `late` answers only once its
/// cancel arrived (a late answer the host must drop), `hang` never answers.
const CANCELLABLE_PY: &str = r#"import json, sys
def send(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
waiting = {}
for line in sys.stdin:
    m = json.loads(line)
    meth, rid, p = m.get("method"), m.get("id"), m.get("params") or {}
    if meth == "$/cancelRequest":
        open("/service/cancelled", "a").write(json.dumps(p["id"]) + "\n")
        if p["id"] in waiting:
            send({"jsonrpc": "2.0", "id": p["id"], "result": {"late": waiting.pop(p["id"])}})
        continue
    if rid is None: continue
    if meth == "late": waiting[rid] = p.get("tag"); continue
    if meth == "hang": continue
    send({"jsonrpc": "2.0", "id": rid, "result": {"echo": p}})
"#;

fn supervisor(host: &Host, timeout: Duration) -> (Supervisor, Arc<Mutex<Vec<AuditEvent>>>) {
    std::fs::write(
        host.package.join("services/probe/cancellable.py"),
        CANCELLABLE_PY,
    )
    .unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let sup = supervise(
        host.spec(&["/usr/bin/python3", "/app/services/probe/cancellable.py"]),
        timeout,
        host.probe_log(),
        move |e| sink.lock().unwrap().push(e),
    );
    (sup, events)
}

/// The ids the service saw cancelled (`initialize` is id 1).
fn cancelled_ids(host: &Host) -> Vec<Value> {
    std::fs::read_to_string(host.service_dir.join("cancelled"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn wait_for(what: impl Fn() -> bool) -> bool {
    common::wait_for(Duration::from_secs(5), Duration::from_millis(10), what)
}

#[test]
fn a_cancel_reaches_the_process_the_late_answer_is_dropped_and_the_service_keeps_serving() {
    let host = Host::setup();
    let (mut sup, events) = supervisor(&host, Duration::from_secs(30));
    assert_eq!(sup.call("echo", json!(1)).unwrap(), json!({"echo": 1}));
    let token = CancelToken::new();
    let other = token.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        other.cancel();
    });
    let t = Instant::now();
    let e = sup
        .call_cancellable("late", json!({"tag": "first"}), &token)
        .unwrap_err();
    canceller.join().unwrap();
    assert_eq!(e.code(), "service.cancelled");
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "the cancel took {:?}",
        t.elapsed()
    );
    // id 1 initialize, 2 echo, 3 the cancelled call
    assert!(wait_for(|| cancelled_ids(&host) == vec![json!(3)]));
    // The service answered the cancelled call late: the next call gets its own answer.
    assert_eq!(sup.call("echo", json!(2)).unwrap(), json!({"echo": 2}));
    assert!(sup.is_running(), "a cancel is not a crash");
    let ev = events.lock().unwrap().clone();
    assert!(
        !ev.iter()
            .any(|e| matches!(e, AuditEvent::Crashed { .. } | AuditEvent::Stopped { .. })),
        "{ev:?}"
    );
    // A token already cancelled sends nothing and starts nothing.
    let done = CancelToken::new();
    done.cancel();
    assert_eq!(
        sup.call_cancellable("echo", json!(3), &done)
            .unwrap_err()
            .code(),
        "service.cancelled"
    );
    assert_eq!(sup.call("echo", json!(4)).unwrap(), json!({"echo": 4}));
    assert_eq!(cancelled_ids(&host), vec![json!(3)]);
}

#[test]
fn a_timed_out_call_reaches_the_process_as_a_cancel_request() {
    let host = Host::setup();
    let (mut sup, events) = supervisor(&host, Duration::from_millis(300));
    let e = sup.call("hang", json!({})).unwrap_err();
    assert_eq!(e.code(), "service.timeout");
    // id 1 initialize, 2 the timed-out call
    assert!(wait_for(|| cancelled_ids(&host) == vec![json!(2)]));
    assert_eq!(sup.call("echo", json!(1)).unwrap(), json!({"echo": 1}));
    let ev = events.lock().unwrap().clone();
    assert!(
        ev.iter()
            .any(|e| matches!(e, AuditEvent::LimitHit { what } if what.contains("call timeout"))),
        "{ev:?}"
    );
}

#[test]
fn a_probe_cancels_a_call_in_flight() {
    let host = Host::setup();
    let (mut sup, _) = supervisor(&host, Duration::from_secs(30));
    let until = Instant::now() + Duration::from_millis(300);
    let token = CancelToken::from_probe(Arc::new(move || Instant::now() >= until));
    let e = sup.call_cancellable("hang", json!({}), &token).unwrap_err();
    assert_eq!(e.code(), "service.cancelled");
    assert!(wait_for(|| cancelled_ids(&host) == vec![json!(2)]));
}
