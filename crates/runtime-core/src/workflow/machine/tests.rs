use std::collections::BTreeSet;

use serde_json::json;

use super::*;
use crate::workflow::check;

const SAMPLE: &str =
    include_str!("../../../../../fixtures/workflows/valid/draft-review-publish.json");

fn all_caps() -> BTreeSet<String> {
    [
        "lime.agent",
        "lime.workflow",
        "lime.storage",
        "lime.artifacts",
        "lime.tools",
        "lime.knowledge",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn def(v: Value) -> Arc<Definition> {
    let c = check(&v, &all_caps());
    Arc::new(c.definition.unwrap_or_else(|| panic!("{:#?}", c.findings)))
}

fn sample() -> Arc<Definition> {
    def(serde_json::from_str(SAMPLE).unwrap())
}

fn pending(m: &RunMachine) -> Pending {
    match m.next_effect() {
        Effect::Wait(p) => p,
        Effect::Done(s) => panic!("done: {s:?}"),
    }
}

fn call(m: &RunMachine) -> Call {
    match pending(m) {
        Pending::Call(c) => c,
        other => panic!("not a call: {other:?}"),
    }
}

fn ok(m: &mut RunMachine, output: Value) {
    let key = pending(m).key().to_string();
    m.apply(Fact::Succeeded { key, output }).unwrap();
}

#[test]
fn the_sample_runs_draft_review_save_publish() {
    let mut m = RunMachine::start(sample(), "r1", json!({"topic": "cats"}));
    let c = call(&m);
    assert_eq!(
        (c.capability.as_str(), c.method.as_str()),
        ("lime.agent", "startTask")
    );
    assert_eq!(c.idempotency_key, "wf:r1:draft:1:1");
    assert_eq!(
        c.args,
        json!({"input": {"topic": "cats", "tone": "friendly", "previous": null}, "entry": "draft-reply", "expectedOutput": {"artifactKind": "reply-draft"}})
    );
    assert_eq!(c.timeout_ms, Some(300_000));
    ok(&mut m, json!("Dear cats"));
    let Pending::Review {
        key, show, prompt, ..
    } = pending(&m)
    else {
        panic!()
    };
    assert_eq!(prompt, "Approve this reply?");
    assert_eq!(show, json!({"topic": "cats", "draft": "Dear cats"}));
    m.apply(Fact::Reviewed {
        key,
        approved: true,
        data: None,
    })
    .unwrap();
    let c = call(&m);
    assert_eq!(
        (c.capability.as_str(), c.args.clone()),
        (
            "lime.storage",
            json!({"key": "replies/latest", "value": "Dear cats"})
        )
    );
    ok(&mut m, json!({"ok": true}));
    let c = call(&m);
    assert_eq!(c.capability, "lime.artifacts");
    assert_eq!(
        c.args,
        json!({"kind": "reply-draft", "title": "Reply: cats", "content": {"text": "Dear cats", "approvedBy": "reviewer"}})
    );
    ok(&mut m, json!({"artifactId": "a1"}));
    assert_eq!(
        m.next_effect(),
        Effect::Done(RunStatus::Succeeded {
            result: json!({"artifact": {"artifactId": "a1"}, "approved": true})
        })
    );
}

#[test]
fn a_rejection_with_edits_waits_then_drafts_again_with_a_new_key() {
    let mut m = RunMachine::start(sample(), "r2", json!({"topic": "dogs"}));
    ok(&mut m, json!("v1"));
    let key = pending(&m).key().to_string();
    m.apply(Fact::Reviewed {
        key,
        approved: false,
        data: Some(json!("shorter please")),
    })
    .unwrap();
    let Pending::Timer { key, wake, .. } = pending(&m) else {
        panic!()
    };
    assert_eq!(wake, Wake::AfterMs(10_000));
    m.apply(Fact::TimerFired { key }).unwrap();
    let c = call(&m);
    assert_eq!(c.idempotency_key, "wf:r2:draft:2:1");
    assert_eq!(c.args["input"]["previous"], json!("shorter please"));
    // A plain rejection ends the run.
    ok(&mut m, json!("v2"));
    let key = pending(&m).key().to_string();
    m.apply(Fact::Reviewed {
        key,
        approved: false,
        data: None,
    })
    .unwrap();
    assert_eq!(
        m.next_effect(),
        Effect::Done(RunStatus::Succeeded {
            result: json!({"approved": false})
        })
    );
}

#[test]
fn timeouts_retry_with_a_doubled_timeout_and_backoff_then_ask_the_user() {
    let mut m = RunMachine::start(sample(), "r3", json!({"topic": "x"}));
    for attempt in 1..=3u32 {
        let c = call(&m);
        assert_eq!(c.idempotency_key, format!("wf:r3:draft:1:{attempt}"));
        assert_eq!(c.timeout_ms, Some(300_000 << (attempt - 1)));
        m.apply(Fact::TimedOut {
            key: c.idempotency_key.clone(),
        })
        .unwrap();
        if attempt < 3 {
            let Pending::Backoff { key, wake, .. } = pending(&m) else {
                panic!()
            };
            assert_eq!(wake, Wake::AfterMs(2000 << (attempt - 1)));
            m.apply(Fact::TimerFired { key }).unwrap();
        }
    }
    // Retries exhausted: a timeout with no retries left fails the run with the timeout code.
    assert!(
        matches!(m.next_effect(), Effect::Done(RunStatus::Failed { ref code, .. }) if code == run_code::STEP_TIMED_OUT)
    );
}

#[test]
fn errors_ask_the_user_and_a_non_retryable_error_is_never_retried() {
    let mut m = RunMachine::start(sample(), "r4", json!({"topic": "x"}));
    let c = call(&m);
    m.apply(Fact::Failed {
        key: c.idempotency_key,
        code: "APP_E002".into(),
        message: "denied".into(),
        retryable: false,
    })
    .unwrap();
    let Pending::Decision { key, code, .. } = pending(&m) else {
        panic!()
    };
    assert_eq!(code, "APP_E002");
    m.apply(Fact::Decided { key, retry: true }).unwrap();
    let c = call(&m);
    assert_eq!(c.idempotency_key, "wf:r4:draft:1:2");
    m.apply(Fact::Failed {
        key: c.idempotency_key,
        code: "APP_E999".into(),
        message: "x".into(),
        retryable: true,
    })
    .unwrap();
    let key = pending(&m).key().to_string();
    m.apply(Fact::Decided { key, retry: false }).unwrap();
    assert!(
        matches!(m.next_effect(), Effect::Done(RunStatus::Failed { ref code, .. }) if code == run_code::DECLINED_RETRY)
    );
}

#[test]
fn retry_stops_at_max_attempts_and_non_retryable_fails_at_once() {
    let d = def(
        json!({"key": "t", "recovery": {"onError": "retry", "maxRetries": 1}, "retryPolicy": {"backoffMs": 5},
        "states": [{"key": "s", "kind": "start", "next": "w"},
                   {"key": "w", "kind": "storage-write", "storageKey": "k", "value": "input", "next": "e"},
                   {"key": "e", "kind": "end"}]}),
    );
    let mut m = RunMachine::start(d.clone(), "r", json!(1));
    let fail_now = |m: &mut RunMachine, retryable| {
        let key = pending(m).key().to_string();
        m.apply(Fact::Failed {
            key,
            code: "E".into(),
            message: "m".into(),
            retryable,
        })
        .unwrap();
    };
    fail_now(&mut m, true);
    let key = pending(&m).key().to_string();
    m.apply(Fact::TimerFired { key }).unwrap();
    fail_now(&mut m, true);
    assert!(
        matches!(m.next_effect(), Effect::Done(RunStatus::Failed { ref code, .. }) if code == "E")
    );
    let mut m = RunMachine::start(d, "r", json!(1));
    fail_now(&mut m, false);
    assert!(matches!(
        m.next_effect(),
        Effect::Done(RunStatus::Failed { .. })
    ));
}

#[test]
fn goto_recovery_records_the_error_and_continues() {
    let d = def(json!({"key": "t", "recovery": {"onError": "goto:oops"},
        "states": [{"key": "s", "kind": "start", "next": "w"},
                   {"key": "w", "kind": "tool-call", "uses": "crm", "arguments": {"q": "input"}, "output": "w", "next": "e"},
                   {"key": "oops", "kind": "end", "result": "outputs.w.error.code"},
                   {"key": "e", "kind": "end"}]}));
    let mut m = RunMachine::start(d, "r", json!("q"));
    let c = call(&m);
    assert_eq!(
        (c.capability.as_str(), c.args.clone()),
        ("lime.tools", json!({"key": "crm", "input": {"q": "q"}}))
    );
    m.apply(Fact::Failed {
        key: c.idempotency_key,
        code: "TOOL_X".into(),
        message: "m".into(),
        retryable: true,
    })
    .unwrap();
    assert_eq!(
        m.next_effect(),
        Effect::Done(RunStatus::Succeeded {
            result: json!("TOOL_X")
        })
    );
}

#[test]
fn stale_and_mismatched_facts_change_nothing() {
    let mut m = RunMachine::start(sample(), "r5", json!({"topic": "x"}));
    let before = m.state().clone();
    assert_eq!(
        m.apply(Fact::Succeeded {
            key: "wf:r5:draft:1:2".into(),
            output: json!(1)
        }),
        Err(ApplyError::Stale)
    );
    assert_eq!(
        m.apply(Fact::Succeeded {
            key: "wf:other:draft:1:1".into(),
            output: json!(1)
        }),
        Err(ApplyError::Stale)
    );
    assert_eq!(
        m.apply(Fact::Reviewed {
            key: "wf:r5:draft:1:1".into(),
            approved: true,
            data: None
        }),
        Err(ApplyError::Mismatch(
            "this fact does not answer what the run waits for"
        ))
    );
    assert_eq!(m.state(), &before);
    m.apply(Fact::Cancelled).unwrap();
    assert_eq!(
        m.next_effect(),
        Effect::Done(RunStatus::Cancelled {
            in_flight: Some("wf:r5:draft:1:1".into())
        })
    );
    let done = m.state().clone();
    assert_eq!(m.apply(Fact::Cancelled), Err(ApplyError::Finished));
    assert_eq!(m.state(), &done);
}

#[test]
fn oversized_input_and_outputs_fail_the_run_with_a_code() {
    let big = json!("x".repeat(MAX_RUN_INPUT_BYTES));
    let m = RunMachine::start(sample(), "r", big);
    assert!(
        matches!(m.next_effect(), Effect::Done(RunStatus::Failed { ref code, .. }) if code == run_code::INPUT_TOO_LARGE)
    );
    let mut m = RunMachine::start(sample(), "r", json!({"topic": "x"}));
    ok(&mut m, json!("y".repeat(MAX_STEP_OUTPUT_BYTES)));
    assert!(
        matches!(m.next_effect(), Effect::Done(RunStatus::Failed { ref code, .. }) if code == run_code::OUTPUT_TOO_LARGE)
    );
    assert!(m.state().outputs.is_empty());
}

#[test]
fn expression_failures_at_run_time_fail_the_run() {
    // `input.topic` is missing: the agent task's input mapping fails when the step is entered.
    let m = RunMachine::start(sample(), "r", json!({}));
    assert!(
        matches!(m.next_effect(), Effect::Done(RunStatus::Failed { ref code, ref state, .. })
        if code == run_code::EXPRESSION_FAILED && state.as_deref() == Some("draft"))
    );
}

#[test]
fn wait_until_gives_a_timestamp_and_a_bad_one_fails() {
    let d = def(
        json!({"key": "t", "states": [{"key": "s", "kind": "start", "next": "w"},
        {"key": "w", "kind": "wait", "until": "input.at", "next": "e"}, {"key": "e", "kind": "end"}]}),
    );
    let m = RunMachine::start(d.clone(), "r", json!({"at": "2030-01-02T03:04:05+01:00"}));
    assert!(
        matches!(pending(&m), Pending::Timer { wake: Wake::At(ref t), .. } if t == "2030-01-02T02:04:05Z")
    );
    let m = RunMachine::start(d, "r", json!({"at": "tomorrow"}));
    assert!(
        matches!(m.next_effect(), Effect::Done(RunStatus::Failed { ref code, .. }) if code == run_code::INVALID_UNTIL)
    );
}

#[test]
fn a_cycle_through_a_wait_is_bounded_by_the_step_limit() {
    let d = def(
        json!({"key": "t", "states": [{"key": "s", "kind": "start", "next": "w"},
        {"key": "w", "kind": "wait", "duration": 1, "next": "b"},
        {"key": "b", "kind": "branch", "cases": [{"when": "false", "next": "e"}], "default": "w"},
        {"key": "e", "kind": "end"}]}),
    );
    let mut m = RunMachine::start(d, "r", json!(null));
    let mut fired = 0;
    while let Effect::Wait(p) = m.next_effect() {
        m.apply(Fact::TimerFired {
            key: p.key().to_string(),
        })
        .unwrap();
        fired += 1;
    }
    assert!(
        matches!(m.next_effect(), Effect::Done(RunStatus::Failed { ref code, .. }) if code == run_code::STEP_LIMIT)
    );
    assert_eq!(fired, MAX_RUN_STEPS / 2);
}
