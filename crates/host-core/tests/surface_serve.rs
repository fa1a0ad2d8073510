//! Serving installed app files through `surface::serve`: only verified bytes, only under the UI
//! root, only for enabled apps, with the app's CSP and the hardening headers on every response.

mod support;

use std::os::unix::fs::PermissionsExt;

use host_core::foundation::paths::DataDir;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::hosting::surface::serve::{serve, ServeContext};
use host_core::install::store::Store;
use support::{fixture, install};

fn ctx() -> ServeContext {
    ServeContext {
        style: OriginStyle::Scheme,
        frame_ancestors: vec!["tauri://localhost".into()],
    }
}

#[test]
fn serves_verified_ui_files_with_csp_and_refuses_everything_else() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &fixture("good/hello-app"));
    let store = Store::open(&dir).unwrap();
    let html = std::fs::read(fixture("good/hello-app/dist/ui/index.html")).unwrap();

    for path in ["/", "/index.html", "/%69ndex.html"] {
        let r = serve(&store, &ctx(), "hello-app", path);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.body, html);
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
        let csp = r.header("content-security-policy").unwrap();
        assert!(csp.starts_with("default-src 'none'"), "{csp}");
        assert!(csp.contains("script-src agentapp://hello-app;"), "{csp}");
        assert!(csp.contains("frame-ancestors tauri://localhost"), "{csp}");
    }
    // Files outside the UI root exist in the store but are never served.
    for (path, reason) in [
        ("/../APP.md", "serve.bad_path"),
        ("/%2e%2e/APP.md", "serve.bad_path"),
        ("/..%2fAPP.md", "serve.bad_path"),
        ("/APP.md", "serve.not_found"),
        ("/storage/schema.json", "serve.not_found"),
        ("/missing.js", "serve.not_found"),
    ] {
        let r = serve(&store, &ctx(), "hello-app", path);
        assert_eq!(r.refusal.as_ref().map(|x| x.reason), Some(reason), "{path}");
        assert_ne!(r.status, 200);
        assert!(r.header("content-security-policy").is_some());
    }
    let r = serve(&store, &ctx(), "other-app", "/index.html");
    assert_eq!(r.status, 404);
    assert_eq!(r.refusal.unwrap().reason, "serve.unknown_app");
}

#[test]
fn a_tampered_file_is_refused_and_a_disabled_app_serves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &fixture("good/hello-app"));
    // Flip one byte of index.html inside its pack.
    let pack = std::fs::read_dir(dir.packs())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&pack).unwrap();
    let html = std::fs::read(fixture("good/hello-app/dist/ui/index.html")).unwrap();
    let at = bytes
        .windows(html.len())
        .position(|w| w == html.as_slice())
        .unwrap();
    bytes[at + 3] ^= 1;
    std::fs::set_permissions(&pack, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(&pack, &bytes).unwrap();
    let store = Store::open(&dir).unwrap();
    let r = serve(&store, &ctx(), "hello-app", "/index.html");
    assert_eq!(r.status, 403);
    assert_eq!(r.refusal.unwrap().reason, "serve.tampered");
    assert!(!r.body.windows(5).any(|w| w == b"<html"));

    let (locked, _) = Store::open_locked(&dir).unwrap();
    locked.set_enabled("hello-app", false).unwrap();
    drop(locked);
    let store = Store::open(&dir).unwrap();
    let r = serve(&store, &ctx(), "hello-app", "/index.html");
    assert_eq!(r.status, 403);
    assert_eq!(r.refusal.unwrap().reason, "serve.app_disabled");
}
