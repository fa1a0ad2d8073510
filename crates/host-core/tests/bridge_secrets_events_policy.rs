//! `lime.secrets`, `lime.events` and `lime.policy.requestPermission` through `BridgeHost` over a
//! real store: secret readiness and opaque refs (no plaintext in any bridge output, audit row or
//! data file), events between the mounts of one app and never across apps, and the runtime
//! permission prompt. The secret store is the encrypted file, its key in this test's own folder.

mod support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use host_core::foundation::error::ErrorCode;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::app_secrets;
use host_core::hosting::bridge::host::{Answer, BridgeHost, Outgoing};
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::bridge::mounts::{Mount, MAX_SUBSCRIPTIONS};
use host_core::hosting::capability::services::Services;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::install::readiness::Status;
use host_core::install::secrets::SecretValue;
use host_core::install::store::{DataMode, Store};
use serde_json::{json, Value};
use support::{copy_dir, fixture, install};

const CANARY: &str = "s3cret-CANARY-7f1c9a-never-shown";

/// Every test in this binary keeps secrets in the encrypted file, with one key file in a
/// private folder of this process (set once: environment variables are process-wide).
fn secret_env() {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = tempfile::tempdir().unwrap().keep();
        std::env::set_var("APPHOST_SECRET_STORE", "file");
        std::env::set_var("APPHOST_SECRET_KEY_FILE", d.join("keys/k.key"));
        d
    });
}

/// A copy of the fixture `from` renamed `name`, declaring `caps` on top of its own and the
/// `extra` frontmatter.
fn variant(tmp: &Path, from: &str, name: &str, caps: &[&str], extra: &str) -> PathBuf {
    let dest = tmp.join(name);
    copy_dir(&fixture(from), &dest);
    let md = std::fs::read_to_string(dest.join("APP.md")).unwrap();
    let mut lines = String::new();
    for c in caps {
        lines.push_str(&format!("    {c}: \"^0.10.0\"\n"));
    }
    let md = md
        .replacen(
            &format!("name: {from_name}", from_name = base(from)),
            &format!("name: {name}"),
            1,
        )
        .replacen(
            "    lime.storage: \"^0.10.0\"\n",
            &format!("    lime.storage: \"^0.10.0\"\n{lines}"),
            1,
        )
        .replacen("runtimePackage:", &format!("{extra}runtimePackage:"), 1);
    std::fs::write(dest.join("APP.md"), md).unwrap();
    dest
}

fn base(from: &str) -> &str {
    from.rsplit('/').next().unwrap()
}

fn host() -> BridgeHost {
    BridgeHost::new(
        Services::new(PathBuf::new()),
        HostProfile::all_available(),
        OriginStyle::Scheme,
    )
}

fn raw(m: &Mount, kind: &str, id: &str, payload: Value) -> String {
    json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
           "appId": m.app_id, "entryKey": m.entry_key, "payload": payload})
    .to_string()
}

fn ready(host: &mut BridgeHost, store: &Store, m: &Mount) {
    let out = host.handle(
        store,
        &m.mount_id,
        &m.origin,
        &raw(m, "app:ready", "r0", json!({})),
    );
    assert_eq!(posted(&out)[0].1["type"], "host:snapshot");
}

fn invoke(
    host: &mut BridgeHost,
    store: &Store,
    m: &Mount,
    id: &str,
    capability: &str,
    method: &str,
    args: Value,
) -> Vec<Outgoing> {
    let payload = json!({"capability": capability, "method": method, "args": args});
    host.handle(
        store,
        &m.mount_id,
        &m.origin,
        &raw(m, "capability:invoke", id, payload),
    )
}

fn posted(out: &[Outgoing]) -> Vec<(&str, &Value)> {
    out.iter()
        .filter_map(|o| match o {
            Outgoing::Post { mount_id, message } => Some((mount_id.as_str(), message)),
            _ => None,
        })
        .collect()
}

