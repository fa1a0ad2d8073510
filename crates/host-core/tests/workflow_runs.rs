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
