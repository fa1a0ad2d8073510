//! The Wasm and local-http planes hosted for real (issue 24): an app's frame calls a
//! `protocol: wasm` service (run in-process by wasmi, no sandbox layers) and a
//! `protocol: local-http` service (sandboxed process serving HTTP on a host socket) through
//! `lime.services.call`; readiness calls both ready, the calls and the starts are audited.

mod services_support;
mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use host_core::api::{self, LinkOpener, Session, SessionConfig};
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::hosting::surface::serve::ServeContext;
use host_core::install::readiness::{Outcome, Status};
use serde_json::{json, Value};
use services_support::Host;
use support::install;

/// The doc-parser app with its service replaced by the fixture `fixture`'s service `key`.
fn app_with_service_of(tmp: &Path, name: &str, fixture: &str, key: &str) -> PathBuf {
    services_support::app_with_service_of(tmp, name, fixture, key, None)
}

fn assert_ready(h: &Host, app: &str) {
    let r = h.store.readiness(app, &HostProfile::current()).unwrap();
    let c = r.checks.iter().find(|c| c.kind == "service").unwrap();
    assert_eq!(c.outcome, Outcome::Pass, "{c:?}");
    assert_eq!(r.status, Status::Ready, "{r:?}");
}

#[test]
fn a_frame_calls_a_wasm_service_in_process_and_it_is_audited() {
    let tmp = tempfile::tempdir().unwrap();
    let app = app_with_service_of(tmp.path(), "wasm-app", "wasm-transform", "transform");
    let mut h = Host::with(&[app]);
    assert_ready(&h, "wasm-app");
    let out = h
        .service(
            "wasm-app",
            "parser",
            "transform",
            "upper",
            json!({"text": "héllo wasm"}),
        )
        .unwrap();
    assert_eq!(out, json!({"text": "HéLLO WASM"}));
    let list = h
        .frame_call("wasm-app", "parser", "lime.services", "list", json!({}))
        .unwrap();
    assert_eq!(list["services"][0]["protocol"], "wasm", "{list}");
    assert_eq!(list["services"][0]["state"], "running", "{list}");
    let audit = h.audit("wasm-app");
    let start = audit
        .iter()
        .find(|a| a["action"] == "service.start")
        .expect("the start is audited");
    assert_eq!(start["details"]["service"], "transform");
    assert_eq!(start["details"]["pid"], 0, "a wasm service has no process");
    let call = audit
        .iter()
        .find(|a| {
            a["action"] == "capability.call"
                && a["details"]["capability"] == "lime.services"
                && a["details"]["method"] == "call"
        })
        .expect("the frame's call is audited");
    assert_eq!(call["details"]["entryKey"], "parser");
    assert_eq!(call["details"]["decision"], "allow");
}

#[test]
fn a_frame_calls_a_local_http_service_in_its_sandbox_and_it_is_audited() {
    let tmp = tempfile::tempdir().unwrap();
    let app = app_with_service_of(tmp.path(), "http-app", "http-service", "api");
    let mut h = Host::with(&[app]);
    assert_ready(&h, "http-app");
    let out = h
        .service("http-app", "parser", "api", "upper", json!({"text": "abc"}))
        .unwrap();
    assert_eq!(out, json!({"text": "ABC"}));
    // One process across calls: its state persists.
    let a = h
        .service("http-app", "parser", "api", "count", json!({}))
        .unwrap();
    let b = h
        .service("http-app", "parser", "api", "count", json!({}))
        .unwrap();
    assert_eq!(b["count"].as_u64(), a["count"].as_u64().map(|n| n + 1));
    let list = h
        .frame_call("http-app", "parser", "lime.services", "list", json!({}))
        .unwrap();
    let s = &list["services"][0];
    assert_eq!(s["protocol"], "local-http", "{list}");
    let pid = s["pid"].as_u64().unwrap();
    assert!(services_support::alive(pid));
    let audit = h.audit("http-app");
    assert!(audit
        .iter()
        .any(|a| a["action"] == "service.start" && a["details"]["pid"] == pid));
    assert_eq!(
        audit
            .iter()
            .filter(|a| a["action"] == "capability.call"
                && a["details"]["capability"] == "lime.services"
                && a["details"]["method"] == "call")
            .count(),
        3
    );
    h.services.close_app("http-app");
    assert!(
        !services_support::alive(pid),
        "the service outlived its app"
    );
}

