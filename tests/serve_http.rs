//! `apphost serve` end to end over real sockets: the one-time launch token and the session it
//! hands out (the cookie for documents, the secret header for the API; attacks on them:
//! `tests/serve_attacks.rs`), the `Host` check (DNS rebinding), the `Origin` check on `/api/`, app origins without
//! API or cookie, traversal, bounded bodies, the bridge through HTTP, and a clean SIGTERM.
//!
//! Requests are written by hand (a raw HTTP/1.1 client) so every header an attacker controls can
//! be set exactly.

mod common;
mod serve_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use serve_support::{executions, start};

/// A GET as an API client: `Accept: application/json`.
fn get_json(s: &serve_support::Served, path: &str) -> serve_support::Reply {
    s.raw(
        &format!(
            "GET {path} HTTP/1.1\nHost: {}\nAccept: application/json\n",
            s.ui()
        ),
        b"",
    )
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
    // A wrong token signs nobody in and does not burn the right one (an API client asking
    // for JSON gets the JSON error).
    let r = get_json(&s, &format!("/?token={}", "0".repeat(64)));
    assert_eq!((r.status, r.code().as_str()), (401, "api.unauthorized"));
    assert!(r.header("set-cookie").is_none());
    let login = s.sign_in();
    // Reusing the token (a leaked URL, a second browser) is refused: a browser gets a page
    // saying how to get a fresh link, an API client the JSON error.
    let r = s.get(&s.ui(), &format!("/?token={}", s.token), None);
    assert_eq!(r.status, 401);
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    let page = String::from_utf8_lossy(&r.body);
    assert!(
        page.contains("already used")
            && page.contains("start it again")
            && !page.contains(&s.token),
        "{page}"
    );
    assert_eq!(
        r.header("content-security-policy"),
        Some("default-src 'none'; frame-ancestors 'none'")
    );
    assert!(r.header("set-cookie").is_none());
    let r = get_json(&s, &format!("/?token={}", s.token));
    assert_eq!((r.status, r.code().as_str()), (401, "api.unauthorized"));
    assert!(r.header("set-cookie").is_none());
    let r = s.raw(
        &format!(
            "GET /?token={} HTTP/1.1\nHost: {}\nX-AppHost-Session: {}\n",
            s.token,
            s.ui(),
            login.secret
        ),
        b"",
    );
    assert_eq!((r.status, r.code().as_str()), (401, "api.unauthorized"));
    // Still signed in once: the used link never signed anyone else in.
    assert!(s.get(&s.ui(), "/", None).status == 401);
    // With the cookie: the UI and the API.
    let r = s.get(&s.ui(), "/", Some(&login.cookie));
    assert_eq!(r.status, 200);
    assert!(String::from_utf8_lossy(&r.body).contains("main.js"));
    let csp = r.header("content-security-policy").unwrap();
    assert!(
        csp.contains("frame-ancestors 'none'")
            && csp.contains(&format!("frame-src http://*.localhost:{}", s.port)),
        "{csp}"
    );
    let apps = s.ok(&login, "list_apps", json!({}));
    assert_eq!(apps[0]["name"], "hello-app");
    // A forged secret of the right shape is not a session.
    let forged = serve_support::Login {
        secret: "a".repeat(64),
        ..login.clone()
    };
    let r = s.api(&forged, "list_apps", json!({}));
    assert_eq!((r.status, r.code().as_str()), (401, "api.unauthorized"));
    // A forged cookie of the right shape does not open the UI.
    let forged = format!(
        "{}={}",
        login.cookie.split('=').next().unwrap(),
        "a".repeat(64)
    );
    assert_eq!(s.get(&s.ui(), "/", Some(&forged)).status, 401);
    // Deep links get the UI with a base so its relative links resolve.
    let r = s.get(&s.ui(), "/apps/hello-app/notes", Some(&login.cookie));
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
        let r = s.get(&s.ui(), path, Some(&login.cookie));
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
    let login = s.sign_in();
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
            Some(&login.headers()),
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
        let r = s.get(&host, "/", Some(&login.cookie));
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
            Some(&login.headers()),
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
    // An app origin asking for the API (with or without a session it should never have).
    for (auth, cookie) in [
        (None, None),
        (Some(login.headers()), Some(login.cookie.as_str())),
    ] {
        let r = s.post(
            &app,
            Some(&format!("http://{app}")),
            auth.as_deref(),
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
    let r = s.get(&s.ui(), "/api/list_apps", Some(&login.cookie));
    assert_eq!((r.status, r.code().as_str()), (405, "api.bad_request"));
    for ctype in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let r = s.post(
            &s.ui(),
            Some(&s.origin()),
            Some(&login.headers()),
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
    let d = s.ok(&login, "bridge_diagnostics", json!({}));
    assert_eq!(
        (d["mounts"].as_u64(), d["executions"].as_u64()),
        (Some(0), Some(0)),
        "{d}"
    );
}

#[test]
fn bodies_are_bounded_and_bad_calls_are_host_errors() {
    let s = start(&[]);
    let login = s.sign_in();
    // A declared length over the limit is refused before the body is read.
    let head = format!(
        "POST /api/bridge_message HTTP/1.1\nHost: {}\nOrigin: {}\n{}Content-Type: application/json\nContent-Length: {}\n",
        s.ui(),
        s.origin(),
        login.headers(),
        64 * 1024 * 1024
    );
    let r = s.raw(&head, b"");
    assert_eq!((r.status, r.code().as_str()), (413, "api.body_too_large"));
    // A chunked body that grows past the limit is cut off too.
    let head = format!(
        "POST /api/bridge_message HTTP/1.1\nHost: {}\nOrigin: {}\n{}Content-Type: application/json\nTransfer-Encoding: chunked\n",
        s.ui(),
        s.origin(),
        login.headers()
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
    let r = s.api(&login, "drop_everything", json!({}));
    assert_eq!((r.status, r.code().as_str()), (400, "api.unknown_command"));
    let r = s.post(
        &s.ui(),
        Some(&s.origin()),
        Some(&login.headers()),
        "/api/list_apps",
        "application/json",
        b"{not json",
    );
    assert_eq!((r.status, r.code().as_str()), (400, "api.bad_arguments"));
    let r = s.api(&login, "mount_entry", json!({"appId": 1}));
    assert_eq!((r.status, r.code().as_str()), (400, "api.bad_arguments"));
    let r = s.api(
        &login,
        "mount_entry",
        json!({"appId": "nope", "entryKey": "x"}),
    );
    assert_eq!((r.status, r.code().as_str()), (404, "app.not_installed"));
    // Uploads take a zip body only.
    let r = s.post(
        &s.ui(),
        Some(&s.origin()),
        Some(&login.headers()),
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
        Some(&login.headers()),
        "/api/upload_package",
        "application/json",
        b"{}",
    );
    assert_eq!(r.status, 415);
}

#[test]
fn an_app_runs_on_its_own_origin_through_the_same_bridge() {
    let s = start(&["fixtures/packages/good/hello-app"]);
    let login = s.sign_in();
    let app = s.app_host("hello-app");
    let mount = s.ok(
        &login,
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
        &login,
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
        &login,
        "bridge_message",
        json!({"mountId": mid, "origin": origin, "data": set}),
    );
    assert_eq!(executions(&s, &login), 1);
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
            &login,
            "bridge_message",
            json!({"mountId": mid, "origin": spoof, "data": set}),
        );
    }
    assert_eq!(executions(&s, &login), 1);
    let get = msg(
        "capability:invoke",
        "r3",
        json!({"capability": "lime.storage", "method": "get", "args": {"key": "k"}}),
    );
    let out = s.ok(
        &login,
        "bridge_message",
        json!({"mountId": mid, "origin": origin, "data": get}),
    );
    assert_eq!(out[0]["message"]["payload"]["value"], "v");
    // Links: checked in Rust, opened by the page.
    let r = s.ok(
        &login,
        "open_external",
        json!({"url": "https://example.com/x"}),
    );
    assert_eq!(r, json!({"url": "https://example.com/x"}));
    let r = s.api(
        &login,
        "open_external",
        json!({"url": "javascript:alert(1)"}),
    );
    assert_eq!(r.code(), "external.invalid_url");
    // The outbox answers over HTTP too.
    let events = s.ok(&login, "next_events", json!({"after": 0, "timeoutMs": 0}));
    assert!(events["next"].as_u64().is_some(), "{events}");
}

/// SIGTERM right after the URL line (as a test harness does) is a clean stop, not a kill:
/// the handler is installed before the URL is printed.
#[test]
fn sigterm_right_after_the_url_is_a_clean_exit() {
    for _ in 0..5 {
        let mut s = start(&[]);
        let status = std::process::Command::new("kill")
            .args(["-TERM", &s.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let exit = s.child.wait().unwrap();
        assert!(
            exit.success(),
            "{exit:?}: killed by the signal instead of stopping"
        );
    }
}

#[test]
fn sigterm_stops_the_server_cleanly() {
    let mut s = start(&[]);
    // Serve one request first, then stop.
    assert_eq!(s.get(&s.ui(), "/", None).status, 401);
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
}
