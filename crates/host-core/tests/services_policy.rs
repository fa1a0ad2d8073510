//! The admin's services policy file `<data>/policy/services.json` (docs/services.md "Admin
//! policy"): absent, the user's allowance decides; present, it can only deny — and deny wins over
//! an allowance or grant that already exists — at readiness, the review sheet, `allow-remote` /
//! `grant-network`, every call and launch, and `services list`; a file that cannot be used
//! (malformed, huge, symlinked elsewhere, not a file) denies every remote call and network grant;
//! an edit applies to the next call without a restart; a running `remote-allowed` service the
//! policy now denies is stopped.

mod services_support;
mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use host_core::foundation::error::ErrorCode;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::app_secrets;
use host_core::hosting::capability::services::service_host;
use host_core::hosting::services::remote::policy;
use host_core::hosting::services::{network_grant, ServiceId};
use host_core::install::readiness::{Check, Outcome, Status};
use host_core::install::secrets::SecretValue;
use host_core::install::services_policy::{policy_path, CODE, MAX_POLICY_BYTES};
use host_core::install::store::Store;
use serde_json::{json, Value};
use services_support::{
    alive, app_service_check, app_with_services_block, audited, egress_client_app, secret_env,
    stops, Host,
};
use support::install;

/// A loopback JSON-RPC server that answers every request with `{"ok": true}` and counts them.
struct Server {
    addr: SocketAddr,
    hits: Arc<AtomicUsize>,
}

fn answer(c: TcpStream, hits: &AtomicUsize) {
    let mut r = BufReader::new(c.try_clone().unwrap());
    let mut len = 0;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; len];
    if r.read_exact(&mut body).is_err() {
        return;
    }
    hits.fetch_add(1, Ordering::SeqCst);
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let out =
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": req["id"], "result": {"ok": true}}))
            .unwrap();
    let mut c = c;
    let _ = write!(
        c,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        out.len()
    );
    let _ = c.write_all(&out);
}

impl Server {
    fn start() -> Server {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let hits: Arc<AtomicUsize> = Arc::default();
        let h = hits.clone();
        std::thread::spawn(move || {
            for c in l.incoming().flatten() {
                let h = h.clone();
                std::thread::spawn(move || answer(c, &h));
            }
        });
        Server { addr, hits }
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// doc-parser renamed `name`, its service replaced by a `server-assisted` remote one.
fn remote_app(tmp: &Path, name: &str, endpoint: &str) -> PathBuf {
    let service = format!(
        "secrets:\n  - key: api_token\n    required: true\nservices:\n  - key: summarize\n    kind: app-backend\n    language: python\n    executionPlane: cloud-remote\n    protocol: remote-http\n    endpoint: \"{endpoint}\"\n    auth: {{kind: bearer, secret: api_token}}\n    dataBoundary: \"The text goes to the author's server.\"\n    required: true\n"
    );
    app_with_services_block(tmp, name, &service, true)
}

struct Remote {
    _tmp: tempfile::TempDir,
    dir: DataDir,
    store: Store,
    server: Server,
}

const APP: &str = "remote";

/// A data dir with the remote app installed, its secret bound and (with `allow`) allowed.
fn remote_host(allow: bool) -> Remote {
    secret_env();
    let server = Server::start();
    let tmp = tempfile::tempdir().unwrap();
    let pkg = remote_app(tmp.path(), APP, &format!("{}/rpc", server.origin()));
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &pkg);
    let store = Store::open_for_calls(&dir).unwrap();
    {
        let (locked, _) = Store::open_locked(&dir).unwrap();
        app_secrets::set(&locked, APP, "api_token", &SecretValue::new("tok".into())).unwrap();
        if allow {
            policy::allow(&locked, APP, "summarize").unwrap();
        }
    }
    Remote {
        _tmp: tmp,
        dir,
        store,
        server,
    }
}

fn id(app: &str, key: &str) -> ServiceId {
    ServiceId {
        app: app.into(),
        key: key.into(),
    }
}

impl Remote {
    fn call(&self) -> Result<Value, &'static str> {
        service_host(&self.store)
            .call(&self.store, &id(APP, "summarize"), "echo", json!({}))
            .map_err(|f| f.code)
    }

    fn check(&self) -> Check {
        service_check(&self.store, APP)
    }

