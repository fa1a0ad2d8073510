//! Bridge messages of a test frame, what the host posted back, polling, audit counts, and a
//! workflow driven on its own thread with "the run ended" as its interrupt.

use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::host::{BridgeHost, Outgoing};
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::bridge::mounts::Mount;
use host_core::hosting::capability::services::Services;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::hosting::workflow::executor::HostSteps;
use host_core::install::store::Store;
use runtime_core::workflow::runs::{RunView, WorkflowRuns};
use serde_json::{json, Value};

use super::Host;

/// A Host Bridge message of `app`'s frame `entry`.
pub fn bridge_msg(app: &str, entry: &str, kind: &str, id: &str, payload: Value) -> String {
    json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
           "appId": app, "entryKey": entry, "payload": payload})
    .to_string()
}

/// A bridge with deferred service calls and ready `parser` frames: two of `app` (A, the caller,
/// and B, a hostile sibling) and one of doc-parser (another app).
pub struct ThreeFrames {
    pub store: Store,
    pub bridge: BridgeHost,
    pub a: Mount,
    pub b: Mount,
    pub other: Mount,
}

/// A store for calls and a bridge over `h`'s data dir that defers its service calls.
pub fn deferring_bridge(h: &Host) -> (Store, BridgeHost) {
    let store = Store::open_for_calls(&h.dir).unwrap();
    let mut bridge = BridgeHost::new(
        Services::new(h.dir.apps_data()),
        HostProfile::current(),
        OriginStyle::Scheme,
    );
    bridge.defer_service_calls();
    (store, bridge)
}

pub fn three_frames(h: &Host, app: &str) -> ThreeFrames {
    let (store, mut bridge) = deferring_bridge(h);
    let a = bridge.mount(&store, app, "parser").unwrap();
    let b = bridge.mount(&store, app, "parser").unwrap();
    let other = bridge.mount(&store, "doc-parser", "parser").unwrap();
    for (m, name) in [(&a, app), (&b, app), (&other, "doc-parser")] {
        let ready = bridge_msg(name, "parser", "app:ready", "r0", json!({}));
        bridge.handle(&store, &m.mount_id, &m.origin, &ready);
    }
    ThreeFrames {
        store,
        bridge,
        a,
        b,
        other,
    }
}

/// The messages the host posted to frames.
pub fn posted(out: &[Outgoing]) -> Vec<Value> {
    out.iter()
        .filter_map(|o| match o {
            Outgoing::Post { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

/// The JSON lines a service appended to `path` (none if it has not written it yet); a line
/// the service is still writing does not parse yet: it is read on the next poll.
pub fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Whether `what` comes true within 10 s (polled every 20 ms).
pub fn wait_until(what: impl Fn() -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(10) {
        if what() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// How many audit rows of `app` have `action`.
pub fn audited(h: &Host, app: &str, action: &str) -> usize {
    h.audit(app)
        .iter()
        .filter(|a| a["action"] == action)
        .count()
}

/// `service.stop` rows of `app` with `reason`.
pub fn stops(h: &Host, app: &str, reason: &str) -> usize {
    h.audit(app)
        .iter()
        .filter(|a| a["action"] == "service.stop" && a["details"]["reason"] == reason)
        .count()
}

/// Drives `run_id` on its own thread (its own store and services, as the host driver does);
/// the step's interrupt is "the run ended". Gives the view and when the drive returned.
pub fn drive_on_a_thread(
    dir: &DataDir,
    runs: &Arc<WorkflowRuns>,
    run_id: &str,
) -> JoinHandle<(RunView, Instant)> {
    let (dir, runs, run_id) = (dir.clone(), runs.clone(), run_id.to_string());
    std::thread::spawn(move || {
        let store = Store::open_for_calls(&dir).unwrap();
        let mut services = Services::new(dir.apps_data());
        let profile = HostProfile::current();
        let probe = runs.clone();
        let steps = HostSteps::new(&store, &profile, &mut services).interrupted_by(Arc::new(
            move |run: &str, _app: &str| probe.show(run).map_or(true, |v| v.finished),
        ));
        let view = runs.drive(&run_id, &steps).unwrap();
        (view, Instant::now())
    })
}
