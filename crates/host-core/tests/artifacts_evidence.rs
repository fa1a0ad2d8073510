//! `lime.artifacts` and `lime.evidence` through the choke point over a real store: round trips
//! with provenance from the store (never from the message), permission denial that writes
//! nothing, ids scoped per app, and adversarial arguments.

mod support;

use std::path::{Path, PathBuf};

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::host::{BridgeHost, Outgoing};
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::bridge::mounting::mount_entry;
use host_core::hosting::bridge::mounts::{Mount, MountTable};
use host_core::hosting::capability::dispatch::{dispatch, SessionAnswers, Verdict};
use host_core::hosting::capability::services::Services;
use host_core::hosting::capability::Call;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::install::store::Store;
use serde_json::{json, Value};
use support::{copy_dir, fixture, install};

/// How the test app declares its artifact permission.
#[derive(Clone, Copy, PartialEq)]
enum ArtifactPermission {
    Required,
    Optional,
    Undeclared,
}

/// hello-app renamed `name`, declaring lime.artifacts and lime.evidence on its `notes` entry.
fn app_package(tmp: &Path, name: &str, perm: ArtifactPermission) -> PathBuf {
    let pkg = tmp.join(format!("pkg-{name}"));
    copy_dir(&fixture("good/hello-app"), &pkg);
    let app_md = pkg.join("APP.md");
    let mut text = std::fs::read_to_string(&app_md).unwrap();
    text = text.replace("hello-app", name);
    text = text.replace(
        "    lime.storage: \"^0.10.0\"\n",
        "    lime.storage: \"^0.10.0\"\n    lime.artifacts: \"^0.10.0\"\n    lime.evidence: \"^0.10.0\"\n",
    );
    text = text.replace(
        "requiredCapabilities: [lime.ui, lime.storage]",
        "requiredCapabilities: [lime.ui, lime.storage, lime.artifacts, lime.evidence]",
    );
    if perm != ArtifactPermission::Undeclared {
        text = text.replace(
            "permissions: [notes_storage]",
            "permissions: [notes_storage, notes_artifacts]",
        );
        let perms = pkg.join("app.permissions.yaml");
        let mut p = std::fs::read_to_string(&perms).unwrap();
        p.push_str(&format!(
            "  - key: notes_artifacts\n    scope: artifact\n    access: read-write\n    required: {}\n    reason: Save exported notes as files.\n",
            perm == ArtifactPermission::Required
        ));
        std::fs::write(&perms, p).unwrap();
    }
    std::fs::write(&app_md, text).unwrap();
    pkg
}

fn call(id: &str, capability: &str, method: &str, args: Value) -> Call {
    Call {
        request_id: id.into(),
        capability: capability.into(),
        method: method.into(),
        args,
        options: Default::default(),
    }
}

struct Env {
    _tmp: tempfile::TempDir,
    dir: DataDir,
    store: Store,
    profile: HostProfile,
    table: MountTable,
    services: Services,
    answers: SessionAnswers,
}

impl Env {
    fn new(apps: &[(&str, ArtifactPermission)]) -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path().join("data"));
        for (name, perm) in apps {
            install(&dir, &app_package(tmp.path(), name, *perm));
        }
        let store = Store::open(&dir).unwrap();
        Env {
            services: Services::new(dir.apps_data()),
            _tmp: tmp,
            dir,
            store,
            profile: HostProfile::current(),
            table: MountTable::new(),
            answers: SessionAnswers::default(),
        }
    }

    fn mount(&mut self, app: &str) -> Mount {
        mount_entry(
            &self.store,
            &self.profile,
            &mut self.table,
            &OriginStyle::Scheme,
            app,
            "notes",
        )
        .unwrap()
    }

    /// Dispatches and, when allowed, runs the call: `Ok(value)` or `Err(host:error payload)`.
    fn run(&mut self, mount: &Mount, cap: &str, method: &str, args: Value) -> Result<Value, Value> {
        let c = call("r1", cap, method, args);
        match dispatch(
            &self.store,
            &self.profile,
            &mount.caller(),
            &c,
            "trace-1",
            &mut self.answers,
        ) {
            Verdict::Allowed(proof) => self
                .services
                .call(&self.store, &proof, &c.args)
                .map_err(|e| serde_json::to_value(e).unwrap()),
            Verdict::Denied(e) => Err(serde_json::to_value(e).unwrap()),
            Verdict::Ask(q) => Err(json!({"ask": q.permission})),
        }
    }

    fn app_dir(&self, app: &str) -> PathBuf {
        self.dir.apps_data().join(app)
    }
}

