//! The supervisor: on-demand start, idle stop, restart backoff, crash loop, audit, logs.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::Host;
use serde_json::json;
use service_sandbox::{AuditEvent, Health, Policy, Supervisor};

fn supervisor(host: &Host, policy: Policy) -> (Supervisor, Arc<Mutex<Vec<AuditEvent>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let log = host
        .data
        .join("apps/service-probe/services/.logs/probe.log");
    let sup = Supervisor::new(
        host.probe_spec(),
        policy,
        log,
        Box::new(|| Box::new(|_, _| Err((-32601, "none".into())))),
        Box::new(move |e| sink.lock().unwrap().push(e)),
    );
    (sup, events)
}

fn quick() -> Policy {
    Policy {
        idle_after: Duration::from_millis(150),
        call_timeout: Duration::from_secs(10),
        start_timeout: Duration::from_secs(20),
        backoff_base: Duration::from_millis(100),
        backoff_max: Duration::from_millis(400),
        crash_limit: 3,
        crash_window: Duration::from_secs(60),
        log_max: 4096,
    }
}

#[test]
fn starts_on_demand_and_stops_when_idle() {
    let host = Host::setup();
    let (mut sup, events) = supervisor(&host, quick());
    assert!(!sup.is_running());
    assert_eq!(sup.call("echo", json!({"a": 1})).unwrap(), json!({"a": 1}));
    assert!(sup.is_running());
    sup.tick();
    assert!(sup.is_running(), "not idle yet");
    std::thread::sleep(Duration::from_millis(200));
    sup.tick();
    assert!(!sup.is_running());
    let ev = events.lock().unwrap().clone();
    assert!(matches!(ev[0], AuditEvent::Started { .. }));
    assert_eq!(
        ev[1],
        AuditEvent::Stopped {
            reason: "idle".into()
        }
    );
    assert_eq!(sup.health(), Health::Ready);
}

#[test]
fn a_crash_degrades_then_backs_off_and_a_crash_loop_blocks_until_reset() {
    let host = Host::setup();
    let (mut sup, events) = supervisor(&host, quick());
    assert_eq!(
        sup.call("exit", json!({"code": 3})).unwrap_err().code(),
        "service.exited"
    );
    assert!(matches!(sup.health(), Health::Degraded(_)));
    // inside the backoff window: refused, nothing started
    assert_eq!(
        sup.call("echo", json!({})).unwrap_err().code(),
        "service.backoff"
    );
    assert!(!sup.is_running());
    for _ in 0..2 {
        std::thread::sleep(Duration::from_millis(450));
        assert_eq!(
            sup.call("exit", json!({})).unwrap_err().code(),
            "service.exited"
        );
    }
    assert!(
        matches!(sup.health(), Health::Blocked(_)),
        "{:?}",
        sup.health()
    );
    std::thread::sleep(Duration::from_millis(450));
    assert_eq!(
        sup.call("echo", json!({})).unwrap_err().code(),
        "service.crash_loop"
    );
    assert!(!sup.is_running());
    sup.reset();
    assert_eq!(sup.call("echo", json!("back")).unwrap(), json!("back"));
    let ev = events.lock().unwrap().clone();
    assert_eq!(
        ev.iter()
            .filter(|e| matches!(e, AuditEvent::Crashed { .. }))
            .count(),
        3
    );
    assert!(ev.contains(&AuditEvent::Refused {
        code: "service.backoff".into()
    }));
    assert!(ev.contains(&AuditEvent::Refused {
        code: "service.crash_loop".into()
    }));
}

#[test]
fn a_timeout_is_audited_as_a_limit_hit_and_app_close_stops_it() {
    let host = Host::setup();
    let (mut sup, events) = supervisor(
        &host,
        Policy {
            call_timeout: Duration::from_millis(200),
            ..quick()
        },
    );
    sup.start().unwrap();
    assert_eq!(
        sup.call("sleep", json!({"seconds": 20}))
            .unwrap_err()
            .code(),
        "service.timeout"
    );
    sup.stop("app-closed");
    assert!(!sup.is_running());
    let ev = events.lock().unwrap().clone();
    assert!(ev
        .iter()
        .any(|e| matches!(e, AuditEvent::LimitHit { what } if what.contains("timeout"))));
    assert_eq!(
        ev.last().unwrap(),
        &AuditEvent::Stopped {
            reason: "app-closed".into()
        }
    );
}

#[test]
fn logs_are_flushed_to_a_rotated_capped_file_beside_the_service_dir() {
    let host = Host::setup();
    let (mut sup, _) = supervisor(&host, quick());
    for _ in 0..3 {
        sup.call("log", json!({"lines": 300})).unwrap(); // 2,700 bytes of stderr
        std::thread::sleep(Duration::from_millis(50));
        sup.stop("user");
    }
    let log = host
        .data
        .join("apps/service-probe/services/.logs/probe.log");
    let len = std::fs::metadata(&log).unwrap().len();
    assert!(len > 0 && len <= 4096, "{len}");
    assert!(
        host.data
            .join("apps/service-probe/services/.logs/probe.log.1")
            .exists(),
        "rotated"
    );
    assert!(sup.logs().contains("log line"));
    // the service dir itself holds nothing of the host's logs
    assert!(!host.service_dir.join("probe.log").exists());
}
