//! The Host Bridge schemas and the SDK's TypeScript types are generated from
//! `bridge/wire.rs`. This test fails when the committed files drift (regenerate with
//! `APPHOST_BLESS=1 cargo test -p host-core --test bridge_schemas`), and checks that the schemas
//! agree with the real decoder and with what the real host posts.

mod support;

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::host::{BridgeHost, Environment, Outgoing};
use host_core::hosting::bridge::message::{decode, FrameIdentity, PROTOCOL};
use host_core::hosting::bridge::schema::{self, REGENERATE};
use host_core::hosting::bridge::wire::{ErrorCode, ErrorPayload};
use host_core::hosting::capability::services::Services;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::install::store::Store;
use serde_json::{json, Value};
use support::{fixture, install, repo_root};

const FRAME: FrameIdentity<'static> = FrameIdentity {
    app_id: "hello-app",
    entry_key: "notes",
    origin: "agentapp://hello-app",
};

fn check(rel: &str, generated: &str) {
    let path = repo_root().join(rel);
    if std::env::var_os("APPHOST_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{rel} drifted from crates/host-core/src/hosting/bridge/wire.rs; regenerate with `{REGENERATE}` \
         (from the repository root) and commit the result"
    );
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap() + "\n"
}

#[test]
fn committed_schemas_and_typescript_match_the_rust_types() {
    check(
        schema::APP_TO_HOST_PATH,
        &pretty(&schema::app_to_host_schema()),
    );
    check(
        schema::HOST_TO_APP_PATH,
        &pretty(&schema::host_to_app_schema()),
    );
    check(schema::TYPESCRIPT_PATH, &schema::typescript());
}

fn validator(v: &Value) -> jsonschema::Validator {
    jsonschema::validator_for(v).expect("a valid schema")
}

#[test]
fn every_schema_example_is_valid_and_accepted_by_the_decoder() {
    let s = schema::app_to_host_schema();
    let v = validator(&s);
    let examples = s["examples"].as_array().unwrap();
    for ex in examples {
        assert!(v.is_valid(ex), "example does not validate: {ex}");
        let decoded = decode(&ex.to_string(), FRAME, FRAME.origin, true);
        assert!(decoded.is_ok(), "decoder refused {ex}: {decoded:?}");
    }
    // Every message type an app may send has an example, and the decoder knows each one.
    for spec in schema::app_messages() {
        assert!(
            examples.iter().any(|e| e["type"] == spec.kind),
            "no example for {}",
            spec.kind
        );
    }
    let host = schema::host_to_app_schema();
    let hv = validator(&host);
    for ex in host["examples"].as_array().unwrap() {
        assert!(hv.is_valid(ex), "host example does not validate: {ex}");
    }
}

fn with(base: &Value, path: &[&str], value: Option<Value>) -> Value {
    let mut v = base.clone();
    let mut cur = &mut v;
    for p in &path[..path.len() - 1] {
        cur = &mut cur[*p];
    }
    let last = path[path.len() - 1];
    match value {
        Some(x) => cur[last] = x,
        None => {
            cur.as_object_mut().unwrap().remove(last);
        }
    }
    v
}