fn code(e: &Value) -> (&str, &str) {
    (
        e["code"].as_str().unwrap_or(""),
        e["causeCode"].as_str().unwrap_or(""),
    )
}

#[test]
fn the_profile_offers_both_and_an_app_needing_them_is_ready() {
    let env = Env::new(&[("notes-a", ArtifactPermission::Required)]);
    for cap in ["lime.artifacts", "lime.evidence"] {
        assert!(env.profile.capabilities[cap].available, "{cap}");
    }
    let report = env.store.readiness("notes-a", &env.profile).unwrap();
    let report = serde_json::to_value(&report).unwrap();
    let checks: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["key"].as_str().unwrap().ends_with("lime.artifacts")
                || c["key"].as_str().unwrap().ends_with("lime.evidence")
        })
        .collect();
    // requires.capabilities and the entry's requiredCapabilities, for both.
    assert_eq!(checks.len(), 4, "{report}");
    assert!(checks.iter().all(|c| c["outcome"] == "pass"), "{checks:?}");
    // They degrade nothing: the entry is as ready as hello-app's, which does not need them.
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &fixture("good/hello-app"));
    let hello = Store::open(&dir)
        .unwrap()
        .readiness("hello-app", &env.profile)
        .unwrap();
    let hello = serde_json::to_value(&hello).unwrap();
    let status = |r: &Value| {
        r["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["entryKey"] == "notes")
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(status(&report), status(&hello));
    assert_ne!(status(&report), json!("blocked"));
}

#[test]
fn artifacts_and_evidence_round_trip_with_provenance_from_the_store() {
    let mut env = Env::new(&[("notes-a", ArtifactPermission::Required)]);
    let m = env.mount("notes-a");
    let active = env.store.active_app("notes-a").unwrap();

    let a = env
        .run(
            &m,
            "lime.artifacts",
            "create",
            json!({"name": "note.md", "mimeType": "text/markdown", "text": "# hi"}),
        )
        .unwrap();
    assert_eq!(a["size"], 4);
    assert_eq!(a["mimeType"], "text/markdown");
    assert_eq!(
        a["provenance"],
        json!({"appId": "notes-a", "appVersion": active.version, "entryKey": "notes",
               "packageHash": active.package_hash, "manifestHash": active.manifest_hash,
               "traceId": "trace-1"})
    );
    // The same bytes as base64: a new artifact, one blob.
    let b = env
        .run(
            &m,
            "lime.artifacts",
            "create",
            json!({"name": "copy.md", "base64": "IyBoaQ=="}),
        )
        .unwrap();
    assert_ne!(a["id"], b["id"]);
    assert_eq!(a["sha256"], b["sha256"]);
    assert_eq!(b["mimeType"], "application/octet-stream");
    let blobs = env.app_dir("notes-a").join("artifact-blobs");
    assert_eq!(std::fs::read_dir(&blobs).unwrap().count(), 1);

    let r = env
        .run(
            &m,
            "lime.artifacts",
            "read",
            json!({"id": a["id"], "encoding": "text"}),
        )
        .unwrap();
    assert_eq!(
        (r["encoding"].as_str(), r["content"].as_str()),
        (Some("text"), Some("# hi"))
    );
    let r = env
        .run(&m, "lime.artifacts", "read", json!({"id": b["id"]}))
        .unwrap();
    assert_eq!(r["content"], "IyBoaQ==");

    let p1 = env
        .run(&m, "lime.artifacts", "list", json!({"limit": 1}))
        .unwrap();
    assert_eq!(p1["items"][0]["id"], a["id"]);
    let p2 = env
        .run(
            &m,
            "lime.artifacts",
            "list",
            json!({"limit": 1, "cursor": p1["nextCursor"]}),
        )
        .unwrap();
    assert_eq!(p2["items"][0]["id"], b["id"]);
    assert_eq!(p2["nextCursor"], Value::Null);

    let ev = env
        .run(
            &m,
            "lime.evidence",
            "record",
            json!({"kind": "eval.result", "summary": "ok",
             "data": {"score": 0.9}, "artifactIds": [a["id"]]}),
        )
        .unwrap();
    assert!(ev["id"].as_str().unwrap().starts_with("evidence_"));
    assert_eq!(ev["artifacts"][0]["sha256"], a["sha256"]);
    assert_eq!(ev["provenance"]["traceId"], "trace-1");
    env.run(&m, "lime.evidence", "record", json!({"kind": "source"}))
        .unwrap();
    let list = env
        .run(&m, "lime.evidence", "list", json!({"kind": "eval.result"}))
        .unwrap();
    assert_eq!(list["items"].as_array().unwrap().len(), 1);

    // Deleting one of two refs keeps the blob; deleting the last removes it.
    assert_eq!(
        env.run(&m, "lime.artifacts", "delete", json!({"id": a["id"]}))
            .unwrap(),
        json!({"deleted": true})
    );
    assert_eq!(std::fs::read_dir(&blobs).unwrap().count(), 1);
    assert_eq!(
        env.run(&m, "lime.artifacts", "delete", json!({"id": b["id"]}))
            .unwrap(),
        json!({"deleted": true})
    );
    assert_eq!(std::fs::read_dir(&blobs).unwrap().count(), 0);
    assert_eq!(
        env.run(&m, "lime.artifacts", "delete", json!({"id": b["id"]}))
            .unwrap(),
        json!({"deleted": false})
    );
    let e = env
        .run(&m, "lime.artifacts", "read", json!({"id": a["id"]}))
        .unwrap_err();
    assert_eq!(code(&e), ("APP_E904", "artifacts.not_found"));

    let pack = env.run(&m, "lime.evidence", "export", json!({})).unwrap();
    assert_eq!(pack["schemaVersion"], "apphost.evidence-pack.v1");
    assert_eq!(pack["app"]["appId"], "notes-a");
    assert_eq!(pack["app"]["packageHash"], active.package_hash.as_str());
    assert_eq!(pack["records"].as_array().unwrap().len(), 2);
    assert_eq!(
        pack["artifacts"],
        json!([{"artifactId": a["id"], "sha256": a["sha256"], "present": false}])
    );
    // No host path in anything the app got back.
    let root = env.dir.root().to_str().unwrap().to_owned();
    for v in [&a, &b, &ev, &pack] {
        assert!(!v.to_string().contains(&root), "{v}");
    }
    // Every call was audited.
    let audit = env.store.audit_log(Some("notes-a"), 100).unwrap();
    assert!(
        audit
            .iter()
            .filter(|r| r["action"] == "capability.call")
            .count()
            >= 12
    );
}

#[test]
fn without_the_artifact_permission_nothing_runs_and_nothing_is_written() {
    let mut env = Env::new(&[
        ("no-perm", ArtifactPermission::Undeclared),
        ("opt-perm", ArtifactPermission::Optional),
    ]);
    let create = json!({"name": "a.txt", "text": "x"});
    let m = env.mount("no-perm");
    let e = env
        .run(&m, "lime.artifacts", "create", create.clone())
        .unwrap_err();
    assert_eq!(code(&e), ("APP_E002", "permission.not_declared"));

    // Optional and not granted: asked; denied by the user: refused.
    let m = env.mount("opt-perm");
    assert_eq!(
        env.run(&m, "lime.artifacts", "create", create.clone())
            .unwrap_err(),
        json!({"ask": "notes_artifacts"})
    );
    env.answers.denied.insert("notes_artifacts".into());
    let e = env
        .run(&m, "lime.artifacts", "list", json!({}))
        .unwrap_err();
    assert_eq!(code(&e), ("APP_E002", "permission.denied"));
    for app in ["no-perm", "opt-perm"] {
        let dir = env.app_dir(app);
        assert!(!dir.join("artifacts.sqlite").exists(), "{app}");
        assert!(!dir.join("artifact-blobs").exists(), "{app}");
    }

    // An app that does not declare the capabilities at all.
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &fixture("good/hello-app"));
    let store = Store::open(&dir).unwrap();
    let mut table = MountTable::new();
    let profile = HostProfile::current();
    let m = mount_entry(
        &store,
        &profile,
        &mut table,
        &OriginStyle::Scheme,
        "hello-app",
        "notes",
    )
    .unwrap();
    for (cap, method) in [("lime.artifacts", "create"), ("lime.evidence", "record")] {
        match dispatch(
            &store,
            &profile,
            &m.caller(),
            &call("r", cap, method, json!({})),
            "t",
            &mut SessionAnswers::default(),
        ) {
            Verdict::Denied(e) => assert_eq!(
                (e.code.as_str(), e.cause_code),
                ("APP_E002", Some("capability.not_declared"))
            ),
            other => panic!("{cap}: {other:?}"),
        }
    }
    assert!(!dir.apps_data().join("hello-app").exists());
}

