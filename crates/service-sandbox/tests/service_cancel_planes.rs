//! A cancel reaches a Wasm and a local-http call mid-call (not only before it starts): the Wasm
//! call stops between two fuel slices, the local-http call's connection is dropped (the service
//! sees it closed); both fail `service.cancelled` at once, nothing is counted as a crash and the
//! next call works. The fixtures: `wasm-transform`'s `spin` loops until stopped; `http-service`'s
//! `wait` records in `/service/closed` that the host dropped its connection.

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{cancel_after, http_service_spec, load_transform, supervise, transform_spec};
use serde_json::{json, Value};
use service_sandbox::{
    AuditEvent, CancelToken, HttpService, Plane, Policy, SandboxError, ServiceSpec, Supervisor,
    WasmLimits, WasmService,
};

fn wait_for(what: impl Fn() -> bool) -> bool {
    common::wait_for(Duration::from_secs(10), Duration::from_millis(20), what)
}

fn transform() -> WasmService {
    load_transform()
}

#[test]
fn a_cancelled_wasm_call_stops_within_a_fuel_slice_and_the_next_call_works() {
    let mut svc = transform();
    // Without a cancel, `spin` burns its whole fuel (2e9): far longer than the cancel takes.
    let (token, canceller) = cancel_after(Duration::from_millis(100));
    let t = Instant::now();
    let e = svc
        .call_cancellable("spin", json!({}), Duration::from_secs(60), &token)
        .unwrap_err();
    let took = t.elapsed();
    canceller.join().unwrap();
    assert!(matches!(e, SandboxError::Cancelled), "{e:?}");
    assert_eq!(e.code(), "service.cancelled");
    assert!(took < Duration::from_secs(1), "the cancel took {took:?}");
    assert!(
        took >= Duration::from_millis(100),
        "ended before the cancel"
    );
    eprintln!("wasm spin cancelled after 100 ms returned in {took:?}");
    // A fresh instance serves the next call.
    assert_eq!(
        svc.call("upper", json!({"text": "abc"}), Duration::from_secs(2))
            .unwrap(),
        json!({"text": "ABC"})
    );
    // Cancelled before it starts: refused, nothing runs.
    let done = CancelToken::new();
    done.cancel();
    let t = Instant::now();
    let e = svc
        .call_cancellable("spin", json!({}), Duration::from_secs(60), &done)
        .unwrap_err();
    assert_eq!(e.code(), "service.cancelled");
    assert!(t.elapsed() < Duration::from_millis(100));
}

#[test]
fn a_supervised_wasm_cancel_is_not_a_crash() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let mut sup = Supervisor::new(
        transform_spec(),
        Policy {
            call_timeout: Duration::from_secs(60),
            ..Policy::default()
        },
        std::env::temp_dir().join("svc-cancel-planes-wasm.log"),
        Box::new(|| Box::new(|_, _| Err((-32601, "none".into())))),
        Box::new(move |e: AuditEvent| sink.lock().unwrap().push(e)),
    )
    .with_plane(Plane::for_manifest("client-local", "wasm").unwrap());
    for round in 0..3 {
        let (token, canceller) = cancel_after(Duration::from_millis(100));
        let t = Instant::now();
        let e = sup.call_cancellable("spin", json!({}), &token).unwrap_err();
        canceller.join().unwrap();
        assert_eq!(e.code(), "service.cancelled", "round {round}");
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
        assert_eq!(
            sup.call("upper", json!({"text": "x"})).unwrap(),
            json!({"text": "X"})
        );
    }
    assert!(sup.is_running(), "a cancel is not a crash");
    let ev = events.lock().unwrap().clone();
    assert!(
        !ev.iter().any(|e| matches!(
            e,
            AuditEvent::Crashed { .. } | AuditEvent::Stopped { .. } | AuditEvent::LimitHit { .. }
        )),
        "{ev:?}"
    );
}

/// A guest that spends its time in host calls, not in fuel: `handle` makes 60 `lime_call`s, each
/// answered by a handler that takes 30 ms. A cancel is seen before the next one is served.
#[test]
fn a_wasm_call_waiting_on_its_host_calls_is_cancelled_before_the_next_one() {
    let req = r#"{"jsonrpc":"2.0","id":1,"method":"lime.storage.get","params":{}}"#;
    let bytes = wat::parse_str(format!(
        r#"(module
          (import "lime" "lime_call" (func $lime (param i32 i32) (result i64)))
          (memory (export "memory") 1)
          (data (i32.const 0) "{}")
          (global $heap (mut i32) (i32.const 4096))
          (func $alloc (export "alloc") (param $n i32) (result i32)
            (local $p i32)
            (local.set $p (global.get $heap))
            (global.set $heap (i32.add (local.get $p) (local.get $n)))
            (local.get $p))
          (func (export "handle") (param $ptr i32) (param $len i32) (result i64)
            (local $i i32)
            (loop $again
              (drop (call $lime (i32.const 0) (i32.const {})))
              (local.set $i (i32.add (local.get $i) (i32.const 1)))
              (br_if $again (i32.lt_u (local.get $i) (i32.const 60))))
            (i64.const 0)))"#,
        req.replace('"', "\\\""),
        req.len()
    ))
    .unwrap();
    let served = Arc::new(Mutex::new(0u32));
    let count = served.clone();
    let mut svc = WasmService::from_bytes(
        &bytes,
        WasmLimits::default(),
        Box::new(move |_, _| {
            std::thread::sleep(Duration::from_millis(30));
            *count.lock().unwrap() += 1;
            Ok(json!(null))
        }),
    )
    .unwrap();
    let (token, canceller) = cancel_after(Duration::from_millis(200));
    let t = Instant::now();
    let e = svc
        .call_cancellable("go", json!({}), Duration::from_secs(60), &token)
        .unwrap_err();
    let took = t.elapsed();
    canceller.join().unwrap();
    assert_eq!(e.code(), "service.cancelled", "{e:?}");
    assert!(
        took < Duration::from_millis(500),
        "the cancel took {took:?}"
    );
    let n = *served.lock().unwrap();
    assert!((3..=12).contains(&n), "{n} host calls served");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        *served.lock().unwrap(),
        n,
        "host calls went on after the cancel"
    );
}

