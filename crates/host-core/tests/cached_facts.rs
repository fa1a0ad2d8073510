//! The caches on the hot paths (`capability::facts::FactsCache` for capability calls,
//! `surface::serve::CachedServer` for app files) reuse store facts only while the store is
//! unchanged: a grant, revoke, disable, uninstall or tampered file takes effect on the very next
//! call or request, whichever connection or process made the change.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::host::{BridgeHost, Outgoing};
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::bridge::mounting::mount_entry;
use host_core::hosting::bridge::mounts::MountTable;
use host_core::hosting::capability::dispatch::{dispatch_with, SessionAnswers, Verdict};
use host_core::hosting::capability::facts::FactsCache;
use host_core::hosting::capability::services::Services;
use host_core::hosting::capability::Call;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::hosting::surface::serve::{serve, CachedServer, ServeContext};
use host_core::install::store::{DataMode, Store};
use serde_json::json;
use support::{fixture, install, optional_storage_app};

fn get(id: &str) -> Call {
    Call {
        request_id: id.into(),
        capability: "lime.storage".into(),
        method: "get".into(),
        args: json!({"key": "a"}),
        options: Default::default(),
    }
}

fn set_enabled(dir: &DataDir, enabled: bool) {
    let (locked, _) = Store::open_locked(dir).unwrap();
    locked.set_enabled("hello-app", enabled).unwrap();
}

#[test]
fn call_facts_are_reused_until_any_connection_commits() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &optional_storage_app(tmp.path()));
    let store = Store::open(&dir).unwrap();
    let cache = FactsCache::new();
    let first = cache.active_app(&store, "hello-app").unwrap();
    // Unchanged store: the same facts, not read again.
    assert!(Arc::ptr_eq(
        &first,
        &cache.active_app(&store, "hello-app").unwrap()
    ));
    // The caller's own audit record changes no fact and keeps the cache.
    let before = cache.validate(&store).unwrap();
    store
        .record_audit("capability.call", Some("hello-app"), None, &json!({}))
        .unwrap();
    cache.after_own_write(&store, before);
    assert!(Arc::ptr_eq(
        &first,
        &cache.active_app(&store, "hello-app").unwrap()
    ));
    // A grant on another connection (another process: `apphost grant`) is seen at once.
    Store::open(&dir)
        .unwrap()
        .grant("hello-app", "notes_storage")
        .unwrap();
    let granted = cache.active_app(&store, "hello-app").unwrap();
    assert!(!Arc::ptr_eq(&first, &granted));
    assert!(granted.grants.contains("notes_storage"));
    // A revoke on this very connection too (`data_version` alone would not show it).
    store.revoke("hello-app", "notes_storage").unwrap();
    assert!(!cache
        .active_app(&store, "hello-app")
        .unwrap()
        .grants
        .contains("notes_storage"));
    // `after_own_write` does not paper over another connection's commit in between.
    let before = cache.validate(&store).unwrap();
    let cached = cache.active_app(&store, "hello-app").unwrap();
    Store::open(&dir)
        .unwrap()
        .grant("hello-app", "notes_storage")
        .unwrap();
    store
        .record_audit("capability.call", Some("hello-app"), None, &json!({}))
        .unwrap();
    cache.after_own_write(&store, before);
    let now = cache.active_app(&store, "hello-app").unwrap();
    assert!(!Arc::ptr_eq(&cached, &now));
    assert!(now.grants.contains("notes_storage"));
    // A cache handed another store never serves the first store's facts.
    let other = Store::open(&dir).unwrap();
    assert!(!Arc::ptr_eq(
        &now,
        &cache.active_app(&other, "hello-app").unwrap()
    ));
}

#[test]
fn grant_revoke_disable_and_uninstall_take_effect_on_the_next_cached_call() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &optional_storage_app(tmp.path()));
    let profile = HostProfile::all_available();
    // One store for the whole session, as the desktop keeps it.
    let store = Store::open(&dir).unwrap();
    let cache = FactsCache::new();
    let mut table = MountTable::new();
    let mount = mount_entry(
        &store,
        &profile,
        &mut table,
        &OriginStyle::Scheme,
        "hello-app",
        "notes",
    )
    .unwrap();
    let mut answers = SessionAnswers::default();
    let mut n = 0;
    let mut call = |answers: &mut SessionAnswers| {
        n += 1;
        dispatch_with(
            &cache,
            &store,
            &profile,
            &mount.caller(),
            &get(&format!("r{n}")),
            "t",
            answers,
        )
    };
    assert!(matches!(call(&mut answers), Verdict::Ask(_)));
    assert!(matches!(call(&mut answers), Verdict::Ask(_)));

    // Granted by another process (`apphost grant`): allowed on the next call, and after.
    Store::open(&dir)
        .unwrap()
        .grant("hello-app", "notes_storage")
        .unwrap();
    assert!(matches!(call(&mut answers), Verdict::Allowed(_)));
    assert!(matches!(call(&mut answers), Verdict::Allowed(_)));

    // Revoked by another process: asked again on the next call.
    Store::open(&dir)
        .unwrap()
        .revoke("hello-app", "notes_storage")
        .unwrap();
    assert!(matches!(call(&mut answers), Verdict::Ask(_)));

    // Disabled while granted: denied on the next call; enabled again: allowed.
    Store::open(&dir)
        .unwrap()
        .grant("hello-app", "notes_storage")
        .unwrap();
    assert!(matches!(call(&mut answers), Verdict::Allowed(_)));
    set_enabled(&dir, false);
    match call(&mut answers) {
        Verdict::Denied(e) => assert_eq!(e.cause_code, Some("entry.not_ready")),
        other => panic!("expected deny after disable, got {other:?}"),
    }
    set_enabled(&dir, true);
    assert!(matches!(call(&mut answers), Verdict::Allowed(_)));

    // Uninstalled: denied on the next call.
    let (locked, _) = Store::open_locked(&dir).unwrap();
    locked
        .uninstall("hello-app", DataMode::DeleteData, None)
        .unwrap();
    drop(locked);
    assert!(matches!(call(&mut answers), Verdict::Denied(_)));
}

