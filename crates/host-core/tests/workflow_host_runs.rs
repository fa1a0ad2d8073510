//! The host process's workflow driver (`HostRuns`, owned by the session's `Services`): runs move
//! by themselves (no further calls) until they wait for the user or a timer, a timer fires on its
//! own, a reopened host continues a replayed run, and a cancel ends an in-flight agent task.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use host_core::foundation::paths::DataDir;
use host_core::hosting::capability::services::Services;
use host_core::hosting::workflow::driver::{HostRuns, MAX_UNFINISHED_RUNS_PER_APP};
use host_core::install::store::Store;
use runtime_core::backend::{BackendEvent, ExecutionBackend, ScriptStep, ScriptedBackend};
use runtime_core::workflow::machine::{Pending, RunStatus};
use runtime_core::workflow::runs::{code, Answer, AnswerSource, RunView};
use serde_json::json;
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

fn host_with(pkg: Option<std::path::PathBuf>) -> Host {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let pkg = pkg.unwrap_or_else(|| repo_root().join("fixtures/apps").join(APP));
    install(&dir, &pkg);
    set_placeholder_model(&dir);
    let store = Store::open(&dir).unwrap();
    let backend = ScriptedBackend::new();
    let services = services_for(&dir, &backend);
    Host {
        _tmp: tmp,
        dir,
        store,
        services,
        backend,
    }
}

fn services_for(dir: &DataDir, backend: &ScriptedBackend) -> Services {
    let mut services = Services::new(dir.apps_data());
    services.set_agent_backend(Arc::new(backend.clone()) as Arc<dyn ExecutionBackend>);
    services
}

fn runs(h: &mut Host) -> &HostRuns {
    h.services.workflow_runs(&h.store).unwrap()
}

