//! The per-method argument and result schemas (`hosting/capability/contract/`): the committed
//! `schemas/capabilities/*.schema.json` and `bridge-sdk/src/generated/capabilities.ts` match the
//! Rust table (regenerate with `APPHOST_BLESS=1 cargo test -p host-core --test
//! capability_schemas`), the table covers exactly the registry's methods, and real service
//! answers, run through the choke point, validate against the result schemas.

mod support;

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::host::{BridgeHost, Outgoing};
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::capability::contract::emit::{self, REGENERATE};
use host_core::hosting::capability::contract::{self, NamespaceContract};
use host_core::hosting::capability::services::Services;
use host_core::hosting::capability::{Capability, Method};
use host_core::hosting::surface::origin::OriginStyle;
use host_core::install::store::Store;
use serde_json::{json, Value};
use support::{install, repo_root};

fn check(rel: &str, generated: &str) {
    let path = repo_root().join(rel);
    if std::env::var_os("APPHOST_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{rel} drifted from crates/host-core/src/hosting/capability/contract/; regenerate with \
         `{REGENERATE}` (from the repository root) and commit the result"
    );
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap() + "\n"
}

#[test]
fn committed_schemas_and_typescript_match_the_rust_table() {
    let mut expected = std::collections::BTreeSet::new();
    for ns in contract::all() {
        let rel = emit::schema_path(ns.capability);
        check(&rel, &pretty(&emit::namespace_schema(&ns)));
        expected.insert(rel.rsplit('/').next().unwrap().to_owned());
    }
    check(emit::TYPESCRIPT_PATH, &emit::typescript());
    // No stale file of a namespace the table no longer has.
    let dir = repo_root().join(emit::SCHEMA_DIR);
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".schema.json") {
            assert!(
                expected.contains(&name),
                "{name} is in no namespace of the table"
            );
        }
    }
}

#[test]
fn the_table_has_exactly_the_registrys_methods() {
    let table = contract::all();
    for m in Method::all() {
        assert!(
            contract::find(m.capability().as_str(), m.as_str()).is_some(),
            "no contract row for {}.{}",
            m.capability().as_str(),
            m.as_str()
        );
    }
    for ns in &table {
        let cap = Capability::parse(ns.capability).expect("an implemented capability");
        for r in &ns.rows {
            assert!(
                Method::all().any(|m| m.capability() == cap && m.as_str() == r.method),
                "{}.{} is in the table but not in the registry",
                ns.capability,
                r.method
            );
        }
    }
    let caps: Vec<&str> = table.iter().map(|n| n.capability).collect();
    assert_eq!(caps.len(), Capability::ALL.len(), "{caps:?}");
}

fn validator(doc: &Value, method: &str, part: &str) -> jsonschema::Validator {
    let s = emit::method_schema(doc, method, part).expect("a method of the table");
    jsonschema::validator_for(&s).expect("a valid schema")
}

fn namespace(capability: &str) -> (NamespaceContract, Value) {
    let ns = contract::all()
        .into_iter()
        .find(|n| n.capability == capability)
        .unwrap();
    let doc = emit::namespace_schema(&ns);
    (ns, doc)
}

/// The standard's call shapes and the host's forms both validate; a mix of two forms, an
/// unknown field or a missing required one does not (the services refuse those too).
#[test]
fn argument_schemas_accept_both_forms_and_refuse_mixtures() {
    let (_, art) = namespace("lime.artifacts");
    let create = validator(&art, "create", "args");
    for ok in [
        json!({"name": "a.md", "text": "x"}),
        json!({"name": "a.bin", "base64": "AA=="}),
        json!({"kind": "report", "title": "R", "content": "x"}),
        json!({"kind": "report", "content": {"a": 1}}),
        json!({"type": "report", "data": [1]}),
    ] {
        assert!(create.is_valid(&ok), "{ok}");
    }
    for bad in [
        json!({"name": "a.md", "text": "x", "base64": "AA=="}),
        json!({"name": "a.md", "content": "x", "kind": "k"}),
        json!({"kind": "k", "content": "x", "type": "t", "data": 1}),
        json!({"kind": "k"}),
        json!({"name": "a.md", "text": "x", "evil": 1}),
        json!([]),
    ] {
        assert!(!create.is_valid(&bad), "{bad}");
    }
    let (_, ev) = namespace("lime.evidence");
    let record = validator(&ev, "record", "args");
    for ok in [
        json!({"kind": "source", "summary": "s", "data": {}, "artifactIds": []}),
        json!({"kind": "note", "message": "m", "refs": ["a"]}),
        json!({"kind": "note"}),
        json!({"subject": "s", "sources": []}),
    ] {
        assert!(record.is_valid(&ok), "{ok}");
    }
    for bad in [
        json!({"kind": "note", "message": "m", "summary": "s"}),
        json!({"subject": "s", "data": {}}),
        json!({"kind": "bad kind!"}),
    ] {
        assert!(!record.is_valid(&bad), "{bad}");
    }
    let (_, st) = namespace("lime.storage");
    let set = validator(&st, "set", "args");
    assert!(set.is_valid(&json!({"key": "k", "value": null})));
    assert!(!set.is_valid(&json!({"key": "k"})));
    assert!(!set.is_valid(&json!({"key": "", "value": 1})));
}

