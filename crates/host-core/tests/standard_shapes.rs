//! The Agent App standard's call shapes (its Capability SDK examples) beside the host's own:
//! `lime.artifacts.create({kind, title, content})` / `({type, data})`,
//! `lime.evidence.record({kind, message, refs})` / `({subject, sources})`, and the standard's
//! `lime.agent.startTask` fields. Mixed shapes, bindings the host cannot honour yet, another
//! app's or entry's identity and unknown fields are refused with stable codes, writing nothing.

mod support;

use std::sync::Arc;

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::mounting::mount_entry;
use host_core::hosting::bridge::mounts::{Mount, MountTable};
use host_core::hosting::capability::dispatch::{dispatch, SessionAnswers, Verdict};
use host_core::hosting::capability::services::Services;
use host_core::hosting::capability::Call;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::install::store::Store;
use runtime_core::backend::{BackendEvent, ExecutionBackend, ScriptStep, ScriptedBackend};
use serde_json::{json, Value};
use support::agent::set_placeholder_model;
use support::{hello_app_as, install};

struct Env {
    _tmp: tempfile::TempDir,
    store: Store,
    profile: HostProfile,
    table: MountTable,
    services: Services,
    answers: SessionAnswers,
    backend: ScriptedBackend,
}

/// hello-app as `app`, requiring lime.agent, lime.artifacts and lime.evidence (with the
/// artifact permission) on its `notes` entry; a placeholder model and a scripted backend.
fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let pkg = hello_app_as(
        tmp.path(),
        "shapes-app",
        &[
            (
                "    lime.storage: \"^0.10.0\"\n",
                "    lime.storage: \"^0.10.0\"\n    lime.agent: \"^0.10.0\"\n    lime.artifacts: \"^0.10.0\"\n    lime.evidence: \"^0.10.0\"\n",
            ),
            (
                "requiredCapabilities: [lime.ui, lime.storage]",
                "requiredCapabilities: [lime.ui, lime.storage, lime.agent, lime.artifacts, lime.evidence]",
            ),
            (
                "permissions: [notes_storage]",
                "permissions: [notes_storage, notes_artifacts]",
            ),
        ],
    );
    let perms = pkg.join("app.permissions.yaml");
    let mut p = std::fs::read_to_string(&perms).unwrap();
    p.push_str("  - key: notes_artifacts\n    scope: artifact\n    access: read-write\n    required: true\n    reason: Save results.\n");
    std::fs::write(&perms, p).unwrap();
    install(&dir, &pkg);
    set_placeholder_model(&dir);
    let store = Store::open(&dir).unwrap();
    let backend = ScriptedBackend::new();
    let mut services = Services::new(dir.apps_data());
    services.set_agent_backend(Arc::new(backend.clone()) as Arc<dyn ExecutionBackend>);
    Env {
        _tmp: tmp,
        store,
        profile: HostProfile::current(),
        table: MountTable::new(),
        services,
        answers: SessionAnswers::default(),
        backend,
    }
}

impl Env {
    fn mount(&mut self) -> Mount {
        mount_entry(
            &self.store,
            &self.profile,
            &mut self.table,
            &OriginStyle::Scheme,
            "shapes-app",
            "notes",
        )
        .unwrap()
    }

    /// `Ok(value)` or `Err(host:error payload)`.
    fn run(&mut self, m: &Mount, cap: &str, method: &str, args: Value) -> Result<Value, Value> {
        let c = Call {
            request_id: "r1".into(),
            capability: cap.into(),
            method: method.into(),
            args,
            options: Default::default(),
        };
        match dispatch(
            &self.store,
            &self.profile,
            &m.caller(),
            &c,
            "trace-1",
            &mut self.answers,
        ) {
            Verdict::Allowed(proof) => self
                .services
                .call_with(&self.store, &proof, &c.args)
                .map(|r| r.value)
                .map_err(|e| serde_json::to_value(e).unwrap()),
            Verdict::Denied(e) => Err(serde_json::to_value(e).unwrap()),
            Verdict::Ask(q) => Err(json!({"ask": q.permission})),
        }
    }

    fn ok(&mut self, m: &Mount, cap: &str, method: &str, args: Value) -> Value {
        self.run(m, cap, method, args.clone())
            .unwrap_or_else(|e| panic!("{cap}.{method}({args}) failed: {e}"))
    }