#[test]
fn ids_are_scoped_per_app() {
    let mut env = Env::new(&[
        ("notes-a", ArtifactPermission::Required),
        ("notes-b", ArtifactPermission::Required),
    ]);
    let ma = env.mount("notes-a");
    let mb = env.mount("notes-b");
    let a = env
        .run(
            &ma,
            "lime.artifacts",
            "create",
            json!({"name": "secret.txt", "text": "a's"}),
        )
        .unwrap();
    let ev = env
        .run(&ma, "lime.evidence", "record", json!({"kind": "k"}))
        .unwrap();
    let id = a["id"].clone();

    let e = env
        .run(&mb, "lime.artifacts", "read", json!({"id": id}))
        .unwrap_err();
    assert_eq!(code(&e), ("APP_E904", "artifacts.not_found"));
    assert_eq!(
        env.run(&mb, "lime.artifacts", "delete", json!({"id": id}))
            .unwrap(),
        json!({"deleted": false})
    );
    let e = env
        .run(
            &mb,
            "lime.evidence",
            "record",
            json!({"kind": "k", "artifactIds": [id]}),
        )
        .unwrap_err();
    assert_eq!(code(&e), ("APP_E904", "artifacts.not_found"));
    assert_eq!(
        env.run(&mb, "lime.artifacts", "list", json!({})).unwrap()["items"],
        json!([])
    );
    assert_eq!(
        env.run(&mb, "lime.evidence", "list", json!({})).unwrap()["items"],
        json!([])
    );
    let pack = env.run(&mb, "lime.evidence", "export", json!({})).unwrap();
    assert!(!pack.to_string().contains(ev["id"].as_str().unwrap()));
    // A's artifact is untouched.
    let r = env
        .run(
            &ma,
            "lime.artifacts",
            "read",
            json!({"id": id, "encoding": "text"}),
        )
        .unwrap();
    assert_eq!(r["content"], "a's");
}

