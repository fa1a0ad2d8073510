//! The transport-neutral bridge host over a real store: the handshake, a storage round trip,
//! prompts, and spoofed messages that execute nothing.

mod support;

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::host::{Answer, BridgeHost, Outgoing};
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::capability::services::Services;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::install::store::Store;
use serde_json::{json, Value};
use support::{fixture, install, optional_storage_app};

fn msg(kind: &str, id: &str, payload: Value) -> String {
    json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
           "appId": "hello-app", "entryKey": "notes", "payload": payload})
    .to_string()
}

fn posted(out: &[Outgoing]) -> Vec<&Value> {
    out.iter()
        .filter_map(|o| match o {
            Outgoing::Post { message, .. } => Some(message),
            _ => None,
        })
        .collect()
}

fn setup() -> (tempfile::TempDir, DataDir, BridgeHost) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &fixture("good/hello-app"));
    let host = BridgeHost::new(
        Services::new(dir.apps_data()),
        HostProfile::all_available(),
        OriginStyle::Scheme,
    );
    (tmp, dir, host)
}

#[test]
fn handshake_snapshot_and_a_storage_round_trip() {
    let (_t, dir, mut host) = setup();
    let store = Store::open(&dir).unwrap();
    let m = host.mount(&store, "hello-app", "notes").unwrap();
    let origin = m.origin.clone();

    let out = host.handle(
        &store,
        &m.mount_id,
        &origin,
        &msg("app:ready", "r0", json!({})),
    );
    let snap = posted(&out)[0];
    assert_eq!(snap["type"], "host:snapshot");
    assert_eq!(snap["requestId"], "r0");
    let p = &snap["payload"];
    assert_eq!(p["appId"], "hello-app");
    assert_eq!(p["entryKey"], "notes");
    assert_eq!(p["route"], "/notes");
    assert_eq!(p["origin"], "agentapp://hello-app");
    assert_eq!(p["themeMode"], "system");
    assert!(p["capabilities"]["available"]
        .as_array()
        .unwrap()
        .contains(&json!("lime.storage")));
    // No paths, tokens or internal names in the snapshot.
    let text = snap.to_string();
    assert!(!text.contains(dir.root().to_str().unwrap()));
    assert!(!text.to_lowercase().contains("token\":\"") && !text.contains("invoke"));

    let set = msg(
        "capability:invoke",
        "r1",
        json!({"capability": "lime.storage", "method": "set", "args": {"key": "k", "value": [1, 2]}}),
    );
    let out = host.handle(&store, &m.mount_id, &origin, &set);
    assert_eq!(posted(&out)[0]["type"], "host:response");
    let get = msg(
        "capability:invoke",
        "r2",
        json!({"capability": "lime.storage", "method": "get", "args": {"key": "k"}}),
    );
    let out = host.handle(&store, &m.mount_id, &origin, &get);
    let resp = posted(&out)[0];
    assert_eq!(resp["type"], "host:response");
    assert_eq!(resp["requestId"], "r2");
    assert_eq!(resp["payload"]["value"], json!([1, 2]));
    assert!(resp["payload"]["traceId"]
        .as_str()
        .unwrap()
        .starts_with("trace_"));
    assert_eq!(host.diagnostics().executions, 2);

    // An unimplemented capability is a host:error with the standard code, never mock success.
    let out = host.handle(
        &store,
        &m.mount_id,
        &origin,
        &msg(
            "capability:invoke",
            "r3",
            json!({"capability": "lime.cloudSession", "method": "requestLogin"}),
        ),
    );
    let err = posted(&out)[0];
    assert_eq!(err["type"], "host:error");
    assert_eq!(err["payload"]["code"], "APP_E001");
    assert_eq!(err["payload"]["capability"], "lime.cloudSession");
    assert_eq!(host.diagnostics().executions, 2);
}