    fn refused(&mut self, m: &Mount, cap: &str, method: &str, args: Value) -> (String, String) {
        let e = self
            .run(m, cap, method, args.clone())
            .expect_err(&format!("{cap}.{method}({args}) was accepted"));
        (
            e["code"].as_str().unwrap_or("").to_owned(),
            e["causeCode"].as_str().unwrap_or("").to_owned(),
        )
    }

    fn count(&mut self, m: &Mount, cap: &str, method: &str) -> usize {
        let page = self.ok(m, cap, method, json!({}));
        page["items"].as_array().map_or(0, Vec::len)
    }
}

#[test]
fn artifact_create_accepts_the_standard_shapes_beside_the_hosts() {
    let mut e = env();
    let m = e.mount();
    let a = e.ok(
        &m,
        "lime.artifacts",
        "create",
        json!({"kind": "report", "title": "Weekly report", "content": "# Hello"}),
    );
    assert_eq!(a["name"], "Weekly report");
    assert_eq!(a["mimeType"], "text/plain");
    let read = e.ok(
        &m,
        "lime.artifacts",
        "read",
        json!({"id": a["id"], "encoding": "text"}),
    );
    assert_eq!(read["content"], "# Hello");

    let b = e.ok(
        &m,
        "lime.artifacts",
        "create",
        json!({"type": "triage", "data": {"items": [1, 2]}}),
    );
    assert_eq!(b["name"], "triage", "no title: the type names it");
    assert_eq!(b["mimeType"], "application/json");
    let read = e.ok(
        &m,
        "lime.artifacts",
        "read",
        json!({"id": b["id"], "encoding": "text"}),
    );
    let data: Value = serde_json::from_str(read["content"].as_str().unwrap()).unwrap();
    assert_eq!(data, json!({"items": [1, 2]}));

    // The host's own form keeps working.
    let c = e.ok(
        &m,
        "lime.artifacts",
        "create",
        json!({"name": "a.txt", "text": "x"}),
    );
    assert_eq!(c["name"], "a.txt");
    assert_eq!(e.count(&m, "lime.artifacts", "list"), 3);
}

#[test]
fn mixed_or_broken_artifact_shapes_are_refused_and_write_nothing() {
    let mut e = env();
    let m = e.mount();
    let cases = [
        (
            json!({"kind": "r", "content": "x", "type": "t", "data": "y"}),
            "artifacts.ambiguous_shape",
        ),
        (
            json!({"kind": "r", "content": "x", "name": "n"}),
            "artifacts.ambiguous_shape",
        ),
        (
            json!({"type": "t", "data": "y", "text": "z"}),
            "artifacts.ambiguous_shape",
        ),
        (
            json!({"title": "t", "name": "n", "text": "z"}),
            "artifacts.ambiguous_shape",
        ),
        (json!({"kind": "r"}), "artifacts.invalid_argument"),
        (
            json!({"kind": "r", "content": null}),
            "artifacts.invalid_argument",
        ),
        (json!({"content": "x"}), "artifacts.invalid_argument"),
        (
            json!({"kind": 5, "content": "x"}),
            "artifacts.invalid_argument",
        ),
        (
            json!({"kind": "r", "content": "x", "extra": 1}),
            "artifacts.invalid_argument",
        ),
        (
            json!({"kind": "r", "content": "x".repeat(1024 * 1024 + 1)}),
            "artifacts.too_large",
        ),
        (
            json!({"kind": "r", "title": "../../etc/passwd\u{0}", "content": "x"}),
            "artifacts.invalid_name",
        ),
    ];
    for (args, cause) in cases {
        let (code, got) = e.refused(&m, "lime.artifacts", "create", args.clone());
        assert_eq!((code.as_str(), got.as_str()), ("APP_E900", cause), "{args}");
    }
    assert_eq!(
        e.count(&m, "lime.artifacts", "list"),
        0,
        "nothing was written"
    );
}

