//! `server-assisted` remote services (issue 24 §1, docs/services.md "Remote services"): a
//! `cloud-remote` / `remote-http` service is blocked unless the app declares `server-assisted`
//! with endpoint, auth and data boundary AND the user allowed it; once allowed, a frame's
//! `lime.services.call` is an HTTPS (here: debug-only loopback http) JSON-RPC POST the host
//! makes, with the auth secret the app never sees, audited `service.remote_call`. A redirect to
//! another origin, an oversized or slow body, a wrong content type each end in a stable code.

mod services_support;
mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use host_core::foundation::error::ErrorCode;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::app_secrets;
use host_core::hosting::capability::services::{service_host, Effect, Services};
use host_core::hosting::services::remote::policy;
use host_core::hosting::services::ServiceId;
use host_core::install::readiness::{Outcome, Status};
use host_core::install::secrets::SecretValue;
use host_core::install::store::{DataMode, Store};
use serde_json::{json, Value};
use services_support::{app_with_services_block, secret_env, Host};
use support::copy_dir;

const CANARY: &str = "tok-CANARY-91b2e7-never-shown-to-apps";

/// One request the server received.
#[derive(Debug, Clone)]
struct Seen {
    head: String,
    body: Value,
}

/// A loopback JSON-RPC server whose answer depends on the called method.
struct Server {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
}

