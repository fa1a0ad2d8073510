//! The host UI's command layer (`host_core::api`) over a real store, as both transports call it:
//! apps and mounts, the bridge relay's commands, argument errors that change nothing, the
//! outbox (mount watcher events, asynchronous bridge actions) and `open_external`.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use host_core::api::{self, LaunchRequest, LinkOpener, Session, SessionConfig};
use host_core::foundation::error::ErrorCode;
use host_core::foundation::paths::DataDir;
use host_core::hosting::bridge::host::Outgoing;
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::hosting::surface::serve::ServeContext;
use host_core::install::store::Store;
use serde_json::{json, Value};
use support::agent::{call, set_placeholder_model};
use support::{fixture, install};

fn config(links: LinkOpener, launch: Option<LaunchRequest>) -> SessionConfig {
    SessionConfig {
        serve: ServeContext {
            style: OriginStyle::Scheme,
            frame_ancestors: vec!["tauri://localhost".into()],
        },
        links,
        launch,
    }
}

fn setup(links: LinkOpener, launch: Option<LaunchRequest>) -> (tempfile::TempDir, Session) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &fixture("good/hello-app"));
    (tmp, Session::new(dir, config(links, launch)))
}

fn msg(kind: &str, id: &str, payload: Value) -> String {
    json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
           "appId": "hello-app", "entryKey": "notes", "payload": payload})
    .to_string()
}

fn diagnostics(s: &Session) -> Value {
    call(s, "bridge_diagnostics", Value::Null)
}

#[test]
fn apps_mounts_and_a_storage_round_trip_through_the_command_table() {
    let (_t, s) = setup(LinkOpener::Page, None);
    let apps = call(&s, "list_apps", json!({}));
    assert_eq!(apps[0]["name"], "hello-app");
    let mount = call(
        &s,
        "mount_entry",
        json!({"appId": "hello-app", "entryKey": "notes"}),
    );
    let mount_id = mount["mountId"].as_str().unwrap().to_owned();
    let origin = mount["origin"].as_str().unwrap().to_owned();
    assert_eq!(origin, "agentapp://hello-app");

    let out = call(
        &s,
        "bridge_message",
        json!({"mountId": mount_id, "origin": origin, "data": msg("app:ready", "r0", json!({}))}),
    );
    assert_eq!(out[0]["kind"], "post");
    assert_eq!(out[0]["message"]["type"], "host:snapshot");
    let set = msg(
        "capability:invoke",
        "r1",
        json!({"capability": "lime.storage", "method": "set", "args": {"key": "k", "value": 7}}),
    );
    call(
        &s,
        "bridge_message",
        json!({"mountId": mount_id, "origin": origin, "data": set}),
    );
    let get = msg(
        "capability:invoke",
        "r2",
        json!({"capability": "lime.storage", "method": "get", "args": {"key": "k"}}),
    );
    let out = call(
        &s,
        "bridge_message",
        json!({"mountId": mount_id, "origin": origin, "data": get}),
    );
    assert_eq!(out[0]["message"]["payload"]["value"], 7);

    // A message relayed with another origin than the mount's executes nothing.
    let spoof = msg(
        "capability:invoke",
        "r3",
        json!({"capability": "lime.storage", "method": "set", "args": {"key": "k", "value": 8}}),
    );
    call(
        &s,
        "bridge_message",
        json!({"mountId": mount_id, "origin": "http://evil.localhost:1", "data": spoof}),
    );
    call(
        &s,
        "bridge_refused",
        json!({"mountId": null, "reason": "bridge.wrong_source", "bytes": 12}),
    );
    let d = diagnostics(&s);
    assert_eq!(d["executions"], 2);
    assert_eq!(d["mounts"], 1);
    assert!(d["refusedByReason"]["bridge.wrong_source"].as_u64() >= Some(1));

    assert_eq!(
        call(&s, "unmount", json!({"mountId": mount_id})),
        json!(true)
    );
    assert_eq!(
        call(&s, "unmount", json!({"mountId": mount_id})),
        json!(false)
    );
    assert_eq!(diagnostics(&s)["mounts"], 0);
}