/// The one `host:response` / `host:error` for request `id` among `out`.
fn answer<'a>(out: &'a [Outgoing], id: &str) -> &'a Value {
    let found: Vec<&Value> = posted(out)
        .into_iter()
        .map(|(_, m)| m)
        .filter(|m| m["requestId"] == id)
        .collect();
    assert_eq!(found.len(), 1, "{out:?}");
    found[0]
}

fn value(out: &[Outgoing], id: &str) -> Value {
    let a = answer(out, id);
    assert_eq!(a["type"], "host:response", "{a}");
    a["payload"]["value"].clone()
}

fn error(out: &[Outgoing], id: &str) -> (String, String) {
    let a = answer(out, id);
    assert_eq!(a["type"], "host:error", "{a}");
    (
        a["payload"]["code"].as_str().unwrap().to_owned(),
        a["payload"]["causeCode"].as_str().unwrap_or("").to_owned(),
    )
}

/// Every byte of every file under `dir`, as lossy text.
fn all_file_text(dir: &Path) -> String {
    let mut out = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.push_str(&String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out
}

const SECRETS: &str = "secrets:\n  - {key: api_token, provider: example, required: true, scope: app}\n  - {key: backup_token, required: false, scope: user}\n";

#[test]
fn secret_slots_gate_readiness_and_apps_only_ever_get_opaque_refs() {
    secret_env();
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let pkg = variant(
        tmp.path(),
        "good/hello-app",
        "vault-app",
        &["lime.secrets"],
        SECRETS,
    );
    install(&dir, &pkg);
    let profile = HostProfile::all_available();
    let mut host = host();

    // An unbound required slot: needs-setup, with the CLI command as the setup action.
    {
        let store = Store::open(&dir).unwrap();
        let r = store.readiness("vault-app", &profile).unwrap();
        assert_eq!(r.status, Status::NeedsSetup);
        let a = r
            .setup_actions
            .iter()
            .find(|a| a.kind == "configure-secret")
            .unwrap();
        assert_eq!(a.key, "api_token");
        assert_eq!(
            a.description.as_deref(),
            Some("apphost secrets set vault-app api_token")
        );
        assert!(!r.setup_actions.iter().any(|a| a.key == "backup_token"));
        let e = host.mount(&store, "vault-app", "notes").unwrap_err();
        assert_eq!(e.code, ErrorCode::MountNotReady);
    }

    // Binding it makes the app mountable; only declared slots can be bound.
    let (store, _) = Store::open_locked(&dir).unwrap();
    let before = std::fs::read(dir.db_path()).unwrap();
    let e = app_secrets::set(
        &store,
        "vault-app",
        "nope",
        &SecretValue::new(CANARY.into()),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::SecretSlotUnknown);
    let e = app_secrets::set(
        &store,
        "vault-app",
        "api_token",
        &SecretValue::new(String::new()),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::SecretInvalidValue);
    assert_eq!(std::fs::read(dir.db_path()).unwrap(), before);
    assert!(!dir.root().join("secrets.enc").exists());
    app_secrets::set(
        &store,
        "vault-app",
        "api_token",
        &SecretValue::new(CANARY.into()),
    )
    .unwrap();
    assert_eq!(
        store.readiness("vault-app", &profile).unwrap().status,
        Status::ReadyDegraded
    );
    let m = host.mount(&store, "vault-app", "notes").unwrap();
    ready(&mut host, &store, &m);

    let mut outputs: Vec<String> = Vec::new();
    let mut get = |host: &mut BridgeHost, id: &str, key: &str| {
        let out = invoke(
            host,
            &store,
            &m,
            id,
            "lime.secrets",
            "getRef",
            json!({"key": key}),
        );
        outputs.push(serde_json::to_string(&out).unwrap());
        out
    };
    let r1 = value(&get(&mut host, "g1", "api_token"), "g1")["ref"]
        .as_str()
        .unwrap()
        .to_owned();
    let r2 = value(&get(&mut host, "g2", "api_token"), "g2")["ref"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(r1, r2, "stable while the binding stands");
    assert!(
        r1.starts_with(app_secrets::REF_PREFIX) && r1.len() == 10 + 32,
        "{r1}"
    );
    assert!(!r1.contains("api_token") && !r1.contains(CANARY));
    // Unbound optional slot, undeclared slot, bad arguments: documented errors.
    assert_eq!(
        error(&get(&mut host, "g3", "backup_token"), "g3"),
        ("APP_E011".into(), "secrets.not_bound".into())
    );
    assert_eq!(
        error(&get(&mut host, "g4", "not_a_slot"), "g4"),
        ("APP_E002".into(), "secrets.not_declared".into())
    );
    let out = invoke(
        &mut host,
        &store,
        &m,
        "g5",
        "lime.secrets",
        "getRef",
        json!({"key": 7}),
    );
    assert_eq!(
        error(&out, "g5"),
        ("APP_E900".into(), "secrets.invalid_argument".into())
    );
    // The host (never the app) can resolve the ref to the value.
    assert_eq!(
        app_secrets::resolve(&store, "vault-app", &r1)
            .unwrap()
            .unwrap()
            .expose(),
        CANARY
    );
    assert!(app_secrets::resolve(&store, "other", &r1)
        .unwrap()
        .is_none());

    // Rebinding (even to the same value) invalidates the old ref; so does unset.
    app_secrets::set(
        &store,
        "vault-app",
        "api_token",
        &SecretValue::new(CANARY.into()),
    )
    .unwrap();
    let r3 = value(&get(&mut host, "g6", "api_token"), "g6")["ref"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(r3, r1);
    assert!(app_secrets::resolve(&store, "vault-app", &r1)
        .unwrap()
        .is_none());
    app_secrets::set(
        &store,
        "vault-app",
        "backup_token",
        &SecretValue::new("b-value".into()),
    )
    .unwrap();
    let rb = value(&get(&mut host, "g7", "backup_token"), "g7")["ref"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(app_secrets::unset(&store, "vault-app", "backup_token").unwrap());
    assert!(!app_secrets::unset(&store, "vault-app", "backup_token").unwrap());
    assert_eq!(
        error(&get(&mut host, "g8", "backup_token"), "g8"),
        ("APP_E011".into(), "secrets.not_bound".into())
    );
    assert!(app_secrets::resolve(&store, "vault-app", &rb)
        .unwrap()
        .is_none());

    // No plaintext anywhere: bridge outputs, audit rows, any file of the data directory.
    for o in &outputs {
        assert!(!o.contains(CANARY) && !o.contains("b-value"), "{o}");
    }
    let audit = serde_json::to_string(&store.audit_log(Some("vault-app"), 1000).unwrap()).unwrap();
    assert!(audit.contains("secret.bind") && audit.contains("secret.unbind"));
    assert!(audit.contains("\"capability\":\"lime.secrets\""));
    assert!(!audit.contains(CANARY) && !audit.contains("b-value"));
    assert!(
        !audit.contains(&r3),
        "the ref is not in the audit log either"
    );
    let files = all_file_text(dir.root());
    assert!(!files.contains(CANARY) && !files.contains("b-value"));
    let list = app_secrets::list(&store, "vault-app").unwrap();
    let text = serde_json::to_string(&list).unwrap();
    assert!(text.contains("\"bound\":true") && !text.contains(CANARY) && !text.contains(&r3));

    // Uninstall --keep-data keeps the binding and the value; --delete-data removes both.
    drop(store);
    {
        let (store, _) = Store::open_locked(&dir).unwrap();
        store
            .uninstall("vault-app", DataMode::KeepData, None)
            .unwrap();
        assert_eq!(store.secret_bindings("vault-app").unwrap().len(), 1);
    }
    install(&dir, &pkg);
    {
        let (store, _) = Store::open_locked(&dir).unwrap();
        assert_eq!(
            app_secrets::resolve(&store, "vault-app", &r3)
                .unwrap()
                .unwrap()
                .expose(),
            CANARY
        );
        let plan = store
            .cleanup_plan("vault-app", DataMode::DeleteData)
            .unwrap();
        assert!(plan
            .rows
            .iter()
            .any(|r| r.table == "settings" && r.rows == 1));
        let stored_as = store.secret_bindings("vault-app").unwrap()[0]
            .stored_as
            .clone();
        let out = store
            .uninstall("vault-app", DataMode::DeleteData, None)
            .unwrap();
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
        assert!(store.secret_bindings("vault-app").unwrap().is_empty());
        let name = stored_as.split_once(':').unwrap().1;
        let file = host_core::install::secrets::open_backend(
            &dir,
            host_core::install::secrets::SecretBackend::EncryptedFile,
        )
        .unwrap();
        assert!(
            file.get(name).unwrap().is_none(),
            "the value left the store"
        );
    }
}

/// `events[]` frontmatter declaring each `(key, direction)`.
fn events_yaml(events: &[(&str, &str)]) -> String {
    let mut y = String::from("events:\n");
    for (key, direction) in events {
        y.push_str(&format!("  - key: {key}\n    direction: {direction}\n"));
    }
    y
}

/// Two apps that declare `lime.events`: "ev-a" (entries notes and settings) and "ev-b", both
/// declaring the topics the tests use (`notes.changed`, `t`, `t0`…`t31`, `over`).
fn two_apps() -> (tempfile::TempDir, DataDir) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let numbered: Vec<String> = (0..MAX_SUBSCRIPTIONS).map(|i| format!("t{i}")).collect();
    let mut topics: Vec<(&str, &str)> =
        vec![("notes.changed", "both"), ("t", "both"), ("over", "both")];
    topics.extend(numbered.iter().map(|t| (t.as_str(), "subscribe")));
    let events = events_yaml(&topics);
    install(
        &dir,
        &variant(
            tmp.path(),
            "good/hello-app",
            "ev-a",
            &["lime.events", "lime.policy"],
            &events,
        ),
    );
    install(
        &dir,
        &variant(
            tmp.path(),
            "good/notes-viewer",
            "ev-b",
            &["lime.events"],
            &events,
        ),
    );
    (tmp, dir)
}

/// `lime.events` topics must be declared in the manifest's `events[]` for the direction used
/// (`publish`, `subscribe`, or `both`); anything else is `APP_E002` `events.undeclared_topic`
/// and changes no subscription.
#[test]
fn events_topics_must_be_declared_for_their_direction() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(
        &dir,
        &variant(
            tmp.path(),
            "good/hello-app",
            "ev-d",
            &["lime.events"],
            &events_yaml(&[
                ("out.only", "publish"),
                ("in.only", "subscribe"),
                ("two.way", "both"),
            ]),
        ),
    );
    let store = Store::open(&dir).unwrap();
    let mut host = host();
    let pubm = host.mount(&store, "ev-d", "notes").unwrap();
    let subm = host.mount(&store, "ev-d", "settings").unwrap();
    ready(&mut host, &store, &pubm);
    ready(&mut host, &store, &subm);
    let undeclared = ("APP_E002".to_owned(), "events.undeclared_topic".to_owned());
    for (id, method, topic, ok) in [
        ("a", "subscribe", "in.only", true),
        ("b", "subscribe", "two.way", true),
        ("c", "subscribe", "out.only", false),
        ("d", "subscribe", "never.declared", false),
    ] {
        let out = invoke(
            &mut host,
            &store,
            &subm,
            id,
            "lime.events",
            method,
            json!({"topic": topic}),
        );
        if ok {
            assert_eq!(value(&out, id)["subscribed"], true, "{topic}");
        } else {
            assert_eq!(error(&out, id), undeclared, "{topic}");
        }
    }
    for (id, topic, ok, delivered) in [
        ("p1", "out.only", true, 0),
        ("p2", "two.way", true, 1),
        ("p3", "in.only", false, 0),
        ("p4", "never.declared", false, 0),
    ] {
        let out = invoke(
            &mut host,
            &store,
            &pubm,
            id,
            "lime.events",
            "publish",
            json!({"topic": topic, "payload": 1}),
        );
        if ok {
            assert_eq!(value(&out, id), json!({"delivered": delivered}), "{topic}");
        } else {
            assert_eq!(error(&out, id), undeclared, "{topic}");
            // Nothing reached the subscribed frame.
            assert_eq!(posted(&out).len(), 1);
        }
    }
    // p1 delivered 0: the refused subscribe to `out.only` left no subscription behind.
}

#[test]
fn events_reach_subscribed_mounts_of_the_same_app_only() {
    let (_t, dir) = two_apps();
    let store = Store::open(&dir).unwrap();
    let mut host = host();
    let a1 = host.mount(&store, "ev-a", "notes").unwrap();
    let a2 = host.mount(&store, "ev-a", "settings").unwrap();
    let a3 = host.mount(&store, "ev-a", "notes").unwrap();
    let a4 = host.mount(&store, "ev-a", "settings").unwrap(); // never subscribes
    let b1 = host.mount(&store, "ev-b", "notes").unwrap();
    for m in [&a1, &a2, &a3, &a4, &b1] {
        ready(&mut host, &store, m);
    }
    for (m, id) in [(&a2, "s1"), (&a3, "s2"), (&b1, "s3")] {
        let out = invoke(
            &mut host,
            &store,
            m,
            id,
            "lime.events",
            "subscribe",
            json!({"topic": "notes.changed"}),
        );
        assert_eq!(value(&out, id)["subscribed"], true);
    }
    let out = invoke(
        &mut host,
        &store,
        &a3,
        "u1",
        "lime.events",
        "unsubscribe",
        json!({"topic": "notes.changed"}),
    );
    assert_eq!(value(&out, "u1")["unsubscribed"], true);

    // a1 publishes: only a2 (same app, subscribed) gets it, as a host:event.
    let out = invoke(
        &mut host,
        &store,
        &a1,
        "p1",
        "lime.events",
        "publish",
        json!({"topic": "notes.changed", "payload": {"id": 7}}),
    );
    assert_eq!(value(&out, "p1"), json!({"delivered": 1}));
    let events: Vec<(&str, &Value)> = posted(&out)
        .into_iter()
        .filter(|(_, m)| m["type"] == "host:event")
        .collect();
    assert_eq!(events.len(), 1);
    let (to, ev) = events[0];
    assert_eq!(to, a2.mount_id);
    assert_eq!(ev["appId"], "ev-a");
    assert_eq!(ev["entryKey"], "settings");
    assert!(ev.get("requestId").is_none());
    assert_eq!(
        ev["payload"],
        json!({"capability": "lime.events", "topic": "notes.changed", "payload": {"id": 7}, "sourceEntryKey": "notes"})
    );

    // The other app publishing on the same topic reaches none of ev-a's frames.
    let out = invoke(
        &mut host,
        &store,
        &b1,
        "p2",
        "lime.events",
        "publish",
        json!({"topic": "notes.changed", "payload": "x"}),
    );
    assert_eq!(value(&out, "p2"), json!({"delivered": 0}));
    assert_eq!(posted(&out).len(), 1);

    // Subscriptions die with the mount.
    host.unmount(&a2.mount_id);
    let out = invoke(
        &mut host,
        &store,
        &a1,
        "p3",
        "lime.events",
        "publish",
        json!({"topic": "notes.changed"}),
    );
    assert_eq!(value(&out, "p3"), json!({"delivered": 0}));

    // Limits: topic, payload size, subscriptions per mount.
    for (id, args, cause) in [
        ("l1", json!({"topic": ""}), "events.invalid_topic"),
        (
            "l2",
            json!({"topic": "t".repeat(129)}),
            "events.invalid_topic",
        ),
        ("l3", json!({"topic": "a b"}), "events.invalid_topic"),
        ("l4", json!({}), "events.invalid_topic"),
        (
            "l5",
            json!({"topic": "t", "payload": "x".repeat(64 * 1024)}),
            "events.payload_too_large",
        ),
    ] {
        let out = invoke(&mut host, &store, &a1, id, "lime.events", "publish", args);
        assert_eq!(error(&out, id), ("APP_E900".into(), cause.into()));
    }
    for i in 0..MAX_SUBSCRIPTIONS {
        let id = format!("n{i}");
        let out = invoke(
            &mut host,
            &store,
            &a4,
            &id,
            "lime.events",
            "subscribe",
            json!({"topic": format!("t{i}")}),
        );
        value(&out, &id);
    }
    let out = invoke(
        &mut host,
        &store,
        &a4,
        "n-over",
        "lime.events",
        "subscribe",
        json!({"topic": "over"}),
    );
    assert_eq!(
        error(&out, "n-over"),
        ("APP_E900".into(), "events.too_many_subscriptions".into())
    );

    // Calls still go through the choke point: audited like every other.
    let audit = serde_json::to_string(&store.audit_log(Some("ev-a"), 1000).unwrap()).unwrap();
    assert!(
        audit.contains("\"capability\":\"lime.events\"")
            && audit.contains("\"method\":\"publish\"")
    );
}

#[test]
fn events_need_the_capability_declared() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &fixture("good/hello-app"));
    let store = Store::open(&dir).unwrap();
    let mut host = host();
    let m = host.mount(&store, "hello-app", "notes").unwrap();
    ready(&mut host, &store, &m);
    let out = invoke(
        &mut host,
        &store,
        &m,
        "x",
        "lime.events",
        "subscribe",
        json!({"topic": "t"}),
    );
    assert_eq!(
        error(&out, "x"),
        ("APP_E002".into(), "capability.not_declared".into())
    );
    let out = invoke(
        &mut host,
        &store,
        &m,
        "y",
        "lime.policy",
        "requestPermission",
        json!({"permission": "sync_notes"}),
    );
    assert_eq!(
        error(&out, "y"),
        ("APP_E002".into(), "capability.not_declared".into())
    );
    assert_eq!(host.diagnostics().executions, 0);
}