fn read_request(c: &mut TcpStream) -> Option<Seen> {
    let mut r = BufReader::new(c.try_clone().ok()?);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let len = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    Some(Seen {
        head,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

fn respond(c: &mut TcpStream, status: &str, ctype: &str, body: &[u8]) {
    let _ = write!(
        c,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = c.write_all(body);
}

fn handle(mut c: TcpStream, seen: &Mutex<Vec<Seen>>, other: Option<SocketAddr>) {
    let Some(req) = read_request(&mut c) else {
        return;
    };
    seen.lock().unwrap().push(req.clone());
    let id = req.body["id"].clone();
    let ok = |result: Value| {
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": result})).unwrap()
    };
    match req.body["method"].as_str().unwrap_or("") {
        "echo" => respond(
            &mut c,
            "200 OK",
            "application/json; charset=utf-8",
            &ok(json!({"echo": req.body["params"]})),
        ),
        "redirect" => {
            let to = other.map(|a| format!("http://{a}/rpc")).unwrap_or_default();
            let _ = write!(c, "HTTP/1.1 307 Temporary Redirect\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
        "big" => respond(&mut c, "200 OK", "application/json", &vec![b' '; 2 << 20]),
        "big-stream" => {
            // No length announced: the cap must hold while streaming.
            let _ = write!(
                c,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
            );
            let chunk = vec![b' '; 64 << 10];
            for _ in 0..64 {
                if c.write_all(&chunk).is_err() {
                    return;
                }
            }
        }
        "slow" => {
            let _ = write!(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n");
            for _ in 0..200 {
                if c.write_all(b" ").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        "html" => respond(&mut c, "200 OK", "text/html", b"<p>hi</p>"),
        "fail" => respond(
            &mut c,
            "500 Internal Server Error",
            "application/json",
            b"{}",
        ),
        "wrong-id" => respond(
            &mut c,
            "200 OK",
            "application/json",
            br#"{"jsonrpc":"2.0","id":999999999,"result":1}"#,
        ),
        "rpc-error" => respond(
            &mut c,
            "200 OK",
            "application/json",
            &serde_json::to_vec(
                &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": "quota"}}),
            )
            .unwrap(),
        ),
        _ => respond(&mut c, "404 Not Found", "application/json", b"{}"),
    }
}

impl Server {
    fn start(other: Option<SocketAddr>) -> Server {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let s = seen.clone();
        std::thread::spawn(move || {
            for c in l.incoming().flatten() {
                let s = s.clone();
                std::thread::spawn(move || handle(c, &s, other));
            }
        });
        Server { addr, seen }
    }

    fn hits(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

/// doc-parser renamed `name`, its service replaced by a remote one at `endpoint`.
fn remote_app(tmp: &Path, name: &str, endpoint: &str, server_assisted: bool) -> PathBuf {
    let service = format!(
        "secrets:\n  - key: api_token\n    required: true\nservices:\n  - key: summarize\n    kind: app-backend\n    language: python\n    executionPlane: cloud-remote\n    protocol: remote-http\n    endpoint: \"{endpoint}\"\n    auth: {{kind: bearer, secret: api_token}}\n    dataBoundary: \"The text you send goes to the author's server and is not kept.\"\n    required: true\n    resourceLimits:\n      timeoutMs: 800\n"
    );
    app_with_services_block(tmp, name, &service, server_assisted)
}

/// A data dir with `pkg` installed (no sandbox shim needed: nothing runs locally).
fn host_with(pkg: &Path) -> Host {
    secret_env();
    Host::installed(&[pkg.to_path_buf()])
}

fn id(app: &str) -> ServiceId {
    ServiceId {
        app: app.into(),
        key: "summarize".into(),
    }
}

/// A call through the service host (the CLI's and workflows' path; a frame's needs a ready app).
fn host_call(h: &Host, app: &str, method: &str) -> Result<Value, &'static str> {
    service_host(&h.store)
        .call(&h.store, &id(app), method, json!({"text": "hello"}))
        .map_err(|f| f.code)
}

fn service_check(h: &Host, app: &str) -> host_core::install::readiness::Check {
    services_support::app_service_check(&h.store, app)
}

fn audit_of(h: &Host, app: &str, action: &str) -> Vec<Value> {
    h.audit(app)
        .into_iter()
        .filter(|a| a["action"] == action)
        .collect()
}

/// Binds the secret and allows the service: the app is ready.
fn set_up(h: &Host, app: &str) {
    let (locked, _) = Store::open_locked(&h.dir).unwrap();
    app_secrets::set(&locked, app, "api_token", &SecretValue::new(CANARY.into())).unwrap();
    let (origin, new) = policy::allow(&locked, app, "summarize").unwrap();
    assert!(new);
    assert!(origin.starts_with("http://127.0.0.1:"), "{origin}");
    assert!(!policy::allow(&locked, app, "summarize").unwrap().1);
    assert_eq!(
        h.store
            .readiness(app, &HostProfile::current())
            .unwrap()
            .status,
        Status::Ready
    );
}

#[test]
fn without_server_assisted_a_remote_service_is_blocked_and_cannot_be_allowed() {
    let server = Server::start(None);
    let tmp = tempfile::tempdir().unwrap();
    let endpoint = format!("http://{}/rpc", server.addr);
    let h = host_with(&remote_app(tmp.path(), "undeclared", &endpoint, false));
    let c = service_check(&h, "undeclared");
    assert_eq!(c.outcome, Outcome::Blocked);
    assert_eq!(c.code, Some("service.remote_not_allowed"));
    assert!(c.message.contains("server-assisted"), "{}", c.message);
    assert_eq!(
        host_call(&h, "undeclared", "echo"),
        Err("service.remote_not_allowed")
    );
    let (locked, _) = Store::open_locked(&h.dir).unwrap();
    let before = std::fs::read(h.dir.db_path()).unwrap();
    let e = policy::allow(&locked, "undeclared", "summarize").unwrap_err();
    assert_eq!(e.code, ErrorCode::ServiceCannotRun);
    assert_eq!(e.details["cause"], "service.remote_not_allowed");
    assert!(locked.remote_allowances("undeclared").unwrap().is_empty());
    assert_eq!(std::fs::read(h.dir.db_path()).unwrap(), before);
    assert_eq!(server.hits(), 0, "nothing reached the server");
}

#[test]
fn declared_but_not_allowed_is_blocked_with_the_reason_and_a_setup_action() {
    let server = Server::start(None);
    let tmp = tempfile::tempdir().unwrap();
    let endpoint = format!("http://{}/rpc", server.addr);
    let h = host_with(&remote_app(tmp.path(), "remote", &endpoint, true));
    {
        let (locked, _) = Store::open_locked(&h.dir).unwrap();
        app_secrets::set(
            &locked,
            "remote",
            "api_token",
            &SecretValue::new(CANARY.into()),
        )
        .unwrap();
    }
    let r = h
        .store
        .readiness("remote", &HostProfile::current())
        .unwrap();
    assert_eq!(r.status, Status::Blocked);
    let c = service_check(&h, "remote");
    assert_eq!(c.code, Some("service.remote_not_allowed"));
    assert!(
        c.message.contains("not kept"),
        "the data boundary: {}",
        c.message
    );
    assert_eq!(
        c.setup_action.as_ref().and_then(|a| a.target.as_deref()),
        Some("apphost services allow-remote remote summarize")
    );
    assert_eq!(
        host_call(&h, "remote", "echo"),
        Err("service.remote_not_allowed")
    );
    let list = service_host(&h.store).list(&h.store, "remote").unwrap();
    assert_eq!(list[0].state, "blocked");
    assert_eq!(list[0].code.as_deref(), Some("service.remote_not_allowed"));
    let info = list[0].remote.as_ref().unwrap();
    assert!(!info.allowed);
    assert_eq!(info.auth, "bearer");
    assert_eq!(info.secret.as_deref(), Some("api_token"));
    assert!(info.data_boundary.contains("not kept"));
    assert_eq!(server.hits(), 0, "nothing reached the server");
    assert!(audit_of(&h, "remote", "service.remote_call").is_empty());
}

#[test]
fn an_allowed_call_works_sends_the_secret_and_is_audited_and_the_app_never_sees_it() {
    let server = Server::start(None);
    let tmp = tempfile::tempdir().unwrap();
    let endpoint = format!("http://{}/rpc", server.addr);
    let mut h = host_with(&remote_app(tmp.path(), "remote", &endpoint, true));
    set_up(&h, "remote");

    // A frame's call (synchronous path), then the deferred path the window uses.
    let v = h
        .service(
            "remote",
            "parser",
            "summarize",
            "echo",
            json!({"text": "hello"}),
        )
        .unwrap();
    assert_eq!(v, json!({"echo": {"text": "hello"}}));
    h.services.defer_service_calls();
    let reply = h.frame_reply("remote", "echo", json!({"n": 2}));
    assert_eq!(reply, Ok(json!({"echo": {"n": 2}})));

    let seen = server.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    for s in &seen {
        let head = s.head.to_ascii_lowercase();
        assert!(head.starts_with("post /rpc http/1.1"), "{}", s.head);
        assert!(s.head.contains(&format!("Bearer {CANARY}")), "{}", s.head);
        assert!(
            head.contains("content-type: application/json"),
            "{}",
            s.head
        );
        assert!(!head.contains("cookie"), "{}", s.head);
        assert_eq!(s.body["jsonrpc"], "2.0");
        assert_eq!(s.body["method"], "echo");
    }

    // Audited: the allowance and each call, never the secret.
    assert_eq!(audit_of(&h, "remote", "service.remote_allow").len(), 1);
    let calls = audit_of(&h, "remote", "service.remote_call");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["details"]["ok"], true, "{:?}", calls[0]);
    assert_eq!(
        calls[0]["details"]["origin"],
        format!("http://{}", server.addr)
    );
    let all = serde_json::to_string(&h.audit("remote")).unwrap();
    assert!(!all.contains(CANARY));

    // The app's own views: its service list (endpoint, auth kind, slot name; no value), extra
    // call fields (headers, url) refused; nothing it gets back holds the secret.
    h.services = Services::new(h.dir.apps_data());
    let list = h
        .frame_call("remote", "parser", "lime.services", "list", json!({}))
        .unwrap();
    assert_eq!(list["services"][0]["state"], "remote");
    assert_eq!(list["services"][0]["remote"]["allowed"], true);
    assert!(!list.to_string().contains(CANARY));
    for extra in [
        json!({"headers": {"Authorization": "x"}}),
        json!({"url": "http://127.0.0.1:1/"}),
    ] {
        let mut args = json!({"service": "summarize", "method": "echo", "params": {}});
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let e = h
            .frame_call("remote", "parser", "lime.services", "call", args)
            .unwrap_err();
        assert!(!serde_json::to_string(&e).unwrap().contains(CANARY));
    }
    assert_eq!(server.hits(), 2, "refused calls reached nothing");
    let e = h
        .service("remote", "parser", "summarize", "rpc-error", json!({}))
        .unwrap_err();
    assert_eq!(e.cause_code, Some("service.error"));
    assert!(!serde_json::to_string(&e).unwrap().contains(CANARY));

    // Revoked: the next call is refused before anything is sent; uninstall drops the row.
    let (locked, _) = Store::open_locked(&h.dir).unwrap();
    assert!(policy::revoke(&locked, "remote", "summarize").unwrap());
    assert!(!policy::revoke(&locked, "remote", "summarize").unwrap());
    let hits = server.hits();
    assert_eq!(
        host_call(&h, "remote", "echo"),
        Err("service.remote_not_allowed")
    );
    assert_eq!(server.hits(), hits);
    policy::allow(&locked, "remote", "summarize").unwrap();
    locked
        .uninstall("remote", DataMode::DeleteData, None)
        .unwrap();
    assert!(locked.remote_allowances("remote").unwrap().is_empty());
}

#[test]
fn hostile_answers_end_in_stable_codes() {
    let other = Server::start(None);
    let server = Server::start(Some(other.addr));
    let tmp = tempfile::tempdir().unwrap();
    let endpoint = format!("http://{}/rpc", server.addr);
    let h = host_with(&remote_app(tmp.path(), "remote", &endpoint, true));
    set_up(&h, "remote");
    for (method, code) in [
        ("redirect", "service.remote_redirect"),
        ("big", "service.remote_too_large"),
        ("big-stream", "service.remote_too_large"),
        ("html", "service.remote_content_type"),
        ("fail", "service.http_status"),
        ("wrong-id", "service.protocol"),
        ("rpc-error", "service.error"),
    ] {
        assert_eq!(host_call(&h, "remote", method), Err(code), "{method}");
    }
    assert_eq!(other.hits(), 0, "the redirect's target was never contacted");

    // A body that trickles in: the whole exchange has one deadline (timeoutMs 800).
    let t = Instant::now();
    assert_eq!(host_call(&h, "remote", "slow"), Err("service.timeout"));
    let took = t.elapsed();
    assert!(took < Duration::from_secs(3), "{took:?}");
    eprintln!("slow body refused after {took:?}");

    // The CLI's error classes: a call that reached the server failed; audited with its code.
    let f = service_host(&h.store)
        .call(&h.store, &id("remote"), "redirect", json!({}))
        .unwrap_err();
    assert_eq!(f.host_error().code, ErrorCode::ServiceCallFailed);
    let rows = audit_of(&h, "remote", "service.remote_call");
    assert!(
        rows.iter()
            .any(|r| r["details"]["code"] == "service.remote_too_large"
                && r["details"]["ok"] == false)
    );
    assert!(!serde_json::to_string(&h.audit("remote"))
        .unwrap()
        .contains(CANARY));
}

#[test]
fn a_server_that_is_not_there_is_remote_unreachable() {
    let gone = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let endpoint = format!("http://{gone}/rpc");
    let h = host_with(&remote_app(tmp.path(), "remote", &endpoint, true));
    set_up(&h, "remote");
    assert_eq!(
        host_call(&h, "remote", "echo"),
        Err("service.remote_unreachable")
    );
}

#[test]
fn an_unbound_secret_refuses_the_call_before_anything_is_sent() {
    let server = Server::start(None);
    let tmp = tempfile::tempdir().unwrap();
    let endpoint = format!("http://{}/rpc", server.addr);
    let h = host_with(&remote_app(tmp.path(), "remote", &endpoint, true));
    let (locked, _) = Store::open_locked(&h.dir).unwrap();
    policy::allow(&locked, "remote", "summarize").unwrap();
    assert_eq!(
        host_call(&h, "remote", "echo"),
        Err("service.remote_secret_missing")
    );
    assert_eq!(server.hits(), 0);
}

trait FrameReply {
    fn frame_reply(&mut self, app: &str, method: &str, params: Value) -> Result<Value, String>;
    fn frame_work(
        &mut self,
        app: &str,
        method: &str,
        params: Value,
    ) -> Result<host_core::hosting::capability::services::ServiceWork, String>;
}

impl FrameReply for Host {
    /// A frame's call whose service work is deferred (the window's path): run the effect.
    fn frame_reply(&mut self, app: &str, method: &str, params: Value) -> Result<Value, String> {
        let work = self.frame_work(app, method, params)?;
        work.run().unwrap().map_err(|e| e.message)
    }

    /// The deferred work of a frame's call (what the bridge runs outside its lock and cancels
    /// on the frame's `capability:cancel`).
    fn frame_work(
        &mut self,
        app: &str,
        method: &str,
        params: Value,
    ) -> Result<host_core::hosting::capability::services::ServiceWork, String> {
        use host_core::hosting::capability::call::{Call, Caller};
        use host_core::hosting::capability::dispatch::{dispatch, SessionAnswers, Verdict};
        let active = self.store.active_app(app).unwrap();
        let caller = Caller {
            app_id: app.into(),
            entry_key: "parser".into(),
            version: active.version,
            session_id: "mount-test".into(),
            package_hash: active.package_hash,
            manifest_hash: active.manifest_hash,
        };
        let call = Call {
            request_id: "r2".into(),
            capability: "lime.services".into(),
            method: "call".into(),
            args: json!({"service": "summarize", "method": method, "params": params}),
            options: Default::default(),
        };
        let Verdict::Allowed(p) = dispatch(
            &self.store,
            &HostProfile::current(),
            &caller,
            &call,
            "trace_test",
            &mut SessionAnswers::default(),
        ) else {
            return Err("denied".into());
        };
        let reply = self
            .services
            .call_with(&self.store, &p, &call.args)
            .map_err(|e| e.message)?;
        match reply.effect {
            Some(Effect::CallService(work)) => Ok(work),
            other => Err(format!("no deferred work: {other:?}")),
        }
    }
}

#[test]
fn the_review_sheet_shows_where_data_goes_and_an_update_to_another_origin_asks_again() {
    secret_env();
    let server = Server::start(None);
    let moved = Server::start(None);
    let tmp = tempfile::tempdir().unwrap();
    let pkg = remote_app(
        tmp.path(),
        "remote",
        &format!("http://{}/rpc", server.addr),
        true,
    );

    // The review: endpoint, origin, auth kind, secret slot and the data boundary.
    let dir = DataDir::at(tmp.path().join("review-data"));
    Store::open_locked(&dir).unwrap();
    let review = host_core::center::Center::new(dir)
        .review_install(
            host_core::center::ReviewSource::Path(pkg.clone()),
            &mut |_, _| {},
        )
        .unwrap();
    let v = serde_json::to_value(&review).unwrap();
    let rs = &v["remoteServices"][0];
    assert_eq!(rs["key"], "summarize");
    assert_eq!(rs["origin"], format!("http://{}", server.addr));
    assert_eq!(rs["auth"], "bearer");
    assert_eq!(rs["secret"], "api_token");
    assert!(rs["dataBoundary"].as_str().unwrap().contains("not kept"));

    // Installed and allowed, then updated to an endpoint on another origin: refused until
    // the user allows the new origin; nothing reaches either server meanwhile.
    let h = host_with(&pkg);
    set_up(&h, "remote");
    assert!(host_call(&h, "remote", "echo").is_ok());
    let v2 = tmp.path().join("pkg-v2");
    copy_dir(&pkg, &v2);
    let md = std::fs::read_to_string(v2.join("APP.md"))
        .unwrap()
        .replace("version: 1.0.0", "version: 1.1.0")
        .replace(&server.addr.to_string(), &moved.addr.to_string());
    std::fs::write(v2.join("APP.md"), md).unwrap();
    support::install_with(&h.dir, &v2, host_core::install::store::InstallMode::Update);
    let c = service_check(&h, "remote");
    assert_eq!(c.code, Some("service.remote_not_allowed"));
    assert!(c.message.contains("it was allowed for"), "{}", c.message);
    let hits = server.hits();
    assert_eq!(
        host_call(&h, "remote", "echo"),
        Err("service.remote_not_allowed")
    );
    assert_eq!((server.hits(), moved.hits()), (hits, 0));
    let (locked, _) = Store::open_locked(&h.dir).unwrap();
    let (origin, changed) = policy::allow(&locked, "remote", "summarize").unwrap();
    assert!(changed);
    assert_eq!(origin, format!("http://{}", moved.addr));
    assert!(host_call(&h, "remote", "echo").is_ok());
    assert_eq!(moved.hits(), 1);
}

#[test]
fn a_loopback_remote_call_costs_little_and_each_is_its_own_connection() {
    let server = Server::start(None);
    let tmp = tempfile::tempdir().unwrap();
    let endpoint = format!("http://{}/rpc", server.addr);
    let h = host_with(&remote_app(tmp.path(), "remote", &endpoint, true));
    set_up(&h, "remote");
    let mut took: Vec<Duration> = (0..40)
        .map(|_| {
            let t = Instant::now();
            host_call(&h, "remote", "echo").unwrap();
            t.elapsed()
        })
        .collect();
    took.sort();
    let (p50, p95) = (took[20], took[38]);
    eprintln!("remote call over loopback (trust decision, secret read, POST, audit): p50 {p50:?}, p95 {p95:?}");
    assert!(p50 < Duration::from_secs(1), "{p50:?}");
    assert_eq!(server.hits(), 40);
}

/// A server that takes one request and never answers; it reports `request` once it has read
/// it and `closed` once the host closed the connection.
fn hanging_server() -> (SocketAddr, std::sync::mpsc::Receiver<&'static str>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for mut c in l.incoming().flatten() {
            let tx = tx.clone();
            std::thread::spawn(move || {
                if read_request(&mut c).is_none() {
                    return;
                }
                let _ = tx.send("request");
                let mut buf = [0u8; 64];
                loop {
                    match c.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                }
                let _ = tx.send("closed");
            });
        }
    });
    (addr, rx)
}

#[test]
fn a_frames_cancel_aborts_the_remote_request_and_drops_its_connection() {
    let (addr, events) = hanging_server();
    let tmp = tempfile::tempdir().unwrap();
    let pkg = remote_app(tmp.path(), "remote", &format!("http://{addr}/rpc"), true);
    let md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&md)
        .unwrap()
        .replace("timeoutMs: 800", "timeoutMs: 20000");
    std::fs::write(&md, text).unwrap();
    let mut h = host_with(&pkg);
    set_up(&h, "remote");
    h.services.defer_service_calls();
    let work = h.frame_work("remote", "hang", json!({})).unwrap();
    // What the bridge cancels on the frame's `capability:cancel` (bridge/host/service_calls.rs).
    let token = work.cancel_token();
    let started = Instant::now();
    let waiting = std::thread::spawn(move || work.run().unwrap());
    assert_eq!(
        events.recv_timeout(Duration::from_secs(10)),
        Ok("request"),
        "the request reached the server"
    );
    let cancelled_at = Instant::now();
    token.cancel();
    assert_eq!(
        events.recv_timeout(Duration::from_secs(5)),
        Ok("closed"),
        "the host dropped the connection"
    );
    let closed_after = cancelled_at.elapsed();
    let out = waiting.join().unwrap();
    let released_after = started.elapsed();
    eprintln!("remote cancel: connection closed {closed_after:?} after the cancel, caller released after {released_after:?} (timeout 20 s)");
    assert!(closed_after < Duration::from_secs(1), "{closed_after:?}");
    assert!(
        released_after < Duration::from_secs(5),
        "{released_after:?}"
    );
    let e = out.unwrap_err();
    assert_eq!(e.cause_code, Some("service.cancelled"), "{e:?}");
    assert_eq!(
        e.code,
        host_core::hosting::capability::code::ErrorCode::Cancelled
    );
    let calls = audit_of(&h, "remote", "service.remote_call");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["details"]["code"], "service.cancelled");
    assert_eq!(calls[0]["details"]["ok"], false);
}
