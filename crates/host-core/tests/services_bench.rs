//! Benchmark (docs/benchmarks.md): a backend service's capability call (`lime.storage.get`
//! sent on its channel, timed inside the sandbox around the request and its answer) vs the same
//! call from a frame (the choke point and the service, timed in the host), same run, one thread
//! each, min / median / max. Run with `--ignored --nocapture`.

mod services_support;
mod support;

use std::time::Instant;

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
    h.frame_call("bench-app", "parser", "lime.storage", "set", json!({"key": "k", "value": {"a": 1}}))
        .unwrap();
    // warm both paths (service started, handles open)
    let _ = h.service("bench-app", "parser", "relay", "timed", json!({"method": "lime.storage.get", "params": {"key": "k"}, "n": 20}));
    let mut frame = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        h.frame_call("bench-app", "parser", "lime.storage", "get", json!({"key": "k"}))
            .unwrap();
        frame.push(t.elapsed().as_secs_f64());
    }
    let svc: Vec<f64> = serde_json::from_value(
        h.service("bench-app", "parser", "relay", "timed", json!({"method": "lime.storage.get", "params": {"key": "k"}, "n": n}))
            .unwrap(),
    )
    .unwrap();
    let (fmin, fmed, fmax) = stats(frame);
    let (smin, smed, smax) = stats(svc);
    println!("lime.storage.get x{n}, ms  min / median / max");
    println!("  from a frame (choke point + service): {:.3} / {:.3} / {:.3}", fmin * 1e3, fmed * 1e3, fmax * 1e3);
    println!("  from a service (its channel, timed in the sandbox): {:.3} / {:.3} / {:.3}", smin * 1e3, smed * 1e3, smax * 1e3);
    println!("  ratio of medians: {:.2}", smed / fmed);
    assert!(smed > 0.0 && fmed > 0.0);
}
