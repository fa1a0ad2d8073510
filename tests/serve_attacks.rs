//! `apphost serve` against the attack review's cases, over real sockets:
//!
//! - the session cookie reaches every port of 127.0.0.1 (browsers ignore ports), so a stolen
//!   cookie, even replayed with a forged `Origin`, must not reach the host API: API calls need the
//!   per-session secret (`X-AppHost-Session`) that only the launch answer's document carries;
//! - a page on another loopback port can plant cookies of the same name: junk or duplicates beside
//!   the valid one change nothing, and a lost cookie is set again by the next API answer;
//! - hundreds of half-sent request heads held open do not keep real requests waiting, a head has
//!   a deadline, and heads over 64 KiB are answered 431 and closed.

mod common;
mod serve_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;
use serve_support::{session_meta, start, Login, Reply, Served};

fn model(s: &Served, login: &Login) -> serde_json::Value {
    s.ok(login, "model_settings", json!({}))
}

/// `set_model` pointing at an attacker's server, with these auth header lines and `Origin`.
fn point_model_at_attacker(s: &Served, origin: &str, auth: &str) -> Reply {
    s.post(
        &s.ui(),
        Some(origin),
        Some(auth),
        "/api/set_model",
        "application/json",
        json!({"baseUrl": "http://127.0.0.1:1/v1", "model": "attacker"})
            .to_string()
            .as_bytes(),
    )
}

#[test]
fn a_stolen_cookie_without_the_session_secret_reaches_no_api() {
    let s = start(&[]);
    let login = s.sign_in();
    let before = model(&s, &login);
    // What a server on another loopback port receives from the browser: the cookie. Replayed
    // with the host UI's Origin forged, or with its own.
    let stolen = login.cookie_only();
    let r = point_model_at_attacker(&s, &s.origin(), &stolen);
    assert_eq!((r.status, r.code().as_str()), (401, "api.unauthorized"));
    assert_eq!(r.json()["details"]["reason"], "session");
    let other_port = format!("http://127.0.0.1:{}", s.port.wrapping_add(1).max(1));
    let r = point_model_at_attacker(&s, &other_port, &stolen);
    assert_eq!((r.status, r.code().as_str()), (403, "api.forbidden"));
    // A wrong, empty, doubled or misplaced secret is no better.
    for auth in [
        format!("{stolen}X-AppHost-Session: {}\n", "0".repeat(64)),
        format!("{stolen}X-AppHost-Session: \n"),
        format!(
            "{stolen}X-AppHost-Session: {}\nX-AppHost-Session: {}\n",
            "0".repeat(64),
            login.secret
        ),
        format!(
            "Cookie: {}; X-AppHost-Session={}\n",
            login.cookie, login.secret
        ),
        format!("{stolen}Authorization: Bearer {}\n", login.secret),
    ] {
        let r = point_model_at_attacker(&s, &s.origin(), &auth);
        assert_eq!(
            (r.status, r.code().as_str()),
            (401, "api.unauthorized"),
            "{auth}"
        );
    }
    let r = s.post(
        &s.ui(),
        Some(&s.origin()),
        Some(&stolen),
        &format!("/api/list_apps?session={}", login.secret),
        "application/json",
        b"{}",
    );
    assert_eq!(r.status, 401, "the secret in the URL is not a session");
    // Nothing changed: the model is where it was.
    assert_eq!(model(&s, &login), before);
    assert_ne!(before["model"], "attacker");
    // The secret is nowhere but in the launch answer: not in the documents the cookie opens,
    // not on an app origin (which also gets no exchange and no cookie).
    for path in ["/", "/index.html", "/apps/x/y"] {
        let r = s.get(&s.ui(), path, Some(&login.cookie));
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(session_meta(&r.body), None, "{path}");
        assert!(!String::from_utf8_lossy(&r.body).contains(&login.secret));
        assert!(r.header("set-cookie").is_none());
    }
    let r = s.get(&s.app_host("x"), &format!("/?token={}", s.token), None);
    assert!(!String::from_utf8_lossy(&r.body).contains(&login.secret));
    assert!(r.header("set-cookie").is_none());
    // The launch answer itself is never cached and cannot be framed.
    let fresh = start(&[]);
    let r = fresh.get(
        &fresh.ui(),
        &format!("/apps/a/b?token={}", fresh.token),
        None,
    );
    assert_eq!(r.status, 200);
    assert!(session_meta(&r.body).is_some());
    assert!(String::from_utf8_lossy(&r.body).contains("<base href=\"/\" />"));
    assert_eq!(r.header("cache-control"), Some("no-store"));
    assert!(r
        .header("content-security-policy")
        .unwrap()
        .contains("frame-ancestors 'none'"));
    // A HEAD does not spend the token (it could not carry the secret).
    let fresh = start(&[]);
    let r = fresh.raw(
        &format!(
            "HEAD /?token={} HTTP/1.1\nHost: {}\n",
            fresh.token,
            fresh.ui()
        ),
        b"",
    );
    assert_eq!(r.status, 405);
    fresh.sign_in();
}