#[test]
fn adversarial_arguments_are_refused_and_write_nothing() {
    let mut env = Env::new(&[("notes-a", ArtifactPermission::Required)]);
    let m = env.mount("notes-a");
    let huge_b64 = "A".repeat(3 * 1024 * 1024);
    let huge_text = "x".repeat(1024 * 1024 + 1);
    let cases: Vec<(&str, &str, Value, &str, &str)> = vec![
        (
            "lime.artifacts",
            "create",
            json!({"name": "big", "base64": huge_b64}),
            "APP_E900",
            "artifacts.too_large",
        ),
        (
            "lime.artifacts",
            "create",
            json!({"name": "big", "text": huge_text}),
            "APP_E900",
            "artifacts.too_large",
        ),
        (
            "lime.artifacts",
            "create",
            json!({"name": "b", "base64": "not base64!"}),
            "APP_E900",
            "artifacts.invalid_base64",
        ),
        (
            "lime.artifacts",
            "create",
            json!({"name": "b", "base64": "IyBoaQ"}),
            "APP_E900",
            "artifacts.invalid_base64",
        ),
        (
            "lime.artifacts",
            "create",
            json!({"name": "../x", "text": "x"}),
            "APP_E900",
            "artifacts.invalid_name",
        ),
        (
            "lime.artifacts",
            "create",
            json!({"name": "a/b", "text": "x"}),
            "APP_E900",
            "artifacts.invalid_name",
        ),
        (
            "lime.artifacts",
            "create",
            json!({"name": "..", "text": "x"}),
            "APP_E900",
            "artifacts.invalid_name",
        ),
        (
            "lime.artifacts",
            "create",
            json!({"name": "a", "mimeType": "../../x", "text": "x"}),
            "APP_E900",
            "artifacts.invalid_mime_type",
        ),
        (
            "lime.artifacts",
            "create",
            json!({"name": "a", "text": "x", "base64": "eA=="}),
            "APP_E900",
            "artifacts.invalid_argument",
        ),
        (
            "lime.artifacts",
            "create",
            json!({"name": "a"}),
            "APP_E900",
            "artifacts.invalid_argument",
        ),
        (
            "lime.artifacts",
            "create",
            json!({"name": 7, "text": "x"}),
            "APP_E900",
            "artifacts.invalid_argument",
        ),
        (
            "lime.artifacts",
            "create",
            json!({"name": "a", "text": "x", "path": "/etc/passwd"}),
            "APP_E900",
            "artifacts.invalid_argument",
        ),
        (
            "lime.artifacts",
            "create",
            json!(["name"]),
            "APP_E900",
            "artifacts.invalid_argument",
        ),
        (
            "lime.artifacts",
            "read",
            json!({"id": "../x"}),
            "APP_E900",
            "artifacts.invalid_id",
        ),
        (
            "lime.artifacts",
            "read",
            json!({"id": "artifact_../../host.db"}),
            "APP_E900",
            "artifacts.invalid_id",
        ),
        (
            "lime.artifacts",
            "read",
            json!({"id": "x".repeat(10_000)}),
            "APP_E900",
            "artifacts.invalid_id",
        ),
        (
            "lime.artifacts",
            "read",
            json!({"id": "artifact_1", "encoding": "utf16"}),
            "APP_E900",
            "artifacts.invalid_argument",
        ),
        (
            "lime.artifacts",
            "delete",
            json!({"id": "/etc/passwd"}),
            "APP_E900",
            "artifacts.invalid_id",
        ),
        (
            "lime.artifacts",
            "list",
            json!({"limit": 0}),
            "APP_E900",
            "artifacts.invalid_argument",
        ),
        (
            "lime.artifacts",
            "list",
            json!({"limit": 1_000_000}),
            "APP_E900",
            "artifacts.invalid_argument",
        ),
        (
            "lime.evidence",
            "record",
            json!({"kind": "../x"}),
            "APP_E900",
            "evidence.invalid_kind",
        ),
        (
            "lime.evidence",
            "record",
            json!({"summary": "no kind"}),
            "APP_E900",
            "evidence.invalid_argument",
        ),
        (
            "lime.evidence",
            "record",
            json!({"kind": "k", "artifactIds": "artifact_1"}),
            "APP_E900",
            "evidence.invalid_argument",
        ),
        (
            "lime.evidence",
            "record",
            json!({"kind": "k", "artifactIds": vec!["artifact_1"; 65]}),
            "APP_E900",
            "evidence.too_large",
        ),
        (
            "lime.evidence",
            "list",
            json!({"kind": 5}),
            "APP_E900",
            "evidence.invalid_argument",
        ),
    ];
    for (cap, method, args, want_code, want_cause) in cases {
        let shown: String = args.to_string().chars().take(80).collect();
        let e = env.run(&m, cap, method, args).unwrap_err();
        assert_eq!(code(&e), (want_code, want_cause), "{cap}.{method} {shown}");
        assert_eq!(e["retryable"], false);
    }
    let dir = env.app_dir("notes-a");
    assert!(!dir.join("artifacts.sqlite").exists());
    assert!(!dir.join("evidence.sqlite").exists());

    // Shaped right but refused by the store: data too large, a cursor that is not ours.
    let e = env
        .run(
            &m,
            "lime.evidence",
            "record",
            json!({"kind": "k", "data": "d".repeat(70_000)}),
        )
        .unwrap_err();
    assert_eq!(code(&e), ("APP_E900", "evidence.too_large"));
    let e = env
        .run(&m, "lime.artifacts", "list", json!({"cursor": "../1"}))
        .unwrap_err();
    assert_eq!(code(&e), ("APP_E900", "artifacts.invalid_argument"));
    assert_eq!(
        env.run(&m, "lime.evidence", "list", json!({})).unwrap()["items"],
        json!([])
    );
    assert_eq!(
        env.run(&m, "lime.artifacts", "list", json!({})).unwrap()["items"],
        json!([])
    );
    assert_eq!(
        std::fs::read_dir(dir.join("artifact-blobs"))
            .unwrap()
            .count(),
        0
    );
}