#[test]
fn spoofed_messages_execute_nothing_and_are_recorded() {
    let (_t, dir, mut host) = setup();
    let store = Store::open(&dir).unwrap();
    let m = host.mount(&store, "hello-app", "notes").unwrap();
    let other = host.mount(&store, "hello-app", "settings");
    let origin = m.origin.clone();
    let set = msg(
        "capability:invoke",
        "r1",
        json!({"capability": "lime.storage", "method": "set", "args": {"key": "k", "value": 1}}),
    );
    // Before app:ready.
    assert!(host.handle(&store, &m.mount_id, &origin, &set).is_empty());
    host.handle(
        &store,
        &m.mount_id,
        &origin,
        &msg("app:ready", "r0", json!({})),
    );
    let mut spoofs: Vec<(String, String, String)> = vec![
        (
            m.mount_id.clone(),
            "agentapp://evil-app".into(),
            set.clone(),
        ),
        (m.mount_id.clone(), "null".into(), set.clone()),
        ("m_forged".into(), origin.clone(), set.clone()),
        (
            m.mount_id.clone(),
            origin.clone(),
            set.replace(PROTOCOL, "lime.other"),
        ),
        (
            m.mount_id.clone(),
            origin.clone(),
            set.replace("\"version\":1", "\"version\":2"),
        ),
        (
            m.mount_id.clone(),
            origin.clone(),
            set.replace("\"appId\":\"hello-app\"", "\"appId\":\"other-app\""),
        ),
        (
            m.mount_id.clone(),
            origin.clone(),
            set.replace("\"entryKey\":\"notes\"", "\"entryKey\":\"settings\""),
        ),
        (m.mount_id.clone(), origin.clone(), "{\"protocol\":".into()),
        (
            m.mount_id.clone(),
            origin.clone(),
            format!(
                "{}{}",
                &set[..set.len() - 1],
                &format!(",\"pad\":\"{}\"}}", "x".repeat(1 << 20))
            ),
        ),
    ];
    if let Ok(o) = &other {
        // A message carrying the other entry's identity, sent on this mount.
        spoofs.push((
            m.mount_id.clone(),
            origin.clone(),
            set.replace("\"notes\"", &format!("\"{}\"", o.entry_key)),
        ));
    }
    for (mount_id, origin, raw) in &spoofs {
        let out = host.handle(&store, mount_id, origin, raw);
        assert!(
            out.is_empty(),
            "{mount_id} {origin} {}",
            &raw[..raw.len().min(120)]
        );
    }
    host.report_refusal(Some(&m.mount_id), "bridge.wrong_source", 10);
    let d = host.diagnostics();
    assert_eq!(d.executions, 0, "no spoofed message executed anything");
    let refused: u64 = d.refused_by_reason.values().sum();
    assert_eq!(refused as usize, spoofs.len() + 2);
    for reason in [
        "bridge.not_ready",
        "bridge.wrong_origin",
        "bridge.unknown_mount",
        "bridge.wrong_protocol",
        "bridge.wrong_version",
        "bridge.app_mismatch",
        "bridge.entry_mismatch",
        "bridge.not_json",
        "bridge.too_large",
        "bridge.wrong_source",
    ] {
        assert!(
            d.refused_by_reason.contains_key(reason),
            "{reason}: {:?}",
            d.refused_by_reason
        );
    }
    // The genuine message still works afterwards.
    let out = host.handle(&store, &m.mount_id, &m.origin, &set);
    assert_eq!(posted(&out)[0]["type"], "host:response");
    assert_eq!(host.diagnostics().executions, 1);
}