struct Frame {
    host: BridgeHost,
    store: Store,
    mount: String,
    origin: String,
    next: u32,
}

impl Frame {
    /// Installs `pkg` into a data directory under `root` and mounts its `main` entry, handshake done.
    fn open(root: &std::path::Path, pkg: &std::path::Path) -> Frame {
        let dir = DataDir::at(root.join("data"));
        install(&dir, pkg);
        let mut host = BridgeHost::new(
            Services::new(dir.apps_data()),
            HostProfile::all_available(),
            OriginStyle::Scheme,
        );
        let store = Store::open(&dir).unwrap();
        let m = host.mount(&store, "conformance-app", "main").unwrap();
        let ready = json!({"protocol": PROTOCOL, "version": 1, "type": "app:ready", "requestId": "r0",
                           "appId": "conformance-app", "entryKey": "main", "payload": {}});
        host.handle(&store, &m.mount_id, &m.origin, &ready.to_string());
        Frame {
            host,
            store,
            mount: m.mount_id.clone(),
            origin: m.origin.clone(),
            next: 0,
        }
    }

    /// A call whose args must validate, that must succeed, and whose answer must validate.
    fn run(&mut self, cap: &str, method: &str, args: Value) -> Value {
        let (_, doc) = namespace(cap);
        assert!(
            validator(&doc, method, "args").is_valid(&args),
            "{cap}.{method} args {args} do not validate"
        );
        let value = self
            .call(cap, method, args.clone())
            .unwrap_or_else(|e| panic!("{cap}.{method}({args}) failed: {e}"));
        let v = validator(&doc, method, "result");
        let errors: Vec<String> = v.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(
            errors.is_empty(),
            "{cap}.{method} answered {value}: {errors:?}"
        );
        value
    }