/// Valid and invalid variants of the examples: the schema accepts exactly what the decoder
/// accepts (for the mounted identity, after the handshake).
#[test]
fn the_decoder_and_the_schema_agree_on_accept_and_refuse() {
    let s = schema::app_to_host_schema();
    let v = validator(&s);
    let ex: Vec<Value> = schema::app_examples();
    let by = |t: &str| ex.iter().find(|e| e["type"] == t).unwrap().clone();
    let nav = by("host:navigate");
    let toast = by("host:toast");
    let inv = by("capability:invoke");
    let dl = by("host:download");
    let cancel = by("capability:cancel");
    let ready = by("app:ready");
    let mut corpus = vec![
        with(&ready, &["extra"], Some(json!(1))),
        with(&ready, &["payload", "x"], Some(json!(1))),
        with(&ready, &["payload"], None),
        with(&ready, &["payload"], Some(json!([]))),
        with(&ready, &["requestId"], Some(json!("bad id"))),
        with(&ready, &["requestId"], Some(json!("a".repeat(129)))),
        with(&ready, &["requestId"], Some(json!("a".repeat(128)))),
        with(&ready, &["requestId"], Some(json!(""))),
        with(&ready, &["requestId"], Some(json!(7))),
        with(&ready, &["version"], Some(json!(2))),
        with(&ready, &["version"], Some(json!("1"))),
        with(&ready, &["protocol"], Some(json!("other"))),
        with(&ready, &["type"], Some(json!("host:snapshot"))),
        with(&ready, &["type"], None),
        with(&ready, &["entryKey"], None),
        with(&nav, &["payload"], None),
        with(&nav, &["payload"], Some(Value::Null)),
        with(&nav, &["payload", "route"], Some(json!("//evil.example"))),
        with(&nav, &["payload", "route"], Some(json!("notes"))),
        with(&nav, &["payload", "route"], Some(json!("/"))),
        with(&nav, &["payload", "route"], Some(json!("/a\u{7}b"))),
        with(&nav, &["payload", "route"], Some(json!("/a\u{85}b"))),
        with(
            &nav,
            &["payload", "route"],
            Some(json!(format!("/{}", "a".repeat(2047)))),
        ),
        with(
            &nav,
            &["payload", "route"],
            Some(json!(format!("/{}", "a".repeat(2048)))),
        ),
        with(&nav, &["payload", "route"], Some(json!(5))),
        with(&toast, &["payload", "level"], None),
        with(&toast, &["payload", "level"], Some(json!("loud"))),
        with(&toast, &["payload", "level"], Some(Value::Null)),
        with(&toast, &["payload", "message"], Some(json!("   "))),
        with(&toast, &["payload", "message"], Some(json!(""))),
        with(
            &toast,
            &["payload", "message"],
            Some(json!("x".repeat(500))),
        ),
        with(
            &toast,
            &["payload", "message"],
            Some(json!("x".repeat(501))),
        ),
        with(&dl, &["requestId"], None),
        with(&dl, &["payload", "fileName"], None),
        with(&dl, &["payload", "fileName"], Some(Value::Null)),
        with(
            &dl,
            &["payload", "artifactId"],
            Some(json!("a".repeat(129))),
        ),
        with(&inv, &["requestId"], None),
        with(&inv, &["payload", "args"], Some(Value::Null)),
        with(&inv, &["payload", "args"], Some(json!([1, "x"]))),
        with(&inv, &["payload", "options"], Some(Value::Null)),
        with(
            &inv,
            &["payload", "options"],
            Some(json!({"idempotencyKey": "k"})),
        ),
        with(&inv, &["payload", "options"], Some(json!([]))),
        with(&inv, &["payload", "capability"], Some(json!("storage"))),
        with(&inv, &["payload", "capability"], Some(json!("lime."))),
        with(&inv, &["payload", "capability"], Some(json!("lime.a.b2"))),
        with(&inv, &["payload", "capability"], Some(json!("lime.2a"))),
        with(
            &inv,
            &["payload", "capability"],
            Some(json!(format!("lime.{}", "a".repeat(59)))),
        ),
        with(
            &inv,
            &["payload", "capability"],
            Some(json!(format!("lime.{}", "a".repeat(60)))),
        ),
        with(&inv, &["payload", "method"], Some(json!("_get"))),
        with(&inv, &["payload", "method"], Some(json!("get_all2"))),
        with(&inv, &["payload", "method"], Some(json!("get-all"))),
        with(&inv, &["payload", "surprise"], Some(json!(1))),
        with(&cancel, &["payload", "requestId"], Some(json!("no way"))),
        with(&cancel, &["payload"], Some(json!({}))),
    ];
    corpus.extend(ex.iter().cloned());
    let seeds = repo_root().join("fuzz/seeds/bridge_message");
    let mut texts: Vec<String> = corpus.iter().map(Value::to_string).collect();
    for e in std::fs::read_dir(seeds).unwrap() {
        texts.push(std::fs::read_to_string(e.unwrap().path()).unwrap());
    }
    let mut accepted = 0;
    for text in &texts {
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        let by_schema = v.is_valid(&value);
        let by_decoder = decode(text, FRAME, FRAME.origin, true).is_ok();
        assert_eq!(
            by_schema, by_decoder,
            "schema says {by_schema}, decoder says {by_decoder} for {text}"
        );
        if by_decoder {
            // ... and the serde wire types parse what the decoder accepts.
            let kind = value["type"].as_str().unwrap();
            assert!(
                host_core::hosting::bridge::wire::app_payload_parses(kind, value.get("payload")),
                "wire.rs cannot parse the accepted {text}"
            );
        }
        accepted += usize::from(by_decoder);
    }
    assert!(accepted > 10 && accepted < texts.len() - 30, "{accepted}");
}

