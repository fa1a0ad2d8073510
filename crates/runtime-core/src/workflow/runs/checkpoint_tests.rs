//! Checkpoints and the step's one commit: replaying from the latest checkpoint gives the same
//! runs as replaying every fact (and as running them), also with crashes at any commit, and a
//! storage step costs one commit (its start goes with its result).

use std::panic::{catch_unwind, AssertUnwindSafe};

use proptest::prelude::*;
use serde_json::json;

use super::tests::{clock, open, sample_start, ten_steps, Effects};
use super::*;

/// How many commits `f` makes on `runs` (its test failpoint counts them).
fn commits(runs: &WorkflowRuns, f: impl FnOnce()) -> i64 {
    let far = 1_000_000;
    runs.crash_after_appends(far);
    f();
    far - runs.failpoint.load(std::sync::atomic::Ordering::SeqCst)
}

/// Every run as the service shows it after replaying every fact from the start.
fn full_replay(runs: &WorkflowRuns) -> Vec<RunView> {
    replay::replay_all(&runs.log, false)
        .unwrap()
        .values()
        .map(Entry::view)
        .collect()
}

#[test]
fn a_storage_step_is_one_commit_its_start_with_its_result() {
    let dir = tempfile::tempdir().unwrap();
    let runs = open(&dir.path().join("log.db"), clock(1_000));
    let fx = Effects::default();
    let v = runs.start(ten_steps()).unwrap();
    let n = commits(&runs, || {
        assert!(runs.drive(&v.run_id, &fx).unwrap().finished);
    });
    // Ten steps (each: its start and its result) and the run's end.
    assert_eq!(n, 11);
    let events = runs.history(&v.run_id, 100).unwrap();
    let started: Vec<&crate::event::Event> = events
        .iter()
        .filter(|e| e.to_json()["payload"]["workflowFact"] == "step_started")
        .collect();
    assert_eq!(started.len(), 10);
    for e in started {
        assert!(e.to_json()["payload"]["startedAt"].is_string(), "{e:?}");
    }
}

#[test]
fn an_agent_step_records_its_start_before_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let runs = open(&dir.path().join("log.db"), clock(1_000));
    let v = runs.start(sample_start(None)).unwrap();
    // The executor looks at the log while the agent call is in flight.
    struct Peek<'a>(&'a WorkflowRuns, Mutex<Vec<String>>);
    impl StepExecutor for Peek<'_> {
        fn call(&self, step: &StepCall<'_>) -> Result<Value, StepError> {
            let seen = self.0.history(step.run_id, 100).unwrap();
            let last = seen.last().unwrap().to_json();
            lock(&self.1).push(last["payload"]["workflowFact"].as_str().unwrap().to_owned());
            Ok(json!("Dear cats"))
        }
    }
    let peek = Peek(&runs, Mutex::new(Vec::new()));
    runs.drive(&v.run_id, &peek).unwrap();
    assert_eq!(lock(&peek.1).as_slice(), ["step_started"]);
}

#[test]
fn a_long_run_reopens_from_its_latest_checkpoint_with_the_same_state() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.db");
    let fx = Effects::default();
    let (live, run_id) = {
        let mut runs = open(&path, clock(1_000));
        runs.checkpoint_every = 4;
        let v = runs.start(ten_steps()).unwrap();
        (runs.drive(&v.run_id, &fx).unwrap(), v.run_id)
    };
    let runs = open(&path, clock(2_000));
    let events = runs.history(&run_id, 100).unwrap();
    let checkpoints = events
        .iter()
        .filter(|e| e.to_json()["payload"]["workflowFact"] == "checkpoint")
        .count();
    assert!(checkpoints >= 3, "{checkpoints} checkpoints");
    let resumed = runs.show(&run_id).unwrap();
    assert_eq!(resumed, live);
    assert_eq!(full_replay(&runs), vec![live]);
    // Only the tail after the latest checkpoint was applied.
    let entry_tail = lock(&runs.runs)
        .values()
        .next()
        .map(|e| e.since_checkpoint)
        .unwrap();
    assert!(
        entry_tail <= 8,
        "read {entry_tail} facts after the checkpoint"
    );
}

#[test]
fn a_checkpoint_that_does_not_read_is_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.db");
    let fx = Effects::default();
    let live = {
        let mut runs = open(&path, clock(1_000));
        runs.checkpoint_every = 3;
        let v = runs.start(ten_steps()).unwrap();
        runs.drive(&v.run_id, &fx).unwrap()
    };
    // Break every checkpoint's state in the database: replay goes back to the run's start.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE events SET body = json_set(body, '$.payload.state', 'broken') \
         WHERE json_extract(body, '$.payload.workflowFact') = 'checkpoint'",
        [],
    )
    .unwrap();
    drop(conn);
    let runs = open(&path, clock(2_000));
    assert_eq!(runs.show(&live.run_id).unwrap(), live);
}

/// A ten-step run with `fail` first calls failing (retryably), a checkpoint every `every`
/// facts, and a crash after commit `crash` (if any); then reopened and driven to its end.
fn crashed_run(path: &std::path::Path, every: u32, fail: u32, crash: Option<i64>) -> RunView {
    let c = clock(1_000);
    let fx = Effects::default();
    *lock(&fx.fail_first) = fail;
    let drive_all = |runs: &WorkflowRuns, id: &str| {
        let mut v = runs.drive(id, &fx).unwrap();
        while !v.finished {
            // Retries wait for their backoff on the clock.
            c.0.fetch_add(60_000, std::sync::atomic::Ordering::SeqCst);
            runs.drive_due(&fx).unwrap();
            v = runs.show(id).unwrap();
        }
        v
    };
    {
        let mut runs = open(path, c.clone());
        runs.checkpoint_every = every;
        if let Some(n) = crash {
            runs.crash_after_appends(n);
        }
        let _ = catch_unwind(AssertUnwindSafe(|| {
            let v = runs.start(ten_steps()).unwrap();
            drive_all(&runs, &v.run_id);
        }));
    }
    let mut runs = open(path, c.clone());
    runs.checkpoint_every = every;
    let id = match runs.list(None).into_iter().next() {
        Some(v) => v.run_id,
        None => runs.start(ten_steps()).unwrap().run_id,
    };
    let v = drive_all(&runs, &id);
    // Reopened once more: from the checkpoints and from every fact, the same run.
    drop(runs);
    let runs = open(path, c);
    assert_eq!(runs.show(&id).unwrap(), v);
    assert_eq!(full_replay(&runs), vec![v.clone()]);
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Replay from checkpoints == replay of every fact == the run, whatever the interval, the
    /// retries and the commit a crash follows.
    #[test]
    fn replay_from_checkpoints_gives_the_same_run(
        every in 1u32..12,
        fail in 0u32..3,
        crash in proptest::option::of(1i64..20),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let v = crashed_run(&dir.path().join("log.db"), every, fail, crash);
        prop_assert!(v.finished);
        prop_assert_eq!(
            &v.state.status,
            &RunStatus::Succeeded { result: json!(true) }
        );
    }
}
