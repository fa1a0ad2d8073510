//! The choke point end to end over a real store: mount an installed app's entry, decide calls
//! from the store's facts (grants, enabled, readiness), run allowed ones against the app's own
//! SQLite storage, and audit every decision.

mod support;

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::mounting::mount_entry;
use host_core::hosting::bridge::mounts::MountTable;
use host_core::hosting::capability::dispatch::{dispatch, SessionAnswers, Verdict};
use host_core::hosting::capability::services::Services;
use host_core::hosting::capability::Call;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::install::store::Store;
use host_core::ErrorCode;
use serde_json::{json, Value};
use support::{fixture, install, optional_storage_app};

fn call(id: &str, capability: &str, method: &str, args: Value) -> Call {
    Call {
        request_id: id.into(),
        capability: capability.into(),
        method: method.into(),
        args,
        options: Default::default(),
    }
}

#[test]
fn storage_calls_pass_the_choke_point_and_reach_the_apps_own_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &fixture("good/hello-app"));
    let store = Store::open(&dir).unwrap();
    let profile = HostProfile::all_available();
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
    assert_eq!(mount.origin, "agentapp://hello-app");
    assert_eq!(
        mount.url,
        "agentapp://hello-app/index.html?app=hello-app&entry=notes"
    );
    let mut services = Services::new(dir.apps_data());
    let mut answers = SessionAnswers::default();

    // Required permission notes_storage was granted by install consent.
    let set = call(
        "r1",
        "lime.storage",
        "set",
        json!({"key": "n:1", "value": {"t": "hi"}}),
    );
    let Verdict::Allowed(proof) =
        dispatch(&store, &profile, &mount.caller(), &set, "t1", &mut answers)
    else {
        panic!("set should be allowed");
    };
    assert_eq!(proof.app(), "hello-app");
    services.call(&store, &proof, &set.args).unwrap();
    let get = call("r2", "lime.storage", "get", json!({"key": "n:1"}));
    let Verdict::Allowed(proof) =
        dispatch(&store, &profile, &mount.caller(), &get, "t2", &mut answers)
    else {
        panic!("get should be allowed");
    };
    assert_eq!(
        services.call(&store, &proof, &get.args).unwrap(),
        json!({"t": "hi"})
    );
    assert!(dir.apps_data().join("hello-app/storage.sqlite").is_file());

    // A revoked required permission makes the entry need setup: the next call is denied.
    assert!(store.revoke("hello-app", "notes_storage").unwrap());
    match dispatch(&store, &profile, &mount.caller(), &get, "t3", &mut answers) {
        Verdict::Denied(e) => {
            assert_eq!(e.cause_code, Some("entry.not_ready"));
            // The message says which entry, its readiness and which checks, for a person to
            // act on; never a check's own message (it can name host paths).
            let why = store.readiness("hello-app", &profile).unwrap();
            let check = why
                .checks
                .iter()
                .find(|c| c.outcome == host_core::install::readiness::Outcome::NeedsSetup)
                .expect("a needs-setup check");
            let entry = &mount.caller().entry_key;
            assert!(
                e.message
                    .starts_with(&format!("entry {entry} is needs-setup: not ready: ")),
                "{}",
                e.message
            );
            let bare = check
                .key
                .strip_prefix(&format!("{entry}:"))
                .unwrap_or(&check.key);
            assert!(
                e.message.contains(&format!("{} {bare}", check.kind)),
                "{}",
                e.message
            );
            assert!(!e.message.contains(&check.message), "{}", e.message);
        }
        other => panic!("expected deny, got {other:?}"),
    }
    store.grant("hello-app", "notes_storage").unwrap();
    assert!(matches!(
        dispatch(&store, &profile, &mount.caller(), &get, "t4", &mut answers),
        Verdict::Allowed(_)
    ));

    // Not implemented, not declared, unknown method: APP_E001 / APP_E002, never mock success.
    for (cap, method, code) in [
        ("lime.workflow", "start", "APP_E002"),
        ("lime.billing", "charge", "APP_E001"),
        ("lime.storage", "drop", "APP_E001"),
        ("lime.knowledge", "search", "APP_E002"),
    ] {
        match dispatch(
            &store,
            &profile,
            &mount.caller(),
            &call("r9", cap, method, json!({})),
            "t",
            &mut answers,
        ) {
            Verdict::Denied(e) => assert_eq!(e.code.as_str(), code, "{cap}.{method}"),
            other => panic!("{cap}.{method}: {other:?}"),
        }
    }
    // The real profile offers lime.storage (it is implemented); a profile without it refuses.
    match dispatch(
        &store,
        &HostProfile::current(),
        &mount.caller(),
        &get,
        "t",
        &mut answers,
    ) {
        Verdict::Allowed(_) => {}
        other => panic!("{other:?}"),
    }
    let mut without_storage = HostProfile::current();
    without_storage
        .capabilities
        .get_mut("lime.storage")
        .unwrap()
        .available = false;
    match dispatch(
        &store,
        &without_storage,
        &mount.caller(),
        &get,
        "t",
        &mut answers,
    ) {
        Verdict::Denied(e) => assert_eq!(e.code.as_str(), "APP_E001"),
        other => panic!("{other:?}"),
    }

    // Every decision is audited with provenance.
    let audit = store.audit_log(Some("hello-app"), 100).unwrap();
    let calls: Vec<&Value> = audit
        .iter()
        .filter(|a| a["action"] == "capability.call")
        .collect();
    assert_eq!(calls.len(), 10, "one audit record per decision");
    let first_allow = calls
        .iter()
        .rev()
        .find(|a| a["details"]["decision"] == "allow")
        .unwrap();
    assert_eq!(first_allow["details"]["requestId"], "r1");
    assert_eq!(first_allow["details"]["traceId"], "t1");
    assert!(first_allow["details"]["packageHash"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    assert!(audit.iter().any(|a| a["action"] == "permission.revoke"));
}

#[test]
fn an_optional_permission_is_asked_at_first_use() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &optional_storage_app(tmp.path()));
    let store = Store::open(&dir).unwrap();
    let profile = HostProfile::all_available();
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
    let get = call("r1", "lime.storage", "get", json!({"key": "a"}));
    match dispatch(&store, &profile, &mount.caller(), &get, "t1", &mut answers) {
        Verdict::Ask(q) => {
            assert_eq!(q.permission.as_deref(), Some("notes_storage"));
            assert_eq!(
                q.reason.as_deref(),
                Some("Save your notes in this app's own storage.")
            );
        }
        other => panic!("expected ask, got {other:?}"),
    }
    // Allow once: exactly one call passes.
    answers.allow_once.insert("notes_storage".into());
    assert!(matches!(
        dispatch(&store, &profile, &mount.caller(), &get, "t2", &mut answers),
        Verdict::Allowed(_)
    ));
    assert!(matches!(
        dispatch(&store, &profile, &mount.caller(), &get, "t3", &mut answers),
        Verdict::Ask(_)
    ));
    // Deny: denied without asking again for this mount.
    answers.denied.insert("notes_storage".into());
    match dispatch(&store, &profile, &mount.caller(), &get, "t4", &mut answers) {
        Verdict::Denied(e) => {
            assert_eq!(e.code.as_str(), "APP_E002");
            assert_eq!(e.cause_code, Some("permission.denied"));
        }
        other => panic!("expected deny, got {other:?}"),
    }
    // Allow always is a grant; revoking it asks again on the next call.
    answers.denied.clear();
    store.grant("hello-app", "notes_storage").unwrap();
    assert!(matches!(
        dispatch(&store, &profile, &mount.caller(), &get, "t5", &mut answers),
        Verdict::Allowed(_)
    ));
    store.revoke("hello-app", "notes_storage").unwrap();
    assert!(matches!(
        dispatch(&store, &profile, &mount.caller(), &get, "t6", &mut answers),
        Verdict::Ask(_)
    ));
    let e = store.grant("hello-app", "no_such_permission").unwrap_err();
    assert_eq!(e.code, ErrorCode::PermissionUnknown);
}

