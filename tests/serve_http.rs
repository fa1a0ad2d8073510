//! `apphost serve` end to end over real sockets: the one-time launch token and the session
//! cookie, the `Host` check (DNS rebinding), the `Origin` check on `/api/`, app origins without
//! API or cookie, traversal, bounded bodies, the bridge through HTTP, and a clean SIGTERM.
//!
//! Requests are written by hand (a raw HTTP/1.1 client) so every header an attacker controls can
//! be set exactly.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{apphost_in, describe};
use serde_json::{json, Value};

struct Served {
    child: Child,
    _tmp: tempfile::TempDir,
    port: u16,
    token: String,
    stderr: PathBuf,
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "{} not JSON ({e}): {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }
    fn code(&self) -> String {
        self.json()["code"].as_str().unwrap_or_default().to_owned()
    }
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn start(install: &[&str]) -> Served {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    for pkg in install {
        let out = apphost_in(tmp.path(), &data)
            .args(["install", "--yes", "--sideload"])
            .arg(repo().join(pkg))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", describe(&out));
    }
    let stderr = tmp.path().join("serve.stderr");
    let mut child = apphost_in(tmp.path(), &data)
        .arg("serve")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let first: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    assert_eq!(first["pid"], child.id(), "{first}");
    let port = u16::try_from(first["port"].as_u64().unwrap()).unwrap();
    let url = first["url"].as_str().unwrap();
    let prefix = format!("http://127.0.0.1:{port}/?token=");
    let token = url
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{url}"))
        .to_owned();
    assert_eq!(token.len(), 64);
    Served {
        child,
        _tmp: tmp,
        port,
        token,
        stderr,
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    fn ui(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
    fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
    fn app_host(&self, label: &str) -> String {
        format!("{label}.localhost:{}", self.port)
    }

    /// Sends one request (raw head lines + body) and reads the whole answer.
    fn raw(&self, head: &str, body: &[u8]) -> Reply {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut req = head.replace('\n', "\r\n");
        req.push_str("Connection: close\r\n\r\n");
        s.write_all(req.as_bytes()).unwrap();
        let _ = s.write_all(body);
        let mut bytes = Vec::new();
        let _ = s.read_to_end(&mut bytes);
        parse(&bytes)
    }

    fn get(&self, host: &str, path: &str, cookie: Option<&str>) -> Reply {
        let mut head = format!("GET {path} HTTP/1.1\nHost: {host}\n");
        if let Some(c) = cookie {
            head.push_str(&format!("Cookie: {c}\n"));
        }
        self.raw(&head, b"")
    }

    fn post(
        &self,
        host: &str,
        origin: Option<&str>,
        cookie: Option<&str>,
        path: &str,
        ctype: &str,
        body: &[u8],
    ) -> Reply {
        let mut head = format!(
            "POST {path} HTTP/1.1\nHost: {host}\nContent-Type: {ctype}\nContent-Length: {}\n",
            body.len()
        );
        if let Some(o) = origin {
            head.push_str(&format!("Origin: {o}\n"));
        }
        if let Some(c) = cookie {
            head.push_str(&format!("Cookie: {c}\n"));
        }
        self.raw(&head, body)
    }

    /// Signs in with the launch token; returns the `Cookie` header value.
    fn sign_in(&self) -> String {
        let r = self.get(&self.ui(), &format!("/?token={}", self.token), None);
        assert_eq!(r.status, 303, "{}", String::from_utf8_lossy(&r.body));
        let set = r.header("set-cookie").unwrap().to_owned();
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict"),
            "{set}"
        );
        assert!(
            !set.to_ascii_lowercase().contains("domain="),
            "host-only cookie: {set}"
        );
        set.split(';').next().unwrap().to_owned()
    }

    /// A host API call as the host UI makes it.
    fn api(&self, cookie: &str, command: &str, args: Value) -> Reply {
        self.post(
            &self.ui(),
            Some(&self.origin()),
            Some(cookie),
            &format!("/api/{command}"),
            "application/json",
            args.to_string().as_bytes(),
        )
    }

    fn ok(&self, cookie: &str, command: &str, args: Value) -> Value {
        let r = self.api(cookie, command, args);
        assert_eq!(
            r.status,
            200,
            "{command}: {}",
            String::from_utf8_lossy(&r.body)
        );
        r.json()
    }
}

fn parse(bytes: &[u8]) -> Reply {
    let split = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no head in {:?}", String::from_utf8_lossy(bytes)));
    let head = std::str::from_utf8(&bytes[..split]).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Reply {
        status,
        headers,
        body: bytes[split + 4..].to_vec(),
    }
}

fn executions(s: &Served, cookie: &str) -> u64 {
    s.ok(cookie, "bridge_diagnostics", json!({}))["executions"]
        .as_u64()
        .unwrap()
}

#[test]
fn the_launch_token_works_once_and_everything_else_needs_the_cookie() {
    let s = start(&["fixtures/packages/good/hello-app"]);
    // No cookie: neither the UI nor the API.
    let r = s.get(&s.ui(), "/", None);
    assert_eq!(r.status, 401);
    assert!(!String::from_utf8_lossy(&r.body).contains("main.js"));
    let r = s.post(
        &s.ui(),
        Some(&s.origin()),
        None,
        "/api/list_apps",
        "application/json",
        b"{}",
    );
    assert_eq!((r.status, r.code().as_str()), (401, "api.unauthorized"));
    // A wrong token signs nobody in and does not burn the right one.
    let r = s.get(&s.ui(), &format!("/?token={}", "0".repeat(64)), None);
    assert_eq!((r.status, r.code().as_str()), (401, "api.unauthorized"));
    assert!(r.header("set-cookie").is_none());
    let cookie = s.sign_in();
    // Reusing the token (a leaked URL, a second browser) is refused.
    let r = s.get(&s.ui(), &format!("/?token={}", s.token), None);
    assert_eq!((r.status, r.code().as_str()), (401, "api.unauthorized"));
    assert!(r.header("set-cookie").is_none());
    // With the cookie: the UI and the API.
    let r = s.get(&s.ui(), "/", Some(&cookie));
    assert_eq!(r.status, 200);
    assert!(String::from_utf8_lossy(&r.body).contains("main.js"));
    let csp = r.header("content-security-policy").unwrap();
    assert!(
        csp.contains("frame-ancestors 'none'")
            && csp.contains(&format!("frame-src http://*.localhost:{}", s.port)),
        "{csp}"
    );
    let apps = s.ok(&cookie, "list_apps", json!({}));
    assert_eq!(apps[0]["name"], "hello-app");
    // A forged cookie of the right shape is not a session.
    let forged = format!("{}={}", cookie.split('=').next().unwrap(), "a".repeat(64));
    let r = s.api(&forged, "list_apps", json!({}));
    assert_eq!((r.status, r.code().as_str()), (401, "api.unauthorized"));
    // Deep links get the UI with a base so its relative links resolve.
    let r = s.get(&s.ui(), "/apps/hello-app/notes", Some(&cookie));
    assert_eq!(r.status, 200);
    assert!(String::from_utf8_lossy(&r.body).contains("<base href=\"/\" />"));
    // Only embedded files: no traversal out of the UI.
    for path in [
        "/../Cargo.toml",
        "/%2e%2e/Cargo.toml",
        "/..%2fCargo.toml",
        "/etc/passwd",
        "/nope.js",
    ] {
        let r = s.get(&s.ui(), path, Some(&cookie));
        assert!(matches!(r.status, 400 | 404), "{path}: {}", r.status);
        assert!(
            !String::from_utf8_lossy(&r.body).contains("[package]"),
            "{path}"
        );
    }
}

#[test]
fn foreign_hosts_foreign_origins_and_app_origins_get_no_api() {
    let s = start(&["fixtures/packages/good/hello-app"]);
    let cookie = s.sign_in();
    let app = s.app_host("hello-app");
    let body = json!({"appId": "hello-app", "entryKey": "notes"}).to_string();
    // DNS rebinding: the right socket, the wrong name (even with a valid cookie and origin).
    for host in [
        "evil.example".to_owned(),
        format!("evil.example:{}", s.port),
        format!("localhost:{}", s.port),
        format!("127.0.0.1:{}", s.port + 1),
        format!("hello-app.localhost.evil.example:{}", s.port),
    ] {
        let r = s.post(
            &host,
            Some(&s.origin()),
            Some(&cookie),
            "/api/mount_entry",
            "application/json",
            body.as_bytes(),
        );
        assert_eq!(
            (r.status, r.code().as_str()),
            (403, "api.forbidden"),
            "{host}"
        );
        assert_eq!(r.json()["details"]["reason"], "host");
        let r = s.get(&host, "/", Some(&cookie));
        assert_eq!(r.status, 403, "{host}");
    }
    let r = s.raw("GET / HTTP/1.0\n", b"");
    assert_eq!(r.status, 403, "no Host header at all");
    // Cross-origin calls: other sites, app origins, sandboxed (opaque) frames, none at all.
    for origin in [
        Some("http://evil.example".to_owned()),
        Some(format!("http://{app}")),
        Some("null".to_owned()),
        Some(format!("http://localhost:{}", s.port)),
        None,
    ] {
        let r = s.post(
            &s.ui(),
            origin.as_deref(),
            Some(&cookie),
            "/api/mount_entry",
            "application/json",
            body.as_bytes(),
        );
        assert_eq!(
            (r.status, r.code().as_str()),
            (403, "api.forbidden"),
            "{origin:?}"
        );
        assert_eq!(r.json()["details"]["reason"], "origin");
    }
    // An app origin asking for the API (with or without a cookie it should never have).
    for cookie in [None, Some(cookie.as_str())] {
        let r = s.post(
            &app,
            Some(&format!("http://{app}")),
            cookie,
            "/api/mount_entry",
            "application/json",
            body.as_bytes(),
        );
        assert_eq!(r.status, 405, "app origins only GET");
        let r = s.get(&app, "/api/list_apps", cookie);
        assert_eq!((r.status, r.code().as_str()), (403, "api.forbidden"));
        assert_eq!(r.json()["details"]["reason"], "app-origin");
    }
    // Wrong method and content type (a form post cannot reach the API).
    let r = s.get(&s.ui(), "/api/list_apps", Some(&cookie));
    assert_eq!((r.status, r.code().as_str()), (405, "api.bad_request"));
    for ctype in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let r = s.post(
            &s.ui(),
            Some(&s.origin()),
            Some(&cookie),
            "/api/mount_entry",
            ctype,
            body.as_bytes(),
        );
        assert_eq!(
            (r.status, r.code().as_str()),
            (415, "api.bad_request"),
            "{ctype}"
        );
    }
    // Nothing above mounted anything or ran a capability.
    let d = s.ok(&cookie, "bridge_diagnostics", json!({}));
    assert_eq!(
        (d["mounts"].as_u64(), d["executions"].as_u64()),
        (Some(0), Some(0)),
        "{d}"
    );
}

#[test]
fn bodies_are_bounded_and_bad_calls_are_host_errors() {
    let s = start(&[]);
    let cookie = s.sign_in();
    // A declared length over the limit is refused before the body is read.
    let head = format!(
        "POST /api/bridge_message HTTP/1.1\nHost: {}\nOrigin: {}\nCookie: {cookie}\nContent-Type: application/json\nContent-Length: {}\n",
        s.ui(),
        s.origin(),
        64 * 1024 * 1024
    );
    let r = s.raw(&head, b"");
    assert_eq!((r.status, r.code().as_str()), (413, "api.body_too_large"));
    // A chunked body that grows past the limit is cut off too.
    let head = format!(
        "POST /api/bridge_message HTTP/1.1\nHost: {}\nOrigin: {}\nCookie: {cookie}\nContent-Type: application/json\nTransfer-Encoding: chunked\n",
        s.ui(),
        s.origin()
    );
    let chunk = vec![b' '; 1024 * 1024];
    let mut body = Vec::new();
    for _ in 0..5 {
        body.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        body.extend_from_slice(&chunk);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"0\r\n\r\n");
    let r = s.raw(&head, &body);
    assert_eq!((r.status, r.code().as_str()), (413, "api.body_too_large"));
    // Oversized request heads are refused by the HTTP layer.
    let head = format!(
        "GET / HTTP/1.1\nHost: {}\nX-Big: {}\n",
        s.ui(),
        "a".repeat(200 * 1024)
    );
    let mut stream = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let _ = stream.write_all(head.replace('\n', "\r\n").as_bytes());
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    assert!(
        answer.is_empty() || String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 431"),
        "{}",
        String::from_utf8_lossy(&answer[..answer.len().min(200)])
    );
    // Unknown commands, bad JSON, bad arguments: documented codes, 4xx.
    let r = s.api(&cookie, "drop_everything", json!({}));
    assert_eq!((r.status, r.code().as_str()), (400, "api.unknown_command"));
    let r = s.post(
        &s.ui(),
        Some(&s.origin()),
        Some(&cookie),
        "/api/list_apps",
        "application/json",
        b"{not json",
    );
    assert_eq!((r.status, r.code().as_str()), (400, "api.bad_arguments"));
    let r = s.api(&cookie, "mount_entry", json!({"appId": 1}));
    assert_eq!((r.status, r.code().as_str()), (400, "api.bad_arguments"));
    let r = s.api(
        &cookie,
        "mount_entry",
        json!({"appId": "nope", "entryKey": "x"}),
    );
    assert_eq!((r.status, r.code().as_str()), (404, "app.not_installed"));
    // Uploads take a zip body only.
    let r = s.post(
        &s.ui(),
        Some(&s.origin()),
        Some(&cookie),
        "/api/upload_package",
        "application/zip",
        b"PK\x03\x04",
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["bytes"], 4);
    assert!(r.json()["uploadId"].as_str().unwrap().starts_with("u-"));
    let r = s.post(
        &s.ui(),
        Some(&s.origin()),
        Some(&cookie),
        "/api/upload_package",
        "application/json",
        b"{}",
    );
    assert_eq!(r.status, 415);
}

#[test]
fn an_app_runs_on_its_own_origin_through_the_same_bridge() {
    let s = start(&["fixtures/packages/good/hello-app"]);
    let cookie = s.sign_in();
    let app = s.app_host("hello-app");
    let mount = s.ok(
        &cookie,
        "mount_entry",
        json!({"appId": "hello-app", "entryKey": "notes"}),
    );
    let origin = mount["origin"].as_str().unwrap().to_owned();
    assert_eq!(origin, format!("http://{app}"));
    let url = mount["url"].as_str().unwrap();
    let path = url.strip_prefix(&origin).unwrap_or_else(|| panic!("{url}"));
    // The app's files: the CSP lets only the host UI frame them, and no cookie is ever set.
    let r = s.get(&app, path, None);
    assert_eq!(r.status, 200, "{url}");
    let csp = r.header("content-security-policy").unwrap();
    assert!(
        csp.contains(&format!("frame-ancestors {}", s.origin())),
        "{csp}"
    );
    assert!(r.header("set-cookie").is_none());
    // Traversal out of the app's UI root, and other apps' labels.
    for bad in [
        "/../../../../etc/passwd",
        "/%2e%2e/%2e%2e/APP.md",
        "/ui/..%2f..%2fAPP.md",
    ] {
        let r = s.get(&app, bad, None);
        assert!(r.status >= 400, "{bad}: {}", r.status);
        assert!(!String::from_utf8_lossy(&r.body).contains("root:"), "{bad}");
    }
    assert_eq!(s.get(&s.app_host("not-installed"), "/", None).status, 404);
    // The launch token on an app origin is not an exchange.
    let r = s.get(&app, &format!("/?token={}", s.token), None);
    assert!(r.header("set-cookie").is_none());

    // Handshake and a storage round trip relayed over HTTP.
    let mid = mount["mountId"].as_str().unwrap();
    let msg = |kind: &str, id: &str, payload: Value| {
        json!({"protocol": "lime.agentApp.bridge", "version": 1, "type": kind, "requestId": id,
               "appId": "hello-app", "entryKey": "notes", "payload": payload})
        .to_string()
    };
    let out = s.ok(
        &cookie,
        "bridge_message",
        json!({"mountId": mid, "origin": origin, "data": msg("app:ready", "r0", json!({}))}),
    );
    assert_eq!(out[0]["message"]["type"], "host:snapshot");
    assert_eq!(out[0]["message"]["payload"]["origin"], origin);
    let set = msg(
        "capability:invoke",
        "r1",
        json!({"capability": "lime.storage", "method": "set", "args": {"key": "k", "value": "v"}}),
    );
    s.ok(
        &cookie,
        "bridge_message",
        json!({"mountId": mid, "origin": origin, "data": set}),
    );
    assert_eq!(executions(&s, &cookie), 1);
    // The same call relayed with a spoofed origin runs nothing.
    for spoof in [
        format!("http://127.0.0.1:{}", s.port),
        "null".into(),
        format!("http://other.localhost:{}", s.port),
    ] {
        let set = msg(
            "capability:invoke",
            "r2",
            json!({"capability": "lime.storage", "method": "set", "args": {"key": "k", "value": "x"}}),
        );
        s.ok(
            &cookie,
            "bridge_message",
            json!({"mountId": mid, "origin": spoof, "data": set}),
        );
    }
    assert_eq!(executions(&s, &cookie), 1);
    let get = msg(
        "capability:invoke",
        "r3",
        json!({"capability": "lime.storage", "method": "get", "args": {"key": "k"}}),
    );
    let out = s.ok(
        &cookie,
        "bridge_message",
        json!({"mountId": mid, "origin": origin, "data": get}),
    );
    assert_eq!(out[0]["message"]["payload"]["value"], "v");
    // Links: checked in Rust, opened by the page.
    let r = s.ok(
        &cookie,
        "open_external",
        json!({"url": "https://example.com/x"}),
    );
    assert_eq!(r, json!({"url": "https://example.com/x"}));
    let r = s.api(
        &cookie,
        "open_external",
        json!({"url": "javascript:alert(1)"}),
    );
    assert_eq!(r.code(), "external.invalid_url");
    // The outbox answers over HTTP too.
    let events = s.ok(&cookie, "next_events", json!({"after": 0, "timeoutMs": 0}));
    assert!(events["next"].as_u64().is_some(), "{events}");
}

#[test]
fn sigterm_stops_the_server_cleanly() {
    let mut s = start(&[]);
    let started = Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &s.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = loop {
        if let Some(exit) = s.child.try_wait().unwrap() {
            break exit;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "still running after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(exit.success(), "{exit:?}");
    let stderr = std::fs::read_to_string(&s.stderr).unwrap();
    assert!(stderr.contains("stopped"), "{stderr}");
    assert!(
        TcpStream::connect(("127.0.0.1", s.port)).is_err(),
        "the port is closed"
    );
    let _ = Path::new("");
}