fn http_spec(tmp: &Path) -> ServiceSpec {
    http_service_spec(tmp)
}

/// The tags of the `wait` calls whose connection the service saw closed.
fn closed(spec: &ServiceSpec) -> Vec<Value> {
    std::fs::read_to_string(spec.service_dir.join("closed"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn a_cancelled_local_http_call_drops_its_connection_and_the_service_keeps_serving() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = http_spec(tmp.path());
    let mut svc = HttpService::start(&spec).unwrap();
    let t30 = Duration::from_secs(30);
    assert_eq!(
        svc.call("upper", json!({"text": "a"}), t30).unwrap(),
        json!({"text": "A"})
    );
    let pid = svc.pid();
    let (token, canceller) = cancel_after(Duration::from_millis(300));
    let t = Instant::now();
    let e = svc
        .call_cancellable("wait", json!({"seconds": 20, "tag": "first"}), t30, &token)
        .unwrap_err();
    let took = t.elapsed();
    canceller.join().unwrap();
    assert_eq!(e.code(), "service.cancelled", "{e:?}");
    assert!(took < Duration::from_secs(1), "the cancel took {took:?}");
    eprintln!("local-http wait cancelled after 300 ms returned in {took:?}");
    // The service saw its connection closed (it was not left waiting out its 20 s).
    assert!(
        wait_for(|| closed(&spec) == vec![json!("first")]),
        "{:?}",
        closed(&spec)
    );
    // The same process serves the next calls; an uncancelled wait gets its own answer.
    assert_eq!(svc.pid(), pid);
    assert_eq!(
        svc.call("upper", json!({"text": "b"}), t30).unwrap(),
        json!({"text": "B"})
    );
    assert_eq!(
        svc.call("wait", json!({"seconds": 0.2, "tag": "second"}), t30)
            .unwrap(),
        json!({"waited": "second"})
    );
    // Cancelled before it starts: no request reaches the service (one log line per request).
    let posts = |svc: &HttpService| svc.logs().matches("\"POST /rpc HTTP/1.1\"").count();
    assert!(wait_for(|| posts(&svc) == 3), "{}", svc.logs());
    let done = CancelToken::new();
    done.cancel();
    let e = svc
        .call_cancellable("wait", json!({"seconds": 20, "tag": "never"}), t30, &done)
        .unwrap_err();
    assert_eq!(e.code(), "service.cancelled");
    assert_eq!(
        svc.call("upper", json!({"text": "c"}), t30).unwrap(),
        json!({"text": "C"})
    );
    assert!(wait_for(|| posts(&svc) == 4), "{}", svc.logs());
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(posts(&svc), 4, "{}", svc.logs());
    assert_eq!(closed(&spec), vec![json!("first")]);
}

#[test]
fn a_cancel_cuts_a_slow_streaming_answer_short_and_a_supervised_http_cancel_is_not_a_crash() {
    let tmp = tempfile::tempdir().unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let mut sup = supervise(
        http_spec(tmp.path()),
        Duration::from_secs(60),
        tmp.path().join("logs/api.log"),
        move |e: AuditEvent| sink.lock().unwrap().push(e),
    )
    .with_plane(Plane::for_manifest("client-local", "local-http").unwrap());
    assert_eq!(
        sup.call("upper", json!({"text": "a"})).unwrap(),
        json!({"text": "A"})
    );
    // `slow` sends its head at once, then one body byte every 0.5 s for 50 s: the cancel lands
    // while the body is being read.
    let (token, canceller) = cancel_after(Duration::from_millis(700));
    let t = Instant::now();
    let e = sup.call_cancellable("slow", json!({}), &token).unwrap_err();
    canceller.join().unwrap();
    assert_eq!(e.code(), "service.cancelled");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert_eq!(
        sup.call("upper", json!({"text": "b"})).unwrap(),
        json!({"text": "B"})
    );
    assert!(sup.is_running(), "a cancel is not a crash");
    let ev = events.lock().unwrap().clone();
    assert!(
        !ev.iter()
            .any(|e| matches!(e, AuditEvent::Crashed { .. } | AuditEvent::Stopped { .. })),
        "{ev:?}"
    );
    assert_eq!(
        ev.iter()
            .filter(|e| matches!(e, AuditEvent::Started { .. }))
            .count(),
        1,
        "{ev:?}"
    );
}