#[test]
fn junk_and_duplicate_cookies_beside_the_valid_one_change_nothing() {
    let s = start(&["fixtures/packages/good/hello-app"]);
    let login = s.sign_in();
    let name = login.cookie.split('=').next().unwrap().to_owned();
    let secret = format!("X-AppHost-Session: {}\n", login.secret);
    // What a browser sends after a page on another port set `<name>=junk; path=/api` (longer
    // paths first), or a second junk one at `/`; also two Cookie header lines.
    for cookies in [
        format!("Cookie: {name}=junk; {}\n", login.cookie),
        format!("Cookie: {}; {name}=junk\n", login.cookie),
        format!("Cookie: {name}=; {name}=junk; {}; {name}\n", login.cookie),
        format!("Cookie: {name}=junk\nCookie: {}\n", login.cookie),
    ] {
        let r = s.post(
            &s.ui(),
            Some(&s.origin()),
            Some(&format!("{cookies}{secret}")),
            "/api/list_apps",
            "application/json",
            b"{}",
        );
        assert_eq!(r.status, 200, "{cookies}");
        assert_eq!(r.json()[0]["name"], "hello-app");
        assert!(
            r.header("set-cookie").is_none(),
            "the valid cookie is there"
        );
        let head = format!("GET / HTTP/1.1\nHost: {}\n{cookies}", s.ui());
        assert_eq!(s.raw(&head, b"").status, 200, "the UI opens: {cookies}");
    }
    // The cookie overwritten (another port's server sent `Set-Cookie: <name>=junk; Path=/`):
    // the API still answers the secret, and its answer sets the cookie again.
    let r = s.post(
        &s.ui(),
        Some(&s.origin()),
        Some(&format!("Cookie: {name}=junk\n{secret}")),
        "/api/list_apps",
        "application/json",
        b"{}",
    );
    assert_eq!(r.status, 200);
    let set = r.header("set-cookie").expect("the cookie is set again");
    assert_eq!(set.split(';').next(), Some(login.cookie.as_str()));
    // Junk alone opens no document: the "not signed in" page, whose script (public, like all
    // UI code) lets a tab that holds the secret get the cookie back.
    let r = s.get(&s.ui(), "/", Some(&format!("{name}=junk")));
    assert_eq!(r.status, 401);
    assert!(String::from_utf8_lossy(&r.body).contains("/session-restore.js"));
    assert!(!String::from_utf8_lossy(&r.body).contains("main.js"));
    let r = s.get(&s.ui(), "/session-restore.js", None);
    assert_eq!(r.status, 200);
    assert!(String::from_utf8_lossy(&r.body).contains("/session/cookie"));
    let restore = |origin: &str, auth: &str| {
        s.post(
            &s.ui(),
            Some(origin),
            Some(auth),
            "/session/cookie",
            "text/plain",
            b"",
        )
    };
    let r = restore(&s.origin(), &format!("Cookie: {name}=junk\n"));
    assert_eq!((r.status, r.code().as_str()), (401, "api.unauthorized"));
    assert!(r.header("set-cookie").is_none());
    let r = restore(&format!("http://127.0.0.1:{}", s.port + 1), &secret);
    assert_eq!((r.status, r.code().as_str()), (403, "api.forbidden"));
    assert!(r.header("set-cookie").is_none());
    let r = restore(&s.origin(), &format!("Cookie: {name}=junk\n{secret}"));
    assert_eq!(r.status, 204);
    assert_eq!(
        r.header("set-cookie").unwrap().split(';').next(),
        Some(login.cookie.as_str())
    );
    let r = s.get(&s.ui(), "/session/cookie", Some(&login.cookie));
    assert_eq!(r.status, 405);
}

