//! Shared setup of the backend-service tests: a data dir with an app installed, a frame's
//! caller and call through the choke point, and the relay fixture whose service does what the
//! test tells it (call the host, hang, exit, flood).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::capability::call::{Call, Caller};
use host_core::hosting::capability::dispatch::{dispatch, CallError, SessionAnswers, Verdict};
use host_core::hosting::capability::services::Services;
use host_core::install::readiness::{Check, Report};
use host_core::install::store::Store;
use serde_json::{json, Map, Value};

use crate::support::{copy_dir, install, repo_root};

mod apps;
mod frames;

#[allow(unused_imports)]
pub use apps::{app_with_service_of, app_with_services_block, egress_client_app, EGRESS_CLIENT};
#[allow(unused_imports)]
pub use frames::{
    audited, bridge_msg, deferring_bridge, drive_on_a_thread, json_lines, posted, stops,
    three_frames, wait_until, ThreeFrames,
};

/// The in-sandbox shim next to the test binary (`cargo build -p service-sandbox --bins`).
pub fn require_shim() {
    std::env::set_var("APPHOST_SERVICE_BACKOFF_MS", "50");
    assert!(
        host_core::install::service_launch::shim_path().is_some(),
        "build the sandbox shim first: cargo build -p service-sandbox --bin apphost-service-shim"
    );
}

pub struct Host {
    pub tmp: tempfile::TempDir,
    pub dir: DataDir,
    pub store: Store,
    pub services: Services,
}

impl Host {
    pub fn with(apps: &[PathBuf]) -> Host {
        require_shim();
        Host::installed(apps)
    }

    /// A data dir with `apps` installed, no sandbox shim needed (nothing runs locally).
    pub fn installed(apps: &[PathBuf]) -> Host {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path().join("data"));
        for a in apps {
            install(&dir, a);
        }
        let store = Store::open_for_calls(&dir).unwrap();
        let services = Services::new(dir.apps_data());
        Host {
            tmp,
            dir,
            store,
            services,
        }
    }

    /// A call from `app`'s frame `entry` through the choke point and the services.
    pub fn frame_call(
        &mut self,
        app: &str,
        entry: &str,
        capability: &str,
        method: &str,
        args: Value,
    ) -> Result<Value, CallError> {
        let active = self.store.active_app(app).unwrap();
        let caller = Caller {
            app_id: app.into(),
            entry_key: entry.into(),
            version: active.version,
            session_id: "mount-test".into(),
            package_hash: active.package_hash,
            manifest_hash: active.manifest_hash,
        };
        let call = Call {
            request_id: "r1".into(),
            capability: capability.into(),
            method: method.into(),
            args,
            options: Map::new(),
        };
        let profile = HostProfile::current();
        match dispatch(
            &self.store,
            &profile,
            &caller,
            &call,
            "trace_test",
            &mut SessionAnswers::default(),
        ) {
            Verdict::Allowed(p) => self
                .services
                .call_with(&self.store, &p, &call.args)
                .map(|r| r.value),
            Verdict::Denied(e) => Err(e),
            Verdict::Ask(q) => panic!("unexpected prompt {q:?}"),
        }
    }

    pub fn service(
        &mut self,
        app: &str,
        entry: &str,
        svc: &str,
        method: &str,
        params: Value,
    ) -> Result<Value, CallError> {
        self.frame_call(
            app,
            entry,
            "lime.services",
            "call",
            json!({"service": svc, "method": method, "params": params}),
        )
    }

    pub fn audit(&self, app: &str) -> Vec<Value> {
        Store::open(&self.dir)
            .unwrap()
            .audit_log(Some(app), 10_000)
            .unwrap()
    }

    /// `app`'s readiness now and its app-level service check (the one no entry owns).
    pub fn service_readiness(&self, app: &str) -> (Report, Check) {
        let r = self.store.readiness(app, &HostProfile::current()).unwrap();
        let c = r
            .checks
            .iter()
            .find(|c| c.kind == "service" && c.entry.is_none())
            .cloned()
            .unwrap_or_else(|| panic!("{app} has no service check: {r:?}"));
        (r, c)
    }
}

/// Secrets in the encrypted file, with one key file outside every data dir (set once:
/// environment variables are process-wide).
pub fn secret_env() {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = tempfile::tempdir().unwrap().keep();
        std::env::set_var("APPHOST_SECRET_STORE", "file");
        std::env::set_var("APPHOST_SECRET_KEY_FILE", d.join("keys/k.key"));
        d
    });
}

/// `app`'s app-level service check (the one no entry owns) in its readiness now.
pub fn app_service_check(store: &Store, app: &str) -> Check {
    store
        .readiness(app, &HostProfile::current())
        .unwrap()
        .checks
        .into_iter()
        .find(|c| c.kind == "service" && c.entry.is_none())
        .unwrap()
}

pub fn doc_parser() -> PathBuf {
    repo_root().join("fixtures/apps/doc-parser")
}

/// Whether a process with `pid` is alive (not a zombie).
pub fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

/// The relay service (fixtures/services/relay.py).
const RELAY_PY: &str = include_str!("../../../../fixtures/services/relay.py");

/// An app `name` with a `relay` service (required unless `optional`) and a `page` entry,
/// declaring lime.storage + lime.services and a granted storage permission.
pub fn relay_app(tmp: &Path, name: &str, optional: bool) -> PathBuf {
    let pkg = tmp.join(format!("pkg-{name}"));
    copy_dir(&doc_parser(), &pkg);
    std::fs::remove_dir_all(pkg.join("services/parser")).unwrap();
    std::fs::create_dir_all(pkg.join("services/relay")).unwrap();
    std::fs::write(pkg.join("services/relay/relay.py"), RELAY_PY).unwrap();
    let text = std::fs::read_to_string(pkg.join("APP.md"))
        .unwrap()
        .replace("name: doc-parser", &format!("name: {name}"))
        .replace(
            "  - key: parser\n    kind: app-backend",
            "  - key: relay\n    kind: app-backend",
        )
        .replace("services/parser/parser.py", "services/relay/relay.py")
        .replace("timeoutMs: 5000", "timeoutMs: 800")
        .replace(
            "    required: true\n    requiredCapabilities",
            if optional {
                "    required: false\n    requiredCapabilities"
            } else {
                "    required: true\n    requiredCapabilities"
            },
        );
    std::fs::write(pkg.join("APP.md"), text).unwrap();
    pkg
}
