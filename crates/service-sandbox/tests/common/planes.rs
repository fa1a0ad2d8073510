//! The fixture apps of the Wasm and local-http planes, a supervisor with the tests' policy, a
//! delayed cancel and polling.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use service_sandbox::{
    AuditEvent, CancelToken, Limits, Policy, ServiceSpec, Supervisor, WasmLimits, WasmService,
};

/// `fixtures/apps` of the repository.
pub fn apps() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/apps")
}

/// `wasm-transform`'s `transform` service (in-process: no shim, no sandbox layers).
pub fn transform_spec() -> ServiceSpec {
    ServiceSpec {
        package_dir: apps().join("wasm-transform"),
        service_dir: std::env::temp_dir(),
        program: vec!["/app/services/transform/transform.wasm".into()],
        network: false,
        limits: Limits::default(),
        shim: PathBuf::new(),
        bwrap: PathBuf::new(),
    }
}

/// The transform service loaded, refusing every host call.
pub fn load_transform() -> WasmService {
    WasmService::load(
        &transform_spec(),
        WasmLimits::default(),
        Box::new(|_, _| Err((-1, "no host calls expected".into()))),
    )
    .unwrap()
}

/// `http-service`'s `api` (a sandboxed python3 HTTP server), its service dir under `tmp`.
pub fn http_service_spec(tmp: &Path) -> ServiceSpec {
    let service_dir = tmp.join("apps/http-service/services/api");
    std::fs::create_dir_all(&service_dir).unwrap();
    ServiceSpec {
        package_dir: apps().join("http-service"),
        service_dir,
        program: vec![
            "/usr/bin/python3".into(),
            "/app/services/api/server.py".into(),
        ],
        network: false,
        limits: Limits::default(),
        shim: PathBuf::from(env!("CARGO_BIN_EXE_apphost-service-shim")),
        bwrap: PathBuf::new(),
    }
}

/// A supervisor of `spec` (`call_timeout`, 20 s to start) that refuses every host call, logs to
/// `log_file` and gives its audit events to `audit`.
pub fn supervise(
    spec: ServiceSpec,
    call_timeout: Duration,
    log_file: PathBuf,
    audit: impl FnMut(AuditEvent) + Send + 'static,
) -> Supervisor {
    Supervisor::new(
        spec,
        Policy {
            call_timeout,
            start_timeout: Duration::from_secs(20),
            ..Policy::default()
        },
        log_file,
        Box::new(|| Box::new(|_, _| Err((-32601, "none".into())))),
        Box::new(audit),
    )
}

/// A token cancelled `after` from now, on another thread.
pub fn cancel_after(after: Duration) -> (CancelToken, std::thread::JoinHandle<()>) {
    let token = CancelToken::new();
    let other = token.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(after);
        other.cancel();
    });
    (token, t)
}

/// Whether `what` comes true within `limit`, polled every `every`.
pub fn wait_for(limit: Duration, every: Duration, what: impl Fn() -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if what() {
            return true;
        }
        std::thread::sleep(every);
    }
    false
}
