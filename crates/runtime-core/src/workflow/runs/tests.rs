use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::json;

use super::*;
use crate::clock::Clock;
use crate::workflow::machine::Pending;

const SAMPLE: &str =
    include_str!("../../../../../fixtures/workflows/valid/draft-review-publish.json");

/// A clock tests move by hand.
pub(super) struct ManualClock(pub(super) AtomicI64);

impl Clock for ManualClock {
    fn now(&self) -> jiff::Timestamp {
        jiff::Timestamp::from_millisecond(self.0.load(Ordering::SeqCst)).unwrap()
    }
}

pub(super) fn caps() -> BTreeSet<String> {
    [
        "lime.agent",
        "lime.storage",
        "lime.artifacts",
        "lime.workflow",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// A capability layer that deduplicates by idempotency key, like the host's: `effects` counts
/// what really happened per key, `calls` every call made.
#[derive(Default)]
pub(super) struct Effects {
    pub(super) effects: Mutex<BTreeMap<String, u32>>,
    pub(super) calls: Mutex<Vec<String>>,
    /// Fail (retryably) this many first calls.
    pub(super) fail_first: Mutex<u32>,
    /// Panic right after the effect of the n-th call (1-based): a crash before its fact.
    crash_after_effect_of_call: Mutex<Option<usize>>,
}

impl StepExecutor for Effects {
    /// Storage writes are re-issued safely (their results are committed without an fsync);
    /// the rest is synced: both paths are driven.
    fn reissue_is_safe(&self, call: &Call) -> bool {
        call.method == "set"
    }

    fn call(&self, step: &StepCall<'_>) -> Result<Value, StepError> {
        let key = step.call.idempotency_key.clone();
        let n = {
            let mut calls = lock(&self.calls);
            calls.push(key.clone());
            calls.len()
        };
        {
            let mut f = lock(&self.fail_first);
            if *f > 0 {
                *f -= 1;
                return Err(StepError {
                    code: "storage.busy".into(),
                    message: "try again".into(),
                    retryable: true,
                    timed_out: false,
                });
            }
        }
        lock(&self.effects).entry(key.clone()).or_insert(1);
        if *lock(&self.crash_after_effect_of_call) == Some(n) {
            panic!("crash after the effect of call {n}");
        }
        Ok(match step.call.method.as_str() {
            "startTask" if step.call.args["input"]["topic"] == "huge" => {
                json!("x".repeat(crate::workflow::limits::MAX_STEP_OUTPUT_BYTES + 1))
            }
            "startTask" => json!("Dear cats"),
            "create" => json!({"artifactId": "art_1"}),
            _ => json!({"ok": true, "key": key}),
        })
    }
}

pub(super) fn open(path: &Path, clock: Arc<dyn Clock>) -> WorkflowRuns {
    WorkflowRuns::open(EventLog::open_with_clock(path, clock).unwrap()).unwrap()
}

pub(super) fn sample_start(key: Option<&str>) -> StartRun {
    StartRun {
        app: "replies".into(),
        workflow: "draft-review-publish".into(),
        definition: serde_json::from_str(SAMPLE).unwrap(),
        declared: caps(),
        input: json!({"topic": "cats"}),
        idempotency_key: key.map(str::to_string),
        started_by: None,
    }
}

/// Ten storage writes, then an end.
pub(super) fn ten_steps() -> StartRun {
    let mut states = vec![json!({"key": "start", "kind": "start", "next": "s1"})];
    for i in 1..=10 {
        let next = if i == 10 {
            "done".to_string()
        } else {
            format!("s{}", i + 1)
        };
        states.push(json!({"key": format!("s{i}"), "kind": "storage-write",
            "storageKey": format!("k{i}"), "value": format!("'v{i}'"), "output": format!("o{i}"), "next": next}));
    }
    states.push(json!({"key": "done", "kind": "end", "result": "outputs.o10.ok"}));
    StartRun {
        app: "writer".into(),
        workflow: "ten".into(),
        definition: json!({"key": "ten", "recovery": {"onError": "retry", "maxRetries": 2},
            "retryPolicy": {"backoffMs": 1000}, "states": states}),
        declared: caps(),
        input: json!({}),
        idempotency_key: None,
        started_by: None,
    }
}

pub(super) fn clock(ms: i64) -> Arc<ManualClock> {
    Arc::new(ManualClock(AtomicI64::new(ms)))
}

fn event_count(runs: &WorkflowRuns, run_id: &str) -> u64 {
    let id = RunId::new(run_id).unwrap();
    runs.log.last_sequence(&run_session(&id)).unwrap()
}

#[test]
fn the_sample_waits_for_review_then_saves_and_publishes() {
    let dir = tempfile::tempdir().unwrap();
    let runs = open(&dir.path().join("log.db"), clock(1_000));
    let fx = Effects::default();
    let v = runs.start(sample_start(None)).unwrap();
    let v = runs.drive(&v.run_id, &fx).unwrap();
    assert!(matches!(v.waiting, Some(Pending::Review { .. })), "{v:?}");
    assert_eq!(lock(&fx.calls).len(), 1);
    runs.respond(
        &v.run_id,
        Answer::Review {
            approved: true,
            data: None,
        },
        AnswerSource::User,
    )
    .unwrap();
    let v = runs.drive(&v.run_id, &fx).unwrap();
    assert!(v.finished);
    assert_eq!(
        v.state.status,
        RunStatus::Succeeded {
            result: json!({"artifact": {"artifactId": "art_1"}, "approved": true})
        }
    );
    let calls = lock(&fx.calls).clone();
    let states: Vec<&str> = calls.iter().map(|k| k.split(':').nth(2).unwrap()).collect();
    assert_eq!(states, ["draft", "save", "publish"]);
    // The log holds the run's facts, in the job.* family.
    let evs = runs
        .log
        .read_all(&run_session(&RunId::new(&v.run_id).unwrap()))
        .unwrap();
    let names: Vec<String> = evs.iter().map(|e| e.kind().to_string()).collect();
    assert_eq!(names.first().map(String::as_str), Some("job.created"));
    assert_eq!(names.last().map(String::as_str), Some("job.completed"));
    assert!(names.contains(&"job.item.started".to_string()));
}

#[test]
fn a_second_start_with_the_same_key_returns_the_first_run_even_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.db");
    let first = open(&path, clock(1_000))
        .start(sample_start(Some("k-1")))
        .unwrap();
    let runs = open(&path, clock(1_000));
    let again = runs.start(sample_start(Some("k-1"))).unwrap();
    assert_eq!(again.run_id, first.run_id);
    assert_eq!(runs.list(None).len(), 1);
    let other = runs.start(sample_start(Some("k-2"))).unwrap();
    assert_ne!(other.run_id, first.run_id);
    let too_long = "x".repeat(MAX_START_KEY_LEN + 1);
    let err = runs.start(sample_start(Some(&too_long))).unwrap_err();
    assert_eq!(err.code, code::INVALID_IDEMPOTENCY_KEY);
    assert_eq!(runs.list(None).len(), 2);
}

#[test]
fn an_invalid_definition_is_refused_and_records_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let runs = open(&dir.path().join("log.db"), clock(1_000));
    let mut req = sample_start(None);
    req.declared = BTreeSet::new();
    assert_eq!(runs.start(req).unwrap_err().code, code::INVALID_DEFINITION);
    assert!(runs.list(None).is_empty());
    assert!(runs.log.sessions().unwrap().is_empty());
}

