//! `lime.ui` routes, palette commands and artifact viewers over a real store
//! (`hosting/bridge/host/ui_launch.rs`): registration is per app, bounded and validated; a
//! launch reaches only a frame of the app that declares or registered what it names; every
//! refusal has its stable code and changes nothing.

mod support;

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::host::ui_launch::{MAX_PENDING_LAUNCHES, MAX_ROUTES_PER_APP};
use host_core::hosting::bridge::host::{BridgeHost, Outgoing};
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::bridge::mounts::Mount;
use host_core::hosting::bridge::wire::UiLaunchPayload;
use host_core::hosting::capability::services::Services;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::install::store::Store;
use serde_json::{json, Value};
use support::{install, repo_root};

const APP: &str = "standard-conformance";

fn setup() -> (tempfile::TempDir, DataDir, BridgeHost) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(
        &dir,
        &repo_root().join("fixtures/apps/standard-conformance"),
    );
    install(&dir, &repo_root().join("fixtures/apps/conformance-app"));
    let host = BridgeHost::new(
        Services::new(dir.apps_data()),
        HostProfile::all_available(),
        OriginStyle::Scheme,
    );
    (tmp, dir, host)
}

fn send(
    host: &mut BridgeHost,
    store: &Store,
    m: &Mount,
    kind: &str,
    id: &str,
    payload: Value,
) -> Vec<Value> {
    let raw = json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
                     "appId": m.app_id, "entryKey": m.entry_key, "payload": payload})
    .to_string();
    posted(&host.handle(store, &m.mount_id, &m.origin, &raw))
}

