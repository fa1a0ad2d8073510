//! The durable event log: gap-free per-session sequences, atomic batches, ordering rules,
//! resumable subscriptions, slow subscribers, load.

mod support_schema;

use std::collections::HashSet;
use std::sync::Arc;

use runtime_core::event::*;
use runtime_core::ids::*;
use runtime_core::log::{EventLog, LogError, SUBSCRIBER_BUFFER};

fn thread() -> ThreadId {
    ThreadId::new("thread_1").unwrap()
}

fn delta(turn: &TurnId, text: &str) -> EventDraft {
    EventDraft::new(
        Scope::turn(&thread(), turn),
        EventBody::Delta(
            EventType::ModelDelta,
            TextDelta {
                text: Some(text.into()),
                ..Default::default()
            },
        ),
    )
}

fn submitted(turn: &TurnId) -> EventDraft {
    EventDraft::new(
        Scope::turn(&thread(), turn),
        EventBody::TurnSubmitted(
            EventType::TurnSubmitted,
            runtime_core::event::TurnSubmitted {
                status: Some("accepted".into()),
                ..Default::default()
            },
        ),
    )
}

fn terminal(turn: &TurnId) -> EventDraft {
    EventDraft::new(
        Scope::turn(&thread(), turn),
        EventBody::TurnCompleted(EventType::TurnCompleted, Default::default()),
    )
}

fn tool(turn: &TurnId, call: &str, kind: EventType) -> EventDraft {
    let scope = Scope {
        step_id: Some(StepId::new(format!("step_{call}")).unwrap()),
        tool_call_id: Some(ToolCallId::new(call).unwrap()),
        ..Scope::turn(&thread(), turn)
    };
    let body = match kind {
        EventType::ToolStarted => EventBody::ToolStarted(kind, Default::default()),
        EventType::ToolResult => EventBody::ToolResult(kind, Default::default()),
        _ => EventBody::Failure(kind, Default::default()),
    };
    EventDraft::new(scope, body)
}

fn open(dir: &std::path::Path) -> EventLog {
    EventLog::open(&dir.join("events.db")).unwrap()
}

#[test]
fn sequences_start_at_one_are_gap_free_and_survive_reopen() {
    let tmp = tempfile::tempdir().unwrap();
    let s = SessionId::new("sess_a").unwrap();
    let t = TurnId::new("turn_1").unwrap();
    let runtime_id;
    {
        let log = open(tmp.path());
        runtime_id = log.runtime_id().clone();
        let a = log.append(&s, vec![submitted(&t), delta(&t, "a")]).unwrap();
        assert_eq!(a.iter().map(|e| e.sequence).collect::<Vec<_>>(), vec![1, 2]);
        let b = log.append(&s, vec![delta(&t, "b")]).unwrap();
        assert_eq!(b[0].sequence, 3);
    }
    let log = open(tmp.path());
    assert_eq!(log.runtime_id(), &runtime_id, "the runtime id is stable");
    let c = log.append(&s, vec![delta(&t, "c")]).unwrap();
    assert_eq!(c[0].sequence, 4, "no sequence reused after reopening");
    let all = log.read_all(&s).unwrap();
    assert_eq!(
        all.iter().map(|e| e.sequence).collect::<Vec<_>>(),
        vec![1, 2, 3, 4]
    );
    let other = SessionId::new("sess_b").unwrap();
    assert_eq!(
        log.append(&other, vec![submitted(&t)]).unwrap()[0].sequence,
        1,
        "per session"
    );
    let v = support_schema::profile_event_validator();
    for e in all {
        support_schema::assert_profile_valid(&v, &e.to_json());
    }
}

#[test]
fn a_rejected_batch_appends_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path());
    let s = SessionId::new("sess_a").unwrap();
    let t = TurnId::new("turn_1").unwrap();
    log.append(&s, vec![submitted(&t)]).unwrap();
    // Missing scope: a tool event without a tool call id.
    let bad = EventDraft::new(
        Scope::turn(&thread(), &t),
        EventBody::ToolStarted(EventType::ToolStarted, Default::default()),
    );
    let err = log.append(&s, vec![delta(&t, "x"), bad]).unwrap_err();
    assert!(
        matches!(
            err,
            LogError::MissingScope {
                field: "stepId",
                ..
            }
        ),
        "{err:?}"
    );
    // Ordering: a result without a start.
    let err = log
        .append(
            &s,
            vec![delta(&t, "x"), tool(&t, "c1", EventType::ToolResult)],
        )
        .unwrap_err();
    assert!(
        matches!(&err, LogError::Ordering(v) if v.code == "tool_result_without_start"),
        "{err:?}"
    );
    // A batch that opens a tool call and then breaks a rule leaves the call unopened.
    let err = log
        .append(
            &s,
            vec![
                tool(&t, "c9", EventType::ToolStarted),
                tool(&t, "c8", EventType::ToolResult),
            ],
        )
        .unwrap_err();
    assert!(
        matches!(&err, LogError::Ordering(v) if v.code == "tool_result_without_start"),
        "{err:?}"
    );
    let err = log
        .append(&s, vec![tool(&t, "c9", EventType::ToolResult)])
        .unwrap_err();
    assert!(
        matches!(&err, LogError::Ordering(v) if v.code == "tool_result_without_start"),
        "{err:?}"
    );
    assert_eq!(log.read_all(&s).unwrap().len(), 1);
    assert_eq!(log.append(&s, vec![delta(&t, "y")]).unwrap()[0].sequence, 2);
}