#[test]
fn unknown_commands_and_bad_arguments_change_nothing() {
    let (_t, s) = setup(LinkOpener::Page, None);
    let db_before = std::fs::read(s.data.db_path()).unwrap();
    for (command, args, code) in [
        ("drop_tables", json!({}), ErrorCode::ApiUnknownCommand),
        ("", json!({}), ErrorCode::ApiUnknownCommand),
        (
            "mount_entry",
            json!({"appId": "hello-app"}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "mount_entry",
            json!({"appId": "hello-app", "entryKey": 1}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "mount_entry",
            json!({"appId": "hello-app", "entryKey": "notes", "sandbox": "allow-same-origin"}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "mount_entry",
            json!(["hello-app", "notes"]),
            ErrorCode::ApiBadArguments,
        ),
        (
            "list_apps",
            json!({"all": true}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "answer_prompt",
            json!({"promptId": "p", "answer": "yes-please"}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "next_events",
            json!({"after": -1}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "mount_entry",
            json!({"appId": "nope", "entryKey": "notes"}),
            ErrorCode::AppNotInstalled,
        ),
    ] {
        let e = api::call(&s, command, args.clone()).expect_err(&format!("{command} {args}"));
        assert_eq!(e.code, code, "{command} {args}: {e:?}");
        assert!(!e.message.is_empty());
    }
    // A long name is echoed back bounded.
    let e = api::call(&s, &"x".repeat(100_000), Value::Null).unwrap_err();
    assert!(e.to_string().len() < 1000);
    assert_eq!(diagnostics(&s)["mounts"], 0);
    assert_eq!(diagnostics(&s)["executions"], 0);
    assert_eq!(std::fs::read(s.data.db_path()).unwrap(), db_before);
}

#[test]
fn a_mount_ended_by_another_process_arrives_as_events() {
    let (_t, s) = setup(LinkOpener::Page, None);
    let mount = call(
        &s,
        "mount_entry",
        json!({"appId": "hello-app", "entryKey": "notes"}),
    );
    // The first look at the store reports it as changed.
    let first = call(&s, "next_events", json!({"after": 0, "timeoutMs": 0}));
    assert_eq!(first["events"][0]["kind"], "store:changed");
    let after = first["next"].as_u64().unwrap();
    // Nothing new: the call waits for its timeout, then answers empty.
    let started = Instant::now();
    let idle = call(&s, "next_events", json!({"after": after, "timeoutMs": 300}));
    assert_eq!(idle["events"], json!([]));
    assert_eq!(idle["next"], after);
    assert!(started.elapsed() >= Duration::from_millis(250));

    // "The CLI" disables the app while a reader waits.
    let data = s.data.clone();
    let cli = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        let (store, _lock) = Store::open_locked(&data).unwrap();
        store.set_enabled("hello-app", false).unwrap();
    });
    let started = Instant::now();
    let mut seen = Vec::new();
    let mut after = after;
    while seen.iter().all(|e: &Value| e["kind"] != "mounts:ended") {
        assert!(started.elapsed() < Duration::from_secs(10), "{seen:?}");
        let batch = call(
            &s,
            "next_events",
            json!({"after": after, "timeoutMs": 5000}),
        );
        after = batch["next"].as_u64().unwrap();
        seen.extend(batch["events"].as_array().unwrap().iter().cloned());
    }
    cli.join().unwrap();
    let ended = seen.iter().find(|e| e["kind"] == "mounts:ended").unwrap();
    assert_eq!(ended["payload"][0]["mountId"], mount["mountId"]);
    assert_eq!(ended["payload"][0]["reason"], "disabled");
    assert_eq!(diagnostics(&s)["mounts"], 0);
    // Sequence numbers only grow.
    let seqs: Vec<u64> = seen.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
}

#[test]
fn the_watcher_looks_again_every_second_and_after_a_look_that_failed() {
    // The stamp (size and mtime of host.db and its WAL) can stay put across a commit (a coarse
    // file-system clock, a WAL that wrapped): an unchanged stamp is rechecked every second.
    // A look that could not finish (store unreadable, an app's state unknown) is not
    // counted as seen.
    use host_core::api::session::FULL_LOOK_EVERY;
    use host_core::api::store_stamp::StoreLook;
    let (_t, s) = setup(LinkOpener::Page, None);
    assert_eq!(s.store_changed(), StoreLook::Changed);
    assert_eq!(
        s.store_changed(),
        StoreLook::Recheck,
        "once more after a change"
    );
    assert_eq!(s.store_changed(), StoreLook::Unchanged);
    std::thread::sleep(FULL_LOOK_EVERY + Duration::from_millis(50));
    assert_eq!(
        s.store_changed(),
        StoreLook::Recheck,
        "a full look every second"
    );
    assert_eq!(s.store_changed(), StoreLook::Unchanged);
    s.store_look_failed();
    assert_eq!(
        s.store_changed(),
        StoreLook::Changed,
        "the failed look is repeated"
    );

    // A disable whose commit leaves the stamp as it was is still found by the periodic look.
    let mount = call(
        &s,
        "mount_entry",
        json!({"appId": "hello-app", "entryKey": "notes"}),
    );
    let db = s.data.db_path();
    let wal = std::path::PathBuf::from(format!("{}-wal", db.display()));
    {
        // Grow the WAL, then checkpoint it so the next commit rewrites it from its start:
        // the commit leaves its size alone (as on a long-running store).
        let store = Store::open(&s.data).unwrap();
        for i in 0..200 {
            store
                .record_audit("test.fill", None, None, &json!({"i": i}))
                .unwrap();
        }
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |_| Ok(()))
            .unwrap();
    }
    let primed = call(&s, "next_events", json!({"after": 0, "timeoutMs": 0}));
    let after = primed["next"].as_u64().unwrap();
    let _ = call(&s, "sync_mounts", json!({}));
    let stat = |p: &std::path::Path| {
        let m = std::fs::metadata(p).unwrap();
        (m.len(), m.modified().unwrap())
    };
    let (db_before, wal_before) = (stat(&db), stat(&wal));
    {
        let (store, _lock) = Store::open_locked(&s.data).unwrap();
        store.set_enabled("hello-app", false).unwrap();
    }
    // Put the modification times back, as one tick of a coarse clock would have left them.
    for (p, (_, t)) in [(&db, db_before), (&wal, wal_before)] {
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }
    assert_eq!(
        (stat(&db), stat(&wal)),
        (db_before, wal_before),
        "the commit left the files' stamp as it was"
    );
    let started = Instant::now();
    let mut seen = Vec::new();
    let mut after = after;
    while seen.iter().all(|e: &Value| e["kind"] != "mounts:ended") {
        assert!(started.elapsed() < Duration::from_secs(5), "{seen:?}");
        let batch = call(
            &s,
            "next_events",
            json!({"after": after, "timeoutMs": 2000}),
        );
        after = batch["next"].as_u64().unwrap();
        seen.extend(batch["events"].as_array().unwrap().iter().cloned());
    }
    let ended = seen.iter().find(|e| e["kind"] == "mounts:ended").unwrap();
    assert_eq!(ended["payload"][0]["mountId"], mount["mountId"]);
    assert_eq!(ended["payload"][0]["reason"], "disabled");
}

#[test]
fn the_windows_own_capability_calls_do_not_announce_store_changes() {
    // Every capability call commits an audit record on the bridge's connection; announcing
    // those as `store:changed` made the host UI reload its app list after every call while an
    // app was busy. Only other connections' commits (the CLI, app-center operations) and the
    // bridge's own grants (answered prompts) are announced.
    let (_t, s) = setup(LinkOpener::Page, None);
    let mount = call(
        &s,
        "mount_entry",
        json!({"appId": "hello-app", "entryKey": "notes"}),
    );
    let (mount_id, origin) = (
        mount["mountId"].as_str().unwrap().to_owned(),
        mount["origin"].as_str().unwrap().to_owned(),
    );
    let send = |id: &str, kind: &str, payload: Value| {
        call(
            &s,
            "bridge_message",
            json!({"mountId": mount_id, "origin": origin, "data": msg(kind, id, payload)}),
        )
    };
    send("r0", "app:ready", json!({}));
    // Settle: the first looks announce whatever was there.
    let mut after = 0;
    loop {
        let b = call(&s, "next_events", json!({"after": after, "timeoutMs": 300}));
        after = b["next"].as_u64().unwrap();
        if b["events"].as_array().unwrap().is_empty() {
            break;
        }
    }
    let audits_before = s.data.db_path().metadata().unwrap().len()
        + std::fs::metadata(format!("{}-wal", s.data.db_path().display()))
            .map(|m| m.len())
            .unwrap_or(0);
    for i in 0..20 {
        let out = send(
            &format!("g{i}"),
            "capability:invoke",
            json!({"capability": "lime.storage", "method": "set", "args": {"key": "k", "value": i}}),
        );
        assert_eq!(out[0]["message"]["type"], "host:response", "{out}");
        let b = call(&s, "next_events", json!({"after": after, "timeoutMs": 0}));
        assert_eq!(b["events"], json!([]), "call {i} was announced: {b}");
    }
    // Over a second of looks (the periodic full look included), still nothing.
    let b = call(
        &s,
        "next_events",
        json!({"after": after, "timeoutMs": 1300}),
    );
    assert_eq!(b["events"], json!([]), "{b}");
    let audits_after = s.data.db_path().metadata().unwrap().len()
        + std::fs::metadata(format!("{}-wal", s.data.db_path().display()))
            .map(|m| m.len())
            .unwrap_or(0);
    assert!(audits_after > audits_before, "the calls were audited");

    // Another connection's commit is announced (and ends the mount it concerns).
    {
        let (store, _lock) = Store::open_locked(&s.data).unwrap();
        store.set_enabled("hello-app", false).unwrap();
    }
    let started = Instant::now();
    let mut seen = Vec::new();
    while seen.iter().all(|e: &Value| e["kind"] != "mounts:ended") {
        assert!(started.elapsed() < Duration::from_secs(5), "{seen:?}");
        let b = call(
            &s,
            "next_events",
            json!({"after": after, "timeoutMs": 2000}),
        );
        after = b["next"].as_u64().unwrap();
        seen.extend(b["events"].as_array().unwrap().iter().cloned());
    }
    assert!(
        seen.iter().any(|e| e["kind"] == "store:changed"),
        "{seen:?}"
    );
}

#[test]
fn a_store_change_wakes_a_waiting_next_events_promptly() {
    // `apphost dev` commits a new version while the window waits in `next_events`: the wait
    // must end within a few watcher ticks (100 ms each), not at the next one-second check.
    let (_t, s) = setup(LinkOpener::Page, None);
    let primed = call(&s, "next_events", json!({"after": 0, "timeoutMs": 0}));
    let after = primed["next"].as_u64().unwrap();
    let data = s.data.clone();
    let cli = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        let (store, _lock) = Store::open_locked(&data).unwrap();
        store.set_enabled("hello-app", false).unwrap();
        Instant::now()
    });
    let batch = call(
        &s,
        "next_events",
        json!({"after": after, "timeoutMs": 5000}),
    );
    let woke = Instant::now();
    let changed_at = cli.join().unwrap();
    assert_eq!(batch["events"][0]["kind"], "store:changed", "{batch}");
    let latency = woke.saturating_duration_since(changed_at);
    assert!(
        latency < Duration::from_millis(600),
        "woke {latency:?} after the commit"
    );
}

#[test]
fn bridge_actions_produced_off_the_request_path_are_outgoing_events() {
    let (_t, s) = setup(LinkOpener::Page, None);
    let s = Arc::new(s);
    let primed = call(&s, "next_events", json!({"timeoutMs": 0}));
    let after = primed["next"].as_u64().unwrap();
    s.push_outgoing(Vec::new());
    let pusher = Arc::clone(&s);
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        pusher.push_outgoing(vec![Outgoing::Navigate {
            mount_id: "m-1".into(),
            route: "/tasks/1".into(),
        }]);
    });
    let batch = call(
        &s,
        "next_events",
        json!({"after": after, "timeoutMs": 5000}),
    );
    t.join().unwrap();
    assert_eq!(batch["events"].as_array().unwrap().len(), 1, "{batch}");
    let event = &batch["events"][0];
    assert_eq!(event["kind"], "outgoing");
    assert_eq!(
        event["payload"],
        json!([{"kind": "navigate", "mountId": "m-1", "route": "/tasks/1"}])
    );
}

