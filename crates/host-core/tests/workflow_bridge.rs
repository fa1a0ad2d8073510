//! `lime.workflow` from a frame, through the bridge and the choke point, on the host session's
//! driver: a frame starts the sample workflow and receives its run events (profile `job.*` facts
//! with the run id) until the end; the user answers the review; and every attack is refused
//! with its stable code, changing nothing: an undeclared workflow, another app's workflow name,
//! another app's run (get/cancel/respond/watch), the app answering its own review, an input
//! that violates the state's schema or is too large, a flood of starts, a reused idempotency
//! key with another input.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::host::{BridgeHost, Outgoing};
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::bridge::mounts::Mount;
use host_core::hosting::capability::services::Services;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::hosting::workflow::driver::MAX_UNFINISHED_RUNS_PER_APP;
use host_core::install::store::Store;
use runtime_core::backend::{ExecutionBackend, ScriptedBackend};
use runtime_core::workflow::runs::{Answer, AnswerSource};
use serde_json::{json, Value};
use support::agent::set_placeholder_model;
use support::{install, repo_root};

const WF: &str = "draft-review-publish";

/// The sample app as `name`, declaring `lime.workflow` (its page calls it), with `edits`.
fn sample_as(tmp: &Path, name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let pkg = tmp.join(name);
    support::copy_dir(&repo_root().join("fixtures/apps/reply-workflow"), &pkg);
    let md = pkg.join("APP.md");
    let mut text = std::fs::read_to_string(&md).unwrap();
    let mut all = vec![
        ("name: reply-workflow\n", format!("name: {name}\n")),
        (
            "    lime.agent: \"^0.10.0\"\n",
            "    lime.agent: \"^0.10.0\"\n    lime.workflow: \"^0.10.0\"\n".to_owned(),
        ),
        (
            "requiredCapabilities: [lime.ui]",
            "requiredCapabilities: [lime.ui, lime.workflow]".to_owned(),
        ),
    ];
    all.extend(edits.iter().map(|(a, b)| (*a, (*b).to_owned())));
    for (from, to) in all {
        assert!(text.contains(from), "{from}");
        text = text.replacen(from, &to, 1);
    }
    std::fs::write(&md, text).unwrap();
    pkg
}

/// The sample app whose workflow asks the user for a number, then ends with it.
fn input_app(tmp: &Path) -> PathBuf {
    let pkg = sample_as(tmp, "input-wf", &[]);
    let md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&md).unwrap();
    let start = text.find("workflows:\n").unwrap();
    let end = text.find("---\n\n# Reply").unwrap();
    let wf = format!(
        "workflows:\n  - key: {WF}\n    states:\n      - {{key: start, kind: start, next: ask}}\n      - {{key: ask, kind: user-input, prompt: How many?, schema: {{type: object, required: [n], properties: {{n: {{type: integer, maximum: 5}}}}}}, output: answer, next: done}}\n      - {{key: done, kind: end, result: \"outputs.answer.n\"}}\n"
    );
    std::fs::write(&md, format!("{}{}{}", &text[..start], wf, &text[end..])).unwrap();
    pkg
}

struct Frame {
    mount: Mount,
    app: String,
}