#[test]
fn prompts_answer_the_waiting_call_and_unmounting_ends_everything() {
    let (t, dir, mut host) = setup();
    // Make the storage permission optional so the first call asks.
    let store = Store::open(&dir).unwrap();
    assert!(store.revoke("hello-app", "notes_storage").is_ok());
    drop(store);
    let _ = t;
    let store = Store::open(&dir).unwrap();
    // A revoked *required* permission blocks the entry: it cannot even be mounted.
    assert!(host.mount(&store, "hello-app", "notes").is_err());
    store.grant("hello-app", "notes_storage").unwrap();
    let m = host.mount(&store, "hello-app", "notes").unwrap();
    host.handle(
        &store,
        &m.mount_id,
        &m.origin,
        &msg("app:ready", "r0", json!({})),
    );
    // Navigation: own routes only.
    let out = host.handle(
        &store,
        &m.mount_id,
        &m.origin,
        &msg("host:navigate", "n1", json!({"route": "/settings"})),
    );
    assert!(matches!(out[0], Outgoing::Navigate { .. }));
    let out = host.handle(
        &store,
        &m.mount_id,
        &m.origin,
        &msg("host:navigate", "n2", json!({"route": "/elsewhere"})),
    );
    assert_eq!(posted(&out)[0]["type"], "host:error");
    // External links: http(s) only, and the user confirms.
    let out = host.handle(
        &store,
        &m.mount_id,
        &m.origin,
        &msg(
            "host:openExternal",
            "e1",
            json!({"url": "https://notes.example.com/x"}),
        ),
    );
    match &out[0] {
        Outgoing::ConfirmExternal {
            declared_domains, ..
        } => assert_eq!(declared_domains, &vec!["notes.example.com".to_owned()]),
        other => panic!("{other:?}"),
    }
    let out = host.handle(
        &store,
        &m.mount_id,
        &m.origin,
        &msg(
            "host:openExternal",
            "e2",
            json!({"url": "file:///etc/passwd"}),
        ),
    );
    assert_eq!(posted(&out)[0]["type"], "host:error");

    let removed = host.unmount_app("hello-app");
    assert_eq!(removed.len(), 1);
    let out = host.handle(
        &store,
        &m.mount_id,
        &m.origin,
        &msg("host:getSnapshot", "s", json!({})),
    );
    assert!(out.is_empty());
    assert_eq!(
        host.diagnostics().refused_by_reason["bridge.unknown_mount"],
        1
    );
    // Answering a prompt that no longer exists does nothing.
    assert!(host
        .answer(&store, "prompt_nope", Answer::AllowAlways)
        .is_empty());
}

#[test]
fn a_prompt_holds_the_call_until_the_user_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = optional_storage_app(tmp.path());
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &pkg);
    let mut host = BridgeHost::new(
        Services::new(dir.apps_data()),
        HostProfile::all_available(),
        OriginStyle::Scheme,
    );
    let store = Store::open(&dir).unwrap();
    let m = host.mount(&store, "hello-app", "notes").unwrap();
    host.handle(
        &store,
        &m.mount_id,
        &m.origin,
        &msg("app:ready", "r0", json!({})),
    );
    let get = |id: &str| {
        msg(
            "capability:invoke",
            id,
            json!({"capability": "lime.storage", "method": "get", "args": {"key": "k"}}),
        )
    };
    let prompt_of = |out: &[Outgoing]| match &out[0] {
        Outgoing::Prompt {
            prompt_id,
            question,
            ..
        } => {
            assert_eq!(question.permission.as_deref(), Some("notes_storage"));
            prompt_id.clone()
        }
        other => panic!("expected a prompt, got {other:?}"),
    };

    let p = prompt_of(&host.handle(&store, &m.mount_id, &m.origin, &get("r1")));
    assert_eq!(
        host.diagnostics().executions,
        0,
        "nothing runs while the prompt is open"
    );
    let out = host.answer(&store, &p, Answer::AllowOnce);
    assert_eq!(posted(&out)[0]["type"], "host:response");
    assert_eq!(posted(&out)[0]["requestId"], "r1");

    let p = prompt_of(&host.handle(&store, &m.mount_id, &m.origin, &get("r2")));
    let out = host.answer(&store, &p, Answer::Dismissed);
    assert_eq!(
        posted(&out)[0]["payload"]["code"],
        "APP_E002",
        "unanswered is not allowed"
    );

    let p = prompt_of(&host.handle(&store, &m.mount_id, &m.origin, &get("r3")));
    let out = host.answer(&store, &p, Answer::Deny);
    assert_eq!(posted(&out)[0]["payload"]["code"], "APP_E002");
    // Denied for this mount: no new prompt, an immediate error.
    let out = host.handle(&store, &m.mount_id, &m.origin, &get("r4"));
    assert_eq!(posted(&out)[0]["payload"]["causeCode"], "permission.denied");

    // Cancelling a call that waits for a prompt ends it; the prompt's answer then does nothing.
    let m3 = host.mount(&store, "hello-app", "notes").unwrap();
    host.handle(
        &store,
        &m3.mount_id,
        &m3.origin,
        &msg("app:ready", "r0", json!({})),
    );
    let p = prompt_of(&host.handle(&store, &m3.mount_id, &m3.origin, &get("c1")));
    let out = host.handle(
        &store,
        &m3.mount_id,
        &m3.origin,
        &msg("capability:cancel", "c2", json!({"requestId": "c1"})),
    );
    assert_eq!(posted(&out)[0]["payload"]["code"], "HOST_E_CANCELLED");
    assert_eq!(posted(&out)[0]["requestId"], "c1");
    assert!(host.answer(&store, &p, Answer::AllowOnce).is_empty());

    // Allow always on a fresh mount becomes a grant.
    let m2 = host.mount(&store, "hello-app", "notes").unwrap();
    host.handle(
        &store,
        &m2.mount_id,
        &m2.origin,
        &msg("app:ready", "r0", json!({})),
    );
    let p = prompt_of(&host.handle(&store, &m2.mount_id, &m2.origin, &get("r5")));
    host.answer(&store, &p, Answer::AllowAlways);
    assert!(store.grants("hello-app").unwrap().contains("notes_storage"));
    let out = host.handle(&store, &m2.mount_id, &m2.origin, &get("r6"));
    assert_eq!(posted(&out)[0]["type"], "host:response");
    assert_eq!(host.diagnostics().executions, 3);
}