    fn listed(&self) -> Value {
        let list = service_host(&self.store).list(&self.store, APP).unwrap();
        serde_json::to_value(&list[0]).unwrap()
    }

    fn set_policy(&self, text: &str) {
        write_policy(&self.dir, text.as_bytes());
    }
}

fn write_policy(dir: &DataDir, bytes: &[u8]) {
    let p = policy_path(dir);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn service_check(store: &Store, app: &str) -> Check {
    app_service_check(store, app)
}

/// A denied check: blocked, the policy code, the file named, nothing the user could run.
fn assert_denied(c: &Check, dir: &DataDir) {
    assert_eq!(c.outcome, Outcome::Blocked, "{c:?}");
    assert_eq!(c.code, Some(CODE), "{c:?}");
    let path = policy_path(dir).display().to_string();
    assert!(c.message.contains(&path), "names the file: {}", c.message);
    assert!(c.setup_action.is_none(), "no setup action: {c:?}");
}

#[test]
fn the_policy_file_lives_outside_every_app_data_area() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let p = policy_path(&dir);
    assert_eq!(p, dir.root().join("policy").join("services.json"));
    assert!(
        !p.starts_with(dir.apps_data()),
        "{p:?} is inside an app area"
    );
    // The app data area is `<data>/apps/`, services write only below `apps/<app>/services/`.
    assert!(dir.apps_data().starts_with(dir.root()));
    assert_ne!(dir.apps_data(), p.parent().unwrap());
}

#[test]
fn without_a_policy_file_the_users_allowance_decides() {
    let r = remote_host(true);
    assert!(!policy_path(&r.dir).exists());
    assert_eq!(r.check().outcome, Outcome::Pass);
    assert!(r.call().is_ok());
    assert_eq!(r.server.hits(), 1);
    // An empty policy denies nothing either.
    r.set_policy("{}");
    assert!(r.call().is_ok());
    assert_eq!(r.listed()["state"], "remote");
}