struct World {
    _tmp: tempfile::TempDir,
    store: Store,
    host: BridgeHost,
    backend: ScriptedBackend,
    next: u64,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path().join("data"));
        install(&dir, &sample_as(tmp.path(), "wf-a", &[]));
        install(
            &dir,
            &sample_as(
                tmp.path(),
                "wf-b",
                &[
                    ("  - key: draft-review-publish\n", "  - key: other-flow\n"),
                    ("workflow: draft-review-publish\n", "workflow: other-flow\n"),
                ],
            ),
        );
        install(&dir, &input_app(tmp.path()));
        set_placeholder_model(&dir);
        let store = Store::open(&dir).unwrap();
        let backend = ScriptedBackend::new();
        let mut services = Services::new(dir.apps_data());
        services.set_agent_backend(Arc::new(backend.clone()) as Arc<dyn ExecutionBackend>);
        let host = BridgeHost::new(services, HostProfile::current(), OriginStyle::Scheme);
        World {
            _tmp: tmp,
            store,
            host,
            backend,
            next: 0,
        }
    }

    fn frame(&mut self, app: &str) -> Frame {
        let mount = self.host.mount(&self.store, app, "home").unwrap();
        let f = Frame {
            mount,
            app: app.to_owned(),
        };
        self.send(&f, "app:ready", json!({}));
        f
    }

    fn send(&mut self, f: &Frame, kind: &str, payload: Value) -> Vec<Value> {
        self.next += 1;
        let m = json!({"protocol": PROTOCOL, "version": 1, "type": kind,
            "requestId": format!("r{}", self.next), "appId": f.app, "entryKey": "home",
            "payload": payload})
        .to_string();
        let out = self
            .host
            .handle(&self.store, &f.mount.mount_id, &f.mount.origin, &m);
        out.into_iter()
            .filter_map(|o| match o {
                Outgoing::Post { message, .. } => Some(message),
                _ => None,
            })
            .collect()
    }

    /// One `lime.workflow` call: `Ok(value)` or `Err(error payload)`.
    fn call(&mut self, f: &Frame, method: &str, args: Value) -> Result<Value, Value> {
        let out = self.send(
            f,
            "capability:invoke",
            json!({"capability": "lime.workflow", "method": method, "args": args}),
        );
        let m = out.first().cloned().unwrap_or(Value::Null);
        match m["type"].as_str() {
            Some("host:response") => Ok(m["payload"]["value"].clone()),
            _ => Err(m["payload"].clone()),
        }
    }

    /// Asynchronous run events posted to `f` until one satisfies `until`.
    fn events_until(&mut self, f: &Frame, until: impl Fn(&Value) -> bool) -> Vec<Value> {
        let outbox = self.host.async_outbox();
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut seen = Vec::new();
        loop {
            for o in outbox.wait(Duration::from_millis(100)) {
                let Outgoing::Post { mount_id, message } = o else {
                    continue;
                };
                assert_eq!(mount_id, f.mount.mount_id, "posted to another frame");
                assert_eq!(message["type"], "host:event");
                let p = message["payload"].clone();
                if p["capability"] == "lime.workflow" {
                    seen.push(p);
                }
            }
            if seen.iter().any(&until) {
                return seen;
            }
            assert!(Instant::now() < deadline, "{seen:#?}");
        }
    }
}

fn fact(p: &Value) -> &str {
    p["event"]["payload"]["workflowFact"].as_str().unwrap_or("")
}

fn cause(e: &Value) -> (&str, &str) {
    (
        e["code"].as_str().unwrap_or(""),
        e["causeCode"].as_str().unwrap_or(""),
    )
}

