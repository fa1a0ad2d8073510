//! Benchmark (docs/benchmarks.md): cold start of the probe service sandboxed (spawn ->
//! `initialize` answered) vs the same program unsandboxed, and a service's `lime.*` round trip
//! through the host handler. Usage: `service-bench [runs]` (shim next to this binary).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use service_sandbox::{Limits, ServiceProcess, ServiceSpec};

fn stats(name: &str, mut v: Vec<Duration>) -> Duration {
    v.sort();
    let p = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    println!(
        "{name:28} n={} min={:?} p50={:?} p95={:?} max={:?}",
        v.len(),
        v[0],
        p(0.5),
        p(0.95),
        v[v.len() - 1]
    );
    p(0.5)
}

fn threads() -> String {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("Threads:"))
        .unwrap_or("Threads: ?")
        .to_string()
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(30);
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/apps/service-probe");
    let shim = std::env::current_exe()
        .unwrap()
        .with_file_name("apphost-service-shim");
    let tmp = std::env::temp_dir().join(format!("service-bench-{}", std::process::id()));
    let service_dir = tmp.join("services/probe");
    std::fs::create_dir_all(&service_dir).unwrap();
    let spec = ServiceSpec {
        package_dir: fixture.clone(),
        service_dir: service_dir.clone(),
        program: vec![
            "/usr/bin/python3".into(),
            "/app/services/probe/probe.py".into(),
        ],
        network: false,
        limits: Limits::default(),
        shim,
        bwrap: PathBuf::new(),
    };
    let init =
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).to_string() + "\n";

    let mut sandboxed = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let mut svc = ServiceProcess::start(&spec, Box::new(|_, p| Ok(p))).unwrap();
        svc.call("initialize", json!({}), Duration::from_secs(20))
            .unwrap();
        sandboxed.push(t.elapsed());
    }
    let mut plain = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let mut child = Command::new("/usr/bin/python3")
            .arg(fixture.join("services/probe/probe.py"))
            .current_dir(&service_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .as_mut()
            .unwrap()
            .write_all(init.as_bytes())
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        plain.push(t.elapsed());
        let _ = child.kill();
        let _ = child.wait();
    }
    println!("cold start, spawn -> initialize answered ({runs} runs each)");
    let a = stats("sandboxed", sandboxed);
    let b = stats("unsandboxed", plain);
    println!(
        "ratio p50 sandboxed/unsandboxed = {:.2}",
        a.as_secs_f64() / b.as_secs_f64()
    );

    let mut svc = ServiceProcess::start(&spec, Box::new(|_, p| Ok(p))).unwrap();
    svc.call("initialize", json!({}), Duration::from_secs(20))
        .unwrap();
    println!(
        "{} while one service runs (2 channel reader threads per service)",
        threads()
    );
    let mut host_calls = Vec::new();
    let mut echo = Vec::new();
    for _ in 0..(runs * 10) {
        let t = Instant::now();
        svc.call("echo", json!({"x": 1}), Duration::from_secs(5))
            .unwrap();
        echo.push(t.elapsed());
        let t = Instant::now();
        svc.call(
            "lime",
            json!({"method": "lime.storage.get", "params": {"key": "k"}}),
            Duration::from_secs(5),
        )
        .unwrap();
        host_calls.push(t.elapsed());
    }
    stats("host -> service echo", echo);
    stats("service lime.* round trip", host_calls);
    drop(svc);
    let _ = std::fs::remove_dir_all(&tmp);
}