fn posted(out: &[Outgoing]) -> Vec<Value> {
    out.iter()
        .filter_map(|o| match o {
            Outgoing::Post { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

fn call(
    host: &mut BridgeHost,
    store: &Store,
    m: &Mount,
    id: &str,
    cap: &str,
    method: &str,
    args: Value,
) -> Value {
    let out = send(
        host,
        store,
        m,
        "capability:invoke",
        id,
        json!({"capability": cap, "method": method, "args": args}),
    );
    assert_eq!(out.len(), 1, "{out:?}");
    out[0].clone()
}

fn ready(host: &mut BridgeHost, store: &Store, m: &Mount) -> Vec<Value> {
    send(host, store, m, "app:ready", "ready", json!({}))
}

fn register(host: &mut BridgeHost, store: &Store, m: &Mount, args: Value) -> Value {
    call(host, store, m, "reg", "lime.ui", "registerRoute", args)
}

fn refusal_reason(e: &host_core::HostError) -> (&str, String) {
    (
        e.code.as_str(),
        e.details["reason"].as_str().unwrap_or_default().to_owned(),
    )
}

fn route(r: &str) -> UiLaunchPayload {
    UiLaunchPayload::Route {
        route: r.to_owned(),
    }
}

#[test]
fn an_app_registers_its_routes_and_lists_only_its_own() {
    let (_t, dir, mut host) = setup();
    let store = Store::open(&dir).unwrap();
    let m = host.mount(&store, APP, "main").unwrap();
    ready(&mut host, &store, &m);
    let r = register(
        &mut host,
        &store,
        &m,
        json!({"path": "/reports/:id", "title": "Report"}),
    );
    assert_eq!(r["type"], "host:response", "{r}");
    assert_eq!(
        r["payload"]["value"],
        json!({"appId": APP, "entryKey": "main", "path": "/reports/:id", "title": "Report"})
    );
    // The same path again replaces its title; no duplicate.
    register(
        &mut host,
        &store,
        &m,
        json!({"path": "/reports/:id", "title": "Reports"}),
    );
    let listed = call(
        &mut host,
        &store,
        &m,
        "l",
        "lime.ui",
        "listRoutes",
        json!({}),
    );
    assert_eq!(
        listed["payload"]["value"]["routes"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(listed["payload"]["value"]["routes"][0]["title"], "Reports");

    let other = host.mount(&store, "conformance-app", "main").unwrap();
    ready(&mut host, &store, &other);
    let theirs = call(
        &mut host,
        &store,
        &other,
        "l2",
        "lime.ui",
        "listRoutes",
        json!({}),
    );
    assert_eq!(
        theirs["payload"]["value"]["routes"],
        json!([]),
        "another app's routes stay private"
    );
    assert_eq!(host.registered_routes(&store).len(), 1);
}

#[test]
fn bad_routes_are_refused_with_stable_causes_and_store_nothing() {
    let (_t, dir, mut host) = setup();
    let store = Store::open(&dir).unwrap();
    let m = host.mount(&store, APP, "main").unwrap();
    ready(&mut host, &store, &m);
    let long = format!("/{}", "a".repeat(256));
    let bad = [
        json!({"path": "//evil.example/x"}),
        json!({"path": "https://evil.example/"}),
        json!({"path": "relative"}),
        json!({"path": ""}),
        json!({"path": "/a/../../b"}),
        json!({"path": "/a/./b"}),
        json!({"path": "/a?next=//evil"}),
        json!({"path": "/a#frag"}),
        json!({"path": "/a\\b"}),
        json!({"path": "/a\u{0}b"}),
        json!({"path": "/a b"}),
        json!({"path": long}),
        json!({"path": 7}),
        json!({"path": "/ok", "title": ""}),
        json!({"path": "/ok", "title": "x".repeat(121)}),
        json!({"path": "/ok", "title": "a\u{7}"}),
        json!({"path": "/ok", "app": "conformance-app"}),
        json!("/ok"),
    ];
    for args in bad {
        let e = register(&mut host, &store, &m, args.clone());
        assert_eq!(e["type"], "host:error", "{args}");
        assert_eq!(e["payload"]["code"], "APP_E900", "{args}");
        assert_eq!(e["payload"]["causeCode"], "ui.route_invalid", "{args}");
    }
    assert!(
        host.registered_routes(&store).is_empty(),
        "nothing was stored"
    );
}

#[test]
fn routes_are_bounded_per_app() {
    let (_t, dir, mut host) = setup();
    let store = Store::open(&dir).unwrap();
    let m = host.mount(&store, APP, "main").unwrap();
    ready(&mut host, &store, &m);
    for i in 0..MAX_ROUTES_PER_APP {
        let r = register(&mut host, &store, &m, json!({"path": format!("/r/{i}")}));
        assert_eq!(r["type"], "host:response");
    }
    let e = register(&mut host, &store, &m, json!({"path": "/one-too-many"}));
    assert_eq!(
        (
            e["payload"]["code"].as_str(),
            e["payload"]["causeCode"].as_str()
        ),
        (Some("APP_E900"), Some("ui.route_limit"))
    );
    assert_eq!(host.registered_routes(&store).len(), MAX_ROUTES_PER_APP);
    // Re-registering a known path still works at the limit.
    let again = register(
        &mut host,
        &store,
        &m,
        json!({"path": "/r/0", "title": "zero"}),
    );
    assert_eq!(again["type"], "host:response");
    // Another app has its own budget.
    let other = host.mount(&store, "conformance-app", "main").unwrap();
    ready(&mut host, &store, &other);
    assert_eq!(
        register(&mut host, &store, &other, json!({"path": "/mine"}))["type"],
        "host:response"
    );
}

#[test]
fn a_route_launch_reaches_only_its_own_app_and_waits_for_the_handshake() {
    let (_t, dir, mut host) = setup();
    let store = Store::open(&dir).unwrap();
    let m = host.mount(&store, APP, "main").unwrap();
    // Before the handshake: queued, nothing posted.
    assert!(host
        .launch(&store, &m.mount_id, route("/checks/deep"))
        .unwrap()
        .is_empty());
    let out = ready(&mut host, &store, &m);
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0]["type"], "host:snapshot");
    assert_eq!(out[1]["type"], "ui:launch");
    assert_eq!(
        out[1]["payload"],
        json!({"kind": "route", "route": "/checks/deep"})
    );
    assert_eq!(out[1]["appId"], APP);
    // Posted once: a second handshake does not repeat it.
    assert_eq!(ready(&mut host, &store, &m).len(), 1);

    // A registered pattern matches its parameters; a ready frame gets it at once.
    let e = host
        .launch(&store, &m.mount_id, route("/reports/42"))
        .unwrap_err();
    assert_eq!(
        refusal_reason(&e),
        ("ui.launch_refused", "route_unknown".into())
    );
    register(&mut host, &store, &m, json!({"path": "/reports/:id"}));
    let out = posted(
        &host
            .launch(&store, &m.mount_id, route("/reports/42"))
            .unwrap(),
    );
    assert_eq!(out[0]["payload"]["route"], "/reports/42");

    // Another app's route, a foreign URL, a made-up mount: refused, nothing posted.
    let other = host.mount(&store, "conformance-app", "main").unwrap();
    ready(&mut host, &store, &other);
    let e = host
        .launch(&store, &other.mount_id, route("/reports/42"))
        .unwrap_err();
    assert_eq!(
        refusal_reason(&e),
        ("ui.launch_refused", "route_unknown".into())
    );
    for bad in ["//evil.example", "/a/../checks", "/checks?x=1"] {
        let e = host.launch(&store, &m.mount_id, route(bad)).unwrap_err();
        assert_eq!(
            refusal_reason(&e),
            ("ui.launch_refused", "route_invalid".into()),
            "{bad}"
        );
    }
    let e = host
        .launch(&store, "mount_guessed", route("/checks"))
        .unwrap_err();
    assert_eq!(
        refusal_reason(&e),
        ("ui.launch_refused", "mount_unknown".into())
    );
}

#[test]
fn queued_launches_are_bounded_and_die_with_the_mount() {
    let (_t, dir, mut host) = setup();
    let store = Store::open(&dir).unwrap();
    let m = host.mount(&store, APP, "main").unwrap();
    for _ in 0..MAX_PENDING_LAUNCHES {
        host.launch(&store, &m.mount_id, route("/checks")).unwrap();
    }
    let e = host
        .launch(&store, &m.mount_id, route("/checks"))
        .unwrap_err();
    assert_eq!(
        refusal_reason(&e),
        ("ui.launch_refused", "too_many_pending".into())
    );
    host.unmount(&m.mount_id);
    let fresh = host.mount(&store, APP, "main").unwrap();
    assert_eq!(
        ready(&mut host, &store, &fresh).len(),
        1,
        "nothing carried over"
    );
}

#[test]
fn a_command_launch_names_a_ready_command_entry_of_the_same_app() {
    let (_t, dir, mut host) = setup();
    let store = Store::open(&dir).unwrap();
    let m = host.mount(&store, APP, "main").unwrap();
    ready(&mut host, &store, &m);
    let cmd = |key: &str, command: Option<&str>| UiLaunchPayload::Command {
        entry_key: key.into(),
        command: command.map(str::to_owned),
    };
    let out = posted(
        &host
            .launch(&store, &m.mount_id, cmd("rerun", Some("/rerun-checks")))
            .unwrap(),
    );
    assert_eq!(
        out[0]["payload"],
        json!({"kind": "command", "entryKey": "rerun", "command": "/rerun-checks"})
    );
    for (key, command) in [
        ("main", None),
        ("viewer", None),
        ("rerun", Some("/other")),
        ("nope", None),
    ] {
        let e = host
            .launch(&store, &m.mount_id, cmd(key, command))
            .unwrap_err();
        assert_eq!(
            refusal_reason(&e),
            ("ui.launch_refused", "command_unknown".into()),
            "{key}"
        );
    }
    // The palette lists it with the entry that runs it.
    let commands = host.palette_commands(&store).unwrap();
    let c = commands.iter().find(|c| c.app_id == APP).unwrap();
    assert_eq!(
        (c.entry_key.as_str(), c.surface_entry.as_str()),
        ("rerun", "main")
    );
    assert_eq!(c.command.as_deref(), Some("/rerun-checks"));
}

#[test]
fn an_artifact_opens_only_in_an_entry_that_views_its_type_and_is_read_through_the_choke_point() {
    let (_t, dir, mut host) = setup();
    let store = Store::open(&dir).unwrap();
    let main = host.mount(&store, APP, "main").unwrap();
    ready(&mut host, &store, &main);
    let made = call(
        &mut host,
        &store,
        &main,
        "c",
        "lime.artifacts",
        "create",
        json!({"kind": "conformance-report", "title": "R", "content": "ok"}),
    );
    let id = made["payload"]["value"]["id"].as_str().unwrap().to_owned();
    let open = |id: &str, ty: &str, owner: &str| UiLaunchPayload::Artifact {
        artifact_id: id.into(),
        artifact_type: ty.into(),
        owner_app_id: owner.into(),
    };
    let e = host
        .launch(&store, &main.mount_id, open(&id, "conformance-report", APP))
        .unwrap_err();
    assert_eq!(
        refusal_reason(&e),
        ("ui.launch_refused", "type_not_viewed".into())
    );

    let viewer = host.mount(&store, APP, "viewer").unwrap();
    let e = host
        .launch(&store, &viewer.mount_id, open(&id, "other-type", APP))
        .unwrap_err();
    assert_eq!(
        refusal_reason(&e),
        ("ui.launch_refused", "type_not_viewed".into())
    );
    for bad in ["../x", "", "a b", &"x".repeat(129)] {
        let e = host
            .launch(
                &store,
                &viewer.mount_id,
                open(bad, "conformance-report", APP),
            )
            .unwrap_err();
        assert_eq!(
            refusal_reason(&e),
            ("ui.launch_refused", "artifact_invalid".into()),
            "{bad}"
        );
    }
    assert!(host
        .launch(
            &store,
            &viewer.mount_id,
            open(&id, "conformance-report", APP)
        )
        .unwrap()
        .is_empty());
    let out = ready(&mut host, &store, &viewer);
    assert_eq!(
        out[1]["payload"],
        json!({"kind": "artifact", "artifactId": id, "artifactType": "conformance-report", "ownerAppId": APP})
    );
    // The viewer reads its own app's artifact...
    let read = call(
        &mut host,
        &store,
        &viewer,
        "r",
        "lime.artifacts",
        "read",
        json!({"id": id}),
    );
    assert_eq!(read["type"], "host:response", "{read}");

    // ...but a ref to another app's artifact, delivered or guessed, reads nothing.
    let other = host.mount(&store, "conformance-app", "main").unwrap();
    ready(&mut host, &store, &other);
    let theirs = call(
        &mut host,
        &store,
        &other,
        "c2",
        "lime.artifacts",
        "create",
        json!({"kind": "note", "title": "private", "content": "secret words"}),
    );
    let their_id = theirs["payload"]["value"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    host.launch(
        &store,
        &viewer.mount_id,
        open(&their_id, "conformance-report", "conformance-app"),
    )
    .unwrap();
    let refused = call(
        &mut host,
        &store,
        &viewer,
        "r2",
        "lime.artifacts",
        "read",
        json!({"id": their_id}),
    );
    assert_eq!(refused["type"], "host:error");
    assert_eq!(refused["payload"]["code"], "APP_E904");
    assert!(!refused.to_string().contains("secret words"));

    // The host lists the viewer for the type.
    let viewers =
        host_core::hosting::bridge::host::ui_launch::catalog::viewers(&store, "conformance-report")
            .unwrap();
    assert_eq!(viewers.len(), 1);
    assert_eq!(
        (viewers[0].app_id.as_str(), viewers[0].entry_key.as_str()),
        (APP, "viewer")
    );
}

#[test]
fn an_app_removed_from_the_session_loses_its_routes() {
    let (_t, dir, mut host) = setup();
    let store = Store::open(&dir).unwrap();
    let m = host.mount(&store, APP, "main").unwrap();
    ready(&mut host, &store, &m);
    register(&mut host, &store, &m, json!({"path": "/reports/:id"}));
    let other = host.mount(&store, "conformance-app", "main").unwrap();
    ready(&mut host, &store, &other);
    register(&mut host, &store, &other, json!({"path": "/kept"}));
    // Disable, uninstall, update and rollback all end the app's mounts this way.
    host.unmount_app(APP);
    let paths: Vec<String> = host
        .registered_routes(&store)
        .into_iter()
        .map(|r| r.path)
        .collect();
    assert_eq!(
        paths,
        vec!["/kept".to_owned()],
        "only the other app's route is left"
    );
    let again = host.mount(&store, APP, "main").unwrap();
    ready(&mut host, &store, &again);
    let e = host
        .launch(&store, &again.mount_id, route("/reports/42"))
        .unwrap_err();
    assert_eq!(
        refusal_reason(&e),
        ("ui.launch_refused", "route_unknown".into())
    );
}

#[test]
fn routes_of_a_package_no_longer_active_are_retired_even_without_a_live_mount() {
    let (_t, dir, mut host) = setup();
    let store = Store::open(&dir).unwrap();
    let m = host.mount(&store, APP, "main").unwrap();
    ready(&mut host, &store, &m);
    register(&mut host, &store, &m, json!({"path": "/reports/:id"}));
    host.unmount(&m.mount_id); // the tab was closed: no mount of the app is left
    assert_eq!(host.registered_routes(&store).len(), 1);

    // Another process disables the app: the palette no longer offers its routes.
    {
        let (locked, _) = Store::open_locked(&dir).unwrap();
        locked.set_enabled(APP, false).unwrap();
    }
    assert!(
        host.registered_routes(&store).is_empty(),
        "a disabled app's routes are not listed"
    );
    {
        let (locked, _) = Store::open_locked(&dir).unwrap();
        locked.set_enabled(APP, true).unwrap();
    }
    assert_eq!(
        host.registered_routes(&store).len(),
        1,
        "same package again: its routes are back"
    );

    // Uninstalled and installed again (another process, no unmount in this session): a fresh
    // install's frames have not registered anything.
    {
        let (locked, _) = Store::open_locked(&dir).unwrap();
        locked
            .uninstall(APP, host_core::install::store::DataMode::DeleteData, None)
            .unwrap();
    }
    assert!(host.registered_routes(&store).is_empty());
    // The mount watcher retires them for good once it sees the uninstall, so the very same
    // package installed again starts with none.
    host.retire_routes(&store);
    install(
        &dir,
        &repo_root().join("fixtures/apps/standard-conformance"),
    );
    assert!(
        host.registered_routes(&store).is_empty(),
        "a reinstall starts without the old routes"
    );
    {
        let (locked, _) = Store::open_locked(&dir).unwrap();
        locked
            .uninstall(APP, host_core::install::store::DataMode::DeleteData, None)
            .unwrap();
    }
    let pkg = tempfile::tempdir().unwrap();
    let changed = pkg.path().join("standard-conformance");
    support::copy_dir(
        &repo_root().join("fixtures/apps/standard-conformance"),
        &changed,
    );
    let app_md = changed.join("APP.md");
    let text = std::fs::read_to_string(&app_md)
        .unwrap()
        .replace("version: 1.0.0", "version: 1.0.1");
    std::fs::write(&app_md, text).unwrap();
    install(&dir, &changed);
    assert!(
        host.registered_routes(&store).is_empty(),
        "the new package registered nothing"
    );
    let again = host.mount(&store, APP, "main").unwrap();
    ready(&mut host, &store, &again);
    let e = host
        .launch(&store, &again.mount_id, route("/reports/42"))
        .unwrap_err();
    assert_eq!(
        refusal_reason(&e),
        ("ui.launch_refused", "route_unknown".into())
    );
}