#[test]
fn over_the_bridge_a_create_answers_once_and_an_oversized_message_executes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(
        &dir,
        &app_package(tmp.path(), "notes-a", ArtifactPermission::Required),
    );
    let store = Store::open(&dir).unwrap();
    let mut host = BridgeHost::new(
        Services::new(dir.apps_data()),
        HostProfile::current(),
        OriginStyle::Scheme,
    );
    let m = host.mount(&store, "notes-a", "notes").unwrap();
    let msg = |kind: &str, id: &str, payload: Value| {
        json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
               "appId": "notes-a", "entryKey": "notes", "payload": payload})
        .to_string()
    };
    host.handle(
        &store,
        &m.mount_id,
        &m.origin,
        &msg("app:ready", "r0", json!({})),
    );
    let out = host.handle(
        &store,
        &m.mount_id,
        &m.origin,
        &msg(
            "capability:invoke",
            "r1",
            json!({"capability": "lime.artifacts", "method": "create",
             "args": {"name": "a.txt", "text": "hello"}}),
        ),
    );
    let posts: Vec<&Value> = out
        .iter()
        .filter_map(|o| match o {
            Outgoing::Post { message, .. } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0]["type"], "host:response");
    assert_eq!(posts[0]["payload"]["value"]["size"], 5);

    // More than 1 MiB of base64 never reaches the service.
    let big = msg(
        "capability:invoke",
        "r2",
        json!({"capability": "lime.artifacts", "method": "create",
                  "args": {"name": "b.bin", "base64": "A".repeat(2 * 1024 * 1024)}}),
    );
    let before = store.audit_log(Some("notes-a"), 1000).unwrap().len();
    let out = host.handle(&store, &m.mount_id, &m.origin, &big);
    assert!(out.iter().all(|o| !matches!(o, Outgoing::Post { .. })));
    assert_eq!(
        store.audit_log(Some("notes-a"), 1000).unwrap().len(),
        before
    );
    let blobs = dir.apps_data().join("notes-a/artifact-blobs");
    assert_eq!(std::fs::read_dir(blobs).unwrap().count(), 1);
}

