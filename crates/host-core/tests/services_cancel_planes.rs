//! A frame's cancel reaches a Wasm and a local-http service call mid-call, not only before it
//! starts (docs/services.md "Cancelling a running call"). The frame is answered
//! `HOST_E_CANCELLED` at once, as for a stdio service (`services_cancel.rs`); what this file
//! proves is that the call itself ends too:
//!
//! - Wasm (`wasm-transform`'s `spin` loops until stopped, 30 s timeout): the call's thread is
//!   released within one fuel slice, the next call gets a fresh instance;
//! - local-http (`http-service`'s `wait`, 30 s timeout): the request's connection is dropped,
//!   the service records it saw it closed (`/service/closed`), the same process serves the next
//!   call;
//! - a hostile frame (same app, or another app) cannot cancel another frame's call: the call
//!   runs on, the service sees nothing.

mod services_support;
mod support;

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use host_core::hosting::bridge::host::{BridgeHost, ServiceCallDone};
use host_core::hosting::bridge::mounts::Mount;
use host_core::hosting::capability::services::service_host;
use host_core::hosting::services::ServiceId;
use host_core::install::store::Store;
use serde_json::{json, Value};
use services_support::{
    alive, audited, bridge_msg, doc_parser, drive_on_a_thread, json_lines, posted, three_frames,
    wait_until, Host, ThreeFrames,
};

/// The doc-parser app with its service replaced by the fixture `fixture`'s service `key`, with
/// a 30 s call timeout: only a cancel ends a call early.
fn app_with_service_of(tmp: &Path, name: &str, fixture: &str, key: &str) -> PathBuf {
    services_support::app_with_service_of(tmp, name, fixture, key, Some(30000))
}

fn msg(app: &str, kind: &str, id: &str, payload: Value) -> String {
    bridge_msg(app, "parser", kind, id, payload)
}

/// A bridge with deferred service calls and ready frames: two of `app` (A, the caller, and B,
/// a hostile sibling) and one of doc-parser (another app).
struct Frames {
    bridge: BridgeHost,
    store: Store,
    app: String,
    service: String,
    a: Mount,
    b: Mount,
    other: Mount,
}

impl Frames {
    fn new(h: &Host, app: &str, service: &str) -> Frames {
        let ThreeFrames {
            store,
            bridge,
            a,
            b,
            other,
        } = three_frames(h, app);
        Frames {
            bridge,
            store,
            app: app.into(),
            service: service.into(),
            a,
            b,
            other,
        }
    }

    fn invoke(&mut self, id: &str, method: &str, params: Value) -> Vec<Value> {
        let call = msg(
            &self.app,
            "capability:invoke",
            id,
            json!({"capability": "lime.services", "method": "call",
                   "args": {"service": self.service, "method": method, "params": params}}),
        );
        posted(
            &self
                .bridge
                .handle(&self.store, &self.a.mount_id, &self.a.origin, &call),
        )
    }

    /// A's call `id`, run to its answer on this thread: the answer's value.
    fn call(&mut self, id: &str, method: &str, params: Value) -> Value {
        assert!(self.invoke(id, method, params).is_empty());
        let done = self.bridge.take_service_calls().remove(0).run();
        let out = posted(&self.bridge.finish_service_call(done));
        assert_eq!(out[0]["type"], "host:response", "{out:?}");
        assert_eq!(out[0]["requestId"], id);
        out[0]["payload"]["value"].clone()
    }

    /// A's call `id` started on its own thread (as `api::Session` runs it, outside the bridge).
    fn start(&mut self, id: &str, method: &str, params: Value) -> JoinHandle<ServiceCallDone> {
        assert!(self.invoke(id, method, params).is_empty());
        let mut calls = self.bridge.take_service_calls();
        assert_eq!(calls.len(), 1);
        let call = calls.remove(0);
        std::thread::spawn(move || call.run())
    }

    /// `frame` (of `app`) sends `capability:cancel {requestId: target}`: what it is answered.
    fn cancel_from(&mut self, which: Which, target: &str) -> Vec<Value> {
        let (m, app) = match which {
            Which::A => (self.a.clone(), self.app.clone()),
            Which::B => (self.b.clone(), self.app.clone()),
            Which::Other => (self.other.clone(), "doc-parser".to_owned()),
        };
        let cancel = msg(
            &app,
            "capability:cancel",
            "cancel-msg",
            json!({"requestId": target}),
        );
        posted(
            &self
                .bridge
                .handle(&self.store, &m.mount_id, &m.origin, &cancel),
        )
    }

