//! The dev console's host side (`api/dev_console.rs`, `hosting/surface/dev_console.rs`): a dev
//! install's pages load the host's dev-console script and its frame's reports become one
//! `dev:diagnostic` event each, as do the calls the bridge refused it; a non-dev app's frame
//! cannot use the channel (refused `dev_console.not_dev`, nothing announced, pages served byte
//! for byte); reports are rate-limited per mount and cut to a bounded size.

mod support;

use host_core::api::{self, LinkOpener, Session, SessionConfig};
use host_core::center::dev::DevSession;
use host_core::foundation::paths::DataDir;
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::surface::dev_console::SCRIPT_PATH;
use host_core::hosting::surface::origin::{app_host_label, OriginStyle};
use host_core::hosting::surface::serve::ServeContext;
use serde_json::{json, Value};
use support::{copy_dir, fixture, install};

fn session(dir: DataDir) -> Session {
    Session::new(
        dir,
        SessionConfig {
            serve: ServeContext {
                style: OriginStyle::Scheme,
                frame_ancestors: vec!["tauri://localhost".into()],
            },
            links: LinkOpener::Page,
            launch: None,
        },
    )
}

/// hello-app installed by `apphost dev` (dev: true) or by `apphost install` (dev: false).
fn setup(dev: bool) -> (tempfile::TempDir, Session) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    if dev {
        let folder = tmp.path().join("app");
        copy_dir(&fixture("good/hello-app"), &folder);
        let mut s = DevSession::new(dir.clone(), &folder).unwrap();
        s.apply(&mut |_| false).unwrap();
    } else {
        install(&dir, &fixture("good/hello-app"));
    }
    (tmp, session(dir))
}

fn call(s: &Session, command: &str, args: Value) -> Value {
    api::call(s, command, args).unwrap_or_else(|e| panic!("{command}: {e:?}"))
}

/// (mountId, origin) of hello-app's notes page.
fn mount(s: &Session) -> (String, String) {
    let m = call(
        s,
        "mount_entry",
        json!({"appId": "hello-app", "entryKey": "notes"}),
    );
    (
        m["mountId"].as_str().unwrap().to_owned(),
        m["origin"].as_str().unwrap().to_owned(),
    )
}

fn report(s: &Session, mount: &(String, String), data: Value) -> Value {
    call(
        s,
        "dev_diagnostic",
        json!({"mountId": mount.0, "origin": mount.1, "data": data.to_string()}),
    )
}

fn dev_events(s: &Session) -> Vec<Value> {
    let batch = call(s, "next_events", json!({"after": 0, "timeoutMs": 0}));
    batch["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "dev:diagnostic")
        .map(|e| e["payload"].clone())
        .collect()
}

fn csp_report() -> Value {
    json!({"apphostDevConsole": 1, "kind": "csp", "directive": "script-src-elem",
           "blockedUri": "inline", "message": "window.x = 1", "source": "agentapp://hello-app/index.html",
           "line": 7, "column": 5})
}

fn invoke(id: &str, capability: &str, method: &str) -> String {
    json!({"protocol": PROTOCOL, "version": 1, "type": "capability:invoke", "requestId": id,
           "appId": "hello-app", "entryKey": "notes",
           "payload": {"capability": capability, "method": method, "args": {"slot": "x"}}})
    .to_string()
}

fn ready(s: &Session, m: &(String, String)) {
    let hello = json!({"protocol": PROTOCOL, "version": 1, "type": "app:ready", "requestId": "r0",
                       "appId": "hello-app", "entryKey": "notes", "payload": {}});
    call(
        s,
        "bridge_message",
        json!({"mountId": m.0, "origin": m.1, "data": hello.to_string()}),
    );
}

#[test]
fn a_dev_installs_report_is_one_event_with_its_file_and_line() {
    let (_t, s) = setup(true);
    let m = mount(&s);
    assert_eq!(
        report(&s, &m, csp_report()),
        json!({"accepted": true, "refused": null})
    );
    let events = dev_events(&s);
    assert_eq!(events.len(), 1, "{events:?}");
    let e = &events[0];
    assert_eq!(e["kind"], "csp");
    assert_eq!(e["appId"], "hello-app");
    assert_eq!(e["mountId"], m.0.as_str());
    assert_eq!(
        e["text"],
        "the CSP blocked inline (script-src-elem) (window.x = 1)"
    );
    assert_eq!(e["source"], "agentapp://hello-app/index.html");
    assert_eq!(e["line"], 7);
    assert_eq!(e["column"], 5);
}

#[test]
fn a_call_the_bridge_refused_a_dev_install_is_announced() {
    let (_t, s) = setup(true);
    let m = mount(&s);
    ready(&s, &m);
    let out = call(
        &s,
        "bridge_message",
        json!({"mountId": m.0, "origin": m.1, "data": invoke("c1", "lime.secrets", "getRef")}),
    );
    assert_eq!(out[0]["message"]["type"], "host:error", "{out}");
    let events = dev_events(&s);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["kind"], "refused-call");
    let text = events[0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("refused call lime.secrets.getRef: APP_E002 [capability.not_declared]: "),
        "{text}"
    );
}

#[test]
fn a_dev_installs_pages_load_the_dev_console_script() {
    let (_t, s) = setup(true);
    let label = app_host_label("hello-app");
    let page = s.serve(&label, "/index.html").unwrap();
    assert_eq!(page.status, 200);
    let html = String::from_utf8(page.body).unwrap();
    assert!(
        html.contains(&format!("<script src=\"/{SCRIPT_PATH}\"></script>")),
        "{html}"
    );
    let script = s.serve(&label, &format!("/{SCRIPT_PATH}")).unwrap();
    assert_eq!(script.status, 200);
    assert!(String::from_utf8(script.body)
        .unwrap()
        .contains("securitypolicyviolation"));
}