fn prompt_of(out: &[Outgoing]) -> (String, Value) {
    match out {
        [Outgoing::Prompt {
            prompt_id,
            question,
            ..
        }] => (prompt_id.clone(), serde_json::to_value(question).unwrap()),
        other => panic!("expected one prompt: {other:?}"),
    }
}

#[test]
fn request_permission_prompts_for_optional_permissions_and_resolves_the_answer() {
    let (_t, dir) = two_apps();
    let store = Store::open(&dir).unwrap();
    let mut host = host();
    let m = host.mount(&store, "ev-a", "notes").unwrap();
    ready(&mut host, &store, &m);
    let ask = |host: &mut BridgeHost, id: &str, p: &str| {
        invoke(
            host,
            &store,
            &m,
            id,
            "lime.policy",
            "requestPermission",
            json!({"permission": p}),
        )
    };

    // Undeclared and required permissions: documented errors, no prompt.
    assert_eq!(
        error(&ask(&mut host, "e1", "nope"), "e1"),
        ("APP_E002".into(), "permission.not_declared".into())
    );
    assert_eq!(
        error(&ask(&mut host, "e2", "notes_storage"), "e2"),
        ("APP_E900".into(), "policy.permission_required".into())
    );

    // Allow once.
    let (pid, q) = prompt_of(&ask(&mut host, "q1", "sync_notes"));
    assert_eq!(q["permission"], "sync_notes");
    assert_eq!(q["capability"], "lime.policy");
    assert_eq!(q["method"], "requestPermission");
    assert_eq!(q["reason"], "Optionally back up notes to your server.");
    let out = host.answer(&store, &pid, Answer::AllowOnce);
    assert_eq!(
        value(&out, "q1"),
        json!({"granted": true, "persistence": "once"})
    );
    assert!(!store.grants("ev-a").unwrap().contains("sync_notes"));

    // Dismissed: not granted, asked again next time; deny is remembered for the mount.
    let m2 = host.mount(&store, "ev-a", "settings").unwrap();
    ready(&mut host, &store, &m2);
    let ask2 = |host: &mut BridgeHost, id: &str| {
        invoke(
            host,
            &store,
            &m2,
            id,
            "lime.policy",
            "requestPermission",
            json!({"permission": "sync_notes"}),
        )
    };
    let (pid, _) = prompt_of(&ask2(&mut host, "d1"));
    let out = host.answer(&store, &pid, Answer::Dismissed);
    assert_eq!(
        value(&out, "d1"),
        json!({"granted": false, "persistence": "denied"})
    );
    let (pid, _) = prompt_of(&ask2(&mut host, "d2"));
    let out = host.answer(&store, &pid, Answer::Deny);
    assert_eq!(
        value(&out, "d2"),
        json!({"granted": false, "persistence": "denied"})
    );
    let out = ask2(&mut host, "d3");
    assert_eq!(
        value(&out, "d3"),
        json!({"granted": false, "persistence": "denied"})
    );

    // Allow always is a grant in the store: a new mount is answered without a prompt.
    let m3 = host.mount(&store, "ev-a", "notes").unwrap();
    ready(&mut host, &store, &m3);
    let out = invoke(
        &mut host,
        &store,
        &m3,
        "a1",
        "lime.policy",
        "requestPermission",
        json!({"permission": "sync_notes"}),
    );
    let (pid, _) = prompt_of(&out);
    // A prompt keeps the call in flight: the same request id is a duplicate until answered.
    let dup = invoke(
        &mut host,
        &store,
        &m3,
        "a1",
        "lime.policy",
        "requestPermission",
        json!({"permission": "sync_notes"}),
    );
    assert_eq!(error(&dup, "a1").0, "HOST_E_DUPLICATE_REQUEST");
    let out = host.answer(&store, &pid, Answer::AllowAlways);
    assert_eq!(
        value(&out, "a1"),
        json!({"granted": true, "persistence": "always"})
    );
    assert!(store.grants("ev-a").unwrap().contains("sync_notes"));
    let m4 = host.mount(&store, "ev-a", "settings").unwrap();
    ready(&mut host, &store, &m4);
    let out = invoke(
        &mut host,
        &store,
        &m4,
        "a2",
        "lime.policy",
        "requestPermission",
        json!({"permission": "sync_notes"}),
    );
    assert_eq!(
        value(&out, "a2"),
        json!({"granted": true, "persistence": "always"})
    );

    let audit = serde_json::to_string(&store.audit_log(Some("ev-a"), 1000).unwrap()).unwrap();
    assert!(audit.contains("permission.prompt_answer") && audit.contains("permission.grant"));
}