#[test]
fn links_are_checked_before_either_opener_runs() {
    let opened = Arc::new(Mutex::new(Vec::<String>::new()));
    let log = Arc::clone(&opened);
    let (_t, desktop) = setup(
        LinkOpener::Program(Box::new(move |url| {
            log.lock().unwrap().push(url.to_owned());
            Ok(())
        })),
        None,
    );
    assert_eq!(
        call(
            &desktop,
            "open_external",
            json!({"url": "https://example.com/a"})
        ),
        Value::Null
    );
    for bad in [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "https://u:p@example.com/",
    ] {
        let e = api::call(&desktop, "open_external", json!({"url": bad})).unwrap_err();
        assert_eq!(e.code, ErrorCode::ExternalInvalidUrl, "{bad}");
    }
    assert_eq!(*opened.lock().unwrap(), ["https://example.com/a"]);

    let (_t2, browser) = setup(LinkOpener::Page, None);
    assert_eq!(
        call(
            &browser,
            "open_external",
            json!({"url": "https://example.com/b"})
        ),
        json!({"url": "https://example.com/b"})
    );
}

#[test]
fn the_launch_target_defaults_to_the_first_ui_entry() {
    let (_t, none) = setup(LinkOpener::Page, None);
    assert_eq!(call(&none, "launch_target", json!({})), Value::Null);
    let (_t2, app_only) = setup(
        LinkOpener::Page,
        Some(LaunchRequest {
            app_id: "hello-app".into(),
            entry_key: None,
        }),
    );
    assert_eq!(
        call(&app_only, "launch_target", Value::Null),
        json!({"appId": "hello-app", "entryKey": "notes"})
    );
    let (_t3, missing) = setup(
        LinkOpener::Page,
        Some(LaunchRequest {
            app_id: "nope".into(),
            entry_key: None,
        }),
    );
    let e = api::call(&missing, "launch_target", Value::Null).unwrap_err();
    assert_eq!(e.code, ErrorCode::AppNotInstalled);
}