    fn call(&mut self, capability: &str, method: &str, args: Value) -> Result<Value, Value> {
        self.next += 1;
        let id = format!("c{}", self.next);
        let raw = json!({"protocol": PROTOCOL, "version": 1, "type": "capability:invoke",
            "requestId": id, "appId": "conformance-app", "entryKey": "main",
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
}

/// Real answers of each namespace the conformance app may call, through the choke point,
/// validate against their result schemas, and each call's arguments against the args schema.
#[test]
fn real_service_answers_validate_against_the_result_schemas() {
    let tmp = tempfile::tempdir().unwrap();
    let mut f = Frame::open(
        tmp.path(),
        &repo_root().join("fixtures/apps/conformance-app"),
    );
    let mut checked = std::collections::BTreeSet::new();
    let mut run = |f: &mut Frame, cap: &str, method: &str, args: Value| {
        checked.insert(format!("{cap}.{method}"));
        f.run(cap, method, args)
    };
    for m in ["getSnapshot", "getLocale", "getTheme"] {
        run(&mut f, "lime.ui", m, json!({}));
    }
    run(
        &mut f,
        "lime.storage",
        "set",
        json!({"key": "k", "value": {"a": [1]}}),
    );
    run(&mut f, "lime.storage", "get", json!({"key": "k"}));
    run(&mut f, "lime.storage", "get", json!({"key": "missing"}));
    run(
        &mut f,
        "lime.storage",
        "list",
        json!({"prefix": "k", "limit": 10}),
    );
    run(&mut f, "lime.storage", "delete", json!({"key": "k"}));
    let a = run(
        &mut f,
        "lime.artifacts",
        "create",
        json!({"name": "a.md", "mimeType": "text/markdown", "text": "# A"}),
    );
    run(
        &mut f,
        "lime.artifacts",
        "create",
        json!({"kind": "report", "title": "R", "content": {"ok": true}}),
    );
    run(
        &mut f,
        "lime.artifacts",
        "create",
        json!({"type": "note", "data": "hi"}),
    );
    run(
        &mut f,
        "lime.artifacts",
        "read",
        json!({"id": a["id"], "encoding": "text"}),
    );
    run(&mut f, "lime.artifacts", "list", json!({"limit": 5}));
    run(
        &mut f,
        "lime.evidence",
        "record",
        json!({"kind": "source", "summary": "s", "artifactIds": [a["id"]]}),
    );
    run(
        &mut f,
        "lime.evidence",
        "record",
        json!({"kind": "note", "message": "m", "refs": ["x"]}),
    );
    run(
        &mut f,
        "lime.evidence",
        "record",
        json!({"subject": "claim", "sources": ["a"]}),
    );
    run(&mut f, "lime.evidence", "list", json!({}));
    run(&mut f, "lime.evidence", "export", json!({}));
    run(&mut f, "lime.artifacts", "delete", json!({"id": a["id"]}));
    run(
        &mut f,
        "lime.events",
        "subscribe",
        json!({"topic": "conformance.ping"}),
    );
    run(
        &mut f,
        "lime.events",
        "publish",
        json!({"topic": "conformance.ping", "payload": 1}),
    );
    run(
        &mut f,
        "lime.events",
        "unsubscribe",
        json!({"topic": "conformance.ping"}),
    );
    // A refused call answers an error, not a value, and the schema refuses its args too.
    let (_, st) = namespace("lime.storage");
    assert!(!validator(&st, "get", "args").is_valid(&json!({"key": ""})));
    let refused = f
        .call("lime.storage", "get", json!({"key": ""}))
        .unwrap_err();
    assert_eq!(refused["code"], "APP_E900", "{refused}");
    assert!(checked.len() >= 16, "{checked:?}");
}

/// `lime.files` answers (the conformance app, declaring `lime.files` too, with a granted file and
/// folder) validate against their result schemas.
#[test]
fn files_answers_validate_against_the_result_schemas() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    support::copy_dir(&repo_root().join("fixtures/apps/conformance-app"), &pkg);
    for f in ["app.lock.json", "app.signature.yaml"] {
        let _ = std::fs::remove_file(pkg.join(f));
    }
    let manifest = std::fs::read_to_string(pkg.join("APP.md")).unwrap();
    let patched = manifest
        .replacen(
            "    lime.secrets: \"^0.10.0\"\n",
            "    lime.secrets: \"^0.10.0\"\n    lime.files: \"^0.10.0\"\n",
            1,
        )
        .replacen(
            "lime.events, lime.secrets]",
            "lime.events, lime.secrets, lime.files]",
            1,
        );
    assert_ne!(patched, manifest);
    std::fs::write(pkg.join("APP.md"), patched).unwrap();
    let mut f = Frame::open(tmp.path(), &pkg);
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(docs.join("folder")).unwrap();
    std::fs::write(docs.join("a.txt"), "hello").unwrap();
    std::fs::write(docs.join("folder/b.md"), "# b").unwrap();
    let grant = |f: &Frame, p: &std::path::Path| {
        host_core::hosting::user_files::grant_path(&f.store, "conformance-app", p)
            .unwrap()
            .handle
    };
    let file = grant(&f, &docs.join("a.txt"));
    let folder = grant(&f, &docs.join("folder"));
    let listed = f.run("lime.files", "list", json!({}));
    assert_eq!(listed["refs"].as_array().unwrap().len(), 2, "{listed}");
    f.run("lime.files", "stat", json!({"ref": file}));
    let read = f.run(
        "lime.files",
        "readRef",
        json!({"ref": file, "encoding": "text"}),
    );
    assert_eq!(read["content"], "hello");
    f.run(
        "lime.files",
        "readRef",
        json!({"ref": folder, "path": "b.md", "offset": 1, "length": 2}),
    );
    f.run("lime.files", "listFolder", json!({"ref": folder}));
    f.run("lime.files", "stat", json!({"ref": folder}));
}
