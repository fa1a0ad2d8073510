//! Read models are folds: a rebuild from the durable log equals the model maintained
//! incrementally (with checkpoints serialized and restored along the way), for random streams.

use proptest::prelude::*;
use runtime_core::event::*;
use runtime_core::ids::*;
use runtime_core::log::EventLog;
use runtime_core::read_model::{SessionReadModel, TurnStatus};

fn tmpdir() -> tempfile::TempDir {
    // fsync-heavy: prefer a RAM-backed directory when there is one.
    tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .unwrap()
}

#[derive(Debug, Clone)]
enum Op {
    Submit(u8, bool),
    Start(u8),
    Delta(u8, String),
    ModelRequested(u8),
    ModelDone(u8, u8, u8),
    ToolStart(u8, u8),
    ToolResult(u8, u8),
    ToolFail(u8, u8),
    Spill(u8, u8),
    ActionReq(u8, u8),
    ActionRes(u8, u8, bool),
    TaskCreated(u8),
    AttemptStarted(u8, u8),
    AttemptFailed(u8, u8),
    Complete(u8),
    Fail(u8, bool),
    Evidence(u8),
    Artifact(u8),
    Routing,
    RateLimit,
    Repaired(u8),
}

fn op() -> impl Strategy<Value = Op> {
    let t = 0u8..3;
    let c = 0u8..3;
    prop_oneof![
        (t.clone(), any::<bool>()).prop_map(|(a, b)| Op::Submit(a, b)),
        t.clone().prop_map(Op::Start),
        (t.clone(), "[a-z ]{0,5}").prop_map(|(a, s)| Op::Delta(a, s)),
        t.clone().prop_map(Op::ModelRequested),
        (t.clone(), 0u8..50, 0u8..50).prop_map(|(a, b, c)| Op::ModelDone(a, b, c)),
        (t.clone(), c.clone()).prop_map(|(a, b)| Op::ToolStart(a, b)),
        (t.clone(), c.clone()).prop_map(|(a, b)| Op::ToolResult(a, b)),
        (t.clone(), c.clone()).prop_map(|(a, b)| Op::ToolFail(a, b)),
        (t.clone(), c.clone()).prop_map(|(a, b)| Op::Spill(a, b)),
        (t.clone(), c.clone()).prop_map(|(a, b)| Op::ActionReq(a, b)),
        (t.clone(), c.clone(), any::<bool>()).prop_map(|(a, b, d)| Op::ActionRes(a, b, d)),
        t.clone().prop_map(Op::TaskCreated),
        (t.clone(), 1u8..3).prop_map(|(a, b)| Op::AttemptStarted(a, b)),
        (t.clone(), 1u8..3).prop_map(|(a, b)| Op::AttemptFailed(a, b)),
        t.clone().prop_map(Op::Complete),
        (t.clone(), any::<bool>()).prop_map(|(a, b)| Op::Fail(a, b)),
        t.clone().prop_map(Op::Evidence),
        t.clone().prop_map(Op::Artifact),
        Just(Op::Routing),
        Just(Op::RateLimit),
        t.prop_map(Op::Repaired),
    ]
}