#[test]
fn uploads_are_kept_once_and_bounded() {
    let (_t, s) = setup(LinkOpener::Page, None);
    let up = api::upload_package(&s, b"PK\x03\x04").unwrap();
    assert_eq!(up["bytes"], 4);
    let id = up["uploadId"].as_str().unwrap();
    assert!(id.starts_with("u-"));
    // A review uses the upload (this one is not a package) and it is gone with it.
    let args = json!({"source": {"uploadId": id}});
    let e = api::call(&s, "review_install", args.clone()).unwrap_err();
    assert_ne!(e.code, ErrorCode::UploadNotFound);
    assert_eq!(
        api::call(&s, "review_install", args).unwrap_err().code,
        ErrorCode::UploadNotFound
    );
}

/// `lime.agent` task events reach the host UI through the command layer's outbox as
/// `outgoing` events (`Outgoing[]` posts to the calling frame), without a request.
#[test]
fn agent_task_events_arrive_as_outgoing_events_of_next_events() {
    use runtime_core::backend::{ExecutionBackend, ScriptedBackend};

    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(
        &dir,
        &support::repo_root().join("fixtures/apps/review-queue"),
    );
    set_placeholder_model(&dir);
    let s = Session::new(dir, config(LinkOpener::Page, None));
    let backend = ScriptedBackend::new();
    backend.push_text(&["on", "e"]);
    s.with_bridge(|host, _| host.set_agent_backend(Arc::new(backend) as Arc<dyn ExecutionBackend>))
        .unwrap();
    let mount = call(
        &s,
        "mount_entry",
        json!({"appId": "review-queue", "entryKey": "queue"}),
    );
    let (mount_id, origin) = (
        mount["mountId"].as_str().unwrap().to_owned(),
        mount["origin"].as_str().unwrap().to_owned(),
    );
    let m = |kind: &str, id: &str, payload: Value| {
        json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
               "appId": "review-queue", "entryKey": "queue", "payload": payload})
        .to_string()
    };
    call(
        &s,
        "bridge_message",
        json!({"mountId": mount_id, "origin": origin, "data": m("app:ready", "r0", json!({}))}),
    );
    let after = s.outbox.last_seq();
    let out = call(
        &s,
        "bridge_message",
        json!({"mountId": mount_id, "origin": origin, "data": m("capability:invoke", "r1",
            json!({"capability": "lime.agent", "method": "startTask", "args": {"input": "x"}}))}),
    );
    assert_eq!(out[0]["message"]["type"], "host:response", "{out}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut cursor = after;
    let mut types = Vec::new();
    while !types.iter().any(|t| t == "result") {
        assert!(Instant::now() < deadline, "{types:?}");
        let batch = call(
            &s,
            "next_events",
            json!({"after": cursor, "timeoutMs": 500}),
        );
        cursor = batch["next"].as_u64().unwrap();
        for e in batch["events"].as_array().unwrap() {
            if e["kind"] != "outgoing" {
                continue;
            }
            for o in e["payload"].as_array().unwrap() {
                assert_eq!(o["kind"], "post");
                assert_eq!(o["mountId"], mount_id.as_str());
                assert_eq!(o["message"]["type"], "host:event");
                types.push(
                    o["message"]["payload"]["event"]["type"]
                        .as_str()
                        .unwrap()
                        .to_owned(),
                );
            }
        }
    }
    assert_eq!(types.first().map(String::as_str), Some("system:init"));
    assert_eq!(types.iter().filter(|t| *t == "assistant:delta").count(), 2);
}