    /// The hostile frames (B of the same app, the other app's frame) cancel A's `target`, and
    /// A cancels an unknown id: nothing is answered and the call runs on.
    fn hostile_cancels_do_nothing(&mut self, target: &str, running: &JoinHandle<ServiceCallDone>) {
        for which in [Which::B, Which::Other] {
            let out = self.cancel_from(which, target);
            assert!(out.is_empty(), "{out:?}");
        }
        let out = self.cancel_from(Which::A, "nope");
        assert!(out.is_empty(), "{out:?}");
        std::thread::sleep(Duration::from_millis(300));
        assert!(
            !running.is_finished(),
            "another frame's cancel ended A's call"
        );
    }

    /// A cancels its own `target`: answered `HOST_E_CANCELLED` now; the call's thread is
    /// released within `within` and its outcome reaches no frame. How long the release took.
    fn own_cancel_ends(
        &mut self,
        target: &str,
        running: JoinHandle<ServiceCallDone>,
        within: Duration,
    ) -> Duration {
        let t = Instant::now();
        let out = self.cancel_from(Which::A, target);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0]["type"], "host:error");
        assert_eq!(out[0]["requestId"], target);
        assert_eq!(out[0]["payload"]["code"], "HOST_E_CANCELLED");
        while !running.is_finished() {
            assert!(
                t.elapsed() < within,
                "the call still runs {:?} after its cancel",
                t.elapsed()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let took = t.elapsed();
        let done = running.join().unwrap();
        assert!(self.bridge.finish_service_call(done).is_empty());
        // A repeated cancel does nothing.
        assert!(self.cancel_from(Which::A, target).is_empty());
        took
    }
}

#[derive(Clone, Copy)]
enum Which {
    A,
    B,
    Other,
}

fn crashes(h: &Host, app: &str) -> usize {
    audited(h, app, "service.crash")
}

#[test]
fn a_frames_cancel_stops_its_wasm_call_mid_call_and_no_other_frame_can() {
    let tmp = tempfile::tempdir().unwrap();
    let app = app_with_service_of(tmp.path(), "wasm-app", "wasm-transform", "transform");
    let h = Host::with(&[doc_parser(), app]);
    let mut f = Frames::new(&h, "wasm-app", "transform");
    assert_eq!(
        f.call("c0", "upper", json!({"text": "a"})),
        json!({"text": "A"})
    );
    let started = Instant::now();
    let running = f.start("c1", "spin", json!({}));
    f.hostile_cancels_do_nothing("c1", &running);
    let took = f.own_cancel_ends("c1", running, Duration::from_secs(1));
    eprintln!("wasm: the call's thread was released {took:?} after the frame's cancel");
    assert!(started.elapsed() < Duration::from_secs(5));
    // A fresh instance serves A's next call, the service was not counted as crashed.
    assert_eq!(
        f.call("c2", "upper", json!({"text": "b"})),
        json!({"text": "B"})
    );
    let list = service_host(&h.store).list(&h.store, "wasm-app").unwrap();
    assert_eq!(list[0].state, "running", "{list:?}");
    assert_eq!(crashes(&h, "wasm-app"), 0);
    // The cancelled call is in the service's log as cancelled, not as a timeout or a limit.
    let id = ServiceId {
        app: "wasm-app".into(),
        key: "transform".into(),
    };
    let logs = service_host(&h.store).logs(&id, 64 * 1024);
    assert!(logs.contains("spin: service.cancelled"), "{logs}");
    assert!(!logs.contains("service.timeout"), "{logs}");
}

/// The tags of the `wait` calls the http fixture saw its connection closed for.
fn closed(h: &Host, app: &str) -> Vec<Value> {
    let marker = h.dir.apps_data().join(app).join("services/api/closed");
    json_lines(&marker)
}

#[test]
fn a_frames_cancel_drops_its_local_http_request_and_no_other_frame_can() {
    let tmp = tempfile::tempdir().unwrap();
    let app = app_with_service_of(tmp.path(), "http-app", "http-service", "api");
    let h = Host::with(&[doc_parser(), app]);
    let mut f = Frames::new(&h, "http-app", "api");
    // The service starts on this thread (it dies with the thread that started it).
    assert_eq!(
        f.call("c0", "upper", json!({"text": "a"})),
        json!({"text": "A"})
    );
    let pid = service_host(&h.store).list(&h.store, "http-app").unwrap()[0]
        .pid
        .unwrap();
    let running = f.start("c1", "wait", json!({"seconds": 20, "tag": "c1"}));
    f.hostile_cancels_do_nothing("c1", &running);
    assert!(
        closed(&h, "http-app").is_empty(),
        "{:?}",
        closed(&h, "http-app")
    );
    let took = f.own_cancel_ends("c1", running, Duration::from_secs(1));
    eprintln!("local-http: the call's thread was released {took:?} after the frame's cancel");
    // The service saw the request's connection closed: it stops waiting.
    assert!(
        wait_until(|| closed(&h, "http-app") == vec![json!("c1")]),
        "{:?}",
        closed(&h, "http-app")
    );
    // The same process serves A's next call (a cancel is not a crash).
    assert_eq!(
        f.call("c2", "wait", json!({"seconds": 0.1, "tag": "c2"})),
        json!({"waited": "c2"})
    );
    let list = service_host(&h.store).list(&h.store, "http-app").unwrap();
    assert_eq!(list[0].pid, Some(pid));
    assert!(alive(u64::from(pid)));
    assert_eq!(crashes(&h, "http-app"), 0);
    assert_eq!(closed(&h, "http-app"), vec![json!("c1")]);
}