#[test]
fn evidence_record_accepts_the_standard_shapes_beside_the_hosts() {
    let mut e = env();
    let m = e.mount();
    let r = e.ok(
        &m,
        "lime.evidence",
        "record",
        json!({"kind": "model.call", "message": "asked the model", "refs": ["doc-1", {"url": "https://x"}]}),
    );
    assert_eq!(r["kind"], "model.call");
    assert_eq!(r["summary"], "asked the model");
    assert_eq!(r["data"], json!({"refs": ["doc-1", {"url": "https://x"}]}));
    let s = e.ok(
        &m,
        "lime.evidence",
        "record",
        json!({"subject": "claim 3", "sources": [{"title": "paper"}]}),
    );
    assert_eq!(s["kind"], "source");
    assert_eq!(s["summary"], "claim 3");
    assert_eq!(
        s["data"],
        json!({"subject": "claim 3", "sources": [{"title": "paper"}]})
    );
    let h = e.ok(
        &m,
        "lime.evidence",
        "record",
        json!({"kind": "eval.result", "summary": "ok"}),
    );
    assert_eq!(h["summary"], "ok");
    assert_eq!(e.count(&m, "lime.evidence", "list"), 3);
}

#[test]
fn mixed_or_broken_evidence_shapes_are_refused_and_write_nothing() {
    let mut e = env();
    let m = e.mount();
    let cases = [
        (
            json!({"kind": "k", "message": "m", "subject": "s"}),
            "evidence.ambiguous_shape",
        ),
        (
            json!({"kind": "k", "message": "m", "summary": "s"}),
            "evidence.ambiguous_shape",
        ),
        (
            json!({"subject": "s", "data": {}}),
            "evidence.ambiguous_shape",
        ),
        (
            json!({"refs": ["a"], "artifactIds": []}),
            "evidence.ambiguous_shape",
        ),
        (json!({"message": "m"}), "evidence.invalid_argument"),
        (
            json!({"kind": "k", "refs": "not-an-array"}),
            "evidence.invalid_argument",
        ),
        (json!({"sources": []}), "evidence.invalid_argument"),
        (
            json!({"subject": "s", "sources": {}}),
            "evidence.invalid_argument",
        ),
        (
            json!({"subject": "s", "extra": true}),
            "evidence.invalid_argument",
        ),
        (
            json!({"kind": "bad kind!", "message": "m"}),
            "evidence.invalid_kind",
        ),
    ];
    for (args, cause) in cases {
        let (code, got) = e.refused(&m, "lime.evidence", "record", args.clone());
        assert_eq!((code.as_str(), got.as_str()), ("APP_E900", cause), "{args}");
    }
    assert_eq!(
        e.count(&m, "lime.evidence", "list"),
        0,
        "nothing was written"
    );
}

fn finish(b: &ScriptedBackend) {
    b.push(vec![
        ScriptStep::Emit(BackendEvent::TextDelta("{}".into())),
        ScriptStep::Emit(BackendEvent::Finished {
            reason: "stop".into(),
        }),
    ]);
}

#[test]
fn start_task_accepts_the_standard_request() {
    let mut e = env();
    let m = e.mount();
    finish(&e.backend);
    let started = e.ok(
        &m,
        "lime.agent",
        "startTask",
        json!({
            "appId": "shapes-app", "entryKey": "notes", "entry": "notes",
            "taskKind": "triage", "input": {"items": ["a"]}, "idempotencyKey": "k1",
            "expectedOutput": {"outputFormat": {"type": "json_schema",
                "schema": {"type": "object"}, "maxValidationRetries": 2}},
            "context": {"customer": "c-1"}, "metadata": {}, "businessObjectRef": "order-7",
            "capabilityHints": ["lime.storage"],
            "knowledge": [], "tools": null, "files": {}, "secrets": []
        }),
    );
    assert!(started["taskId"].is_string(), "{started}");
    // Today's form keeps working.
    finish(&e.backend);
    let again = e.ok(
        &m,
        "lime.agent",
        "startTask",
        json!({"input": "x", "idempotencyKey": "k2", "expectedOutput": {"schema": {"type": "object"}}}),
    );
    assert!(again["taskId"].is_string());
    assert_eq!(e.count(&m, "lime.agent", "listTasks"), 2);
}