/// A window session over `dir` (the transport's command table, as the host UI calls it).
fn session(dir: DataDir) -> Session {
    Session::new(
        dir,
        SessionConfig {
            serve: ServeContext {
                style: OriginStyle::Scheme,
                frame_ancestors: vec!["tauri://localhost".into()],
            },
            links: LinkOpener::Page,
            launch: None,
        },
    )
}

fn cmd(s: &Session, command: &str, args: Value) -> Value {
    api::call(s, command, args).unwrap_or_else(|e| panic!("{command}: {e:?}"))
}

/// A mounted, ready frame of `app`'s `parser` entry: (mount id, origin).
fn ready_frame(s: &Session, app: &str) -> (String, String) {
    let m = cmd(
        s,
        "mount_entry",
        json!({"appId": app, "entryKey": "parser"}),
    );
    let (id, origin) = (
        m["mountId"].as_str().unwrap().to_owned(),
        m["origin"].as_str().unwrap().to_owned(),
    );
    let out = send(s, app, &id, &origin, "app:ready", "r0", json!({}));
    assert_eq!(out[0]["message"]["type"], "host:snapshot", "{out}");
    (id, origin)
}

fn send(
    s: &Session,
    app: &str,
    mount: &str,
    origin: &str,
    kind: &str,
    id: &str,
    payload: Value,
) -> Value {
    let data = json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
                      "appId": app, "entryKey": "parser", "payload": payload})
    .to_string();
    cmd(
        s,
        "bridge_message",
        json!({"mountId": mount, "origin": origin, "data": data}),
    )
}

fn invoke(
    s: &Session,
    app: &str,
    frame: &(String, String),
    id: &str,
    cap: &str,
    method: &str,
    args: Value,
) -> Value {
    send(
        s,
        app,
        &frame.0,
        &frame.1,
        "capability:invoke",
        id,
        json!({"capability": cap, "method": method, "args": args}),
    )
}

#[test]
fn a_slow_service_call_in_one_frame_does_not_delay_another_frames_storage_get() {
    services_support::require_shim();
    let tmp = tempfile::tempdir().unwrap();
    let pkg = services_support::relay_app(tmp.path(), "slow-app", false);
    let md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&md).unwrap();
    std::fs::write(&md, text.replace("timeoutMs: 800", "timeoutMs: 3000")).unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &pkg);
    let s = std::sync::Arc::new(session(dir));
    let (a, b) = (ready_frame(&s, "slow-app"), ready_frame(&s, "slow-app"));
    let set = invoke(
        &s,
        "slow-app",
        &b,
        "s1",
        "lime.storage",
        "set",
        json!({"key": "k", "value": 7}),
    );
    assert_eq!(set[0]["message"]["type"], "host:response", "{set}");

    // Frame A asks its service something it never answers: the call waits its 3 s timeout.
    let s2 = s.clone();
    let started = Instant::now();
    let slow = std::thread::spawn(move || {
        let out = invoke(
            &s2,
            "slow-app",
            &a,
            "h1",
            "lime.services",
            "call",
            json!({"service": "relay", "method": "hang"}),
        );
        (out, started.elapsed())
    });
    std::thread::sleep(Duration::from_millis(400));
    let t = Instant::now();
    let got = invoke(
        &s,
        "slow-app",
        &b,
        "g1",
        "lime.storage",
        "get",
        json!({"key": "k"}),
    );
    let waited = t.elapsed();
    eprintln!("frame B waited {waited:?} while A's service call hung");
    assert_eq!(got[0]["message"]["payload"]["value"], 7, "{got}");
    assert!(
        waited < Duration::from_millis(1500),
        "frame B waited {waited:?} on A's service"
    );
    assert!(
        !slow.is_finished(),
        "the slow call ended before B's call: the test proves nothing"
    );

    // A still gets its answer: the service's timeout, recorded for its frame.
    let (out, took) = slow.join().unwrap();
    assert!(took >= Duration::from_millis(2900), "{took:?}");
    let m = &out[0]["message"];
    assert_eq!(m["type"], "host:error", "{out}");
    assert_eq!(m["requestId"], "h1");
    assert_eq!(m["payload"]["causeCode"], "service.timeout", "{out}");
    assert_eq!(cmd(&s, "bridge_diagnostics", Value::Null)["executions"], 3);
}