#[test]
fn the_current_profile_runs_hello_app_and_opens_its_first_surface_by_default() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &fixture("good/hello-app"));
    let store = Store::open(&dir).unwrap();

    // lime.ui and lime.storage are implemented, so the published profile offers them and
    // hello-app runs (degraded only by its own eval about the optional, ungranted network
    // permission; it was `blocked` while the profile offered neither).
    let apps = store.list_apps().unwrap();
    assert_eq!(apps[0].readiness, "ready-degraded");
    let report = store
        .readiness("hello-app", &HostProfile::current())
        .unwrap();
    assert!(
        report.checks.iter().all(|c| c.kind != "capability"
            || !matches!(
                c.outcome,
                host_core::install::readiness::Outcome::Blocked
                    | host_core::install::readiness::Outcome::Degraded
            )),
        "{:?}",
        report.checks
    );
    let entries: Vec<(&str, &str, bool)> = apps[0]
        .entries
        .iter()
        .map(|e| (e.key.as_str(), e.kind.as_str(), e.mountable))
        .collect();
    assert_eq!(
        entries,
        [("notes", "page", true), ("settings", "settings", true)]
    );
    assert_eq!(apps[0].entries[0].title.as_deref(), Some("Notes"));

    assert_eq!(
        host_core::hosting::bridge::mounting::default_entry(&store, "hello-app").unwrap(),
        "notes"
    );
    let err = host_core::hosting::bridge::mounting::default_entry(&store, "nope").unwrap_err();
    assert_eq!(err.code.as_str(), "app.not_installed");

    let mut host = BridgeHost::new(
        Services::new(dir.apps_data()),
        HostProfile::current(),
        OriginStyle::Scheme,
    );
    let m = host.mount(&store, "hello-app", "notes").unwrap();
    let out = host.handle(
        &store,
        &m.mount_id,
        &m.origin,
        &msg("app:ready", "r0", json!({})),
    );
    let snap = posted(&out)[0];
    let available = snap["payload"]["capabilities"]["available"].clone();
    assert_eq!(available, json!(["lime.ui", "lime.storage"]));
}