#[test]
fn the_app_center_commands_review_install_with_progress_and_manage_the_app() {
    let (_t, s) = setup(LinkOpener::Page, None);
    let review = call(
        &s,
        "review_install",
        json!({"source": {"path": fixture("good/hello-app-v2")}, "progressId": "p1"}),
    );
    assert_eq!(review["mode"], "update");
    assert_eq!(review["needsConsent"], json!(["notes_files"]));
    let progress = s.outbox.wait_after(0, std::time::Duration::from_millis(10));
    let last = progress
        .events
        .iter()
        .rfind(|e| e.kind == "install:progress")
        .expect("install progress was pushed");
    assert_eq!(last.payload["progressId"], "p1");
    assert_eq!(last.payload["bytesVerified"], last.payload["bytesTotal"]);
    let e = api::call(&s, "install", json!({"reviewId": review["reviewId"]})).unwrap_err();
    assert_eq!(
        e.code,
        ErrorCode::ApiBadArguments,
        "consent is a required argument"
    );
    let app = call(
        &s,
        "install",
        json!({"reviewId": review["reviewId"], "consent": true}),
    );
    assert_eq!(app["activeVersion"], "1.1.0");
    let detail = call(&s, "app_detail", json!({"appId": "hello-app"}));
    assert_eq!(detail["versions"].as_array().unwrap().len(), 2);
    let row = call(
        &s,
        "revoke",
        json!({"appId": "hello-app", "scope": "notes_files"}),
    );
    assert_eq!(row["granted"], false);
    assert_eq!(
        call(&s, "list_grants", json!({})).as_array().unwrap().len(),
        3
    );
    assert_eq!(
        call(&s, "rollback", json!({"appId": "hello-app"}))["activeVersion"],
        "1.0.0"
    );
    assert_eq!(
        call(&s, "set_theme", json!({"theme": "light"}))["theme"],
        "light"
    );
    assert_eq!(call(&s, "host_settings", json!({}))["theme"], "light");
    assert!(call(&s, "verify_store", json!({"quick": true}))["ok"] == true);
    assert!(
        !call(&s, "audit", json!({"appId": "hello-app", "limit": 5}))
            .as_array()
            .unwrap()
            .is_empty()
    );
    let bundle = call(&s, "diagnostics_bundle", json!({}));
    assert!(std::path::Path::new(bundle["path"].as_str().unwrap()).is_file());
    assert_eq!(call(&s, "dev_status", json!({})), json!([]));
    // dev_consent: not a dev app, and consent: false, are refused.
    let e = api::call(
        &s,
        "dev_consent",
        json!({"appId": "hello-app", "digest": "x", "consent": true}),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::AppNotInstalled);
    let e = api::call(
        &s,
        "dev_consent",
        json!({"appId": "hello-app", "digest": "x", "consent": false}),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InstallConsentRequired);
    // Disable only has its own plan; it is not an uninstall.
    let plan = call(
        &s,
        "uninstall_plan",
        json!({"appId": "hello-app", "mode": "disable"}),
    );
    assert_eq!(plan["mode"], "disable");
    assert_eq!(plan["entriesHidden"][0], "notes");
    let e = api::call(
        &s,
        "uninstall",
        json!({"appId": "hello-app", "mode": "disable"}),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::CliUsage);
    let detail = call(&s, "app_detail", json!({"appId": "hello-app"}));
    assert_eq!(detail["uninstallPolicy"], "ask");
    assert!(detail["uninstallDefault"].is_null());
    let plan = call(
        &s,
        "uninstall_plan",
        json!({"appId": "hello-app", "mode": "delete-data"}),
    );
    assert_eq!(plan["mode"], "delete-data");
    let out = call(
        &s,
        "uninstall",
        json!({"appId": "hello-app", "mode": "delete-data"}),
    );
    assert!(out["exportedTo"].is_null());
    assert_eq!(call(&s, "list_apps", json!({})), json!([]));
    let e = api::call(
        &s,
        "uninstall",
        json!({"appId": "hello-app", "mode": "wipe"}),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::ApiBadArguments);
}

