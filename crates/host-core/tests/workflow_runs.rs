//! Workflow runs on the host: the sample app `fixtures/apps/reply-workflow` (agent task ->
//! human review -> storage write -> artifact) driven through the choke point with a scripted
//! model; the review is answered by the user only; a restart replays without repeating a step.

mod support;

use std::sync::Arc;

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::capability::call::Caller;
use host_core::hosting::capability::services::Services;
use host_core::hosting::workflow::{self, executor::HostSteps};
use host_core::install::store::Store;
use runtime_core::backend::{ExecutionBackend, ScriptedBackend};
use runtime_core::workflow::machine::{Pending, RunStatus};
use runtime_core::workflow::runs::{code, Answer, RunView, WorkflowRuns};
use serde_json::{json, Value};
use support::agent::set_placeholder_model;
use support::{install, repo_root};

const APP: &str = "reply-workflow";
const WF: &str = "draft-review-publish";

struct Host {
    _tmp: tempfile::TempDir,
    dir: DataDir,
    store: Store,
    services: Services,
    backend: ScriptedBackend,
}

fn host() -> Host {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &repo_root().join("fixtures/apps").join(APP));
    set_placeholder_model(&dir);
    let store = Store::open(&dir).unwrap();
    let backend = ScriptedBackend::new();
    let mut services = Services::new(dir.apps_data());
    services.set_agent_backend(Arc::new(backend.clone()) as Arc<dyn ExecutionBackend>);
    Host {
        _tmp: tmp,
        dir,
        store,
        services,
        backend,
    }
}

fn drive(h: &mut Host, runs: &WorkflowRuns, run_id: &str) -> RunView {
    let profile = HostProfile::current();
    let steps = HostSteps::new(&h.store, &profile, &mut h.services);
    runs.drive(run_id, &steps).unwrap()
}

