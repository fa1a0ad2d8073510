//! The platform projections (issue 19 §2): `lime.modelSettings.get`, `lime.capabilities.list`,
//! `lime.workspace.get` through the choke point, their answers against the published result
//! schemas, no key material in any answer or snapshot (the JSON is scanned for the key, its
//! ref, the secret store and the endpoint), the refusals (undeclared, arguments) with stable
//! codes, and the first snapshot's install mode, readiness and model status.

mod support;

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::host::{BridgeHost, Outgoing};
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::capability::contract::{self, emit};
use host_core::hosting::capability::services::Services;
use host_core::hosting::model_settings::{self, KeyChange};
use host_core::hosting::surface::origin::OriginStyle;
use host_core::install::secrets::SecretValue;
use host_core::install::store::Store;
use serde_json::{json, Value};
use support::{install, repo_root};

const APP: &str = "conformance-app";
const KEY: &str = "sk-canary-7f3a9c1e5b2d4f60";
const ENDPOINT: &str = "http://127.0.0.1:9/v1";

struct Frame {
    host: BridgeHost,
    store: Store,
    mount: String,
    origin: String,
    next: u32,
    snapshot: Value,
}

impl Frame {
    fn open(dir: &DataDir, entry: &str) -> Frame {
        let mut host = BridgeHost::new(
            Services::new(dir.apps_data()),
            HostProfile::current(),
            OriginStyle::Scheme,
        );
        let store = Store::open(dir).unwrap();
        let m = host.mount(&store, APP, entry).unwrap();
        let ready = json!({"protocol": PROTOCOL, "version": 1, "type": "app:ready",
            "requestId": "r0", "appId": APP, "entryKey": entry, "payload": {}});
        let out = host.handle(&store, &m.mount_id, &m.origin, &ready.to_string());
        let snapshot = out
            .into_iter()
            .find_map(|o| match o {
                Outgoing::Post { message, .. } if message["type"] == "host:snapshot" => {
                    Some(message["payload"].clone())
                }
                _ => None,
            })
            .expect("a first snapshot");
        Frame {
            host,
            store,
            mount: m.mount_id.clone(),
            origin: m.origin.clone(),
            next: 0,
            snapshot,
        }
    }

    fn call(&mut self, capability: &str, method: &str, args: Value) -> Result<Value, Value> {
        self.next += 1;
        let id = format!("c{}", self.next);
        let entry = self.snapshot["entryKey"].clone();
        let raw = json!({"protocol": PROTOCOL, "version": 1, "type": "capability:invoke",
            "requestId": id, "appId": APP, "entryKey": entry,
            "payload": {"capability": capability, "method": method, "args": args}});
        let out = self
            .host
            .handle(&self.store, &self.mount, &self.origin, &raw.to_string());
        for o in out {
            if let Outgoing::Post { message, .. } = o {
                if message["requestId"] == id.as_str() {
                    return match message["type"].as_str() {
                        Some("host:response") => Ok(message["payload"]["value"].clone()),
                        _ => Err(message["payload"].clone()),
                    };
                }
            }
        }
        panic!("no answer to {capability}.{method}");
    }

    /// A call that must succeed and whose answer must validate against its result schema.
    fn run(&mut self, capability: &str, method: &str) -> Value {
        let value = self
            .call(capability, method, json!({}))
            .unwrap_or_else(|e| panic!("{capability}.{method} failed: {e}"));
        let ns = contract::all()
            .into_iter()
            .find(|n| n.capability == capability)
            .unwrap();
        let doc = emit::namespace_schema(&ns);
        let schema = emit::method_schema(&doc, method, "result").unwrap();
        let v = jsonschema::validator_for(&schema).unwrap();
        let errors: Vec<String> = v.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(
            errors.is_empty(),
            "{capability}.{method}: {value} {errors:?}"
        );
        value
    }

    fn audit_count(&self) -> usize {
        self.store
            .audit_log(Some(APP), 10_000)
            .map(|rows| rows.len())
            .unwrap_or(0)
    }
}

/// The conformance app, unsigned, with the three projections declared when `declare`.
fn package(tmp: &std::path::Path, declare: bool) -> std::path::PathBuf {
    let pkg = tmp.join("pkg");
    support::copy_dir(&repo_root().join("fixtures/apps/conformance-app"), &pkg);
    for f in ["app.lock.json", "app.signature.yaml"] {
        let _ = std::fs::remove_file(pkg.join(f));
    }
    if declare {
        let manifest = std::fs::read_to_string(pkg.join("APP.md")).unwrap();
        let patched = manifest.replacen(
            "    lime.secrets: \"^0.10.0\"\n",
            "    lime.secrets: \"^0.10.0\"\n    lime.modelSettings: \"^0.10.0\"\n    \
             lime.capabilities: \"^0.10.0\"\n    lime.workspace: \"^0.10.0\"\n",
            1,
        );
        assert_ne!(patched, manifest);
        std::fs::write(pkg.join("APP.md"), patched).unwrap();
    }
    pkg
}