/// Tab switches and theme changes reach ready frames through the command layer, once per change;
/// a frame that has not said `app:ready` is told nothing, and bad values change nothing.
#[test]
fn visibility_and_theme_changes_reach_ready_frames_once() {
    let (_t, s) = setup(LinkOpener::Page, None);
    let mount = call(
        &s,
        "mount_entry",
        json!({"appId": "hello-app", "entryKey": "notes"}),
    );
    let mount_id = mount["mountId"].as_str().unwrap().to_owned();
    let origin = mount["origin"].as_str().unwrap().to_owned();
    let hide = json!({"mountId": mount_id, "visible": false});
    // Not ready yet: Rust records the state, the frame hears nothing.
    assert_eq!(call(&s, "set_visibility", hide.clone()), json!([]));
    call(
        &s,
        "bridge_message",
        json!({"mountId": mount_id, "origin": origin, "data": msg("app:ready", "r0", json!({}))}),
    );
    let show = json!({"mountId": mount_id, "visible": true});
    let out = call(&s, "set_visibility", show.clone());
    assert_eq!(out.as_array().unwrap().len(), 1);
    assert_eq!(out[0]["mountId"], mount_id.as_str());
    assert_eq!(out[0]["message"]["type"], "host:visibility");
    assert_eq!(out[0]["message"]["payload"]["visible"], true);
    assert_eq!(
        call(&s, "set_visibility", show),
        json!([]),
        "no change, no post"
    );
    assert_eq!(
        call(
            &s,
            "set_visibility",
            json!({"mountId": "m-nope", "visible": false})
        ),
        json!([])
    );

    let theme = call(
        &s,
        "set_theme",
        json!({"theme": "dark", "effective": "dark"}),
    );
    assert_eq!(theme["theme"], "dark");
    let posts = theme["outgoing"].as_array().unwrap();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0]["message"]["type"], "theme:update");
    assert_eq!(posts[0]["message"]["payload"]["themeMode"], "dark");
    assert_eq!(posts[0]["message"]["payload"]["effectiveThemeMode"], "dark");
    let again = call(
        &s,
        "set_theme",
        json!({"theme": "dark", "effective": "dark"}),
    );
    assert_eq!(
        again["outgoing"],
        json!([]),
        "the same theme again posts nothing"
    );
    // The snapshot a reloading frame gets carries the new theme.
    let snap = call(
        &s,
        "bridge_message",
        json!({"mountId": mount_id, "origin": origin, "data": msg("host:getSnapshot", "r1", json!({}))}),
    );
    assert_eq!(
        snap[0]["message"]["payload"]["theme"]["effectiveThemeMode"],
        "dark"
    );
    let e = api::call(
        &s,
        "set_theme",
        json!({"theme": "dark", "effective": "sepia"}),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::ApiBadArguments);
    assert_eq!(call(&s, "host_settings", json!({}))["theme"], "dark");
}

