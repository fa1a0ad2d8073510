//! `lime.tools` from an app's frame through `BridgeHost` and the choke point, against the stdio
//! test server: `list` shows the declared, granted tools; `invoke` runs a granted one; an
//! undeclared or ungranted tool is `APP_E002` with its `tools.*` cause; a destructive tool is
//! never run on the app's word: the host draws a prompt, a denial is `tools.denied` (audited,
//! nothing run), and only the user's allow runs it.

mod support;

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::host::{Answer, BridgeHost, Outgoing};
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::bridge::mounts::Mount;
use host_core::hosting::capability::services::Services;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::hosting::tools::{registry, ServerSpec, ToolRef, Transport};
use host_core::install::store::Store;
use serde_json::{json, Value};
use support::{hello_app_as, install, repo_root};

fn raw(m: &Mount, kind: &str, id: &str, payload: Value) -> String {
    json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
           "appId": m.app_id, "entryKey": m.entry_key, "payload": payload})
    .to_string()
}

fn call(
    host: &mut BridgeHost,
    store: &Store,
    m: &Mount,
    id: &str,
    method: &str,
    args: Value,
) -> Vec<Outgoing> {
    let payload = json!({"capability": "lime.tools", "method": method, "args": args});
    host.handle(
        store,
        &m.mount_id,
        &m.origin,
        &raw(m, "capability:invoke", id, payload),
    )
}

fn answer(out: &[Outgoing], id: &str) -> Value {
    let found: Vec<Value> = out
        .iter()
        .filter_map(|o| match o {
            Outgoing::Post { message, .. } if message["requestId"] == id => Some(message.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(found.len(), 1, "{out:?}");
    found[0].clone()
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

fn prompt(out: &[Outgoing]) -> (String, Value) {
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
fn an_app_calls_granted_declared_tools_and_only_the_user_approves_a_destructive_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let refs = "toolRefs:\n  - {key: t/echo}\n  - {key: delete_note, provider: t}\n  - {key: t/secret_digest}\nruntimePackage:";
    let pkg = hello_app_as(
        tmp.path(),
        "tb",
        &[
            ("runtimePackage:", refs),
            (
                "    lime.storage: \"^0.10.0\"\n",
                "    lime.storage: \"^0.10.0\"\n    lime.tools: \"^0.10.0\"\n",
            ),
        ],
    );
    install(&dir, &pkg);
    {
        let (store, _) = Store::open_locked(&dir).unwrap();
        let policy = host_core::hosting::tools::policy::AdminPolicy::default();
        let spec = ServerSpec {
            transport: Transport::Stdio {
                command: "/usr/bin/python3".into(),
                args: vec![repo_root()
                    .join("fixtures/mcp/test_server.py")
                    .display()
                    .to_string()],
                env: Default::default(),
            },
            secrets: Default::default(),
            timeout_ms: Some(10_000),
        };
        registry::add(&store, &policy, "t", &spec).unwrap();
        for t in ["t/echo", "t/delete_note", "t/add"] {
            registry::grant(&store, &policy, "tb", &ToolRef::parse(t).unwrap()).unwrap();
        }
        host_core::hosting::tools::Broker::new(&dir)
            .unwrap()
            .list_server(&store, "t")
            .unwrap();
    }
    let store = Store::open(&dir).unwrap();
    let mut host = BridgeHost::new(
        Services::new(dir.apps_data()),
        HostProfile::current(),
        OriginStyle::Scheme,
    );
    let m = host.mount(&store, "tb", "notes").unwrap();
    let out = host.handle(
        &store,
        &m.mount_id,
        &m.origin,
        &raw(&m, "app:ready", "r0", json!({})),
    );
    assert!(!out.is_empty());

    // list: declared and granted (t/add is granted but not declared; secret_digest the reverse).
    let listed = value(&call(&mut host, &store, &m, "l1", "list", json!({})), "l1");
    let names: Vec<(&str, bool)> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["tool"].as_str().unwrap(),
                t["needsApproval"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(names, [("t/delete_note", true), ("t/echo", false)]);

    let v = value(
        &call(
            &mut host,
            &store,
            &m,
            "c1",
            "invoke",
            json!({"tool": "t/echo", "arguments": {"text": "from the frame"}}),
        ),
        "c1",
    );
    assert_eq!(v["content"][0]["text"], "from the frame");

    let out = call(
        &mut host,
        &store,
        &m,
        "c2",
        "invoke",
        json!({"tool": "t/add", "arguments": {"a": 1}}),
    );
    assert_eq!(
        error(&out, "c2"),
        ("APP_E002".into(), "tools.not_declared".into())
    );
    let out = call(
        &mut host,
        &store,
        &m,
        "c3",
        "invoke",
        json!({"tool": "t/secret_digest"}),
    );
    assert_eq!(
        error(&out, "c3"),
        ("APP_E002".into(), "tools.not_granted".into())
    );
    let out = call(
        &mut host,
        &store,
        &m,
        "c4",
        "invoke",
        json!({"tool": "nonsense"}),
    );
    assert_eq!(
        error(&out, "c4"),
        ("APP_E900".into(), "tools.invalid".into())
    );

    // Destructive: a prompt, never an answer from the app. Deny → tools.denied.
    let calls_before = tool_calls(&store, "ok");
    let (pid, q) = prompt(&call(
        &mut host,
        &store,
        &m,
        "d1",
        "invoke",
        json!({"tool": "t/delete_note", "arguments": {"id": "n1"}}),
    ));
    assert_eq!(q["capability"], "lime.tools");
    assert!(
        q["reason"].as_str().unwrap().contains("t/delete_note"),
        "{q}"
    );
    let out = host.answer(&store, &pid, Answer::Deny);
    assert_eq!(
        error(&out, "d1"),
        ("APP_E002".into(), "tools.denied".into())
    );
    assert_eq!(tool_calls(&store, "ok"), calls_before, "nothing ran");
    let (pid, _) = prompt(&call(
        &mut host,
        &store,
        &m,
        "d2",
        "invoke",
        json!({"tool": "t/delete_note", "arguments": {"id": "n1"}}),
    ));
    let out = host.answer(&store, &pid, Answer::Dismissed);
    assert_eq!(
        error(&out, "d2"),
        ("APP_E002".into(), "tools.denied".into())
    );
    // Allow: runs once; the next call asks again (never remembered).
    let (pid, _) = prompt(&call(
        &mut host,
        &store,
        &m,
        "d3",
        "invoke",
        json!({"tool": "t/delete_note", "arguments": {"id": "n1"}}),
    ));
    let v = value(&host.answer(&store, &pid, Answer::AllowAlways), "d3");
    assert_eq!(v["content"][0]["text"], "deleted n1");
    prompt(&call(
        &mut host,
        &store,
        &m,
        "d4",
        "invoke",
        json!({"tool": "t/delete_note", "arguments": {"id": "n2"}}),
    ));
    let audits = store.audit_log(Some("tb"), 1000).unwrap();
    let approvals: Vec<String> = audits
        .iter()
        .filter(|a| {
            a["action"] == "tools.call"
                && a["details"]["tool"]
                    .as_str()
                    .unwrap_or("")
                    .contains("delete_note")
        })
        .map(|a| a["details"]["approval"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(approvals, ["user", "refused", "refused"], "newest first");
}

fn tool_calls(store: &Store, outcome: &str) -> usize {
    store
        .audit_log(None, 1000)
        .unwrap()
        .iter()
        .filter(|a| a["action"] == "tools.call" && a["details"]["outcome"] == outcome)
        .count()
}
