//! Cancel reaches a running service; a revoked network grant stops a running service (issue 24
//! §3). The `relay` fixture service records every `$/cancelRequest` it reads in
//! `/service/cancelled`, so the tests see what reached the process.
//!
//! - a frame's `capability:cancel` of its own pending `lime.services.call` answers the frame
//!   `HOST_E_CANCELLED` at once, the process gets `$/cancelRequest {id}`, the late answer is
//!   dropped; another frame's (same app or another app) cancel, an unknown id and a repeated
//!   cancel do nothing;
//! - `revoke-network` stops a running `remote-allowed` service at once (a call in flight
//!   ends), audited `service.stop` `network_revoked`, in this process and when another process
//!   revokes it (host.db only: this process's service host re-reads the grant each tick).

mod services_support;
mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use host_core::hosting::bridge::host::BridgeHost;
use host_core::hosting::bridge::mounts::Mount;
use host_core::hosting::capability::services::service_host;
use host_core::hosting::services::{network_grant, ServiceId};
use host_core::install::store::Store;
use serde_json::{json, Value};
use services_support::{
    alive, bridge_msg, deferring_bridge, doc_parser, json_lines, posted, relay_app, three_frames,
    wait_until, Host, ThreeFrames,
};

const APP: &str = "relay-app";

/// The relay app with a call timeout long enough that only a cancel ends a `hang`.
fn patient_relay(tmp: &Path, network: Option<&str>) -> PathBuf {
    let pkg = relay_app(tmp, APP, false);
    let manifest = pkg.join("APP.md");
    let mut text = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("timeoutMs: 800", "timeoutMs: 30000");
    if let Some(net) = network {
        text = text.replace("    network: deny-by-default\n", net);
    }
    std::fs::write(&manifest, text).unwrap();
    pkg
}

fn call_service(id: &str, method: &str) -> String {
    bridge_msg(
        APP,
        "parser",
        "capability:invoke",
        id,
        json!({"capability": "lime.services", "method": "call",
               "args": {"service": "relay", "method": method, "params": {}}}),
    )
}

fn cancel(app: &str, entry: &str, target: &str) -> String {
    bridge_msg(
        app,
        entry,
        "capability:cancel",
        "cancel-msg",
        json!({"requestId": target}),
    )
}

/// What the relay process recorded of the `$/cancelRequest`s it read.
fn cancels_seen(h: &Host) -> Vec<Value> {
    let marker = h.dir.apps_data().join(APP).join("services/relay/cancelled");
    json_lines(&marker)
}

fn stops(h: &Host, reason: &str) -> usize {
    services_support::stops(h, APP, reason)
}

/// Frame `m`'s `echo` call `id`, run to its answer on this thread.
fn echo(bridge: &mut BridgeHost, store: &Store, m: &Mount, id: &str) {
    bridge.handle(store, &m.mount_id, &m.origin, &call_service(id, "echo"));
    let done = bridge.take_service_calls().remove(0).run();
    let out = posted(&bridge.finish_service_call(done));
    assert_eq!(out[0]["type"], "host:response", "{out:?}");
    assert_eq!(out[0]["requestId"], id);
}

fn relay_id() -> ServiceId {
    ServiceId {
        app: APP.into(),
        key: "relay".into(),
    }
}

fn relay_pid(h: &Host) -> Option<u64> {
    let list = service_host(&h.store).list(&h.store, APP).unwrap();
    list[0].pid.map(u64::from)
}

#[test]
fn a_frames_cancel_reaches_the_service_and_no_other_frame_can_cancel_its_call() {
    let tmp = tempfile::tempdir().unwrap();
    let h = Host::with(&[doc_parser(), patient_relay(tmp.path(), None)]);
    let ThreeFrames {
        store,
        mut bridge,
        a,
        b,
        other,
    } = three_frames(&h, APP);

    // The service starts on this thread (it dies with the thread that started it:
    // PR_SET_PDEATHSIG), then A's call is deferred: it runs outside the bridge (as
    // `api::Session` runs it), here on its own thread.
    echo(&mut bridge, &store, &a, "c0");
    let out = bridge.handle(&store, &a.mount_id, &a.origin, &call_service("c1", "hang"));
    assert!(posted(&out).is_empty(), "{out:?}");
    let mut calls = bridge.take_service_calls();
    assert_eq!(calls.len(), 1);
    let call = calls.remove(0);
    let started = Instant::now();
    let running = std::thread::spawn(move || call.run());
    let pid = relay_pid(&h).unwrap();

    // A hostile frame of the same app, and another app's frame, cancel A's request id: nothing.
    for (m, app) in [(&b, APP), (&other, "doc-parser")] {
        let out = bridge.handle(&store, &m.mount_id, &m.origin, &cancel(app, "parser", "c1"));
        assert!(posted(&out).is_empty(), "{out:?}");
    }
    // An unknown id of A's own: nothing.
    let out = bridge.handle(
        &store,
        &a.mount_id,
        &a.origin,
        &cancel(APP, "parser", "nope"),
    );
    assert!(posted(&out).is_empty(), "{out:?}");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !running.is_finished(),
        "another frame's cancel ended A's call"
    );
    assert!(cancels_seen(&h).is_empty(), "{:?}", cancels_seen(&h));

    // A cancels its own call: answered HOST_E_CANCELLED now, the process gets the cancel.
    let out = bridge.handle(&store, &a.mount_id, &a.origin, &cancel(APP, "parser", "c1"));
    let answers = posted(&out);
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["type"], "host:error");
    assert_eq!(answers[0]["requestId"], "c1");
    assert_eq!(answers[0]["payload"]["code"], "HOST_E_CANCELLED");
    // A repeated cancel does nothing.
    let out = bridge.handle(&store, &a.mount_id, &a.origin, &cancel(APP, "parser", "c1"));
    assert!(posted(&out).is_empty(), "{out:?}");
    // A reuses the id at once for a new call, which waits for the service meanwhile.
    bridge.handle(&store, &a.mount_id, &a.origin, &call_service("c1", "echo"));
    let reused = bridge.take_service_calls().remove(0);
    let done = running.join().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the call was not cut short"
    );
    // The cancelled call's own outcome (the late answer) reaches no frame, not even the new
    // call with its id; the new call is answered with its own result.
    assert!(bridge.finish_service_call(done).is_empty());
    let out = posted(&bridge.finish_service_call(reused.run()));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["type"], "host:response", "{out:?}");
    assert_eq!(out[0]["requestId"], "c1");
    assert_eq!(out[0]["payload"]["value"], json!({"echo": {}}), "{out:?}");
    // initialize is id 1, echo 2, the hung call id 3 (the reused id's echo 4).
    assert!(
        wait_until(|| cancels_seen(&h) == vec![json!({"id": 3})]),
        "{:?}",
        cancels_seen(&h)
    );

    // The service keeps running and serves A's next call (a cancel is not a crash).
    echo(&mut bridge, &store, &a, "c2");
    assert_eq!(relay_pid(&h), Some(pid));
    assert!(alive(pid));
    assert!(!h.audit(APP).iter().any(|a| a["action"] == "service.crash"));
}