/// The card's "Bind secret" setup action through the command layer: the value goes to the secret
/// store, readiness stops needing setup, and no answer (nor the audit) carries the value or
/// its ref; an undeclared slot and an empty value are refused with their codes.
#[test]
fn bind_secret_binds_a_declared_slot_and_never_answers_the_value() {
    let keys = tempfile::tempdir().unwrap();
    std::env::set_var("APPHOST_SECRET_STORE", "file");
    std::env::set_var("APPHOST_SECRET_KEY_FILE", keys.path().join("k.key"));
    let (t, s) = setup(LinkOpener::Page, None);
    let folder = t.path().join("vault-app");
    support::copy_dir(&fixture("good/hello-app"), &folder);
    let md = std::fs::read_to_string(folder.join("APP.md"))
        .unwrap()
        .replacen("name: hello-app", "name: vault-app", 1)
        .replacen("namespace: hello-app", "namespace: vault-app", 1)
        .replacen(
            "triggers:",
            "secrets:\n  - {key: api_token, provider: example, required: true, scope: app}\ntriggers:",
            1,
        );
    std::fs::write(folder.join("APP.md"), md).unwrap();
    install(&DataDir::at(t.path().join("data")), &folder);
    let app = |s: &Session| {
        call(s, "list_apps", json!({}))
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == "vault-app")
            .cloned()
            .unwrap()
    };
    assert_eq!(app(&s)["readiness"], "needs-setup");
    assert_eq!(app(&s)["setupActions"][0]["kind"], "configure-secret");

    const CANARY: &str = "canary-secret-value-7f3a";
    for (slot, value, code) in [
        ("nope", CANARY, ErrorCode::SecretSlotUnknown),
        ("api_token", "", ErrorCode::SecretInvalidValue),
    ] {
        let e = api::call(
            &s,
            "bind_secret",
            json!({"appId": "vault-app", "slot": slot, "value": value}),
        )
        .unwrap_err();
        assert_eq!(e.code, code, "{slot}");
    }
    let out = call(
        &s,
        "bind_secret",
        json!({"appId": "vault-app", "slot": "api_token", "value": CANARY}),
    );
    assert_eq!(out["slot"], "api_token");
    assert_eq!(out["store"], "encrypted-file");
    assert!(!out.to_string().contains(CANARY));
    assert!(!out.to_string().contains("ref"));
    assert_ne!(app(&s)["readiness"], "needs-setup");
    assert!(app(&s)["setupActions"].as_array().unwrap().is_empty());
    let audit = call(&s, "audit", json!({"appId": "vault-app", "limit": 50}));
    assert!(!audit.to_string().contains(CANARY));
}