#[test]
fn replay_after_restart_runs_no_completed_step_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.db");
    let fx = Effects::default();
    let run_id = {
        let runs = open(&path, clock(1_000));
        let v = runs.start(sample_start(None)).unwrap();
        runs.drive(&v.run_id, &fx).unwrap();
        v.run_id
    };
    let runs = open(&path, clock(2_000));
    let v = runs.show(&run_id).unwrap();
    assert!(matches!(v.waiting, Some(Pending::Review { .. })));
    // Driving the replayed run waits again without calling anything.
    runs.drive(&run_id, &fx).unwrap();
    assert_eq!(lock(&fx.calls).len(), 1);
    runs.respond(
        &run_id,
        Answer::Review {
            approved: true,
            data: None,
        },
        AnswerSource::User,
    )
    .unwrap();
    let v = runs.drive(&run_id, &fx).unwrap();
    assert!(v.finished);
    assert_eq!(lock(&fx.calls).len(), 3);
    // A finished run replays as finished and drives nothing.
    let runs = open(&path, clock(3_000));
    let again = runs.drive(&run_id, &fx).unwrap();
    assert_eq!(again.state, v.state);
    assert_eq!(lock(&fx.calls).len(), 3);
}

fn run_to_end(path: &Path, fx: &Effects, crash_at_append: Option<i64>) -> RunView {
    let c = clock(1_000);
    let runs = open(path, c.clone());
    if let Some(n) = crash_at_append {
        runs.crash_after_appends(n);
    }
    let started = catch_unwind(AssertUnwindSafe(|| {
        let v = runs.start(ten_steps())?;
        runs.drive(&v.run_id, fx)
    }));
    drop(runs);
    let runs = open(path, c);
    if let Ok(Ok(v)) = &started {
        return runs.show(&v.run_id).unwrap();
    }
    let Some(v) = runs.list(None).into_iter().next() else {
        // Crashed before the run was recorded: nothing happened; start again.
        assert!(lock(&fx.effects).is_empty());
        let v = runs.start(ten_steps()).unwrap();
        return runs.drive(&v.run_id, fx).unwrap();
    };
    runs.drive(&v.run_id, fx).unwrap()
}