/// The run's audited capability calls (`mountId` is the caller's session: the run id).
fn audited(h: &Host, run_id: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = h
        .store
        .audit_log(Some(APP), 1000)
        .unwrap()
        .into_iter()
        .filter(|r| r["action"] == "capability.call" && r["details"]["mountId"] == run_id)
        .map(|r| {
            let d = &r["details"];
            (
                format!(
                    "{}.{}",
                    d["capability"].as_str().unwrap(),
                    d["method"].as_str().unwrap()
                ),
                d["decision"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    out.reverse();
    out
}

#[test]
fn the_sample_drafts_waits_for_the_user_then_saves_and_publishes_through_the_choke_point() {
    let mut h = host();
    h.backend.push_text(&["Dear cats"]);
    let runs = workflow::open_runs(&h.dir).unwrap();
    let v = workflow::start(&h.store, &runs, APP, WF, json!({"topic": "cats"}), None).unwrap();
    let v = drive(&mut h, &runs, &v.run_id);
    let Some(Pending::Review { show, .. }) = &v.waiting else {
        panic!("{v:#?}")
    };
    assert_eq!(show, &json!({"topic": "cats", "draft": "Dear cats"}));
    assert_eq!(
        audited(&h, &v.run_id),
        [("lime.agent.startTask".into(), "allow".into())]
    );

    // The app's own caller cannot answer its review: refused, nothing recorded.
    let caller = Caller {
        app_id: APP.into(),
        entry_key: "home".into(),
        version: "1.0.0".into(),
        session_id: "mount-1".into(),
        package_hash: String::new(),
        manifest_hash: String::new(),
    };
    let approve = Answer::Review {
        approved: true,
        data: None,
    };
    let err = workflow::respond_from_app(&runs, &caller, &v.run_id, approve.clone()).unwrap_err();
    assert_eq!(err.code, code::ANSWER_NOT_BY_USER);
    assert_eq!(runs.show(&v.run_id).unwrap(), v);

    workflow::respond(&runs, &v.run_id, approve).unwrap();
    let done = drive(&mut h, &runs, &v.run_id);
    let RunStatus::Succeeded { result } = &done.state.status else {
        panic!("{done:#?}")
    };
    assert_eq!(result["approved"], json!(true));
    assert!(result["artifact"].is_object(), "{result}");
    assert_eq!(
        audited(&h, &v.run_id),
        [
            ("lime.agent.startTask".to_owned(), "allow".to_owned()),
            ("lime.storage.set".to_owned(), "allow".to_owned()),
            ("lime.artifacts.create".to_owned(), "allow".to_owned()),
        ]
    );
    // A restart replays the finished run and makes no call again.
    drop(runs);
    let runs = workflow::open_runs(&h.dir).unwrap();
    let again = drive(&mut h, &runs, &v.run_id);
    assert_eq!(again.state, done.state);
    assert_eq!(audited(&h, &v.run_id).len(), 3);
    assert_eq!(h.backend.requests().len(), 1);
}

#[test]
fn a_restart_while_waiting_for_review_runs_no_completed_step_again() {
    let mut h = host();
    h.backend.push_text(&["Dear dogs"]);
    let run_id = {
        let runs = workflow::open_runs(&h.dir).unwrap();
        let v = workflow::start(&h.store, &runs, APP, WF, json!({"topic": "dogs"}), None).unwrap();
        drive(&mut h, &runs, &v.run_id).run_id
    };
    let runs = workflow::open_runs(&h.dir).unwrap();
    let v = drive(&mut h, &runs, &run_id);
    assert!(matches!(v.waiting, Some(Pending::Review { .. })));
    assert_eq!(h.backend.requests().len(), 1);
    // A plain rejection ends the run without saving anything.
    workflow::respond(
        &runs,
        &run_id,
        Answer::Review {
            approved: false,
            data: None,
        },
    )
    .unwrap();
    let done = drive(&mut h, &runs, &run_id);
    assert_eq!(
        done.state.status,
        RunStatus::Succeeded {
            result: json!({"approved": false})
        }
    );
    assert_eq!(audited(&h, &run_id).len(), 1);
}

#[test]
fn a_second_host_process_is_busy_and_unknown_workflows_are_refused() {
    let h = host();
    let runs = workflow::open_runs(&h.dir).unwrap();
    assert_eq!(
        workflow::open_runs(&h.dir).err().unwrap().code,
        code::RUNTIME_BUSY
    );
    let err = workflow::start(&h.store, &runs, APP, "nope", Value::Null, None).unwrap_err();
    assert_eq!(err.code, workflow::code::NOT_DECLARED);
    let err = workflow::start(&h.store, &runs, "ghost", WF, Value::Null, None).unwrap_err();
    assert_eq!(err.code, workflow::code::APP_NOT_INSTALLED);
    assert!(runs.list(None).is_empty());
}

/// The sample app with a ten-step workflow of storage writes instead.
fn ten_step_app(tmp: &std::path::Path) -> std::path::PathBuf {
    let pkg = tmp.join("pkg-ten");
    support::copy_dir(&repo_root().join("fixtures/apps").join(APP), &pkg);
    let md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&md).unwrap();
    let start = text.find("workflows:\n").unwrap();
    let end = text.find("---\n\n# Reply").unwrap();
    let mut wf = String::from("workflows:\n  - key: draft-review-publish\n    recovery: {onError: retry, maxRetries: 2}\n    states:\n      - {key: start, kind: start, next: s1}\n");
    for i in 1..=10 {
        let next = if i == 10 {
            "done".to_owned()
        } else {
            format!("s{}", i + 1)
        };
        wf.push_str(&format!(
            "      - {{key: s{i}, kind: storage-write, storageKey: k{i}, value: \"'v{i}'\", output: o{i}, next: {next}}}\n"
        ));
    }
    wf.push_str("      - {key: done, kind: end, result: \"'ok'\"}\n");
    std::fs::write(&md, format!("{}{}{}", &text[..start], wf, &text[end..])).unwrap();
    pkg
}

/// Panics right after the `n`-th step's call returned (its effect happened, its result is not
/// recorded): a crash between the effect and its fact.
struct CrashAfter<'a> {
    inner: &'a HostSteps<'a>,
    n: usize,
    made: std::cell::Cell<usize>,
}

impl runtime_core::workflow::runs::StepExecutor for CrashAfter<'_> {
    fn call(
        &self,
        step: &runtime_core::workflow::runs::StepCall<'_>,
    ) -> Result<Value, runtime_core::workflow::runs::StepError> {
        let r = self.inner.call(step);
        self.made.set(self.made.get() + 1);
        if self.made.get() == self.n {
            panic!("crash after the effect of step {}", self.n);
        }
        r
    }
}

fn storage_sets(store: &Store, run_id: &str) -> Vec<String> {
    let mut keys: Vec<String> = store
        .audit_log(Some(APP), 1000)
        .unwrap()
        .into_iter()
        .filter(|r| r["details"]["mountId"] == run_id && r["details"]["method"] == "set")
        .map(|r| r["details"]["requestId"].as_str().unwrap().to_owned())
        .collect();
    keys.reverse();
    keys
}

#[test]
fn a_crash_after_any_steps_effect_reissues_that_step_once_with_its_key_and_ends_the_same() {
    for n in [1, 4, 10] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path().join("data"));
        install(&dir, &ten_step_app(tmp.path()));
        // The app requires lime.agent: without a model its entries need setup.
        set_placeholder_model(&dir);
        let store = Store::open(&dir).unwrap();
        let mut services = Services::new(dir.apps_data());
        let profile = HostProfile::current();
        let run_id = {
            let runs = workflow::open_runs(&dir).unwrap();
            let v = workflow::start(&store, &runs, APP, WF, json!({}), None).unwrap();
            let steps = HostSteps::new(&store, &profile, &mut services);
            let crash = CrashAfter {
                inner: &steps,
                n,
                made: std::cell::Cell::new(0),
            };
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                runs.drive(&v.run_id, &crash)
            }));
            assert!(r.is_err(), "the failpoint fired");
            v.run_id
        };
        let runs = workflow::open_runs(&dir).unwrap();
        let steps = HostSteps::new(&store, &profile, &mut services);
        let done = runs.drive(&run_id, &steps).unwrap();
        assert_eq!(
            done.state.status,
            RunStatus::Succeeded {
                result: json!("ok")
            },
            "crash after step {n}"
        );
        let sets = storage_sets(&store, &run_id);
        // Ten steps; step n made twice, with the same idempotency key, and no other repeated.
        assert_eq!(sets.len(), 11, "crash after step {n}: {sets:?}");
        assert_eq!(sets[n - 1], sets[n], "crash after step {n}");
        let distinct: std::collections::BTreeSet<&String> = sets.iter().collect();
        assert_eq!(distinct.len(), 10);
        assert!(
            sets[n - 1].ends_with(&format!(":s{n}:1:1")),
            "{}",
            sets[n - 1]
        );
    }
}