/// Polls the run until `done` holds (the driver moves it on its own thread).
fn wait_for(runs: &HostRuns, run_id: &str, what: &str, done: impl Fn(&RunView) -> bool) -> RunView {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let v = runs.get(run_id).unwrap();
        if done(&v) {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {v:#?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn waits_for_review(v: &RunView) -> bool {
    matches!(v.waiting, Some(Pending::Review { .. }))
}

/// The driver armed the run's timer by itself (its due time recorded).
fn timer_armed(v: &RunView) -> bool {
    matches!(v.waiting, Some(Pending::Timer { .. })) && v.due_at.is_some()
}

/// Starts a run of the workflow with `input`, no key, started by nobody.
fn start(runs: &HostRuns, store: &Store, input: serde_json::Value) -> RunView {
    runs.start(store, APP, WF, input, None, None).unwrap()
}

/// The host closes: its services (and the runs' lock) go; the host gets empty ones.
fn close_host(h: &mut Host) {
    drop(std::mem::replace(
        &mut h.services,
        Services::new(h.dir.apps_data()),
    ));
}

/// A host whose app's workflow is [`WAIT_200MS`] with the wait's duration replaced (the
/// package's folder lives as long as the returned `TempDir`).
fn wait_host(duration: &str) -> (tempfile::TempDir, Host) {
    let tmp = tempfile::tempdir().unwrap();
    let states = WAIT_200MS.replace("duration: 200ms", &format!("duration: {duration}"));
    let h = host_with(Some(app_with_states(tmp.path(), "wait-app", &states)));
    (tmp, h)
}

/// Starts a run of the wait workflow, waits until its timer is armed, then closes the host
/// before it is due; the run's id.
fn start_a_wait_then_close(h: &mut Host) -> String {
    let store = Store::open(&h.dir).unwrap();
    let run_id = {
        let runs = runs(h);
        let v = start(runs, &store, json!({}));
        wait_for(runs, &v.run_id, "the armed timer", timer_armed).run_id
    };
    close_host(h);
    run_id
}

/// The sample app with its workflow replaced by `states` (YAML flow lines, indented).
fn app_with_states(tmp: &std::path::Path, name: &str, states: &str) -> std::path::PathBuf {
    let pkg = tmp.join(name);
    support::copy_dir(&repo_root().join("fixtures/apps").join(APP), &pkg);
    let md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&md).unwrap();
    let start = text.find("workflows:\n").unwrap();
    let end = text.find("---\n\n# Reply").unwrap();
    let wf = format!(
        "workflows:\n  - key: {WF}\n    recovery: {{onError: retry, onTimeout: fail, maxRetries: 2}}\n    states:\n{states}"
    );
    std::fs::write(&md, format!("{}{}{}", &text[..start], wf, &text[end..])).unwrap();
    pkg
}

const WAIT_200MS: &str = "      - {key: start, kind: start, next: pause}\n      - {key: pause, kind: wait, duration: 200ms, next: save}\n      - {key: save, kind: storage-write, storageKey: k, value: \"'v'\", output: saved, next: done}\n      - {key: done, kind: end, result: \"'saved'\"}\n";

#[test]
fn a_started_run_reaches_its_review_by_itself_and_the_users_answer_finishes_it() {
    let mut h = host_with(None);
    h.backend.push_text(&["Dear cats"]);
    let store = Store::open(&h.dir).unwrap();
    let runs = runs(&mut h);
    let v = runs
        .start(
            &store,
            APP,
            WF,
            json!({"topic": "cats"}),
            None,
            Some("home"),
        )
        .unwrap();
    assert_eq!(v.started_by.as_deref(), Some("home"));
    let v = wait_for(runs, &v.run_id, "the review", waits_for_review);
    let Some(Pending::Review { show, .. }) = &v.waiting else {
        unreachable!()
    };
    assert_eq!(show, &json!({"topic": "cats", "draft": "Dear cats"}));

    // The app cannot answer the review; the user can.
    let approve = Answer::Review {
        approved: true,
        data: None,
    };
    let err = runs
        .respond(&v.run_id, approve.clone(), AnswerSource::App)
        .unwrap_err();
    assert_eq!(err.code, code::ANSWER_NOT_BY_USER);
    assert_eq!(runs.get(&v.run_id).unwrap(), v);
    runs.respond(&v.run_id, approve, AnswerSource::User)
        .unwrap();
    let done = wait_for(runs, &v.run_id, "the end", |v| v.finished);
    let RunStatus::Succeeded { result } = &done.state.status else {
        panic!("{done:#?}")
    };
    assert_eq!(result["approved"], json!(true));
    assert!(result["artifact"].is_object(), "{result}");
    assert_eq!(h.backend.requests().len(), 1);
    // The started-by entry is durable.
    drop(h.services);
    let mut again = services_for(&h.dir, &h.backend);
    let replayed = again
        .workflow_runs(&h.store)
        .unwrap()
        .get(&v.run_id)
        .unwrap();
    assert_eq!(replayed.started_by.as_deref(), Some("home"));
}

#[test]
fn a_wait_of_200_ms_fires_by_itself_and_the_driver_sleeps_meanwhile() {
    let (_tmp, mut h) = wait_host("200ms");
    let store = Store::open(&h.dir).unwrap();
    let runs = runs(&mut h);
    let started = Instant::now();
    let v = start(runs, &store, json!({}));
    // The driver arms the timer by itself (its due time recorded), then fires it.
    wait_for(runs, &v.run_id, "the armed timer", timer_armed);
    let done = wait_for(runs, &v.run_id, "the end", |v| v.finished);
    let took = started.elapsed();
    assert_eq!(
        done.state.status,
        RunStatus::Succeeded {
            result: json!("saved")
        }
    );
    assert!(took >= Duration::from_millis(200), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn a_reopened_host_replays_a_waiting_run_and_continues_it() {
    let (_tmp, mut h) = wait_host("600ms");
    // The host closes before the timer is due (its runs' lock goes with it) ...
    let run_id = start_a_wait_then_close(&mut h);
    // ... and the next host replays the run and fires the timer with no call of anyone.
    let runs = runs(&mut h);
    let done = wait_for(runs, &run_id, "the end", |v| v.finished);
    assert_eq!(
        done.state.status,
        RunStatus::Succeeded {
            result: json!("saved")
        }
    );
    assert_eq!(runs.list(Some(APP)).len(), 1);
}

#[test]
fn a_second_process_is_busy_while_the_host_drives_the_runs() {
    let mut h = host_with(None);
    runs(&mut h);
    let err = host_core::hosting::workflow::open_runs(&h.dir)
        .err()
        .unwrap();
    assert_eq!(err.code, code::RUNTIME_BUSY);
}

#[test]
fn cancel_during_an_agent_step_ends_the_agent_task_quickly() {
    let mut h = host_with(None);
    // The model takes a minute to answer.
    h.backend.push(vec![
        ScriptStep::Sleep(Duration::from_secs(60)),
        ScriptStep::Emit(BackendEvent::TextDelta("late".into())),
        ScriptStep::Emit(BackendEvent::Finished {
            reason: "stop".into(),
        }),
    ]);
    let store = Store::open(&h.dir).unwrap();
    let tasks = h.services.agent_tasks(&h.store).unwrap();
    let app = runtime_core::ids::AppId::new(APP).unwrap();
    let runs = h.services.workflow_runs(&h.store).unwrap();
    let v = start(runs, &store, json!({"topic": "slow"}));
    // The agent step is in flight: its task runs.
    let deadline = Instant::now() + Duration::from_secs(20);
    let task_id = loop {
        let recent = tasks.recent(Some(&app), 10).unwrap();
        if let Some(t) = recent.first() {
            break t["taskId"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < deadline, "no task started");
        std::thread::sleep(Duration::from_millis(10));
    };
    // Reading the runs does not wait for the step.
    let t = Instant::now();
    assert!(!runs.get(&v.run_id).unwrap().finished);
    assert!(t.elapsed() < Duration::from_millis(200));

    let t = Instant::now();
    let cancelled = runs.cancel(&v.run_id).unwrap();
    assert!(matches!(
        cancelled.state.status,
        RunStatus::Cancelled { .. }
    ));
    let ended = loop {
        let task = tasks.get(&app, &task_id).unwrap();
        if !task["result"].is_null() {
            break task;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "{task:#}");
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = t.elapsed();
    assert_ne!(ended["result"]["status"], "succeeded", "{ended:#}");
    assert!(
        took < Duration::from_millis(500),
        "cancel → task ended: {took:?}"
    );
    eprintln!("cancel -> agent task ended: {took:?}");
    // The run stays cancelled; the step's result was not recorded.
    std::thread::sleep(Duration::from_millis(100));
    let v = runs.get(&v.run_id).unwrap();
    assert!(
        matches!(v.state.status, RunStatus::Cancelled { .. }),
        "{v:#?}"
    );
    assert!(v.state.outputs.get("draft").is_none());
}

#[test]
fn starts_are_bounded_per_app_and_a_reused_key_with_another_input_conflicts() {
    let mut h = host_with(None);
    // Every draft waits a minute, so runs stay unfinished.
    h.backend
        .set_fallback(vec![ScriptStep::Sleep(Duration::from_secs(60))]);
    let store = Store::open(&h.dir).unwrap();
    let runs = runs(&mut h);
    let keyed = |topic: &str| {
        runs.start(
            &store,
            APP,
            WF,
            json!({ "topic": topic }),
            Some("k1".into()),
            None,
        )
    };
    let first = keyed("a").unwrap();
    let again = keyed("a").unwrap();
    assert_eq!(again.run_id, first.run_id);
    let err = keyed("b").unwrap_err();
    assert_eq!(err.code, code::IDEMPOTENCY_CONFLICT);
    for i in 1..MAX_UNFINISHED_RUNS_PER_APP {
        start(runs, &store, json!({"topic": i}));
    }
    let before = runs.list(None);
    let err = runs
        .start(&store, APP, WF, json!({"topic": "flood"}), None, None)
        .unwrap_err();
    assert_eq!(err.code, "workflow.too_many_runs");
    assert_eq!(runs.list(None).len(), before.len());
    // An existing key still answers with its run.
    let same = keyed("a").unwrap();
    assert_eq!(same.run_id, first.run_id);
}

#[test]
fn a_new_host_session_resumes_the_runs_without_any_call() {
    let (_tmp, mut h) = wait_host("300ms");
    let run_id = start_a_wait_then_close(&mut h);
    // A fresh session with no workflow calls: resumed at start, the timer fires by itself.
    let mut fresh = services_for(&h.dir, &h.backend);
    fresh.resume_workflow_runs(&h.dir).unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // Only now look (the runs were already open: this does not open them): it has ended.
    let runs = fresh.workflow_runs(&h.store).unwrap();
    let v = runs.get(&run_id).unwrap();
    assert!(
        matches!(v.state.status, RunStatus::Succeeded { .. }),
        "{v:#?}"
    );
    // A data directory without runs opens nothing (no thread, no lock).
    let empty = tempfile::tempdir().unwrap();
    let other = DataDir::at(empty.path().join("data"));
    let mut s = Services::new(other.apps_data());
    s.resume_workflow_runs(&other).unwrap();
    assert!(host_core::hosting::workflow::open_runs(&other).is_ok());
}

#[test]
fn a_slow_agent_step_of_one_run_does_not_hold_up_another_run() {
    let mut h = host_with(None);
    h.backend.push(vec![
        ScriptStep::Sleep(Duration::from_secs(60)),
        ScriptStep::Emit(BackendEvent::Finished {
            reason: "stop".into(),
        }),
    ]);
    h.backend.push_text(&["Dear quick"]);
    let store = Store::open(&h.dir).unwrap();
    let tasks = h.services.agent_tasks(&h.store).unwrap();
    let app = runtime_core::ids::AppId::new(APP).unwrap();
    let runs = h.services.workflow_runs(&h.store).unwrap();
    let slow = start(runs, &store, json!({"topic": "slow"}));
    let deadline = Instant::now() + Duration::from_secs(20);
    while tasks.recent(Some(&app), 10).unwrap().is_empty() {
        assert!(Instant::now() < deadline, "the slow step never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    let quick = start(runs, &store, json!({"topic": "quick"}));
    let t = Instant::now();
    let v = wait_for(
        runs,
        &quick.run_id,
        "the quick run's review",
        waits_for_review,
    );
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    let Some(Pending::Review { show, .. }) = &v.waiting else {
        unreachable!()
    };
    assert_eq!(show["draft"], "Dear quick");
    assert!(!runs.get(&slow.run_id).unwrap().finished);
    runs.cancel(&slow.run_id).unwrap();
}