#[test]
fn a_pending_permission_request_can_be_cancelled_and_unmounting_drops_it() {
    let (_t, dir) = two_apps();
    let store = Store::open(&dir).unwrap();
    let mut host = host();
    let m = host.mount(&store, "ev-a", "notes").unwrap();
    ready(&mut host, &store, &m);
    let req = json!({"permission": "sync_notes"});
    let (pid, _) = prompt_of(&invoke(
        &mut host,
        &store,
        &m,
        "c1",
        "lime.policy",
        "requestPermission",
        req.clone(),
    ));
    let out = host.handle(
        &store,
        &m.mount_id,
        &m.origin,
        &raw(&m, "capability:cancel", "c2", json!({"requestId": "c1"})),
    );
    assert_eq!(error(&out, "c1").0, "HOST_E_CANCELLED");
    assert!(host.answer(&store, &pid, Answer::AllowAlways).is_empty());
    assert!(!store.grants("ev-a").unwrap().contains("sync_notes"));

    let (pid, _) = prompt_of(&invoke(
        &mut host,
        &store,
        &m,
        "c3",
        "lime.policy",
        "requestPermission",
        req,
    ));
    host.unmount(&m.mount_id);
    assert!(host.answer(&store, &pid, Answer::AllowAlways).is_empty());
    assert!(!store.grants("ev-a").unwrap().contains("sync_notes"));
}

