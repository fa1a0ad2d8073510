//! Launch, call, cancel, reap: the channel and the kill path leave nothing behind.

mod common;

use std::time::{Duration, Instant};

use common::Host;
use serde_json::json;
use service_sandbox::{SandboxError, ServiceProcess};

/// Killed processes are reaped by their new parent (host init) shortly after the kill.
fn gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat)
                if stat
                    .rsplit_once(')')
                    .is_some_and(|(_, r)| r.trim_start().starts_with('Z')) =>
            {
                return true
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    false
}

fn no_handler() -> service_sandbox::channel::HostHandler {
    Box::new(|_, _| Err((-32601, "no host methods".into())))
}

#[test]
fn grandchildren_in_their_own_session_are_reaped_on_kill() {
    let host = Host::setup();
    let mut svc = host.start_probe();
    svc.call("initialize", json!({}), Duration::from_secs(20))
        .unwrap();
    svc.call("spawn", json!({"count": 4}), Duration::from_secs(20))
        .unwrap();
    let pids = svc.live_pids();
    assert!(pids.len() >= 6, "bwrap x2, python, 4 sleepers: {pids:?}");
    svc.kill();
    for pid in pids {
        assert!(gone(pid), "pid {pid} survived");
    }
}

#[test]
fn a_call_past_its_timeout_fails_with_a_stable_code_and_the_process_is_still_reaped() {
    let host = Host::setup();
    let mut svc = host.start_probe();
    svc.call("initialize", json!({}), Duration::from_secs(20))
        .unwrap();
    let t = Instant::now();
    let err = svc
        .call("sleep", json!({"seconds": 30}), Duration::from_millis(300))
        .unwrap_err();
    assert_eq!(err.code(), "service.timeout");
    assert!(t.elapsed() < Duration::from_secs(3));
    let pids = svc.live_pids();
    svc.kill();
    assert!(pids.into_iter().all(gone));
}

#[test]
fn the_services_own_lime_requests_reach_the_host_handler_and_nothing_else_does() {
    let host = Host::setup();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let mut svc = ServiceProcess::start(
        &host.probe_spec(),
        Box::new(move |m, p| {
            seen2.lock().unwrap().push(m.to_owned());
            if m == "lime.storage.get" {
                Ok(json!({"value": p["key"]}))
            } else {
                Err((-32000, "capability.denied".into()))
            }
        }),
    )
    .unwrap();
    let r = svc
        .call(
            "lime",
            json!({"method": "lime.storage.get", "params": {"key": "k"}}),
            Duration::from_secs(20),
        )
        .unwrap();
    assert_eq!(r["result"]["value"], "k");
    let r = svc
        .call(
            "lime",
            json!({"method": "lime.secrets.get", "params": {}}),
            Duration::from_secs(20),
        )
        .unwrap();
    assert_eq!(r["error"]["message"], "capability.denied");
    // a non-lime method never reaches the host's handler
    let r = svc
        .call(
            "lime",
            json!({"method": "host.shutdown", "params": {}}),
            Duration::from_secs(20),
        )
        .unwrap();
    assert_eq!(r["error"]["code"], -32601);
    assert_eq!(
        *seen.lock().unwrap(),
        vec!["lime.storage.get", "lime.secrets.get"]
    );
}

#[test]
fn an_oversized_line_is_a_protocol_error_and_kills_the_service() {
    let host = Host::setup();
    let mut svc = host.start_probe();
    let err = svc
        .call("flood", json!({}), Duration::from_secs(20))
        .unwrap_err();
    assert_eq!(err.code(), "service.protocol");
    assert!(svc.live_pids().is_empty());
    assert_eq!(
        svc.call("echo", json!({}), Duration::from_secs(1))
            .unwrap_err()
            .code(),
        "service.exited"
    );
}

#[test]
fn a_symlinked_service_dir_is_refused_before_anything_runs() {
    let host = Host::setup();
    std::fs::remove_dir(&host.service_dir).unwrap();
    std::os::unix::fs::symlink(&host.data, &host.service_dir).unwrap();
    let before = Host::snapshot(&host.data);
    let err = ServiceProcess::start(&host.probe_spec(), no_handler())
        .err()
        .expect("refused");
    assert_eq!(err.code(), "service.invalid_spec");
    assert_eq!(before, Host::snapshot(&host.data));
}

#[test]
fn a_missing_interpreter_is_runtime_unavailable_and_a_host_path_program_is_refused() {
    let host = Host::setup();
    let err = ServiceProcess::start(&host.spec(&["/usr/bin/python9"]), no_handler())
        .err()
        .unwrap();
    assert_eq!(err.code(), "service.runtime_unavailable");
    let err = ServiceProcess::start(&host.spec(&["/root/.pyenv/shims/python3"]), no_handler())
        .err()
        .unwrap();
    assert_eq!(err.code(), "service.invalid_spec");
    let err = ServiceProcess::start(&host.spec(&["/app/../../etc/passwd"]), no_handler())
        .err()
        .unwrap();
    assert!(matches!(err, SandboxError::InvalidSpec(_)));
}

#[test]
fn stderr_is_kept_in_a_bounded_ring() {
    let host = Host::setup();
    let mut svc = ServiceProcess::start(
        &host.spec(&[
            "/usr/bin/python3",
            "-c",
            "import sys\nfor i in range(20000): sys.stderr.write('line %d\\n' % i)",
        ]),
        no_handler(),
    )
    .unwrap();
    let _ = svc.call("x", json!({}), Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(200));
    let logs = svc.logs();
    assert!(logs.len() <= service_sandbox::channel::LOG_RING);
    assert!(
        logs.contains("line 19999"),
        "{}",
        &logs[logs.len().saturating_sub(200)..]
    );
}

#[test]
fn a_service_started_from_a_thread_that_then_ends_keeps_running() {
    // PR_SET_PDEATHSIG fires when the forking *thread* exits: a service started on a request's
    // or a pool's short-lived thread must outlive that thread (it is forked by the launcher).
    let host = std::sync::Arc::new(Host::setup());
    let h = host.clone();
    let mut svc = std::thread::spawn(move || h.start_probe()).join().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let out = svc
        .call("initialize", json!({}), Duration::from_secs(20))
        .expect("the service died with the thread that started it");
    assert!(out.is_object(), "{out}");
    let pids = svc.live_pids();
    svc.kill();
    assert!(pids.into_iter().all(gone));
}