/// The bridge's own connection (`Store::open_for_calls`) commits its audit records with
/// `synchronous=NORMAL`; only the audit of a call whose effect is fsynced (artifact create or
/// delete, evidence record) and a user's grant are fsynced (`store::durability`).
#[test]
fn on_the_bridge_connection_only_fsynced_effects_and_grants_pay_for_an_fsync() {
    use host_core::install::store::durability::Durability;
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(
        &dir,
        &app_package(tmp.path(), "notes-a", ArtifactPermission::Optional),
    );
    let store = Store::open_for_calls(&dir).unwrap();
    assert_eq!(store.durability().unwrap(), Durability::ProcessCrash);
    let mut host = BridgeHost::new(
        Services::new(dir.apps_data()),
        HostProfile::current(),
        OriginStyle::Scheme,
    );
    let m = host.mount(&store, "notes-a", "notes").unwrap();
    let mut n = 0;
    let mut send = |host: &mut BridgeHost, kind: &str, payload: Value| -> Vec<Outgoing> {
        n += 1;
        let msg = json!({"protocol": PROTOCOL, "version": 1, "type": kind,
                         "requestId": format!("r{n}"), "appId": "notes-a", "entryKey": "notes",
                         "payload": payload});
        host.handle(&store, &m.mount_id, &m.origin, &msg.to_string())
    };
    let kind = |out: &[Outgoing]| match out {
        [Outgoing::Post { message, .. }] => message["type"].as_str().unwrap().to_owned(),
        other => format!("{other:?}"),
    };
    send(&mut host, "app:ready", json!({}));
    let invoke = |cap: &str, method: &str, args: Value| json!({"capability": cap, "method": method, "args": args});
    for (cap, method, args) in [
        ("lime.storage", "set", json!({"key": "k", "value": 1})),
        ("lime.storage", "get", json!({"key": "k"})),
        ("lime.evidence", "list", json!({})),
    ] {
        let out = send(&mut host, "capability:invoke", invoke(cap, method, args));
        assert_eq!(kind(&out), "host:response", "{cap}.{method}");
    }
    // An artifacts call before the optional permission is granted asks, and the ask is not
    // fsynced either.
    let out = send(
        &mut host,
        "capability:invoke",
        invoke("lime.artifacts", "list", json!({})),
    );
    assert!(
        matches!(out.as_slice(), [Outgoing::Prompt { .. }]),
        "{out:?}"
    );
    assert_eq!(store.durable_sections(), 0);

    // The user's grant is fsynced.
    store.grant("notes-a", "notes_artifacts").unwrap();
    assert_eq!(store.durable_sections(), 1);
    let out = send(
        &mut host,
        "capability:invoke",
        invoke(
            "lime.artifacts",
            "create",
            json!({"name": "a.txt", "text": "hi"}),
        ),
    );
    assert_eq!(kind(&out), "host:response");
    assert_eq!(store.durable_sections(), 2, "artifact create");
    let out = send(
        &mut host,
        "capability:invoke",
        invoke(
            "lime.evidence",
            "record",
            json!({"kind": "note", "summary": "s"}),
        ),
    );
    assert_eq!(kind(&out), "host:response");
    assert_eq!(store.durable_sections(), 3, "evidence record");
    let out = send(
        &mut host,
        "capability:invoke",
        invoke("lime.artifacts", "list", json!({})),
    );
    assert_eq!(kind(&out), "host:response");
    assert_eq!(store.durable_sections(), 3, "a read is not fsynced");
    assert_eq!(store.durability().unwrap(), Durability::ProcessCrash);
    // Every call is still audited, on this connection.
    let audit = store.audit_log(Some("notes-a"), 100).unwrap();
    let calls = audit
        .iter()
        .filter(|r| r["action"] == "capability.call")
        .count();
    assert_eq!(calls, 7);
}