#[test]
fn a_slot_an_update_drops_stops_answering_and_can_still_be_unbound() {
    secret_env();
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let v1 = variant(
        tmp.path(),
        "good/hello-app",
        "vault-app",
        &["lime.secrets"],
        SECRETS,
    );
    install(&dir, &v1);
    let v2 = tmp.path().join("v2");
    copy_dir(&v1, &v2);
    let md = std::fs::read_to_string(v2.join("APP.md"))
        .unwrap()
        .replacen("version: 1.0.0", "version: 1.1.0", 1)
        .replacen(
            "  - {key: backup_token, required: false, scope: user}\n",
            "",
            1,
        );
    std::fs::write(v2.join("APP.md"), md).unwrap();
    {
        let (store, _) = Store::open_locked(&dir).unwrap();
        for slot in ["api_token", "backup_token"] {
            app_secrets::set(&store, "vault-app", slot, &SecretValue::new(CANARY.into())).unwrap();
        }
    }
    support::install_with(&dir, &v2, host_core::install::store::InstallMode::Update);
    let (store, _) = Store::open_locked(&dir).unwrap();
    let mut host = host();
    let m = host.mount(&store, "vault-app", "notes").unwrap();
    ready(&mut host, &store, &m);
    let out = invoke(
        &mut host,
        &store,
        &m,
        "g",
        "lime.secrets",
        "getRef",
        json!({"key": "backup_token"}),
    );
    assert_eq!(
        error(&out, "g"),
        ("APP_E002".into(), "secrets.not_declared".into())
    );
    let slots: Vec<String> = app_secrets::list(&store, "vault-app")
        .unwrap()
        .into_iter()
        .map(|s| s.slot)
        .collect();
    assert_eq!(slots, vec!["api_token"]);
    assert!(app_secrets::unset(&store, "vault-app", "backup_token").unwrap());
    assert_eq!(
        app_secrets::unset(&store, "vault-app", "backup_token")
            .unwrap_err()
            .code,
        ErrorCode::SecretSlotUnknown
    );
    assert_eq!(store.secret_bindings("vault-app").unwrap().len(), 1);
}

