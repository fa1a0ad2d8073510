//! The host's update check (center/host_update.rs, docs/shipping.md "Updates"): a feed is read
//! only after its minisign signature verifies with the built-in key; a tampered, wrong-key,
//! older, oversized, endless or slow feed is refused with a stable code and gives no notice.
//!
//! Fixtures (`fixtures/update-feed/`): `update-key.pub` (a test release key, Tauri's base64
//! form), `newer.json` (9.0.0) and `older.json` (0.0.1) with their `.sig` made by
//! `tauri signer sign` with that key, and `newer.json.other-key.sig` made with another key.
//! Served by a loopback HTTP server started per test.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use host_core::center::host_update::{self, UpdateKey, UpdateState, FEED_LIMIT};
use host_core::ErrorCode;

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/update-feed")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

fn key() -> UpdateKey {
    UpdateKey::parse(std::str::from_utf8(&fixture("update-key.pub")).unwrap()).unwrap()
}

fn v(s: &str) -> semver::Version {
    semver::Version::parse(s).unwrap()
}

fn check(
    feed: &[u8],
    sig: &[u8],
    current: &str,
) -> Result<Option<host_update::UpdateNotice>, ErrorCode> {
    host_update::check_feed(feed, sig, &key(), &v(current), "linux-x86_64-deb").map_err(|e| e.code)
}

#[test]
fn a_signed_newer_feed_gives_a_notice() {
    let notice = check(&fixture("newer.json"), &fixture("newer.json.sig"), "0.1.0")
        .unwrap()
        .expect("a notice");
    assert_eq!(notice.version, "9.0.0");
    assert_eq!(notice.url, "https://apphost.invalid/download");
    assert!(notice.notes.contains("newer"));
    // The same feed on the version it names: up to date.
    assert_eq!(
        check(&fixture("newer.json"), &fixture("newer.json.sig"), "9.0.0"),
        Ok(None)
    );
}

#[test]
fn a_tampered_feed_is_refused() {
    let feed = fixture("newer.json");
    let text = String::from_utf8(feed.clone()).unwrap();
    // The version, the link, or one byte of whitespace: the signature covers the exact bytes.
    for changed in [
        text.replace("9.0.0", "9.0.1"),
        text.replace(
            "https://apphost.invalid/download",
            "https://evil.invalid/download",
        ),
        format!("{text} "),
    ] {
        assert_eq!(
            check(changed.as_bytes(), &fixture("newer.json.sig"), "0.1.0"),
            Err(ErrorCode::UpdateBadSignature)
        );
    }
    // A signature that is not one, or an empty one.
    for sig in [&b"garbage"[..], b"", &[0xff, 0xfe][..]] {
        assert_eq!(
            check(&feed, sig, "0.1.0"),
            Err(ErrorCode::UpdateBadSignature)
        );
    }
    // Another file's valid signature.
    assert_eq!(
        check(&feed, &fixture("older.json.sig"), "0.1.0"),
        Err(ErrorCode::UpdateBadSignature)
    );
}

#[test]
fn a_feed_signed_with_another_key_is_refused() {
    assert_eq!(
        check(
            &fixture("newer.json"),
            &fixture("newer.json.other-key.sig"),
            "0.1.0"
        ),
        Err(ErrorCode::UpdateWrongKey)
    );
}

#[test]
fn an_older_signed_feed_is_a_refused_downgrade() {
    assert_eq!(
        check(&fixture("older.json"), &fixture("older.json.sig"), "0.1.0"),
        Err(ErrorCode::UpdateDowngrade)
    );
}

#[test]
fn an_oversized_feed_is_refused_before_any_parsing() {
    let mut big = fixture("newer.json");
    big.resize(FEED_LIMIT + 1, b' ');
    assert_eq!(
        check(&big, &fixture("newer.json.sig"), "0.1.0"),
        Err(ErrorCode::UpdateBadFeed)
    );
}

#[test]
fn a_key_that_is_not_one_is_refused() {
    for text in ["", "not a key", "dW50cnVzdGVkIGNvbW1lbnQ6IG5vdGhpbmcK"] {
        assert_eq!(
            UpdateKey::parse(text).err().map(|e| e.code),
            Some(ErrorCode::UpdateBadSignature),
            "{text:?}"
        );
    }
}

/// A loopback server answering `GET /latest.json` and `GET /latest.json.sig` with `routes`
/// (path → (status, body, delay)); counts requests.
fn serve(routes: Vec<(&'static str, u16, Vec<u8>, Duration)>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/latest.json", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            counter.fetch_add(1, Ordering::SeqCst);
            let routes = routes.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let n = stream.read(&mut buf).unwrap_or(0);
                let request = String::from_utf8_lossy(&buf[..n]);
                let path = request.split_whitespace().nth(1).unwrap_or("");
                let Some((_, status, body, delay)) = routes.iter().find(|r| r.0 == path) else {
                    let _ =
                        stream.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
                    return;
                };
                std::thread::sleep(*delay);
                let head = format!(
                    "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(body);
            });
        }
    });
    (url, hits)
}