/// Every message the real host posts validates against host-to-app.schema.json.
#[test]
fn what_the_host_posts_validates_against_the_schema() {
    let hv = validator(&schema::host_to_app_schema());
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &fixture("good/hello-app"));
    let mut host = BridgeHost::new(
        Services::new(dir.apps_data()),
        HostProfile::all_available(),
        OriginStyle::Scheme,
    );
    let store = Store::open(&dir).unwrap();
    let m = host.mount(&store, "hello-app", "notes").unwrap();
    let send = |host: &mut BridgeHost, kind: &str, id: &str, payload: Value| {
        let raw = json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
                         "appId": "hello-app", "entryKey": "notes", "payload": payload});
        host.handle(&store, &m.mount_id, &m.origin, &raw.to_string())
    };
    let mut out = Vec::new();
    out.extend(send(&mut host, "app:ready", "r0", json!({})));
    out.extend(send(&mut host, "host:getSnapshot", "r1", json!({})));
    let call =
        |c: &str, me: &str, args: Value| json!({"capability": c, "method": me, "args": args});
    out.extend(send(
        &mut host,
        "capability:invoke",
        "r2",
        call("lime.storage", "set", json!({"key": "k", "value": [1]})),
    ));
    out.extend(send(
        &mut host,
        "capability:invoke",
        "r3",
        call("lime.storage", "get", json!({"key": "k"})),
    ));
    out.extend(send(
        &mut host,
        "capability:invoke",
        "r4",
        call("lime.storage", "get", json!({"key": ""})),
    ));
    out.extend(send(
        &mut host,
        "capability:invoke",
        "r5",
        call("lime.nothing", "x", json!({})),
    ));
    out.extend(send(
        &mut host,
        "capability:invoke",
        "r6",
        call("lime.ui", "getLocale", json!({})),
    ));
    out.extend(send(
        &mut host,
        "capability:invoke",
        "r7",
        call("lime.ui", "getTheme", json!({})),
    ));
    out.extend(send(
        &mut host,
        "host:navigate",
        "r8",
        json!({"route": "/elsewhere"}),
    ));
    out.extend(send(
        &mut host,
        "host:download",
        "r9",
        json!({"artifactId": "a"}),
    ));
    let mut env = Environment::default();
    env.tokens.insert("--lime-bg".into(), "#000".into());
    out.extend(host.set_environment(env));
    out.extend(host.set_visibility(&m.mount_id, false));
    let posted: Vec<&Value> = out
        .iter()
        .filter_map(|o| match o {
            Outgoing::Post { message, .. } => Some(message),
            _ => None,
        })
        .collect();
    let kinds: std::collections::BTreeSet<&str> =
        posted.iter().map(|m| m["type"].as_str().unwrap()).collect();
    for k in [
        "host:snapshot",
        "host:response",
        "host:error",
        "theme:update",
        "host:visibility",
    ] {
        assert!(kinds.contains(k), "the scenario posted no {k}: {kinds:?}");
    }
    // The lime.ui results match `x-results`.
    let host_schema = schema::host_to_app_schema();
    for (id, method) in [("r6", "lime.ui.getLocale"), ("r7", "lime.ui.getTheme")] {
        let mut one = host_schema.clone();
        let o = one.as_object_mut().unwrap();
        o.remove("oneOf");
        o.remove("examples");
        let r = host_schema["x-results"][method].clone();
        assert!(r.is_object(), "x-results lacks {method}");
        o.insert("allOf".into(), json!([r]));
        let response = posted.iter().find(|m| m["requestId"] == id).unwrap();
        assert_eq!(response["type"], "host:response", "{response}");
        assert!(
            validator(&one).is_valid(&response["payload"]["value"]),
            "{response}"
        );
    }
    for msg in &posted {
        let errors: Vec<String> = hv.iter_errors(msg).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{msg} does not validate: {errors:?}");
        if msg["type"] == "host:error" {
            let p: ErrorPayload = serde_json::from_value(msg["payload"].clone()).unwrap();
            assert!(!p.message.is_empty());
        }
    }
}

/// Each `"APP_E…"` / `"HOST_E_…"` literal in the Rust sources is an [`ErrorCode`] (so the
/// generated TypeScript union is complete), and each code is documented.
#[test]
fn every_error_code_the_host_uses_is_in_the_enum_and_documented() {
    let mut files = Vec::new();
    for root in ["crates/host-core/src", "crates/runtime-core/src"] {
        walk(&repo_root().join(root), &mut files);
    }
    let mut seen = 0;
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, _) in text
            .match_indices("\"APP_E")
            .chain(text.match_indices("\"HOST_E_"))
        {
            let rest = &text[i + 1..];
            let end = rest.find('"').unwrap();
            let code = &rest[..end];
            if code.ends_with('_') || code.contains('x') {
                continue; // a prefix or a range ("APP_E2xx"), not a code
            }
            seen += 1;
            assert!(
                ErrorCode::parse(code).is_some(),
                "{} uses {code}, which bridge/wire.rs ErrorCode lacks (add it, then `{REGENERATE}`)",
                f.display()
            );
        }
    }
    assert!(seen >= 10, "{seen}");
    let doc = std::fs::read_to_string(repo_root().join("docs/bridge-protocol.md")).unwrap();
    for c in ErrorCode::ALL {
        assert!(
            doc.contains(&format!("`{}`", c.as_str())),
            "docs/bridge-protocol.md lacks {}",
            c.as_str()
        );
    }
}

fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// What the SDK really posts (recorded by bridge-sdk/test/wire.test.mjs) is accepted by the
/// decoder and valid against the app → host schema.
#[test]
fn the_messages_the_sdk_sends_are_accepted_by_the_decoder() {
    let path = repo_root().join("bridge-sdk/test/fixtures/sdk-messages.json");
    let recorded: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = validator(&schema::app_to_host_schema());
    let mut kinds = std::collections::BTreeSet::new();
    for m in &recorded {
        let errors: Vec<String> = v.iter_errors(m).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{m}: {errors:?}");
        let decoded = decode(&m.to_string(), FRAME, FRAME.origin, true);
        assert!(
            decoded.is_ok(),
            "the decoder refuses the SDK's {m}: {decoded:?}"
        );
        kinds.insert(m["type"].as_str().unwrap().to_owned());
    }
    assert!(recorded.len() >= 20 && kinds.len() >= 6, "{kinds:?}");
}