fn data(tmp: &std::path::Path, declare: bool) -> DataDir {
    let dir = DataDir::at(tmp.join("data"));
    install(&dir, &package(tmp, declare));
    dir
}

/// No answer names the key, its ref, the secret store or the endpoint.
fn assert_no_key_material(what: &str, v: &Value, key_ref: &str) {
    let text = v.to_string();
    for needle in [
        KEY,
        key_ref,
        ENDPOINT,
        "127.0.0.1",
        "secrets.enc",
        "apiKeyRef",
        "keyring",
    ] {
        assert!(!text.contains(needle), "{what} carries {needle:?}: {text}");
    }
}

#[test]
fn model_settings_answer_the_profile_and_limits_and_never_key_material() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = data(tmp.path(), true);
    let mut f = Frame::open(&dir, "main");
    // No model yet: needs-setup with the setup action, no profile.
    let v = f.run("lime.modelSettings", "get");
    assert_eq!(v["status"], "needs-setup", "{v}");
    assert_eq!(v["profile"], Value::Null);
    assert_eq!(v["setupAction"]["kind"], "model");
    assert_eq!(v["limits"]["maxTokensPerTask"], Value::Null);
    assert_eq!(f.snapshot["model"]["status"], "needs-setup");

    // A model with a key, and a per-app budget.
    std::env::set_var("APPHOST_SECRET_STORE", "file");
    std::env::set_var("APPHOST_SECRET_KEY_FILE", tmp.path().join("secret.key"));
    let (locked, _) = Store::open_locked(&dir).unwrap();
    model_settings::set(
        &locked,
        ENDPOINT,
        "llama3",
        KeyChange::Set(SecretValue::new(KEY.to_owned())),
    )
    .unwrap();
    locked
        .set_setting(&format!("model.budget.{APP}"), Some("5000"))
        .unwrap();
    let key_ref = model_settings::load(&locked)
        .unwrap()
        .unwrap()
        .api_key_ref
        .unwrap();
    drop(locked);

    let mut f = Frame::open(&dir, "main");
    let v = f.run("lime.modelSettings", "get");
    assert_eq!(v["status"], "ready", "{v}");
    assert_eq!(v["profile"]["model"], "llama3");
    assert_eq!(v["profile"]["apiKeyConfigured"], true);
    assert_eq!(v["limits"]["maxTokensPerTask"], 5000);
    assert_eq!(v["setupAction"], Value::Null);
    assert_no_key_material("lime.modelSettings.get", &v, &key_ref);
    assert_eq!(f.snapshot["model"]["status"], "ready");
    assert_no_key_material("host:snapshot", &f.snapshot, &key_ref);
    let caps = f.run("lime.capabilities", "list");
    assert_no_key_material("lime.capabilities.list", &caps, &key_ref);
    let ws = f.run("lime.workspace", "get");
    assert_no_key_material("lime.workspace.get", &ws, &key_ref);
}

#[test]
fn capabilities_list_says_what_the_entry_may_call_and_why_not() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = data(tmp.path(), true);
    let mut f = Frame::open(&dir, "main");
    let v = f.run("lime.capabilities", "list");
    assert_eq!(v["entryKey"], "main");
    let row = |name: &str| -> Value {
        v["capabilities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["capability"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no row for {name}: {v}"))
    };
    let available: Vec<&str> = v["available"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    for c in [
        "lime.ui",
        "lime.events",
        "lime.capabilities",
        "lime.workspace",
    ] {
        assert!(available.contains(&c), "{c} in {available:?}");
        assert_eq!(row(c)["status"], "available");
    }
    // Implemented but not declared by this app.
    assert_eq!(row("lime.agent")["status"], "blocked");
    assert_eq!(row("lime.agent")["reason"], "undeclared");
    assert_eq!(row("lime.agent")["causeCode"], "capability.not_declared");
    assert_eq!(row("lime.agent")["code"], "APP_E002");
    // Named by the standard, not implemented here.
    assert_eq!(row("lime.billing")["reason"], "not-available");
    assert_eq!(row("lime.billing")["code"], "APP_E001");
    assert_eq!(row("lime.billing")["methods"], json!([]));
    // Storage needs its permission: the conformance app's `conformance_storage` is granted at
    // install (required) so storage is available; each method is listed.
    let storage = row("lime.storage");
    assert!(
        storage["methods"].as_array().unwrap().len() >= 4,
        "{storage}"
    );
    // The answer matches what a call gets: an undeclared call is refused with the same reason.
    let e = f.call("lime.agent", "listTasks", json!({})).unwrap_err();
    assert_eq!(e["causeCode"], "capability.not_declared", "{e}");
}