fn comparable(v: &RunView) -> (RunStatus, Value) {
    let outputs = serde_json::to_value(&v.state.outputs).unwrap();
    let text = outputs.to_string().replace(&v.run_id, "RUN");
    (v.state.status.clone(), serde_json::from_str(&text).unwrap())
}

#[test]
fn a_crash_at_any_append_of_a_ten_step_run_ends_the_same_with_each_effect_once() {
    let dir = tempfile::tempdir().unwrap();
    let fx = Effects::default();
    let clean = run_to_end(&dir.path().join("clean.db"), &fx, None);
    let appends = event_count(&open(&dir.path().join("clean.db"), clock(0)), &clean.run_id);
    // start + (started + result, one commit) x 10 + ended: 22 facts in 12 commits.
    assert_eq!(appends, 22);
    for n in 1..=appends as i64 {
        let fx = Effects::default();
        let v = run_to_end(&dir.path().join(format!("crash{n}.db")), &fx, Some(n));
        assert!(v.finished, "crash at append {n}: {v:?}");
        assert_eq!(comparable(&v), comparable(&clean), "crash at append {n}");
        let effects = lock(&fx.effects).clone();
        assert_eq!(effects.len(), 10, "crash at append {n}");
        assert!(effects.values().all(|c| *c == 1));
        // At most the one call whose result the crash lost is made again, with its key.
        let calls = lock(&fx.calls).clone();
        assert!(calls.len() <= 11, "crash at append {n}: {calls:?}");
        if calls.len() == 11 {
            let distinct: BTreeSet<&String> = calls.iter().collect();
            assert_eq!(distinct.len(), 10);
        }
    }
}

#[test]
fn a_crash_after_an_effect_before_its_fact_reissues_the_same_key() {
    for call in 1..=10 {
        let dir = tempfile::tempdir().unwrap();
        let fx = Effects::default();
        *lock(&fx.crash_after_effect_of_call) = Some(call);
        let v = run_to_end(&dir.path().join("log.db"), &fx, None);
        assert_eq!(
            v.state.status,
            RunStatus::Succeeded {
                result: json!(true)
            }
        );
        let calls = lock(&fx.calls).clone();
        assert_eq!(calls.len(), 11);
        assert_eq!(calls[call - 1], calls[call], "re-issued with the same key");
        assert_eq!(lock(&fx.effects).len(), 10);
    }
}

#[test]
fn cancel_ends_a_waiting_run_and_a_finished_run_refuses_answers_and_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.db");
    let fx = Effects::default();
    let runs = open(&path, clock(1_000));
    let v = runs.start(sample_start(None)).unwrap();
    runs.drive(&v.run_id, &fx).unwrap();
    let c = runs.cancel(&v.run_id).unwrap();
    assert_eq!(c.state.status, RunStatus::Cancelled { in_flight: None });
    let before = event_count(&runs, &v.run_id);
    let answer = Answer::Review {
        approved: true,
        data: None,
    };
    let err = runs
        .respond(&v.run_id, answer, AnswerSource::User)
        .unwrap_err();
    assert_eq!(err.code, code::RUN_FINISHED);
    assert_eq!(runs.cancel(&v.run_id).unwrap_err().code, code::RUN_FINISHED);
    runs.drive(&v.run_id, &fx).unwrap();
    assert_eq!(event_count(&runs, &v.run_id), before);
    assert_eq!(lock(&fx.calls).len(), 1);
    drop(runs);
    let runs = open(&path, clock(2_000));
    assert_eq!(runs.show(&v.run_id).unwrap().state.status, c.state.status);
    assert_eq!(
        runs.cancel("run_nope").unwrap_err().code,
        code::RUN_NOT_FOUND
    );
}