/// An evidence pack shows artifact metadata (name, type, size, date, provenance, whether it
/// still exists) only while the calling entry may read the app's artifacts: after the artifact
/// permission is revoked, or denied in the session, or allowed only once, export keeps only the
/// id and SHA-256 the records carry (`withheld`), and `record` refuses `artifactIds` (resolving
/// them would tell which artifacts exist).
#[test]
fn evidence_never_shows_artifact_data_the_entry_may_no_longer_read() {
    let mut env = Env::new(&[("opt-perm", ArtifactPermission::Optional)]);
    env.store.grant("opt-perm", "notes_artifacts").unwrap();
    let m = env.mount("opt-perm");
    let art = env
        .run(
            &m,
            "lime.artifacts",
            "create",
            json!({"name": "secret-plan.md", "mimeType": "text/markdown", "text": "# plan"}),
        )
        .unwrap();
    let id = art["id"].as_str().unwrap().to_owned();
    env.run(
        &m,
        "lime.evidence",
        "record",
        json!({"kind": "source", "artifactIds": [id]}),
    )
    .unwrap();
    // Granted: the metadata is in the pack.
    let pack = env.run(&m, "lime.evidence", "export", json!({})).unwrap();
    assert_eq!(pack["artifacts"][0]["name"], "secret-plan.md", "{pack}");
    assert_eq!(pack["artifacts"][0]["present"], true);

    let withheld = json!([{"artifactId": id, "sha256": art["sha256"], "withheld": true}]);
    let not_allowed = ("APP_E002", "evidence.artifacts_not_allowed");
    env.store.revoke("opt-perm", "notes_artifacts").unwrap();
    let check = |env: &mut Env, why: &str| {
        let pack = env.run(&m, "lime.evidence", "export", json!({})).unwrap();
        assert_eq!(pack["artifacts"], withheld, "{why}: {pack}");
        assert!(!pack.to_string().contains("secret-plan"), "{why}");
        // The records themselves still carry their refs (evidence data).
        assert_eq!(
            pack["records"][0]["artifacts"][0]["artifactId"],
            id.as_str()
        );
        let e = env
            .run(
                &m,
                "lime.evidence",
                "record",
                json!({"kind": "source", "artifactIds": [id]}),
            )
            .unwrap_err();
        assert_eq!(code(&e), not_allowed, "{why}");
        // An unknown id gets the same answer: no existence oracle.
        let e = env
            .run(
                &m,
                "lime.evidence",
                "record",
                json!({"kind": "source", "artifactIds": ["artifact_nope"]}),
            )
            .unwrap_err();
        assert_eq!(code(&e), not_allowed, "{why}");
        // Records without artifacts still work.
        env.run(&m, "lime.evidence", "record", json!({"kind": "note"}))
            .unwrap();
    };
    check(&mut env, "revoked");
    // Allowed once: that answer is for one artifacts call, not for evidence.
    env.answers.allow_once.insert("notes_artifacts".into());
    check(&mut env, "allow once");
    assert!(
        env.answers.allow_once.contains("notes_artifacts"),
        "not consumed"
    );
    env.answers.allow_once.clear();
    // Granted again but denied in this session.
    env.store.grant("opt-perm", "notes_artifacts").unwrap();
    env.answers.denied.insert("notes_artifacts".into());
    check(&mut env, "denied in the session");
    env.answers.denied.clear();
    let pack = env.run(&m, "lime.evidence", "export", json!({})).unwrap();
    assert_eq!(pack["artifacts"][0]["name"], "secret-plan.md");
}
