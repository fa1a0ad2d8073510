//! `options.idempotencyKey` on `lime.artifacts.create` and `lime.evidence.record` through the
//! choke point (what a workflow step re-issued after a crash sends, and what a frame may send):
//! the same key and content return the first record and write nothing; the same key with other
//! content, or a key that is not a short printable string, is refused with a stable code and
//! writes nothing; keys are per app.

mod support;

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::capability::call::{Call, Caller};
use host_core::hosting::capability::dispatch::{dispatch, SessionAnswers, Verdict};
use host_core::hosting::capability::services::Services;
use host_core::install::store::Store;
use runtime_core::app_artifacts::AppArtifacts;
use runtime_core::app_evidence::AppEvidence;
use serde_json::{json, Map, Value};
use support::agent::set_placeholder_model;
use support::{install, repo_root};

const APP: &str = "crash-workflow";

struct Env {
    _tmp: tempfile::TempDir,
    dir: DataDir,
    store: Store,
    services: Services,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &repo_root().join("fixtures/apps").join(APP));
    // The entry needs lime.agent, which is ready once a model is set.
    set_placeholder_model(&dir);
    let store = Store::open(&dir).unwrap();
    Env {
        services: Services::new(dir.apps_data()),
        _tmp: tmp,
        dir,
        store,
    }
}

impl Env {
    /// One call of the app's workflow entry with `options.idempotencyKey = key`.
    fn call(
        &mut self,
        cap: &str,
        method: &str,
        args: Value,
        key: Option<Value>,
    ) -> Result<Value, Value> {
        let active = self.store.active_app(APP).unwrap();
        let caller = Caller {
            app_id: active.name,
            entry_key: "publish".into(),
            version: active.version,
            session_id: "run_test".into(),
            package_hash: active.package_hash,
            manifest_hash: active.manifest_hash,
        };
        let mut options = Map::new();
        if let Some(k) = key {
            options.insert("idempotencyKey".into(), k);
        }
        let call = Call {
            request_id: "r1".into(),
            capability: cap.into(),
            method: method.into(),
            args,
            options,
        };
        let mut answers = SessionAnswers::default();
        match dispatch(
            &self.store,
            &HostProfile::current(),
            &caller,
            &call,
            "t1",
            &mut answers,
        ) {
            Verdict::Allowed(proof) => self
                .services
                .call(&self.store, &proof, &call.args)
                .map_err(|e| serde_json::to_value(e).unwrap()),
            Verdict::Denied(e) => Err(serde_json::to_value(e).unwrap()),
            Verdict::Ask(q) => Err(json!({"ask": q.permission})),
        }
    }

    fn counts(&mut self) -> (u64, u64) {
        let dir = self.dir.apps_data().join(APP);
        let a = AppArtifacts::open_read_only(&dir)
            .unwrap()
            .map_or(0, |a| a.count().unwrap());
        let e = AppEvidence::open_read_only(&dir)
            .unwrap()
            .map_or(0, |e| e.count().unwrap());
        (a, e)
    }
}

fn code(e: &Value) -> (&str, &str) {
    (
        e["code"].as_str().unwrap_or(""),
        e["causeCode"].as_str().unwrap_or(""),
    )
}

#[test]
fn a_keyed_create_and_record_happen_once() {
    let mut env = env();
    let art = json!({"name": "Reply", "mimeType": "text/plain", "text": "hello"});
    let k = Some(json!("wf:run_test:publish:1:1"));
    let first = env
        .call("lime.artifacts", "create", art.clone(), k.clone())
        .unwrap();
    let again = env
        .call("lime.artifacts", "create", art.clone(), k.clone())
        .unwrap();
    assert_eq!(again, first);
    let ev = json!({"kind": "workflow.published", "summary": "done", "artifactIds": [first["id"]]});
    let ek = Some(json!("wf:run_test:note:1:1"));
    let r1 = env
        .call("lime.evidence", "record", ev.clone(), ek.clone())
        .unwrap();
    let r2 = env
        .call("lime.evidence", "record", ev.clone(), ek.clone())
        .unwrap();
    assert_eq!(r2, r1);
    assert_eq!(env.counts(), (1, 1));
    // Unkeyed calls are not deduplicated (as before).
    env.call("lime.artifacts", "create", art, None).unwrap();
    env.call("lime.evidence", "record", ev, None).unwrap();
    assert_eq!(env.counts(), (2, 2));
}

#[test]
fn a_reused_or_malformed_key_is_refused_and_writes_nothing() {
    let mut env = env();
    let k = Some(json!("k1"));
    env.call(
        "lime.artifacts",
        "create",
        json!({"name": "Reply", "text": "hello"}),
        k.clone(),
    )
    .unwrap();
    env.call(
        "lime.evidence",
        "record",
        json!({"kind": "note", "summary": "a"}),
        k.clone(),
    )
    .unwrap();
    let e = env
        .call(
            "lime.artifacts",
            "create",
            json!({"name": "Reply", "text": "other"}),
            k.clone(),
        )
        .unwrap_err();
    assert_eq!(
        code(&e),
        ("APP_E900", "artifacts.idempotency_conflict"),
        "{e}"
    );
    let e = env
        .call(
            "lime.evidence",
            "record",
            json!({"kind": "note", "summary": "b"}),
            k,
        )
        .unwrap_err();
    assert_eq!(
        code(&e),
        ("APP_E900", "evidence.idempotency_conflict"),
        "{e}"
    );
    for bad in [
        json!(7),
        json!(""),
        json!("a\u{0}b"),
        json!("x".repeat(257)),
    ] {
        let e = env
            .call(
                "lime.artifacts",
                "create",
                json!({"name": "N", "text": "t"}),
                Some(bad.clone()),
            )
            .unwrap_err();
        assert_eq!(
            code(&e),
            ("APP_E900", "artifacts.invalid_argument"),
            "{bad}: {e}"
        );
        let e = env
            .call(
                "lime.evidence",
                "record",
                json!({"kind": "note"}),
                Some(bad.clone()),
            )
            .unwrap_err();
        assert_eq!(
            code(&e),
            ("APP_E900", "evidence.invalid_argument"),
            "{bad}: {e}"
        );
    }
    assert_eq!(env.counts(), (1, 1));
}