#[test]
fn deny_beats_an_existing_allowance_and_an_edit_applies_to_the_next_call() {
    let r = remote_host(true);
    assert!(r.call().is_ok());
    assert_eq!(r.server.hits(), 1);

    r.set_policy(r#"{"deny": ["remote/summarize"]}"#);
    assert_eq!(r.call(), Err(CODE), "deny wins over the allowance row");
    assert_eq!(r.server.hits(), 1, "nothing was sent");
    assert_denied(&r.check(), &r.dir);
    assert_eq!(
        r.store
            .readiness(APP, &HostProfile::current())
            .unwrap()
            .status,
        Status::Blocked
    );
    let listed = r.listed();
    assert_eq!(listed["state"], "blocked");
    assert_eq!(listed["code"], CODE);
    // The user's row is kept (the policy decides, it does not rewrite the user's choice).
    assert_eq!(
        r.store.remote_allowances(APP).unwrap(),
        vec![("summarize".to_owned(), r.server.origin())]
    );
    // The app's wildcard form denies too.
    r.set_policy(r#"{"deny": ["remote/*"]}"#);
    assert_eq!(r.call(), Err(CODE));

    // Edited again (no restart, same process): the next call goes through.
    r.set_policy(r#"{"deny": ["other.app/*"]}"#);
    assert!(r.call().is_ok());
    assert_eq!(r.server.hits(), 2);
    std::fs::remove_file(policy_path(&r.dir)).unwrap();
    assert!(r.call().is_ok());
    assert_eq!(r.check().outcome, Outcome::Pass);
}

#[test]
fn remote_origins_are_allowed_by_list_and_denied_by_pattern() {
    let r = remote_host(true);
    let origin = r.server.origin();
    // allow: false lets only allowOrigins through.
    r.set_policy(r#"{"remote": {"allow": false, "allowOrigins": ["https://api.example.com"]}}"#);
    assert_eq!(r.call(), Err(CODE));
    assert!(r.check().message.contains("allowOrigins"));
    r.set_policy(&format!(
        r#"{{"remote": {{"allow": false, "allowOrigins": ["{origin}"]}}}}"#
    ));
    assert!(r.call().is_ok());
    // denyOrigins wins over allowOrigins.
    r.set_policy(&format!(
        r#"{{"remote": {{"allow": false, "allowOrigins": ["{origin}"], "denyOrigins": ["{origin}"]}}}}"#
    ));
    assert_eq!(r.call(), Err(CODE));
    assert!(r.check().message.contains("denyOrigins"));
    // A subdomain pattern does not cover another host.
    r.set_policy(r#"{"remote": {"denyOrigins": ["http://*.0.0.1"]}}"#);
    assert!(r.call().is_ok());
    // network rules do not touch remote services.
    r.set_policy(r#"{"network": {"allow": false, "denyApps": ["remote"]}}"#);
    assert!(r.call().is_ok());
    assert_eq!(r.server.hits(), 3);
}

#[test]
fn allow_remote_is_refused_by_the_policy_and_writes_nothing() {
    let r = remote_host(false);
    r.set_policy(r#"{"remote": {"denyOrigins": ["http://127.0.0.1:1", "http://localhost"]}, "deny": ["remote/summarize"]}"#);
    let (locked, _) = Store::open_locked(&r.dir).unwrap();
    let before = std::fs::read(r.dir.db_path()).unwrap();
    let e = policy::allow(&locked, APP, "summarize").unwrap_err();
    assert_eq!(e.code, ErrorCode::ServiceCannotRun);
    assert_eq!(e.details["cause"], CODE);
    assert!(e.message.contains("services.json"), "{}", e.message);
    assert!(locked.remote_allowances(APP).unwrap().is_empty());
    assert_eq!(std::fs::read(r.dir.db_path()).unwrap(), before);
    // Readiness says the policy, not "allow it yourself".
    assert_denied(&r.check(), &r.dir);
    assert_eq!(r.call(), Err(CODE));
    assert_eq!(r.server.hits(), 0);
}

/// Every way the file can be unusable: every remote call is denied.
#[test]
fn an_unusable_policy_file_fails_closed() {
    let r = remote_host(true);
    let huge = {
        let mut v = br#"{"deny": ["x/y"], "remote": {"denyOrigins": ["#.to_vec();
        while (v.len() as u64) <= MAX_POLICY_BYTES {
            v.extend_from_slice(br#""https://a.example.com","#);
        }
        v.extend_from_slice(br#""https://b.example.com"]}}"#);
        v
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("not json", b"{deny: all".to_vec()),
        ("not utf-8", vec![0xff, 0xfe, 0x7b]),
        ("unknown field", br#"{"allowEverything": true}"#.to_vec()),
        (
            "a bad pattern",
            br#"{"remote": {"allowOrigins": ["*"]}}"#.to_vec(),
        ),
        ("a bad deny entry", br#"{"deny": ["remote"]}"#.to_vec()),
        ("wrong type", br#"{"remote": {"allow": "yes"}}"#.to_vec()),
        ("huge", huge),
    ];
    for (what, bytes) in cases {
        write_policy(&r.dir, &bytes);
        let started = Instant::now();
        assert_eq!(r.call(), Err(CODE), "{what}");
        assert!(started.elapsed() < Duration::from_secs(5), "{what}");
        let c = r.check();
        assert_denied(&c, &r.dir);
        assert!(
            c.message.contains("cannot be used"),
            "{what}: {}",
            c.message
        );
        assert_eq!(r.listed()["code"], CODE, "{what}");
    }
    assert_eq!(r.server.hits(), 0, "nothing was sent");

    // A directory, and a FIFO (never blocks the reader).
    let p = policy_path(&r.dir);
    std::fs::remove_file(&p).unwrap();
    std::fs::create_dir(&p).unwrap();
    assert_eq!(r.call(), Err(CODE), "a directory");
    std::fs::remove_dir(&p).unwrap();
    assert!(std::process::Command::new("mkfifo")
        .arg(&p)
        .status()
        .unwrap()
        .success());
    let started = Instant::now();
    assert_eq!(r.call(), Err(CODE), "a fifo");
    assert!(started.elapsed() < Duration::from_secs(5));
    std::fs::remove_file(&p).unwrap();
    assert!(r.call().is_ok(), "absent again: the allowance decides");
}

/// A symlink at the policy path (or for its directory) is refused even when its target is a
/// permissive file: a link into an app's data area would let the app write the policy.
#[test]
fn a_symlinked_policy_file_or_directory_fails_closed() {
    let r = remote_host(true);
    let area = r.dir.apps_data().join(APP);
    std::fs::create_dir_all(&area).unwrap();
    std::fs::write(area.join("services.json"), "{}").unwrap();
    let p = policy_path(&r.dir);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(area.join("services.json"), &p).unwrap();
    assert_eq!(r.call(), Err(CODE), "a symlinked file");
    assert_denied(&r.check(), &r.dir);
    std::fs::remove_file(&p).unwrap();
    std::fs::remove_dir(p.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&area, p.parent().unwrap()).unwrap();
    assert_eq!(r.call(), Err(CODE), "a symlinked policy directory");
    assert_eq!(r.server.hits(), 0);
}

#[test]
fn the_review_sheet_shows_the_policy_refusal() {
    secret_env();
    let server = Server::start();
    let tmp = tempfile::tempdir().unwrap();
    let pkg = remote_app(tmp.path(), APP, &format!("{}/rpc", server.origin()));
    let dir = DataDir::at(tmp.path().join("review-data"));
    Store::open_locked(&dir).unwrap();
    let review = |dir: &DataDir| {
        let r = host_core::center::Center::new(dir.clone())
            .review_install(
                host_core::center::ReviewSource::Path(pkg.clone()),
                &mut |_, _| {},
            )
            .unwrap();
        serde_json::to_value(&r).unwrap()["readiness"].to_string()
    };
    // The sheet's readiness reasons are messages: the policy's names its file.
    let path = policy_path(&dir).display().to_string();
    assert!(!review(&dir).contains(&path));
    write_policy(&dir, br#"{"remote": {"allow": false}}"#);
    let text = review(&dir);
    assert!(text.contains(&path), "{text}");
    assert!(text.contains("allowOrigins"), "{text}");
    assert!(
        !text.contains("allow-remote"),
        "no setup action the user could take: {text}"
    );
}

// ---- network grants of `remote-allowed` services (need the sandbox shim) ----

fn network_app(tmp: &Path, name: &str) -> PathBuf {
    egress_client_app(tmp, name, "[api.example.com]")
}

fn starts(h: &Host, app: &str) -> usize {
    audited(h, app, "service.start")
}

#[test]
fn grant_network_is_refused_by_the_policy_and_a_denied_service_never_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let mut h = Host::with(&[network_app(tmp.path(), "net")]);
    write_policy(
        &h.dir,
        br#"{"network": {"allow": false, "allowApps": ["other.app"]}}"#,
    );
    let (locked, _) = Store::open_locked(&h.dir).unwrap();
    let before = std::fs::read(h.dir.db_path()).unwrap();
    let e = network_grant::grant(&locked, "net", "parser").unwrap_err();
    assert_eq!(e.code, ErrorCode::ServiceCannotRun);
    assert_eq!(e.details["cause"], CODE);
    assert!(locked.network_grants("net").unwrap().is_empty());
    assert_eq!(std::fs::read(h.dir.db_path()).unwrap(), before);
    let (_, c) = h.service_readiness("net");
    assert_denied(&c, &h.dir);

    // A grant row written anyway (before the policy, or by hand) does not help.
    std::fs::remove_file(policy_path(&h.dir)).unwrap();
    assert!(network_grant::grant(&locked, "net", "parser").unwrap());
    write_policy(&h.dir, br#"{"network": {"denyApps": ["net"]}}"#);
    let host = h.services.service_host(&h.store);
    let e = host
        .call(&h.store, &id("net", "parser"), "env", json!({}))
        .unwrap_err();
    assert_eq!(e.code, CODE);
    assert!(host.start(&h.store, &id("net", "parser")).is_err());
    assert_eq!(starts(&h, "net"), 0, "a denied service started");
    let listed = serde_json::to_value(host.list(&h.store, "net").unwrap()).unwrap();
    assert_eq!(listed[0]["state"], "blocked");
    assert_eq!(listed[0]["code"], CODE);
    // Allowed by the list: it runs.
    write_policy(
        &h.dir,
        br#"{"network": {"allow": false, "allowApps": ["net"]}}"#,
    );
    assert!(host
        .call(&h.store, &id("net", "parser"), "env", json!({}))
        .is_ok());
    let (r, _) = h.service_readiness("net");
    assert_eq!(r.status, Status::Ready, "{r:?}");
}

fn running_pid(h: &mut Host, app: &str) -> u64 {
    let host = h.services.service_host(&h.store);
    let listed = serde_json::to_value(host.list(&h.store, app).unwrap()).unwrap();
    listed[0]["pid"].as_u64().unwrap()
}

/// The egress-client app `net` installed, its network granted, its service running: the host,
/// the locked store and the service's pid.
fn granted_and_running(tmp: &Path) -> (Host, Store, u64) {
    let mut h = Host::with(&[network_app(tmp, "net")]);
    let (locked, _) = Store::open_locked(&h.dir).unwrap();
    network_grant::grant(&locked, "net", "parser").unwrap();
    let host = h.services.service_host(&h.store);
    assert!(host
        .call(&h.store, &id("net", "parser"), "env", json!({}))
        .is_ok());
    let pid = running_pid(&mut h, "net");
    (h, locked, pid)
}

#[test]
fn a_running_service_the_policy_now_denies_is_stopped_at_its_next_call() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut h, locked, pid) = granted_and_running(tmp.path());
    let host = h.services.service_host(&h.store);
    assert!(alive(pid));
    let before = starts(&h, "net");
    write_policy(&h.dir, br#"{"deny": ["net/parser"]}"#);
    let e = host
        .call(&h.store, &id("net", "parser"), "env", json!({}))
        .unwrap_err();
    assert_eq!(e.code, CODE);
    let deadline = Instant::now() + Duration::from_secs(5);
    // The process dies first; its `service.stop` row is written right after: wait for both.
    while (alive(pid) || stops(&h, "net", "policy_denied") == 0) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(pid), "the service outlived the policy");
    assert_eq!(starts(&h, "net"), before, "nothing started again");
    assert_eq!(stops(&h, "net", "policy_denied"), 1);
    // The grant row stays: lifting the policy lets it run again.
    assert!(locked.network_granted("net", "parser").unwrap());
    std::fs::remove_file(policy_path(&h.dir)).unwrap();
    assert!(host
        .call(&h.store, &id("net", "parser"), "env", json!({}))
        .is_ok());
}

#[test]
fn a_running_service_the_policy_now_denies_is_stopped_without_any_call() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut h, _locked, pid) = granted_and_running(tmp.path());
    // Held to the end, as the service's host is while the tick runs.
    let _host = h.services.service_host(&h.store);
    // A policy file that no longer parses denies every grant: the host's tick takes it away.
    write_policy(&h.dir, b"{\"network\": ");
    let deadline = Instant::now() + Duration::from_secs(5);
    // The process dies first; its `service.stop` row is written right after: wait for both.
    while (alive(pid) || stops(&h, "net", "policy_denied") == 0) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(pid), "the tick did not stop the denied service");
    assert_eq!(stops(&h, "net", "policy_denied"), 1);
    let (_, c) = h.service_readiness("net");
    assert_denied(&c, &h.dir);
}

#[test]
fn deny_domains_refuses_a_running_services_next_connection_before_any_lookup() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut h, _locked, pid) = granted_and_running(tmp.path());
    let host = h.services.service_host(&h.store);
    let proxied = |target: &str| {
        host.call(
            &h.store,
            &id("net", "parser"),
            "proxied",
            json!({"target": target}),
        )
        .unwrap()
    };
    // The service declares api.example.com; the admin denies it while the service runs.
    write_policy(
        &h.dir,
        br#"{"network": {"denyDomains": ["API.example.com", "*.other.example"]}}"#,
    );
    let out = proxied("api.example.com:443");
    assert_eq!(out["error"], CODE, "{out}");
    assert!(out["status"].as_str().unwrap().contains(" 403 "), "{out}");
    // An undeclared domain is still refused by the declaration first.
    let out = proxied("x.other.example:443");
    assert_eq!(out["error"], "service.egress_domain_not_allowed", "{out}");
    // The service keeps running (only the connection is refused), and each attempt is audited.
    assert_eq!(running_pid(&mut h, "net"), pid);
    let rows: Vec<Value> = h
        .audit("net")
        .into_iter()
        .filter(|a| a["action"] == "service.egress")
        .collect();
    assert!(
        rows.iter()
            .any(|a| a["details"]["target"] == "api.example.com:443"
                && a["details"]["allowed"] == false
                && a["details"]["code"] == CODE),
        "{rows:?}"
    );
    // A denyDomains entry that is not a domain makes the file unusable: fail closed, and the
    // service is taken away like any service whose network the policy denies.
    write_policy(&h.dir, br#"{"network": {"denyDomains": ["10.0.0.1"]}}"#);
    let (_, c) = h.service_readiness("net");
    assert_denied(&c, &h.dir);
}