/// The attack: an installed (non-dev) app's frame posts dev console reports, and has a call
/// refused. Nothing is announced, nothing is printed for it, and its pages are served as they
/// are in the package (no script, no script path).
#[test]
fn a_non_dev_app_cannot_use_the_channel() {
    let (_t, s) = setup(false);
    let m = mount(&s);
    let a = report(&s, &m, csp_report());
    assert_eq!(
        a,
        json!({"accepted": false, "refused": "dev_console.not_dev"})
    );
    ready(&s, &m);
    let out = call(
        &s,
        "bridge_message",
        json!({"mountId": m.0, "origin": m.1, "data": invoke("c1", "lime.secrets", "getRef")}),
    );
    assert_eq!(out[0]["message"]["type"], "host:error");
    assert!(dev_events(&s).is_empty());

    let label = app_host_label("hello-app");
    let page = s.serve(&label, "/index.html").unwrap();
    let packaged = std::fs::read(fixture("good/hello-app/dist/ui/index.html")).unwrap();
    assert_eq!(page.body, packaged, "served byte for byte");
    let script = s.serve(&label, &format!("/{SCRIPT_PATH}")).unwrap();
    assert_eq!(script.status, 404);
}

#[test]
fn wrong_origin_unknown_mount_and_bad_reports_are_refused_and_announce_nothing() {
    let (_t, s) = setup(true);
    let m = mount(&s);
    let wrong = (m.0.clone(), "agentapp://other-app".to_owned());
    assert_eq!(
        report(&s, &wrong, csp_report())["refused"],
        "dev_console.wrong_origin"
    );
    let unknown = ("m-nope".to_owned(), m.1.clone());
    assert_eq!(
        report(&s, &unknown, csp_report())["refused"],
        "dev_console.unknown_mount"
    );
    for bad in [
        json!({"apphostDevConsole": 1, "kind": "navigate", "message": "x"}),
        json!({"apphostDevConsole": 1}),
        json!(["not", "an", "object"]),
    ] {
        assert_eq!(report(&s, &m, bad)["refused"], "dev_console.bad_report");
    }
    let a = call(
        &s,
        "dev_diagnostic",
        json!({"mountId": m.0, "origin": m.1, "data": "{not json"}),
    );
    assert_eq!(a["refused"], "dev_console.bad_report");
    let huge = "x".repeat(api::dev_console::MAX_DATA + 1);
    let a = call(
        &s,
        "dev_diagnostic",
        json!({"mountId": m.0, "origin": m.1, "data": huge}),
    );
    assert_eq!(a["refused"], "dev_console.too_large");
    assert!(dev_events(&s).is_empty());
}

/// The attack: a frame floods reports. A burst passes, the rest is refused as rate limited and
/// announces nothing.
#[test]
fn a_flood_is_rate_limited() {
    let (_t, s) = setup(true);
    let m = mount(&s);
    let mut accepted = 0;
    let mut limited = 0;
    for i in 0..500 {
        let a = report(
            &s,
            &m,
            json!({"apphostDevConsole": 1, "kind": "error", "message": format!("flood {i}")}),
        );
        if a["accepted"] == true {
            accepted += 1;
        } else {
            assert_eq!(a["refused"], "dev_console.rate_limited");
            limited += 1;
        }
    }
    assert!(
        accepted <= api::dev_console::BURST as usize + 2,
        "{accepted} passed"
    );
    assert!(limited >= 400, "{limited} limited");
    assert_eq!(dev_events(&s).len(), accepted);
}

/// The attack: a 1 MB message. It is cut to a bounded line, control characters made spaces.
#[test]
fn a_one_megabyte_message_is_cut() {
    let (_t, s) = setup(true);
    let m = mount(&s);
    let message = format!("\u{1b}[2J{}", "A".repeat(1024 * 1024));
    let a = report(
        &s,
        &m,
        json!({"apphostDevConsole": 1, "kind": "error", "message": message, "source": "s".repeat(5000)}),
    );
    assert_eq!(a["accepted"], true);
    let events = dev_events(&s);
    let text = events[0]["text"].as_str().unwrap();
    assert!(
        text.chars().count() <= 400,
        "{} chars",
        text.chars().count()
    );
    assert!(text.ends_with('…'));
    assert!(!text.contains('\u{1b}'));
    assert!(events[0]["source"].as_str().unwrap().chars().count() <= 301);
}

/// A dev frame that never completes the handshake gets one `never-connected` line after
/// `CONNECT_WITHIN`; a frame that connected gets none, nor does an installed app's frame.
#[test]
fn a_dev_frame_that_never_connects_is_said_once() {
    for dev in [true, false] {
        let (_t, s) = setup(dev);
        let silent = mount(&s);
        let talking = mount(&s);
        ready(&s, &talking);
        call(&s, "next_events", json!({"after": 0, "timeoutMs": 0}));
        std::thread::sleep(
            api::dev_console::CONNECT_WITHIN + std::time::Duration::from_millis(200),
        );
        call(&s, "next_events", json!({"after": 0, "timeoutMs": 0}));
        call(&s, "next_events", json!({"after": 0, "timeoutMs": 0}));
        let events = dev_events(&s);
        if !dev {
            assert!(events.is_empty(), "{events:?}");
            continue;
        }
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0]["kind"], "never-connected");
        assert_eq!(events[0]["mountId"], silent.0.as_str());
        assert!(events[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("the app never connected (no handshake within 5 s)"));
    }
}
