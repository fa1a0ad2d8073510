//! Benchmark (docs/benchmarks.md): the `wasm` plane's module load and instance start, a Wasm
//! transform call (fresh instance per call) vs the same transform in native Rust, and a
//! `local-http` service's cold start vs a `stdio-jsonrpc` one. Usage: `wasm-bench [runs]`
//! (shim next to this binary; the local-http part needs the sandbox layers).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use service_sandbox::{HttpService, Limits, ServiceProcess, ServiceSpec, WasmLimits, WasmService};

fn stats(name: &str, mut v: Vec<Duration>) -> Duration {
    v.sort();
    let p = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    println!(
        "{name:34} n={} min={:?} p50={:?} p95={:?} max={:?}",
        v.len(),
        v[0],
        p(0.5),
        p(0.95),
        v[v.len() - 1]
    );
    p(0.5)
}

fn timed(n: usize, mut f: impl FnMut()) -> Vec<Duration> {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect()
}

/// The transform in native Rust: the same request in, the same response out.
fn native_upper(request: &[u8]) -> Vec<u8> {
    let req: Value = serde_json::from_slice(request).unwrap_or(Value::Null);
    let text = req["params"]["text"].as_str().unwrap_or("");
    serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": req["id"], "result": {"text": text.to_ascii_uppercase()}}),
    )
    .unwrap_or_default()
}

fn spec(package: PathBuf, service_dir: &Path, program: &[&str]) -> ServiceSpec {
    ServiceSpec {
        package_dir: package,
        service_dir: service_dir.to_path_buf(),
        program: program.iter().map(|s| s.to_string()).collect(),
        network: false,
        limits: Limits::default(),
        shim: std::env::current_exe()
            .unwrap()
            .with_file_name("apphost-service-shim"),
        bwrap: PathBuf::new(),
    }
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(30);
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/apps");
    let tmp = std::env::temp_dir().join(format!("wasm-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let wasm_spec = spec(
        apps.join("wasm-transform"),
        &tmp,
        &["/app/services/transform/transform.wasm"],
    );
    let handler = || -> service_sandbox::channel::HostHandler { Box::new(|_, p| Ok(p)) };

    let n = runs * 100;
    let load = timed(runs * 10, || {
        WasmService::load(&wasm_spec, WasmLimits::default(), handler()).unwrap();
    });
    let mut svc = WasmService::load(&wasm_spec, WasmLimits::default(), handler()).unwrap();
    let start = timed(n, || svc.instantiate_once().unwrap());
    let text = "The quick brown fox jumps over the lazy dog. ".repeat(20);
    let t = Duration::from_secs(5);
    let wasm_call = timed(n, || {
        svc.call("upper", json!({"text": text}), t).unwrap();
    });
    let request = serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "upper", "params": {"text": text}}),
    )
    .unwrap();
    let native = timed(n, || {
        std::hint::black_box(native_upper(std::hint::black_box(&request)));
    });
    println!("wasm plane (transform.wasm, {} byte text)", text.len());
    stats("module load (read+validate+compile)", load);
    let s = stats("instance start (store+instantiate)", start);
    let w = stats("wasm call (fresh instance per call)", wasm_call);
    let r = stats("same transform in native Rust", native);
    println!(
        "instance start = {:.0}% of a wasm call; wasm/native p50 = {:.1}x",
        100.0 * s.as_secs_f64() / w.as_secs_f64(),
        w.as_secs_f64() / r.as_secs_f64()
    );

    if let Err(why) = service_sandbox::available_layers().require() {
        println!("local-http vs stdio cold start skipped: {why}");
        return;
    }
    let http_spec = spec(
        apps.join("http-service"),
        &tmp,
        &["/usr/bin/python3", "/app/services/api/server.py"],
    );
    let stdio_spec = spec(
        apps.join("service-probe"),
        &tmp,
        &["/usr/bin/python3", "/app/services/probe/probe.py"],
    );
    let t = Duration::from_secs(20);
    let http = timed(runs, || {
        let mut s = HttpService::start(&http_spec).unwrap();
        s.call("initialize", json!({}), t).unwrap();
    });
    let stdio = timed(runs, || {
        let mut s = ServiceProcess::start(&stdio_spec, handler()).unwrap();
        s.call("initialize", json!({}), t).unwrap();
    });
    let mut s = HttpService::start(&http_spec).unwrap();
    s.call("initialize", json!({}), t).unwrap();
    let http_call = timed(runs * 10, || {
        s.call("upper", json!({"text": "abc"}), t).unwrap();
    });
    println!("cold start, spawn -> initialize answered (python3, sandboxed)");
    let h = stats("local-http", http);
    let d = stats("stdio-jsonrpc", stdio);
    println!(
        "ratio p50 local-http/stdio = {:.2}",
        h.as_secs_f64() / d.as_secs_f64()
    );
    stats("local-http call (new connection)", http_call);
    drop(s);
    let _ = std::fs::remove_dir_all(&tmp);
}