#[test]
fn disabling_denies_the_next_call_and_mounting_checks_the_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &fixture("good/hello-app"));
    let profile = HostProfile::all_available();
    let mut table = MountTable::new();
    let store = Store::open(&dir).unwrap();
    let style = OriginStyle::Scheme;
    let e = mount_entry(&store, &profile, &mut table, &style, "hello-app", "nope").unwrap_err();
    assert_eq!(e.code, ErrorCode::MountUnknownEntry);
    let e = mount_entry(&store, &profile, &mut table, &style, "other", "notes").unwrap_err();
    assert_eq!(e.code, ErrorCode::AppNotInstalled);
    let mount = mount_entry(&store, &profile, &mut table, &style, "hello-app", "notes").unwrap();
    drop(store);

    let (locked, _) = Store::open_locked(&dir).unwrap();
    locked.set_enabled("hello-app", false).unwrap();
    drop(locked);
    let store = Store::open(&dir).unwrap();
    let get = call("r1", "lime.storage", "get", json!({"key": "a"}));
    match dispatch(
        &store,
        &profile,
        &mount.caller(),
        &get,
        "t",
        &mut SessionAnswers::default(),
    ) {
        Verdict::Denied(e) => {
            assert_eq!(e.code.as_str(), "APP_E001");
            assert_eq!(e.cause_code, Some("entry.not_ready"));
        }
        other => panic!("{other:?}"),
    }
    let e = mount_entry(&store, &profile, &mut table, &style, "hello-app", "notes").unwrap_err();
    assert_eq!(e.code, ErrorCode::MountAppDisabled);
}