/// Opens `n` connections that each send half a request head and then nothing.
fn half_sent_heads(s: &Served, n: usize) -> Vec<TcpStream> {
    (0..n)
        .filter_map(|_| {
            let mut c = TcpStream::connect(("127.0.0.1", s.port)).ok()?;
            let _ = c.write_all(
                format!("GET / HTTP/1.1\r\nHost: {}\r\nX-Slow: aaaa", s.ui()).as_bytes(),
            );
            Some(c)
        })
        .collect()
}

/// Whether the server closed `c` (EOF or reset) within `wait`.
fn closed(c: &mut TcpStream, wait: Duration) -> bool {
    c.set_read_timeout(Some(wait)).unwrap();
    let mut buf = [0u8; 256];
    loop {
        match c.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return false,
            Err(_) => return true,
        }
    }
}

#[test]
fn four_hundred_half_sent_heads_do_not_keep_real_requests_waiting() {
    let s = start(&["fixtures/packages/good/hello-app"]);
    let login = s.sign_in();
    // Real requests (the UI, the API) complete promptly while more and more half-sent heads
    // are held open (before the fix: once 256 were held, a request waited for one of them to
    // time out, ~10 s, and new connections were not even accepted).
    let mut slow = Vec::new();
    for round in 0..8 {
        let opened = Instant::now();
        slow.extend(half_sent_heads(&s, if round < 4 { 100 } else { 40 }));
        let opening = opened.elapsed();
        let started = Instant::now();
        assert_eq!(s.get(&s.ui(), "/", Some(&login.cookie)).status, 200);
        let apps = s.ok(&login, "list_apps", json!({}));
        assert_eq!(apps[0]["name"], "hello-app");
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(3) && opening < Duration::from_secs(5),
            "with {} half-sent heads: opening took {opening:?}, real requests {took:?}",
            slow.len()
        );
    }
    assert_eq!(slow.len(), 560);
    // The server holds at most its cap of them: the oldest were closed to make room.
    let dropped = slow
        .iter_mut()
        .take(400)
        .map(|c| closed(c, Duration::from_millis(20)))
        .filter(|&was_closed| was_closed)
        .count();
    assert!(
        dropped >= 350,
        "only {dropped} of the oldest 400 were closed"
    );
}

#[test]
fn a_request_head_has_a_deadline() {
    let s = start(&[]);
    let mut slow = half_sent_heads(&s, 1);
    let started = Instant::now();
    assert!(
        closed(&mut slow[0], Duration::from_secs(20)),
        "a half-sent head is closed"
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(8) && took < Duration::from_secs(15),
        "closed after {took:?} (deadline 10 s)"
    );
}

/// Sends `head` (already CRLF-terminated or not) and reads until the server closes.
fn send_head(s: &Served, head: &[u8]) -> Vec<u8> {
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = c.write_all(head);
    let mut answer = Vec::new();
    let _ = c.read_to_end(&mut answer);
    answer
}

#[test]
fn heads_over_64_kib_are_refused_with_431_and_closed() {
    let s = start(&[]);
    let login = s.sign_in();
    let head = |value_len: usize, end: bool| {
        let mut h = format!(
            "GET / HTTP/1.1\r\nHost: {}\r\nCookie: {}\r\nX-Big: {}\r\n",
            s.ui(),
            login.cookie,
            "a".repeat(value_len)
        );
        if end {
            h.push_str("Connection: close\r\n\r\n");
        }
        h.into_bytes()
    };
    // A 100,000-byte header, complete: 431, and the connection is closed (read_to_end ended).
    let answer = send_head(&s, &head(100_000, true));
    let text = String::from_utf8_lossy(&answer[..answer.len().min(100)]);
    assert!(text.starts_with("HTTP/1.1 431"), "{text}");
    // Just over the limit, complete.
    let answer = send_head(&s, &head(64 * 1024, true));
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 431"));
    // An oversized head that never ends: 431 and closed, not held.
    let started = Instant::now();
    let answer = send_head(&s, &head(70 * 1024, false));
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 431"));
    assert!(started.elapsed() < Duration::from_secs(5));
    // A large head under the limit is still served.
    let answer = send_head(&s, &head(60 * 1024, true));
    let text = String::from_utf8_lossy(&answer[..answer.len().min(100)]);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
}