#[test]
fn a_frame_starts_the_sample_and_follows_its_events_while_the_user_reviews() {
    let mut w = World::new();
    w.backend.push_text(&["Dear cats"]);
    let a = w.frame("wf-a");
    let started = w
        .call(
            &a,
            "start",
            json!({"workflow": WF, "input": {"topic": "cats"}}),
        )
        .unwrap();
    let run_id = started["runId"].as_str().unwrap().to_owned();
    assert_eq!(started["run"]["startedBy"], "home");
    let events = w.events_until(&a, |p| fact(p) == "review_requested");
    assert!(events.iter().all(|p| p["runId"] == run_id.as_str()));
    assert!(events
        .iter()
        .all(|p| p["event"]["type"].as_str().unwrap().starts_with("job.")));
    let seqs: Vec<u64> = events
        .iter()
        .map(|p| p["event"]["sequence"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    assert_eq!(fact(&events[0]), "run_started");

    // The app may not answer its own review: refused, pointing at the host's Tasks page.
    let before = w.call(&a, "get", json!({"runId": run_id})).unwrap();
    let err = w
        .call(
            &a,
            "respond",
            json!({"runId": run_id, "decision": "approve"}),
        )
        .unwrap_err();
    assert_eq!(cause(&err), ("APP_E002", "workflow.answer_not_by_user"));
    assert!(err["details"]["answerIn"]
        .as_str()
        .unwrap()
        .contains("Tasks"));
    assert_eq!(w.call(&a, "get", json!({"runId": run_id})).unwrap(), before);

    // The user approves in the host; the frame sees the run to its end.
    let runs = w.host.workflow_runs(&w.store).unwrap();
    let answer = Answer::Review {
        approved: true,
        data: None,
    };
    runs.respond(&run_id, answer, AnswerSource::User).unwrap();
    let events = w.events_until(&a, |p| p["event"]["type"] == "job.completed");
    let last = events.last().unwrap();
    assert_eq!(last["event"]["type"], "job.completed");
    let done = w.call(&a, "get", json!({"runId": run_id})).unwrap();
    assert_eq!(done["run"]["status"], "succeeded");
    let listed = w.call(&a, "list", json!({"status": "succeeded"})).unwrap();
    assert_eq!(listed["runs"].as_array().unwrap().len(), 1);
    // A reloaded frame resumes from a sequence.
    let watched = w
        .call(&a, "watch", json!({"runId": run_id, "afterSequence": 2}))
        .unwrap();
    assert_eq!(watched["watching"], true);
    let again = w.events_until(&a, |p| p["event"]["type"] == "job.completed");
    assert_eq!(again[0]["event"]["sequence"], 3);
}

#[test]
fn workflows_and_runs_of_other_apps_are_out_of_reach_and_nothing_changes() {
    let mut w = World::new();
    w.backend.push_text(&["Dear dogs"]);
    let a = w.frame("wf-a");
    let b = w.frame("wf-b");
    // Undeclared, and another app's workflow name: not declared by the caller's app.
    for name in ["nope", "other-flow"] {
        let err = w.call(&a, "start", json!({"workflow": name})).unwrap_err();
        assert_eq!(cause(&err), ("APP_E904", "workflow.not_declared"), "{name}");
    }
    let err = w
        .call(&b, "start", json!({"workflow": WF, "input": {}}))
        .unwrap_err();
    assert_eq!(cause(&err), ("APP_E904", "workflow.not_declared"));
    assert_eq!(w.call(&a, "list", json!({})).unwrap()["runs"], json!([]));
    assert_eq!(w.call(&b, "list", json!({})).unwrap()["runs"], json!([]));

    let run_id = w
        .call(
            &a,
            "start",
            json!({"workflow": WF, "input": {"topic": "dogs"}}),
        )
        .unwrap()["runId"]
        .as_str()
        .unwrap()
        .to_owned();
    w.events_until(&a, |p| fact(p) == "review_requested");
    let before = w.call(&a, "get", json!({"runId": run_id})).unwrap();
    // Another app: exactly like a missing run, for every method.
    for (method, args) in [
        ("get", json!({"runId": run_id})),
        ("cancel", json!({"runId": run_id})),
        ("respond", json!({"runId": run_id, "decision": "approve"})),
        ("respond", json!({"runId": run_id, "input": {"n": 1}})),
        ("watch", json!({"runId": run_id})),
    ] {
        let err = w.call(&b, method, args).unwrap_err();
        assert_eq!(
            cause(&err),
            ("APP_E904", "workflow.run_not_found"),
            "{method}"
        );
        let missing = w
            .call(
                &b,
                method,
                json!({"runId": "run_00000000000000000000000000"}),
            )
            .unwrap_err();
        assert_eq!(
            err["message"], missing["message"],
            "{method}: no existence leak"
        );
    }
    assert_eq!(w.call(&b, "list", json!({})).unwrap()["runs"], json!([]));
    assert_eq!(w.call(&a, "get", json!({"runId": run_id})).unwrap(), before);
    // The owner may cancel it.
    let c = w.call(&a, "cancel", json!({"runId": run_id})).unwrap();
    assert_eq!(c["run"]["status"], "cancelled");
    for (method, args) in [
        ("cancel", json!({"runId": run_id})),
        ("respond", json!({"runId": run_id, "input": {}})),
    ] {
        let err = w.call(&a, method, args).unwrap_err();
        assert_eq!(
            cause(&err),
            ("APP_E301", "workflow.run_finished"),
            "{method}"
        );
    }
}

#[test]
fn input_answers_are_checked_against_the_schema_and_bounded() {
    let mut w = World::new();
    let f = w.frame("input-wf");
    let run_id = w
        .call(
            &f,
            "start",
            json!({"workflow": WF, "input": {}, "idempotencyKey": "k"}),
        )
        .unwrap()["runId"]
        .as_str()
        .unwrap()
        .to_owned();
    w.events_until(&f, |p| fact(p) == "input_requested");
    let before = w.call(&f, "get", json!({"runId": run_id})).unwrap();

    let err = w
        .call(&f, "respond", json!({"runId": run_id, "input": {"n": 9}}))
        .unwrap_err();
    assert_eq!(cause(&err), ("APP_E900", "workflow.input_invalid"));
    assert_eq!(err["details"]["path"], "/n");
    let err = w
        .call(&f, "respond", json!({"runId": run_id, "input": {}}))
        .unwrap_err();
    assert_eq!(cause(&err), ("APP_E900", "workflow.input_invalid"));
    let big = "x".repeat(300 * 1024);
    let err = w
        .call(
            &f,
            "respond",
            json!({"runId": run_id, "input": {"n": 1, "pad": big}}),
        )
        .unwrap_err();
    assert_eq!(cause(&err).1, "workflow.input_too_large");
    assert_eq!(w.call(&f, "get", json!({"runId": run_id})).unwrap(), before);

    // The same key with another input conflicts; with the same input it is the same run.
    let err = w
        .call(
            &f,
            "start",
            json!({"workflow": WF, "input": {"x": 1}, "idempotencyKey": "k"}),
        )
        .unwrap_err();
    assert_eq!(cause(&err), ("APP_E900", "workflow.idempotency_conflict"));
    let same = w
        .call(
            &f,
            "start",
            json!({"workflow": WF, "input": {}, "idempotencyKey": "k"}),
        )
        .unwrap();
    assert_eq!(same["runId"], run_id.as_str());
    // The standard's shape names the workflow `key`.
    let same = w
        .call(
            &f,
            "start",
            json!({"key": WF, "input": {}, "idempotencyKey": "k"}),
        )
        .unwrap();
    assert_eq!(same["runId"], run_id.as_str());
    let err = w
        .call(&f, "start", json!({"key": WF, "workflow": "other"}))
        .unwrap_err();
    assert_eq!(cause(&err), ("APP_E900", "workflow.invalid_argument"));

    // A flood of starts stops at the per-app cap of unfinished runs (they all wait for input).
    for i in 1..MAX_UNFINISHED_RUNS_PER_APP {
        w.call(&f, "start", json!({"workflow": WF, "input": {"i": i}}))
            .unwrap();
    }
    let err = w
        .call(
            &f,
            "start",
            json!({"workflow": WF, "input": {"i": "flood"}}),
        )
        .unwrap_err();
    assert_eq!(
        cause(&err),
        ("HOST_E_RATE_LIMITED", "workflow.too_many_runs")
    );
    let listed = w.call(&f, "list", json!({"status": "running"})).unwrap();
    let listed = listed["runs"].as_array().unwrap();
    assert_eq!(listed.len(), MAX_UNFINISHED_RUNS_PER_APP);
    // Newest first.
    let starts: Vec<&str> = listed
        .iter()
        .map(|r| r["startedAt"].as_str().unwrap())
        .collect();
    assert!(starts.windows(2).all(|p| p[0] >= p[1]), "{starts:?}");

    // A valid answer from the app's frame finishes the run with it.
    w.call(&f, "respond", json!({"runId": run_id, "input": {"n": 4}}))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let v = w.call(&f, "get", json!({"runId": run_id})).unwrap();
        if v["run"]["status"] == "succeeded" {
            assert_eq!(v["run"]["state"]["status"]["result"], 4, "{v:#}");
            break;
        }
        assert!(Instant::now() < deadline, "{v:#}");
        std::thread::sleep(Duration::from_millis(10));
    }
}