#[test]
fn start_task_refuses_unhonoured_bindings_foreign_identity_and_unknown_fields() {
    let mut e = env();
    let m = e.mount();
    let base = || json!({"input": "x", "idempotencyKey": "k"});
    let with = |k: &str, v: Value| {
        let mut a = base();
        a[k] = v;
        a
    };
    let cases = [
        (
            with("knowledge", json!([{"template": "kb"}])),
            "APP_E002",
            "knowledge.template_not_declared",
            None,
        ),
        (
            // Tools are bound now (tests/agent_mcp_tools.rs); this app declares no toolRefs[].
            with("tools", json!([{"key": "web.search"}])),
            "APP_E002",
            "tools.not_declared",
            None,
        ),
        // Files are attached now (tests/files_attachments.rs); this app declares no lime.files.
        (
            with("files", json!(["fileref_1"])),
            "APP_E002",
            "files.not_declared",
            None,
        ),
        (
            with("secrets", json!({"api": "secretref_1"})),
            "APP_E001",
            "agent.binding_unsupported",
            Some("secrets"),
        ),
        (
            with(
                "expectedOutput",
                json!({"schema": {}, "materializer": {"kind": "artifact"}}),
            ),
            "APP_E001",
            "agent.binding_unsupported",
            Some("expectedOutput.materializer"),
        ),
        (
            with(
                "expectedOutput",
                json!({"schema": {}, "artifactKind": "report"}),
            ),
            "APP_E001",
            "agent.binding_unsupported",
            Some("expectedOutput.artifactKind"),
        ),
        (
            with("appId", json!("other-app")),
            "APP_E002",
            "agent.app_mismatch",
            None,
        ),
        (
            with("entryKey", json!("admin")),
            "APP_E002",
            "agent.entry_mismatch",
            None,
        ),
        (
            with("entry", json!("admin")),
            "APP_E002",
            "agent.entry_mismatch",
            None,
        ),
        (
            json!({"input": "x", "entry": "notes", "entryKey": "other"}),
            "APP_E900",
            "agent.invalid_argument",
            None,
        ),
        (
            with("taskKind", json!("")),
            "APP_E900",
            "agent.invalid_argument",
            None,
        ),
        (
            with("taskKind", json!("k".repeat(129))),
            "APP_E900",
            "agent.invalid_argument",
            None,
        ),
        (
            with("context", json!("str")),
            "APP_E900",
            "agent.invalid_argument",
            None,
        ),
        (
            with("capabilityHints", json!({})),
            "APP_E900",
            "agent.invalid_argument",
            None,
        ),
        (
            with("businessObjectRef", json!(7)),
            "APP_E900",
            "agent.invalid_argument",
            None,
        ),
        (
            with("priority", json!(1)),
            "APP_E900",
            "agent.invalid_argument",
            None,
        ),
        (
            with(
                "expectedOutput",
                json!({"schema": {}, "outputFormat": {"schema": {}}}),
            ),
            "APP_E900",
            "agent.invalid_argument",
            None,
        ),
        (
            with(
                "expectedOutput",
                json!({"outputFormat": {"type": "xml", "schema": {}}}),
            ),
            "APP_E900",
            "agent.invalid_argument",
            None,
        ),
        (
            with(
                "expectedOutput",
                json!({"outputFormat": {"schema": {}, "x": 1}}),
            ),
            "APP_E900",
            "agent.invalid_argument",
            None,
        ),
        (
            with(
                "expectedOutput",
                json!({"outputFormat": {"schema": {}, "maxValidationRetries": 1e9}}),
            ),
            "APP_E900",
            "agent.invalid_argument",
            None,
        ),
    ];
    for (args, code, cause, binding) in cases {
        let err = e
            .run(&m, "lime.agent", "startTask", args.clone())
            .expect_err(&format!("accepted {args}"));
        assert_eq!(err["code"], code, "{args}: {err}");
        assert_eq!(err["causeCode"], cause, "{args}: {err}");
        assert_eq!(err["details"]["binding"], json!(binding), "{args}: {err}");
        if let Some(b) = binding {
            assert!(
                err["message"].as_str().unwrap().contains(&format!("{b:?}")),
                "the message names the binding: {err}"
            );
        }
    }
    assert_eq!(
        e.count(&m, "lime.agent", "listTasks"),
        0,
        "no task was started"
    );
}
