//! A `server-assisted` service's endpoint may only reach public internet addresses (SSRF / DNS
//! rebinding, docs/services.md "Remote services"): an app cannot aim the host's HTTPS client at
//! the user's LAN, router, the cloud metadata service or a loopback daemon, directly or by a name
//! that resolves there.
//!
//! Every test here runs under the RELEASE rules (`remote_address::use_release_rules`, one way,
//! process-wide for this test binary): no debug loopback exception. The server the attacks aim
//! at is a loopback listener that counts connections: none may arrive.

mod services_support;
mod support;

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use host_core::foundation::error::ErrorCode;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::capability::services::service_host;
use host_core::hosting::services::remote::policy;
use host_core::hosting::services::ServiceId;
use host_core::install::readiness::{Outcome, Status};
use host_core::install::remote_address;
use host_core::install::store::Store;
use serde_json::{json, Value};
use services_support::{app_with_services_block, Host};

const CODE: &str = "service.remote_address_refused";

/// A loopback listener that only counts the connections it gets.
struct Target {
    addr: SocketAddr,
    hits: Arc<AtomicUsize>,
}

impl Target {
    fn start() -> Target {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        std::thread::spawn(move || {
            for c in l.incoming().flatten() {
                h.fetch_add(1, Ordering::SeqCst);
                drop(c);
            }
        });
        Target { addr, hits }
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// doc-parser renamed `name`, its service replaced by a remote one at `endpoint` (no auth).
fn remote_app(tmp: &Path, name: &str, endpoint: &str) -> PathBuf {
    let service = format!(
        "services:\n  - key: summarize\n    kind: app-backend\n    executionPlane: cloud-remote\n    protocol: remote-http\n    endpoint: \"{endpoint}\"\n    auth: {{kind: none}}\n    dataBoundary: \"The text goes to the author's server.\"\n    required: true\n    resourceLimits:\n      timeoutMs: 2000\n"
    );
    app_with_services_block(tmp, name, &service, true)
}

fn host_with(pkgs: &[PathBuf]) -> Host {
    remote_address::use_release_rules();
    Host::installed(pkgs)
}

fn call(h: &Host, app: &str) -> Result<Value, host_core::hosting::services::ServiceFailure> {
    let id = ServiceId {
        app: app.into(),
        key: "summarize".into(),
    };
    service_host(&h.store).call(&h.store, &id, "echo", json!({"text": "hi"}))
}

fn service_check(h: &Host, app: &str) -> host_core::install::readiness::Check {
    services_support::app_service_check(&h.store, app)
}

fn remote_calls(h: &Host, app: &str) -> Vec<Value> {
    h.audit(app)
        .into_iter()
        .filter(|a| a["action"] == "service.remote_call")
        .map(|a| a["details"].clone())
        .collect()
}

#[test]
fn a_name_that_resolves_to_loopback_is_refused_at_connect_time_and_nothing_is_sent() {
    let target = Target::start();
    let tmp = tempfile::tempdir().unwrap();
    // `localhost` resolves to 127.0.0.1 (/etc/hosts): the check is on the resolved address.
    let endpoint = format!("http://localhost:{}/rpc", target.addr.port());
    let mut h = host_with(&[remote_app(tmp.path(), "by-name", &endpoint)]);
    {
        // A name is only known at connect time: the user may allow its origin.
        let (locked, _) = Store::open_locked(&h.dir).unwrap();
        policy::allow(&locked, "by-name", "summarize").unwrap();
    }
    assert_eq!(
        h.store
            .readiness("by-name", &HostProfile::current())
            .unwrap()
            .status,
        Status::Ready
    );

    let f = call(&h, "by-name").unwrap_err();
    assert_eq!(f.code, CODE, "{f:?}");
    assert!(
        f.message.contains("localhost resolves to 127.0.0.1"),
        "{}",
        f.message
    );
    assert!(f.message.contains("loopback"), "{}", f.message);
    assert!(!f.retryable);
    let e = f.host_error();
    assert_eq!(e.code, ErrorCode::ServiceCannotRun);
    assert_eq!(e.details["cause"], CODE);

    // A frame's call gets the same refusal.
    let e = h
        .service("by-name", "parser", "summarize", "echo", json!({}))
        .unwrap_err();
    assert_eq!(e.cause_code, Some(CODE), "{e:?}");
    assert_eq!(
        target.hits(),
        0,
        "no connection reached the loopback target"
    );

    // Audited, each call with the refusal code.
    let audited = remote_calls(&h, "by-name");
    assert!(!audited.is_empty());
    assert!(
        audited
            .iter()
            .all(|d| d["ok"] == false && d["code"] == CODE),
        "{audited:?}"
    );
}

#[test]
fn an_ip_literal_endpoint_outside_the_public_internet_is_blocked_at_readiness_and_cannot_be_allowed(
) {
    let target = Target::start();
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            "metadata",
            "https://169.254.169.254/latest/meta-data".to_owned(),
            "link-local",
        ),
        ("lan", "https://192.168.1.1/rpc".to_owned(), "private"),
        ("ten", "https://10.0.0.1/rpc".to_owned(), "private"),
        ("cgnat", "https://100.64.0.1/rpc".to_owned(), "CGNAT"),
        ("ula", "https://[fd00::1]/rpc".to_owned(), "unique-local"),
        (
            "mapped",
            "https://[::ffff:127.0.0.1]/rpc".to_owned(),
            "loopback",
        ),
        (
            "hexed",
            "https://0xa9.0xfe.0xa9.0xfe/".to_owned(),
            "link-local",
        ),
        // Literal loopback: the debug exception is off under the release rules.
        (
            "loop",
            format!("http://127.0.0.1:{}/rpc", target.addr.port()),
            "loopback",
        ),
    ];
    let pkgs: Vec<PathBuf> = cases
        .iter()
        .map(|(app, endpoint, _)| remote_app(tmp.path(), app, endpoint))
        .collect();
    let h = host_with(&pkgs);
    for (app, _, class) in &cases {
        let c = service_check(&h, app);
        assert_eq!(c.outcome, Outcome::Blocked, "{app}: {c:?}");
        assert_eq!(c.code, Some(CODE), "{app}: {c:?}");
        assert!(c.message.contains(class), "{app}: {}", c.message);

        let (locked, _) = Store::open_locked(&h.dir).unwrap();
        let before = std::fs::read(h.dir.db_path()).unwrap();
        let e = policy::allow(&locked, app, "summarize").unwrap_err();
        assert_eq!(e.code, ErrorCode::ServiceCannotRun, "{app}");
        assert_eq!(e.details["cause"], CODE, "{app}");
        assert!(locked.remote_allowances(app).unwrap().is_empty());
        assert_eq!(std::fs::read(h.dir.db_path()).unwrap(), before, "{app}");
        drop(locked);

        let list = service_host(&h.store).list(&h.store, app).unwrap();
        assert_eq!(list[0].state, "blocked", "{app}");
        assert_eq!(list[0].code.as_deref(), Some(CODE), "{app}");
    }
    assert_eq!(target.hits(), 0);
}

#[test]
fn an_allowance_written_earlier_does_not_let_a_literal_private_endpoint_be_called() {
    // An allowance row for the origin (given by an older host, or written by hand): each call
    // re-checks the address, so nothing is sent.
    let target = Target::start();
    let tmp = tempfile::tempdir().unwrap();
    let endpoint = format!("http://127.0.0.1:{}/rpc", target.addr.port());
    let h = host_with(&[remote_app(tmp.path(), "stale", &endpoint)]);
    {
        let (locked, _) = Store::open_locked(&h.dir).unwrap();
        let version = locked.active_app("stale").unwrap().version;
        locked
            .allow_remote(
                "stale",
                &version,
                "summarize",
                &format!("http://127.0.0.1:{}", target.addr.port()),
            )
            .unwrap();
    }
    let f = call(&h, "stale").unwrap_err();
    assert_eq!(f.code, CODE, "{f:?}");
    assert_eq!(target.hits(), 0);
    assert_eq!(remote_calls(&h, "stale")[0]["code"], CODE);
}