#[test]
fn a_retry_waits_for_its_backoff_on_the_clock_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.db");
    let c = clock(10_000);
    let fx = Effects::default();
    *lock(&fx.fail_first) = 1;
    let runs = open(&path, c.clone());
    let v = runs.start(ten_steps()).unwrap();
    let v = runs.drive(&v.run_id, &fx).unwrap();
    assert!(matches!(v.waiting, Some(Pending::Backoff { .. })), "{v:?}");
    assert_eq!(v.due_at.as_deref(), Some("1970-01-01T00:00:11.000Z"));
    assert!(runs.drive_due(&fx).unwrap().is_empty());
    drop(runs);
    // Reopened, the timer is re-armed from the log, not from the new "now".
    c.0.store(10_500, Ordering::SeqCst);
    let runs = open(&path, c.clone());
    assert_eq!(
        runs.next_due(),
        Some(jiff::Timestamp::from_millisecond(11_000).unwrap())
    );
    assert!(runs.drive_due(&fx).unwrap().is_empty());
    assert_eq!(lock(&fx.calls).len(), 1);
    c.0.store(11_000, Ordering::SeqCst);
    let moved = runs.drive_due(&fx).unwrap();
    assert_eq!(moved.len(), 1);
    assert!(moved[0].finished);
    let calls = lock(&fx.calls).clone();
    assert_eq!(calls[0], format!("wf:{}:s1:1:1", v.run_id));
    assert_eq!(
        calls[1],
        format!("wf:{}:s1:1:2", v.run_id),
        "a retry is a new attempt"
    );
    assert_eq!(runs.next_due(), None);
}

#[test]
fn a_review_answered_by_the_app_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let runs = open(&dir.path().join("log.db"), clock(1_000));
    let fx = Effects::default();
    let v = runs.start(sample_start(None)).unwrap();
    let v = runs.drive(&v.run_id, &fx).unwrap();
    let before = event_count(&runs, &v.run_id);
    let answer = Answer::Review {
        approved: true,
        data: None,
    };
    let err = runs
        .respond(&v.run_id, answer, AnswerSource::App)
        .unwrap_err();
    assert_eq!(err.code, code::ANSWER_NOT_BY_USER);
    assert_eq!(event_count(&runs, &v.run_id), before);
    assert_eq!(runs.show(&v.run_id).unwrap(), v);
    // The wrong kind of answer is refused too.
    let err = runs
        .respond(
            &v.run_id,
            Answer::Input { data: json!(1) },
            AnswerSource::User,
        )
        .unwrap_err();
    assert_eq!(err.code, code::NOT_WAITING);
    assert_eq!(event_count(&runs, &v.run_id), before);
}

#[test]
fn a_second_process_on_the_same_directory_is_refused_busy() {
    let dir = tempfile::tempdir().unwrap();
    let first = WorkflowRuns::open_dir(dir.path()).unwrap();
    let v = first.start(sample_start(None)).unwrap();
    let err = WorkflowRuns::open_dir(dir.path()).err().unwrap();
    assert_eq!(err.code, code::RUNTIME_BUSY);
    drop(first);
    let again = WorkflowRuns::open_dir(dir.path()).unwrap();
    assert_eq!(again.show(&v.run_id).unwrap().run_id, v.run_id);
}

#[test]
fn an_oversized_input_or_step_output_is_never_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let runs = open(&dir.path().join("log.db"), clock(1_000));
    let mut req = sample_start(None);
    req.input = json!({"topic": "x".repeat(crate::workflow::limits::MAX_RUN_INPUT_BYTES)});
    assert_eq!(runs.start(req).unwrap_err().code, code::INPUT_TOO_LARGE);
    assert!(runs.log.sessions().unwrap().is_empty());
    let mut req = sample_start(None);
    req.input = json!({"topic": "huge"});
    let v = runs.start(req).unwrap();
    let fx = Effects::default();
    let v = runs.drive(&v.run_id, &fx).unwrap();
    // The sample asks the user after an error; the huge output is nowhere in the log.
    let Some(Pending::Decision { code, .. }) = &v.waiting else {
        panic!("{v:?}")
    };
    assert_eq!(code, crate::workflow::machine::run_code::OUTPUT_TOO_LARGE);
    let evs = runs
        .log
        .read_all(&run_session(&RunId::new(&v.run_id).unwrap()))
        .unwrap();
    let bytes: usize = evs.iter().map(|e| e.to_json_string().len()).sum();
    assert!(bytes < 64 * 1024, "{bytes}");
}