fn status_from(url: &str, timeout: Duration) -> host_update::UpdateStatus {
    let key = String::from_utf8(fixture("update-key.pub")).unwrap();
    host_update::status(
        Some(&key),
        Some(url.to_owned()),
        "0.1.0",
        "linux-x86_64-deb",
        timeout,
    )
}

const NOW: Duration = Duration::ZERO;

#[test]
fn over_http_a_signed_feed_is_a_notice_and_each_attack_a_refusal() {
    let newer = fixture("newer.json");
    let mut tampered = newer.clone();
    let at = tampered.iter().position(|b| *b == b'9').unwrap();
    tampered[at] = b'8';
    let cases: Vec<(Vec<u8>, Vec<u8>, Option<&str>)> = vec![
        (newer.clone(), fixture("newer.json.sig"), None),
        (
            tampered,
            fixture("newer.json.sig"),
            Some("update.bad_signature"),
        ),
        (
            newer.clone(),
            fixture("newer.json.other-key.sig"),
            Some("update.wrong_key"),
        ),
        (
            fixture("older.json"),
            fixture("older.json.sig"),
            Some("update.downgrade"),
        ),
    ];
    for (feed, sig, refused) in cases {
        let (url, _) = serve(vec![
            ("/latest.json", 200, feed, NOW),
            ("/latest.json.sig", 200, sig, NOW),
        ]);
        let status = status_from(&url, Duration::from_secs(10));
        match refused {
            None => {
                assert_eq!(status.state, UpdateState::Available);
                assert_eq!(status.notice.unwrap().version, "9.0.0");
            }
            Some(code) => {
                assert_eq!(status.state, UpdateState::Failed);
                assert!(status.notice.is_none());
                assert_eq!(status.error.unwrap().code, code);
            }
        }
    }
}

#[test]
fn a_missing_signature_endless_or_slow_feed_is_refused() {
    // No signature file: the feed alone is never believed.
    let (url, _) = serve(vec![("/latest.json", 200, fixture("newer.json"), NOW)]);
    let s = status_from(&url, Duration::from_secs(10));
    assert_eq!(s.error.unwrap().code, "update.unreachable");
    assert!(s.notice.is_none());

    // Endless data: refused once past the limit (the server claims a large length).
    let (url, _) = serve(vec![
        ("/latest.json", 200, vec![b' '; 4 * FEED_LIMIT], NOW),
        ("/latest.json.sig", 200, fixture("newer.json.sig"), NOW),
    ]);
    assert_eq!(
        status_from(&url, Duration::from_secs(10))
            .error
            .unwrap()
            .code,
        "update.bad_feed"
    );

    // Slow: no answer within the time allowed.
    let (url, _) = serve(vec![
        (
            "/latest.json",
            200,
            fixture("newer.json"),
            Duration::from_secs(5),
        ),
        ("/latest.json.sig", 200, fixture("newer.json.sig"), NOW),
    ]);
    let started = std::time::Instant::now();
    let s = status_from(&url, Duration::from_millis(300));
    assert_eq!(s.error.unwrap().code, "update.unreachable");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    // HTTP errors.
    let (url, _) = serve(vec![("/latest.json", 500, b"oops".to_vec(), NOW)]);
    assert_eq!(
        status_from(&url, Duration::from_secs(10))
            .error
            .unwrap()
            .code,
        "update.unreachable"
    );
}

#[test]
fn only_https_or_loopback_http_is_fetched_and_no_key_means_no_check() {
    let (url, hits) = serve(vec![]);
    let plain = url.replace("127.0.0.1", "example.invalid");
    let s = status_from(&plain, Duration::from_secs(5));
    assert_eq!(s.error.unwrap().code, "update.unreachable");
    for bad in ["file:///etc/passwd", "ftp://127.0.0.1/x", "not a url"] {
        assert_eq!(
            status_from(bad, Duration::from_secs(5)).error.unwrap().code,
            "update.unreachable"
        );
    }
    // A build without a key (or without a URL) checks nothing: no request is made.
    let s = host_update::status(
        None,
        Some(url.clone()),
        "0.1.0",
        "linux-x86_64-deb",
        Duration::from_secs(5),
    );
    assert_eq!(s.state, UpdateState::Disabled);
    let key = String::from_utf8(fixture("update-key.pub")).unwrap();
    let s = host_update::status(
        Some(&key),
        None,
        "0.1.0",
        "linux-x86_64-deb",
        Duration::from_secs(5),
    );
    assert_eq!(s.state, UpdateState::Disabled);
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}