#[test]
fn workspace_answers_ids_name_locale_and_timezone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = data(tmp.path(), true);
    let mut f = Frame::open(&dir, "main");
    let v = f.run("lime.workspace", "get");
    assert_eq!(
        v,
        json!({"workspaceId": "local", "tenantId": "local", "displayName": "Local workspace",
               "locale": "en-US", "timezone": "UTC"})
    );
    assert_eq!(v["workspaceId"], f.snapshot["workspaceId"]);
    assert_eq!(v["locale"], f.snapshot["locale"]);
}

/// Attack: an app that does not declare the projections calls them anyway. Refused with the
/// choke point's stable code, audited as a deny, no answer leaks.
#[test]
fn undeclared_projections_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = data(tmp.path(), false);
    let mut f = Frame::open(&dir, "main");
    for (cap, method) in [
        ("lime.modelSettings", "get"),
        ("lime.capabilities", "list"),
        ("lime.workspace", "get"),
    ] {
        let before = f.audit_count();
        let e = f.call(cap, method, json!({})).unwrap_err();
        assert_eq!(e["code"], "APP_E002", "{cap}: {e}");
        assert_eq!(e["causeCode"], "capability.not_declared", "{cap}: {e}");
        assert_eq!(f.audit_count(), before + 1, "the deny is audited");
        assert!(e.get("value").is_none());
    }
}

/// Attack: arguments where none are taken (a probe for hidden parameters). `APP_E900` with the
/// capability's own cause; nothing else answered.
#[test]
fn projection_arguments_are_refused_with_their_own_cause() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = data(tmp.path(), true);
    let mut f = Frame::open(&dir, "main");
    for (cap, method, cause) in [
        (
            "lime.modelSettings",
            "get",
            "modelSettings.invalid_argument",
        ),
        ("lime.capabilities", "list", "capabilities.invalid_argument"),
        ("lime.workspace", "get", "workspace.invalid_argument"),
    ] {
        for bad in [
            json!({"includeKey": true}),
            json!([1]),
            json!("x"),
            json!(7),
        ] {
            let e = f.call(cap, method, bad.clone()).unwrap_err();
            assert_eq!(e["code"], "APP_E900", "{cap} {bad}: {e}");
            assert_eq!(e["causeCode"], cause, "{cap} {bad}: {e}");
        }
        f.call(cap, method, Value::Null).unwrap();
    }
}

#[test]
fn the_first_snapshot_carries_install_mode_readiness_and_model_status() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = data(tmp.path(), true);
    let f = Frame::open(&dir, "main");
    let s = &f.snapshot;
    // Unsigned package the user accepted: sideload, as the store records it.
    assert_eq!(s["installMode"], f.store.install_mode(APP).unwrap());
    assert!(["installed", "dev", "sideload"].contains(&s["installMode"].as_str().unwrap()));
    let r = f.store.readiness(APP, &HostProfile::current()).unwrap();
    let main = r.entries.iter().find(|e| e.entry_key == "main").unwrap();
    assert_eq!(s["readiness"]["status"], main.status.as_str(), "{s}");
    assert_eq!(s["readiness"]["appStatus"], r.status.as_str());
    let actions: Vec<Value> = r
        .setup_actions
        .iter()
        .map(|a| json!({"key": a.key, "title": a.title, "kind": a.kind}))
        .collect();
    assert_eq!(s["readiness"]["setupActions"], json!(actions));
    assert_eq!(s["model"]["status"], "needs-setup");
}

/// An app that may use `lime.agent` (top-level `capabilities[]`: optional) while no model is set
/// up: the snapshot carries the "Set up a model" action and the model's `needs-setup`.
#[test]
fn a_snapshot_of_an_app_needing_a_model_names_the_setup_action() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let pkg = package(tmp.path(), true);
    let manifest = std::fs::read_to_string(pkg.join("APP.md")).unwrap();
    let patched = manifest.replacen(
        "runtimeTargets: [local]\n",
        "runtimeTargets: [local]\ncapabilities: [lime.agent]\n",
        1,
    );
    assert_ne!(patched, manifest);
    std::fs::write(pkg.join("APP.md"), patched).unwrap();
    install(&dir, &pkg);
    let f = Frame::open(&dir, "main");
    let s = &f.snapshot;
    assert_eq!(s["readiness"]["appStatus"], "ready-degraded", "{s}");
    let actions = s["readiness"]["setupActions"].as_array().unwrap();
    assert!(
        actions.contains(&json!({"key": "model", "title": "Set up a model", "kind": "model"})),
        "{s}"
    );
    assert_eq!(s["model"]["status"], "needs-setup");
}