const WAIT_ENTRY: &str = r#"  - key: wait
    kind: workflow
    title: Wait on the service
    workflow: wait-service
    requiredCapabilities: [lime.services]
services:"#;

/// A workflow whose one step calls `service`'s `method` (a call only a cancel ends early).
fn wait_workflow(service: &str, method: &str, params: &str) -> String {
    format!(
        r#"workflows:
  - key: wait-service
    title: A service call that only a cancel ends
    recovery: {{onError: show_error_and_allow_retry, maxRetries: 0}}
    states:
      - {{key: start, kind: start, next: wait}}
      - key: wait
        kind: tool-call
        uses: lime.services.call
        arguments: {{service: "'{service}'", method: "'{method}'", params: {params}}}
        output: waited
        next: done
      - {{key: done, kind: end, result: {{waited: "outputs.waited"}}}}
storage:"#
    )
}

/// Installs `fixture`'s service `key` in an app with the wait workflow, starts a run, lets its
/// step call the service for `after`, cancels the run: how long the step took to end after the
/// cancel (the run is `Cancelled`), and the host.
fn cancel_a_running_step(
    app: &str,
    fixture: &str,
    key: &str,
    method: &str,
    params: &str,
    after: Duration,
) -> (Duration, Host) {
    use host_core::hosting::workflow;
    use runtime_core::workflow::machine::RunStatus;

    let tmp = tempfile::tempdir().unwrap();
    let pkg = app_with_service_of(tmp.path(), app, fixture, key);
    let md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&md)
        .unwrap()
        .replacen("\nservices:", &format!("\n{WAIT_ENTRY}"), 1)
        .replacen(
            "\nstorage:",
            &format!("\n{}", wait_workflow(key, method, params)),
            1,
        );
    std::fs::write(&md, text).unwrap();
    let h = Host::with(&[pkg]);
    // The process's service host outlives the driving thread's services (as in a session).
    let _services = service_host(&h.store);
    let runs = std::sync::Arc::new(workflow::open_runs(&h.dir).unwrap());
    let v = workflow::start(&h.store, &runs, app, "wait-service", json!({}), None).unwrap();
    let driving = drive_on_a_thread(&h.dir, &runs, &v.run_id);
    assert!(wait_until(|| service_host(&h.store)
        .list(&h.store, app)
        .is_ok_and(|l| l[0].state == "running")));
    std::thread::sleep(after);
    assert!(!driving.is_finished(), "the step ended before its cancel");
    let cancelled_at = Instant::now();
    runs.cancel(&v.run_id).unwrap();
    let (view, ended_at) = driving.join().unwrap();
    assert!(
        matches!(view.state.status, RunStatus::Cancelled { .. }),
        "{view:#?}"
    );
    assert_eq!(crashes(&h, app), 0);
    (ended_at - cancelled_at, h)
}

#[test]
fn a_runs_cancel_stops_its_wasm_step_mid_call() {
    let (took, h) = cancel_a_running_step(
        "wasm-wf",
        "wasm-transform",
        "transform",
        "spin",
        "{}",
        Duration::from_millis(300),
    );
    eprintln!("wasm: a run's cancel ended its service step after {took:?} (timeout 30 s)");
    assert!(took < Duration::from_secs(1), "{took:?}");
    let id = ServiceId {
        app: "wasm-wf".into(),
        key: "transform".into(),
    };
    // It was cancelled mid-call (a call refused before it starts leaves no log line).
    let logs = service_host(&h.store).logs(&id, 64 * 1024);
    assert!(logs.contains("spin: service.cancelled"), "{logs}");
}

#[test]
fn a_runs_cancel_drops_its_local_http_step_request() {
    let (took, h) = cancel_a_running_step(
        "http-wf",
        "http-service",
        "api",
        "wait",
        r#"{seconds: "20", tag: "'run'"}"#,
        Duration::from_millis(500),
    );
    eprintln!("local-http: a run's cancel ended its service step after {took:?} (timeout 30 s)");
    assert!(took < Duration::from_secs(1), "{took:?}");
    assert!(
        wait_until(|| closed(&h, "http-wf") == vec![json!("run")]),
        "{:?}",
        closed(&h, "http-wf")
    );
}