#[test]
fn an_unmounted_frames_running_call_is_cancelled() {
    let tmp = tempfile::tempdir().unwrap();
    let h = Host::with(&[patient_relay(tmp.path(), None)]);
    let (store, mut bridge) = deferring_bridge(&h);
    let a = bridge.mount(&store, APP, "parser").unwrap();
    let ready = bridge_msg(APP, "parser", "app:ready", "r0", json!({}));
    bridge.handle(&store, &a.mount_id, &a.origin, &ready);
    echo(&mut bridge, &store, &a, "c0");
    bridge.handle(&store, &a.mount_id, &a.origin, &call_service("c1", "hang"));
    let call = bridge.take_service_calls().remove(0);
    let running = std::thread::spawn(move || call.run());
    // The call is on the wire (a cancel before it is sent sends nothing).
    std::thread::sleep(Duration::from_millis(500));
    assert!(!running.is_finished());
    bridge.unmount(&a.mount_id);
    let done = running.join().unwrap();
    assert!(bridge.finish_service_call(done).is_empty());
    assert!(wait_until(|| cancels_seen(&h) == vec![json!({"id": 3})]));
}

const REMOTE: &str = "    network: remote-allowed\n    allowedDomains: [api.example.com]\n";

/// A granted `remote-allowed` relay with a `hang` call in flight on its own thread.
fn granted_and_hanging(
    tmp: &Path,
) -> (
    Host,
    u64,
    std::thread::JoinHandle<Result<Value, &'static str>>,
) {
    let h = Host::with(&[patient_relay(tmp, Some(REMOTE))]);
    let (locked, _) = Store::open_locked(&h.dir).unwrap();
    assert!(network_grant::grant(&locked, APP, "relay").unwrap());
    drop(locked);
    let dir = h.dir.clone();
    let running = std::thread::spawn(move || {
        let store = Store::open_for_calls(&dir).unwrap();
        service_host(&store)
            .call(&store, &relay_id(), "hang", json!({}))
            .map_err(|f| f.code)
    });
    assert!(wait_until(|| relay_pid(&h).is_some()));
    let pid = relay_pid(&h).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(!running.is_finished());
    (h, pid, running)
}

#[test]
fn revoking_the_network_grant_stops_the_running_service_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let (h, pid, running) = granted_and_hanging(tmp.path());
    let t = Instant::now();
    let (locked, _) = Store::open_locked(&h.dir).unwrap();
    assert!(network_grant::revoke(&locked, APP, "relay").unwrap());
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "revoke waited {:?}",
        t.elapsed()
    );
    assert_eq!(
        running.join().unwrap().unwrap_err(),
        "service.network_not_granted"
    );
    assert!(!alive(pid), "the service outlived its revoked grant");
    assert_eq!(stops(&h, "network_revoked"), 1);
    assert_eq!(relay_pid(&h), None);
    // Its next call is refused and starts nothing.
    let before = h
        .audit(APP)
        .iter()
        .filter(|a| a["action"] == "service.start")
        .count();
    let e = service_host(&h.store)
        .call(&h.store, &relay_id(), "echo", json!({}))
        .unwrap_err();
    assert_eq!(e.code, "service.network_not_granted");
    let after = h
        .audit(APP)
        .iter()
        .filter(|a| a["action"] == "service.start")
        .count();
    assert_eq!(before, after);
}

#[test]
fn a_revoke_by_another_process_stops_the_running_service_within_a_tick() {
    let tmp = tempfile::tempdir().unwrap();
    let (h, pid, running) = granted_and_hanging(tmp.path());
    // Another process (the CLI) changes host.db only: this process's service host is not told.
    let (locked, _) = Store::open_locked(&h.dir).unwrap();
    let version = locked.active_app(APP).unwrap().version;
    assert!(locked.revoke_network(APP, Some(&version), "relay").unwrap());
    drop(locked);
    let t = Instant::now();
    assert_eq!(
        running.join().unwrap().unwrap_err(),
        "service.network_not_granted"
    );
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "seen after {:?}",
        t.elapsed()
    );
    assert!(
        wait_until(|| !alive(pid)),
        "the service outlived its revoked grant"
    );
    assert!(wait_until(|| stops(&h, "network_revoked") == 1));
}
