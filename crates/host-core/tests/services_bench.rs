//! Benchmark (docs/benchmarks.md): a backend service's capability call (`lime.storage.get`
//! sent on its channel, timed inside the sandbox around the request and its answer) vs the same
//! call from a frame (the choke point and the service, timed in the host), same run, one thread
//! each, min / median / max. Run with `--ignored --nocapture`.

mod services_support;
mod support;

use std::time::Instant;

use host_core::foundation::profile::HostProfile;
use host_core::hosting::capability::call::{Call, Caller};
use host_core::hosting::capability::dispatch::{dispatch_with, SessionAnswers, Verdict};
use host_core::hosting::capability::facts::FactsCache;
use serde_json::json;
use services_support::{relay_app, Host};

fn stats(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[0], v[v.len() / 2], v[v.len() - 1])
}

#[test]
#[ignore = "benchmark: cargo test -p host-core --test services_bench -- --ignored --nocapture"]
fn a_services_capability_call_vs_the_same_call_from_a_frame() {
    let tmp = tempfile::tempdir().unwrap();
    let mut h = Host::with(&[relay_app(tmp.path(), "bench-app", false)]);
    let n = 500;
    h.frame_call(
        "bench-app",
        "parser",
        "lime.storage",
        "set",
        json!({"key": "k", "value": {"a": 1}}),
    )
    .unwrap();
    // warm both paths (service started, handles open)
    let _ = h.service(
        "bench-app",
        "parser",
        "relay",
        "timed",
        json!({"method": "lime.storage.get", "params": {"key": "k"}, "n": 20}),
    );
    // The frame's path as the bridge runs it: the choke point with its facts cache, then the
    // service.
    let active = h.store.active_app("bench-app").unwrap();
    let caller = Caller {
        app_id: "bench-app".into(),
        entry_key: "parser".into(),
        version: active.version,
        session_id: "mount-bench".into(),
        package_hash: active.package_hash,
        manifest_hash: active.manifest_hash,
    };
    let call = Call {
        request_id: "r".into(),
        capability: "lime.storage".into(),
        method: "get".into(),
        args: json!({"key": "k"}),
        options: Default::default(),
    };
    let cache = FactsCache::new();
    let profile = HostProfile::current();
    let mut frame = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let verdict = dispatch_with(
            &cache,
            &h.store,
            &profile,
            &caller,
            &call,
            "trace_b",
            &mut SessionAnswers::default(),
        );
        let Verdict::Allowed(p) = verdict else {
            panic!("not allowed")
        };
        h.services.call_with(&h.store, &p, &call.args).unwrap();
        frame.push(t.elapsed().as_secs_f64());
    }
    let svc: Vec<f64> = serde_json::from_value(
        h.service(
            "bench-app",
            "parser",
            "relay",
            "timed",
            json!({"method": "lime.storage.get", "params": {"key": "k"}, "n": n}),
        )
        .unwrap(),
    )
    .unwrap();
    let (fmin, fmed, fmax) = stats(frame);
    let (smin, smed, smax) = stats(svc);
    println!("lime.storage.get x{n}, ms  min / median / max");
    println!("  from a frame (choke point with its facts cache + service, timed in the host): {:.3} / {:.3} / {:.3}", fmin * 1e3, fmed * 1e3, fmax * 1e3);
    println!(
        "  from a service (its channel, timed in the sandbox): {:.3} / {:.3} / {:.3}",
        smin * 1e3,
        smed * 1e3,
        smax * 1e3
    );
    println!("  ratio of medians: {:.2}", smed / fmed);
    assert!(smed > 0.0 && fmed > 0.0);
}