fn draft(op: &Op) -> EventDraft {
    let th = ThreadId::new("thread_1").unwrap();
    let turn = |t: u8| TurnId::new(format!("turn_{t}")).unwrap();
    let ts = |t: u8| Scope::turn(&th, &turn(t));
    let tool = |t: u8, c: u8| Scope {
        step_id: Some(StepId::new(format!("step_{t}_{c}")).unwrap()),
        tool_call_id: Some(ToolCallId::new(format!("call_{t}_{c}")).unwrap()),
        ..ts(t)
    };
    let task = |t: u8, r: Option<u8>| Scope {
        task_id: Some(TaskId::new(format!("task_{t}")).unwrap()),
        run_id: r.map(|r| RunId::new(format!("run_{t}_{r}")).unwrap()),
        ..ts(t)
    };
    let (scope, body) = match op.clone() {
        Op::Submit(t, q) => (
            ts(t),
            EventBody::TurnSubmitted(
                EventType::TurnSubmitted,
                runtime_core::event::TurnSubmitted {
                    status: Some(if q { "queued" } else { "accepted" }.into()),
                    ..Default::default()
                },
            ),
        ),
        Op::Start(t) => (
            ts(t),
            EventBody::TurnStarted(EventType::TurnStarted, Default::default()),
        ),
        Op::Delta(t, s) => (
            ts(t),
            EventBody::Delta(
                EventType::ModelDelta,
                TextDelta {
                    text: Some(s),
                    ..Default::default()
                },
            ),
        ),
        Op::ModelRequested(t) => (
            ts(t),
            EventBody::ModelRequested(EventType::ModelRequested, Default::default()),
        ),
        Op::ModelDone(t, i, o) => (
            ts(t),
            EventBody::ModelCompleted(
                EventType::ModelCompleted,
                ModelCompleted {
                    input_tokens: Some(i as u64),
                    output_tokens: Some(o as u64),
                    ..Default::default()
                },
            ),
        ),
        Op::ToolStart(t, c) => (
            tool(t, c),
            EventBody::ToolStarted(
                EventType::ToolStarted,
                ToolStarted {
                    tool_name: Some("storage_list".into()),
                    ..Default::default()
                },
            ),
        ),
        Op::ToolResult(t, c) => (
            tool(t, c),
            EventBody::ToolResult(EventType::ToolResult, Default::default()),
        ),
        Op::ToolFail(t, c) => (
            tool(t, c),
            EventBody::Failure(
                EventType::ToolFailed,
                Failure {
                    code: Some("x".into()),
                    ..Default::default()
                },
            ),
        ),
        Op::Spill(t, c) => (
            tool(t, c),
            EventBody::OutputSpilled(
                EventType::OutputSpilled,
                OutputSpilled {
                    output_ref: Some(format!("output://s/{t}{c}")),
                    ..Default::default()
                },
            ),
        ),
        Op::ActionReq(t, a) => (
            Scope {
                action_id: Some(ActionId::new(format!("action_{a}")).unwrap()),
                ..ts(t)
            },
            EventBody::ActionRequired(
                EventType::ActionRequired,
                ActionRequired {
                    // Action 2 asks about arguments over the inline limit: the log keeps them
                    // behind a reference, which both folds see alike.
                    arguments: Some(if a == 2 {
                        serde_json::json!({"content": "x".repeat(runtime_core::log::ARGS_INLINE_LIMIT)})
                    } else {
                        serde_json::json!({"n": a})
                    }),
                    ..Default::default()
                },
            ),
        ),
        Op::ActionRes(t, a, ok) => (
            Scope {
                action_id: Some(ActionId::new(format!("action_{a}")).unwrap()),
                ..ts(t)
            },
            EventBody::ActionResolved(
                EventType::ActionResolved,
                ActionResolved {
                    confirmed: Some(ok),
                    ..Default::default()
                },
            ),
        ),
        Op::TaskCreated(t) => (
            task(t, None),
            EventBody::Task(EventType::TaskCreated, Default::default()),
        ),
        Op::AttemptStarted(t, r) => (
            task(t, Some(r)),
            EventBody::TaskAttempt(EventType::TaskAttemptStarted, Default::default()),
        ),
        Op::AttemptFailed(t, r) => (
            task(t, Some(r)),
            EventBody::TaskAttempt(EventType::TaskAttemptFailed, Default::default()),
        ),
        Op::Complete(t) => (
            ts(t),
            EventBody::TurnCompleted(EventType::TurnCompleted, Default::default()),
        ),
        Op::Fail(t, cancelled) => (
            ts(t),
            EventBody::TurnFailed(
                EventType::TurnFailed,
                runtime_core::event::TurnFailed {
                    status: Some(if cancelled { "cancelled" } else { "failed" }.into()),
                    ..Default::default()
                },
            ),
        ),
        Op::Evidence(t) => (
            Scope {
                evidence_id: Some(EvidenceId::new(format!("evidence_{t}")).unwrap()),
                ..ts(t)
            },
            EventBody::Evidence(
                EventType::EvidenceChanged,
                EvidenceChanged {
                    pack_ref: Some(format!("evidence://{t}")),
                    ..Default::default()
                },
            ),
        ),
        Op::Artifact(t) => (
            ts(t),
            EventBody::Artifact(
                EventType::ArtifactChanged,
                ArtifactChanged {
                    artifact_ref: Some(format!("artifact://a/{t}")),
                    ..Default::default()
                },
            ),
        ),
        Op::Routing => (
            ts(0),
            EventBody::Routing(
                EventType::RoutingSingleCandidate,
                Routing {
                    candidate_count: Some(1),
                    selected_model: Some("m".into()),
                    ..Default::default()
                },
            ),
        ),
        Op::RateLimit => (
            ts(0),
            EventBody::Limit(EventType::RateLimitHit, Default::default()),
        ),
        Op::Repaired(t) => (
            ts(t),
            EventBody::Snapshot(EventType::SnapshotRepaired, Default::default()),
        ),
    };
    EventDraft::new(scope, body)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn rebuild_equals_incremental(ops in proptest::collection::vec((op(), 1usize..4, any::<bool>()), 1..60)) {
        let dir = tmpdir();
        let log = EventLog::open(&dir.path().join("events.db")).unwrap();
        let s = SessionId::new("sess_p").unwrap();
        let mut incremental = SessionReadModel::default();
        let mut i = 0;
        let mut appended = 0;
        while i < ops.len() {
            let (_, batch, checkpoint) = &ops[i];
            let end = (i + batch).min(ops.len());
            let drafts: Vec<EventDraft> = ops[i..end].iter().map(|(o, _, _)| draft(o)).collect();
            i = end;
            // Streams that break the ordering rules are refused whole; the fold must still agree.
            if let Ok(events) = log.append(&s, drafts) {
                appended += events.len();
                for e in &events {
                    incremental.apply(e);
                }
            }
            if *checkpoint {
                let json = serde_json::to_string(&incremental).unwrap();
                incremental = serde_json::from_str(&json).unwrap();
            }
        }
        let all = log.read_all(&s).unwrap();
        prop_assert_eq!(all.len(), appended);
        let rebuilt = SessionReadModel::rebuild(&all);
        prop_assert_eq!(&rebuilt, &incremental);
        // Invariants of the fold.
        for th in rebuilt.threads.values() {
            for a in &th.pending_actions {
                let large = a.action_id.as_str() == "action_2";
                prop_assert_eq!(runtime_core::log::is_args_ref(a.arguments.as_ref().unwrap()), large);
            }
            for t in &th.turns {
                if t.status.is_terminal() {
                    prop_assert!(th.active_turn_id.as_ref() != Some(&t.turn_id));
                    prop_assert!(!th.pending_actions.iter().any(|a| a.turn_id.as_ref() == Some(&t.turn_id)));
                }
            }
            prop_assert!(th.turns.iter().filter(|t| t.status == TurnStatus::Running).count() <= 3);
        }
    }
}