#[test]
fn ordering_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path());
    let s = SessionId::new("sess_a").unwrap();
    let t = TurnId::new("turn_1").unwrap();
    log.append(
        &s,
        vec![submitted(&t), tool(&t, "c1", EventType::ToolStarted)],
    )
    .unwrap();
    let code = |r: Result<Vec<Event>, LogError>| match r {
        Err(LogError::Ordering(v)) => v.code,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        code(log.append(&s, vec![tool(&t, "c1", EventType::ToolStarted)])),
        "tool_started_already_active"
    );
    assert_eq!(
        code(log.append(&s, vec![terminal(&t)])),
        "tool_unclosed_at_turn_end"
    );
    let action = |kind| {
        EventDraft::new(
            Scope {
                action_id: Some(ActionId::new("action_1").unwrap()),
                ..Scope::turn(&thread(), &t)
            },
            match kind {
                EventType::ActionRequired => EventBody::ActionRequired(kind, Default::default()),
                _ => EventBody::ActionResolved(kind, Default::default()),
            },
        )
    };
    assert_eq!(
        code(log.append(&s, vec![action(EventType::ActionResolved)])),
        "action_resolved_without_request"
    );
    log.append(
        &s,
        vec![
            tool(&t, "c1", EventType::ToolResult),
            action(EventType::ActionRequired),
        ],
    )
    .unwrap();
    assert_eq!(
        code(log.append(&s, vec![terminal(&t)])),
        "action_unresolved_at_turn_end"
    );
    log.append(&s, vec![action(EventType::ActionResolved), terminal(&t)])
        .unwrap();
    assert_eq!(
        code(log.append(&s, vec![delta(&t, "late")])),
        "execution_after_turn_terminal"
    );
    assert_eq!(
        code(log.append(&s, vec![terminal(&t)])),
        "turn_terminal_repeated"
    );
    // The rules' state is rebuilt from the log after a restart.
    drop(log);
    let log = open(tmp.path());
    assert_eq!(
        code(log.append(&s, vec![delta(&t, "late")])),
        "execution_after_turn_terminal"
    );
}

#[tokio::test]
async fn subscribers_resume_from_any_sequence_without_loss_or_duplicates() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path());
    let s = SessionId::new("sess_a").unwrap();
    let t = TurnId::new("turn_1").unwrap();
    log.append(&s, vec![submitted(&t)]).unwrap();
    for i in 0..10 {
        log.append(&s, vec![delta(&t, &i.to_string())]).unwrap();
    }
    for from in [0u64, 3, 11] {
        let mut sub = log.subscribe(&s, from);
        let log2 = log.clone();
        let s2 = s.clone();
        let t2 = t.clone();
        let writer = tokio::task::spawn_blocking(move || {
            for i in 0..50 {
                log2.append(&s2, vec![delta(&t2, &format!("live{i}"))])
                    .unwrap();
            }
        });
        writer.await.unwrap();
        let end = log.last_sequence(&s).unwrap();
        let mut seen = Vec::new();
        while sub.position() < end {
            seen.push(sub.next().await.unwrap().sequence);
        }
        assert_eq!(seen, ((from + 1)..=end).collect::<Vec<_>>(), "from {from}");
        assert!(sub.try_next().unwrap().is_none());
    }
}

#[tokio::test]
async fn a_slow_subscriber_does_not_block_appends_and_catches_up() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path());
    let s = SessionId::new("sess_a").unwrap();
    let t = TurnId::new("turn_1").unwrap();
    log.append(&s, vec![submitted(&t)]).unwrap();
    let mut sub = log.subscribe(&s, 0);
    assert_eq!(sub.next().await.unwrap().sequence, 1); // now live
                                                       // Far more than the live buffer, never read meanwhile: appends must not wait.
    let n = SUBSCRIBER_BUFFER * 3;
    for i in 0..n {
        log.append(&s, vec![delta(&t, &i.to_string())]).unwrap();
    }
    let mut expected = 2;
    while expected <= n as u64 + 1 {
        assert_eq!(sub.next().await.unwrap().sequence, expected);
        expected += 1;
    }
    assert!(sub.try_next().unwrap().is_none());
}

#[test]
fn load_100_sessions_x_200_events_concurrently() {
    let tmp = tempfile::tempdir().unwrap();
    let log = Arc::new(open(tmp.path()));
    let threads: Vec<_> = (0..100)
        .map(|i| {
            let log = log.clone();
            std::thread::spawn(move || {
                let s = SessionId::new(format!("sess_{i}")).unwrap();
                let t = TurnId::new(format!("turn_{i}")).unwrap();
                log.append(&s, vec![submitted(&t)]).unwrap();
                // 199 more events in batches of 1..=4
                let mut left = 199;
                let mut k = 0;
                while left > 0 {
                    let b = (k % 4 + 1).min(left);
                    log.append(&s, (0..b).map(|j| delta(&t, &format!("{k}.{j}"))).collect())
                        .unwrap();
                    left -= b;
                    k += 1;
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let sessions = log.sessions().unwrap();
    assert_eq!(sessions.len(), 100);
    let mut ids = HashSet::new();
    for (s, last) in sessions {
        assert_eq!(last, 200);
        let events = log.read_all(&s).unwrap();
        assert_eq!(
            events.iter().map(|e| e.sequence).collect::<Vec<_>>(),
            (1..=200).collect::<Vec<_>>(),
            "{s}"
        );
        for e in events {
            assert!(ids.insert(e.event_id.clone()), "duplicate event id");
        }
    }
    assert_eq!(ids.len(), 20_000);
}