/// A permission limited to some entries (`entries: [...]`) can only be requested by those
/// entries: another entry gets `APP_E002` `policy.permission_not_for_entry` and no prompt.
#[test]
fn request_permission_refuses_a_permission_scoped_to_other_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let app = variant(tmp.path(), "good/hello-app", "ent-a", &["lime.policy"], "");
    let perms = app.join("app.permissions.yaml");
    let mut yaml = std::fs::read_to_string(&perms).unwrap();
    yaml.push_str(
        "  - key: settings_sync\n    scope: network\n    access: read\n    required: false\n    \
         reason: Only the settings page checks the server.\n    domains: [settings.example.com]\n    \
         entries: [settings]\n",
    );
    std::fs::write(&perms, yaml).unwrap();
    install(&dir, &app);
    let store = Store::open(&dir).unwrap();
    let mut host = host();
    let notes = host.mount(&store, "ent-a", "notes").unwrap();
    ready(&mut host, &store, &notes);
    let req = json!({"permission": "settings_sync"});
    let out = invoke(
        &mut host,
        &store,
        &notes,
        "n1",
        "lime.policy",
        "requestPermission",
        req.clone(),
    );
    assert_eq!(
        error(&out, "n1"),
        ("APP_E002".into(), "policy.permission_not_for_entry".into())
    );
    let settings = host.mount(&store, "ent-a", "settings").unwrap();
    ready(&mut host, &store, &settings);
    let out = invoke(
        &mut host,
        &store,
        &settings,
        "s1",
        "lime.policy",
        "requestPermission",
        req,
    );
    let (_, q) = prompt_of(&out);
    assert_eq!(q["permission"], "settings_sync");
}