fn invoke(id: &str) -> String {
    json!({"protocol": PROTOCOL, "version": 1, "type": "capability:invoke", "requestId": id,
           "appId": "hello-app", "entryKey": "notes",
           "payload": {"capability": "lime.storage", "method": "get", "args": {"key": "a"}}})
    .to_string()
}

fn kinds(out: &[Outgoing]) -> Vec<String> {
    out.iter()
        .map(|o| match o {
            Outgoing::Post { message, .. } => message["type"].as_str().unwrap_or("?").to_owned(),
            Outgoing::Prompt { .. } => "prompt".to_owned(),
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn the_bridge_host_sees_a_revoke_from_another_process_on_the_next_call() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &optional_storage_app(tmp.path()));
    Store::open(&dir)
        .unwrap()
        .grant("hello-app", "notes_storage")
        .unwrap();
    let store = Store::open(&dir).unwrap();
    let mut host = BridgeHost::new(
        Services::new(dir.apps_data()),
        HostProfile::all_available(),
        OriginStyle::Scheme,
    );
    let m = host.mount(&store, "hello-app", "notes").unwrap();
    let ready = json!({"protocol": PROTOCOL, "version": 1, "type": "app:ready", "requestId": "r0",
                       "appId": "hello-app", "entryKey": "notes", "payload": {}});
    let out = host.handle(&store, &m.mount_id, &m.origin, &ready.to_string());
    assert_eq!(kinds(&out), ["host:snapshot"]);
    for i in 0..3 {
        let out = host.handle(&store, &m.mount_id, &m.origin, &invoke(&format!("a{i}")));
        assert_eq!(kinds(&out), ["host:response"]);
    }
    Store::open(&dir)
        .unwrap()
        .revoke("hello-app", "notes_storage")
        .unwrap();
    let out = host.handle(&store, &m.mount_id, &m.origin, &invoke("b"));
    assert_eq!(kinds(&out), ["prompt"]);
    let audit = store.audit_log(Some("hello-app"), 1).unwrap();
    assert_eq!(audit[0]["details"]["decision"], "ask");
}

fn ctx() -> ServeContext {
    ServeContext {
        style: OriginStyle::Scheme,
        frame_ancestors: vec!["tauri://localhost".into()],
    }
}

fn tamper(dir: &DataDir, original: &[u8]) {
    let pack = std::fs::read_dir(dir.packs())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&pack).unwrap();
    let at = bytes
        .windows(original.len())
        .position(|w| w == original)
        .unwrap();
    bytes[at + 3] ^= 1;
    std::fs::set_permissions(&pack, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(&pack, &bytes).unwrap();
}

fn reason(r: &host_core::hosting::surface::serve::AppResponse) -> Option<&'static str> {
    r.refusal.as_ref().map(|x| x.reason)
}

#[test]
fn the_cached_file_server_never_serves_a_disabled_tampered_or_uninstalled_app() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &fixture("good/hello-app"));
    let html = std::fs::read(fixture("good/hello-app/dist/ui/index.html")).unwrap();
    let mut server = CachedServer::new(Store::open(&dir).unwrap(), ctx());
    let plain = Store::open(&dir).unwrap();

    // Same answers as the uncached `serve`, and the app's facts are then cached.
    for path in ["/", "/index.html", "/../APP.md", "/APP.md", "/nope.js"] {
        let cached = server.serve("hello-app", path);
        let fresh = serve(&plain, &ctx(), "hello-app", path);
        assert_eq!(cached, fresh, "{path}");
    }
    assert_eq!(server.serve("hello-app", "/").body, html);
    assert!(server.is_cached("hello-app"));
    assert_eq!(
        reason(&server.serve("other-app", "/")),
        Some("serve.unknown_app")
    );
    assert!(!server.is_cached("other-app"));

    // Disabled by another process: refused on the next request; enabled: served again.
    set_enabled(&dir, false);
    assert!(!server.is_cached("hello-app"));
    let r = server.serve("hello-app", "/index.html");
    assert_eq!((r.status, reason(&r)), (403, Some("serve.app_disabled")));
    set_enabled(&dir, true);
    assert_eq!(server.serve("hello-app", "/index.html").status, 200);

    // Tampered bytes are refused although the app's facts are cached (no store change).
    assert!(server.is_cached("hello-app"));
    tamper(&dir, &html);
    let r = server.serve("hello-app", "/index.html");
    assert_eq!((r.status, reason(&r)), (403, Some("serve.tampered")));
    assert!(!r.body.windows(5).any(|w| w == b"<html"));

    // Uninstalled: unknown on the next request.
    let (locked, _) = Store::open_locked(&dir).unwrap();
    locked
        .uninstall("hello-app", DataMode::DeleteData, None)
        .unwrap();
    drop(locked);
    let r = server.serve("hello-app", "/index.html");
    assert_eq!((r.status, reason(&r)), (404, Some("serve.unknown_app")));
}
