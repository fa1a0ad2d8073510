//! `network: remote-allowed` wired into the host (issue 24 §2): a service declaring it is
//! `needs-setup` and never starts until the user grants network (host.db); once granted it
//! reaches a loopback "remote" only through the host egress proxy (`APPHOST_EGRESS_TEST_ALLOW`,
//! debug builds), an undeclared domain is refused and audited `service.egress`; a revoke stops
//! it and its next launch is refused; an uninstall drops the grant.

mod services_support;
mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};

use host_core::foundation::profile::HostProfile;
use host_core::hosting::services::network_grant;
use host_core::install::readiness::{Outcome, Status};
use host_core::install::store::{DataMode, Store};
use serde_json::{json, Value};
use services_support::{alive, audited, egress_client_app, Host};

/// The doc-parser app with its service replaced by the egress client, `remote-allowed` to
/// `domains` (YAML flow list text).
fn remote_app(tmp: &Path, name: &str, domains: &str) -> PathBuf {
    egress_client_app(tmp, name, domains)
}

/// A loopback "remote": answers each line with `pong:<line>`.
fn echo_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut w = c.try_clone().unwrap();
                for line in BufReader::new(c).lines().map_while(Result::ok) {
                    let _ = writeln!(w, "pong:{line}");
                }
            });
        }
    });
    addr
}

/// A call on the service through the service host (the frame's path needs a ready entry).
fn call(h: &mut Host, method: &str, params: Value) -> Result<Value, Option<&'static str>> {
    if h.store
        .readiness("remote", &HostProfile::current())
        .unwrap()
        .status
        == Status::Ready
    {
        return h
            .service("remote", "parser", "parser", method, params)
            .map_err(|e| e.cause_code);
    }
    let host = host_core::hosting::capability::services::service_host(&h.store);
    let id = host_core::hosting::services::ServiceId {
        app: "remote".into(),
        key: "parser".into(),
    };
    host.call(&h.store, &id, method, params)
        .map_err(|e| Some(e.code))
}

fn egress_rows(h: &Host) -> Vec<Value> {
    h.audit("remote")
        .into_iter()
        .filter(|a| a["action"] == "service.egress")
        .collect()
}

fn starts(h: &Host) -> usize {
    audited(h, "remote", "service.start")
}

#[test]
fn a_remote_allowed_service_runs_only_granted_and_only_to_its_target() {
    let target = echo_server();
    // Read by the host at each launch (debug builds only): exactly this address passes.
    std::env::set_var("APPHOST_EGRESS_TEST_ALLOW", target.to_string());
    let tmp = tempfile::tempdir().unwrap();
    let pkg = remote_app(tmp.path(), "remote", "[api.example.com]");
    let mut h = Host::with(&[pkg]);

    // Ungranted: needs-setup naming the command, and nothing starts.
    let (r, c) = h.service_readiness("remote");
    assert_eq!(c.outcome, Outcome::NeedsSetup, "{c:?}");
    assert_eq!(c.code, Some("service.network_not_granted"));
    assert_eq!(r.status, Status::NeedsSetup);
    let action = c.setup_action.as_ref().unwrap();
    assert_eq!(
        action.target.as_deref(),
        Some("apphost services grant-network remote parser")
    );
    let e = call(&mut h, "proxied", json!({"target": target.to_string()})).unwrap_err();
    assert_eq!(e, Some("service.network_not_granted"));
    assert_eq!(starts(&h), 0, "an ungranted service started");
    assert!(egress_rows(&h).is_empty());

    // A grant to a service the app does not declare is refused and stores nothing.
    let (locked, _) = Store::open_locked(&h.dir).unwrap();
    let e = network_grant::grant(&locked, "remote", "other").unwrap_err();
    assert_eq!(e.code.as_str(), "service.not_declared");
    assert!(locked.network_grants("remote").unwrap().is_empty());

    // Granted: the service reaches the loopback remote through the proxy.
    assert!(network_grant::grant(&locked, "remote", "parser").unwrap());
    assert!(!network_grant::grant(&locked, "remote", "parser").unwrap());
    let r = h
        .store
        .readiness("remote", &HostProfile::current())
        .unwrap();
    assert_eq!(r.status, Status::Ready, "{r:?}");
    let out = call(
        &mut h,
        "proxied",
        json!({"target": target.to_string(), "line": "hi"}),
    )
    .unwrap();
    assert_eq!(out["reply"], "pong:hi", "{out}");
    // An undeclared domain is refused by the proxy, with its stable code, and audited.
    let out = call(&mut h, "proxied", json!({"target": "evil.example.org:443"})).unwrap();
    assert_eq!(out["error"], "service.egress_domain_not_allowed", "{out}");
    // Its own namespace has no way out but the proxy.
    let out = call(
        &mut h,
        "direct",
        json!({"host": target.ip().to_string(), "port": target.port()}),
    )
    .unwrap();
    assert_eq!(out["connected"], false, "{out}");
    let rows = egress_rows(&h);
    assert!(
        rows.iter()
            .any(|a| a["details"]["target"] == target.to_string()
                && a["details"]["allowed"] == true
                && a["details"]["service"] == "parser"),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .any(|a| a["details"]["target"] == "evil.example.org:443"
                && a["details"]["allowed"] == false
                && a["details"]["code"] == "service.egress_domain_not_allowed"),
        "{rows:?}"
    );
    let list = h
        .frame_call("remote", "parser", "lime.services", "list", json!({}))
        .unwrap();
    let pid = list["services"][0]["pid"].as_u64().unwrap();
    assert!(alive(pid));

    // Revoked: the running service stops; the next launch is refused and starts nothing.
    let before = starts(&h);
    assert!(network_grant::revoke(&locked, "remote", "parser").unwrap());
    assert!(!network_grant::revoke(&locked, "remote", "parser").unwrap());
    let e = call(&mut h, "proxied", json!({"target": target.to_string()})).unwrap_err();
    assert_eq!(e, Some("service.network_not_granted"));
    assert!(!alive(pid), "the service outlived its revoked grant");
    assert_eq!(starts(&h), before);
    let audit = h.audit("remote");
    assert!(audit.iter().any(|a| a["action"] == "service.network_grant"));
    assert!(audit
        .iter()
        .any(|a| a["action"] == "service.network_revoke"));

    // An uninstall drops the grant: a reinstall asks again.
    network_grant::grant(&locked, "remote", "parser").unwrap();
    locked
        .uninstall("remote", DataMode::DeleteData, None)
        .unwrap();
    assert!(locked.network_grants("remote").unwrap().is_empty());
}

#[test]
fn a_remote_allowed_service_without_domains_is_refused_as_an_invalid_spec() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = remote_app(tmp.path(), "remote", "[]");
    let mut h = Host::with(&[pkg]);
    let (r, c) = h.service_readiness("remote");
    assert_eq!(c.code, Some("service.invalid_spec"), "{c:?}");
    assert_eq!(r.status, Status::Blocked);
    let (locked, _) = Store::open_locked(&h.dir).unwrap();
    // Granting does not make it run.
    network_grant::grant(&locked, "remote", "parser").unwrap();
    let e = call(&mut h, "proxied", json!({"target": "api.example.com:443"})).unwrap_err();
    assert_eq!(e, Some("service.invalid_spec"));
    assert_eq!(starts(&h), 0);
}
