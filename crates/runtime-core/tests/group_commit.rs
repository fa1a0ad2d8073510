//! Group commit: streamed deltas are published from memory at once and made durable in
//! batches; everything else is durable before it is published; a crash loses at most
//! unflushed deltas, whose sequences are never reused, and the log declares the gap.

use std::sync::Arc;
use std::time::{Duration, Instant};

use runtime_core::clock::SystemClock;
use runtime_core::event::*;
use runtime_core::ids::*;
use runtime_core::log::{EventLog, GroupCommit, RESERVATION_BLOCK};

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

fn completed(turn: &TurnId) -> EventDraft {
    EventDraft::new(
        Scope::turn(&thread(), turn),
        EventBody::TurnCompleted(EventType::TurnCompleted, Default::default()),
    )
}

/// A group commit that never flushes on its own (the test decides when).
const MANUAL: GroupCommit = GroupCommit {
    max_delay: Duration::from_secs(3600),
    max_events: 1_000_000,
};

fn open(dir: &std::path::Path, group: GroupCommit) -> EventLog {
    EventLog::open_with(&dir.join("events.db"), Arc::new(SystemClock), group).unwrap()
}

/// The rows actually in the database (a fresh connection, as after a crash).
fn durable_sequences(dir: &std::path::Path, s: &SessionId) -> Vec<u64> {
    let conn = rusqlite::Connection::open(dir.join("events.db")).unwrap();
    let mut st = conn
        .prepare("SELECT sequence FROM events WHERE session_id = ?1 ORDER BY sequence")
        .unwrap();
    st.query_map([s.as_str()], |r| r.get::<_, i64>(0))
        .unwrap()
        .map(|r| r.unwrap() as u64)
        .collect()
}

#[tokio::test]
async fn deltas_are_published_before_they_are_durable_and_boundaries_are_not() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), MANUAL);
    let s = SessionId::new("sess_g").unwrap();
    let t = TurnId::new("turn_1").unwrap();
    log.append(&s, vec![submitted(&t)]).unwrap();
    let mut sub = log.subscribe(&s, 1);
    let d = log.append(&s, vec![delta(&t, "a")]).unwrap();
    assert_eq!(d[0].sequence, 2);
    // Published (live and to readers) but not yet in the database.
    assert_eq!(sub.try_next().unwrap().unwrap().event_id, d[0].event_id);
    assert_eq!(log.pending_count(), 1);
    assert_eq!(durable_sequences(tmp.path(), &s), vec![1]);
    assert_eq!(
        log.read_all(&s)
            .unwrap()
            .iter()
            .map(|e| e.sequence)
            .collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert_eq!(log.last_sequence(&s).unwrap(), 2);
    // A turn boundary is durable when append returns, and carries the pending delta with it.
    let c = log.append(&s, vec![completed(&t)]).unwrap();
    assert_eq!(c[0].sequence, 3);
    assert_eq!(log.pending_count(), 0);
    assert_eq!(durable_sequences(tmp.path(), &s), vec![1, 2, 3]);
    assert_eq!(sub.try_next().unwrap().unwrap().sequence, 3);
}

#[test]
fn the_flusher_makes_deltas_durable_within_the_bounded_delay() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(
        tmp.path(),
        GroupCommit {
            max_delay: Duration::from_millis(20),
            max_events: 64,
        },
    );
    let s = SessionId::new("sess_f").unwrap();
    let t = TurnId::new("turn_1").unwrap();
    log.append(&s, vec![submitted(&t)]).unwrap();
    log.append(&s, vec![delta(&t, "a")]).unwrap();
    let t0 = Instant::now();
    while durable_sequences(tmp.path(), &s) != vec![1, 2] {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "the flusher never flushed"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    // A full batch is flushed without waiting for the delay.
    let tmp2 = tempfile::tempdir().unwrap();
    let slow = open(
        tmp2.path(),
        GroupCommit {
            max_delay: Duration::from_secs(3600),
            max_events: 8,
        },
    );
    slow.append(&s, vec![submitted(&t)]).unwrap();
    for i in 0..8 {
        slow.append(&s, vec![delta(&t, &i.to_string())]).unwrap();
    }
    let t0 = Instant::now();
    while slow.pending_count() > 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "full batch not flushed"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_clean_close_loses_nothing_and_declares_no_gap() {
    let tmp = tempfile::tempdir().unwrap();
    let s = SessionId::new("sess_c").unwrap();
    let t = TurnId::new("turn_1").unwrap();
    {
        let log = open(tmp.path(), MANUAL);
        log.append(&s, vec![submitted(&t)]).unwrap();
        for i in 0..5 {
            log.append(&s, vec![delta(&t, &i.to_string())]).unwrap();
        }
        assert_eq!(log.pending_count(), 5);
    }
    let log = open(tmp.path(), MANUAL);
    let all = log.read_all(&s).unwrap();
    assert_eq!(
        all.iter().map(|e| e.sequence).collect::<Vec<_>>(),
        (1..=6).collect::<Vec<_>>()
    );
    assert!(all.iter().all(|e| e.kind() != EventType::SnapshotRepaired));
}

#[tokio::test]
async fn a_crash_before_the_flush_never_reuses_a_published_sequence_and_declares_the_gap() {
    let tmp = tempfile::tempdir().unwrap();
    let s = SessionId::new("sess_x").unwrap();
    let t = TurnId::new("turn_1").unwrap();
    let published;
    {
        let log = open(tmp.path(), MANUAL);
        log.append(&s, vec![submitted(&t)]).unwrap();
        log.append(&s, vec![delta(&t, "kept")]).unwrap();
        log.flush().unwrap();
        let mut p = Vec::new();
        for i in 0..3 {
            p.extend(
                log.append(&s, vec![delta(&t, &format!("lost{i}"))])
                    .unwrap(),
            );
        }
        published = p;
        // A crash: the process dies with the deltas only in memory (no final flush).
        std::mem::forget(log);
    }
    assert_eq!(durable_sequences(tmp.path(), &s), vec![1, 2]);
    let log = open(tmp.path(), MANUAL);
    let all = log.read_all(&s).unwrap();
    let seqs: Vec<u64> = all.iter().map(|e| e.sequence).collect();
    let max_published = published.last().unwrap().sequence;
    assert_eq!(max_published, 5);
    // The log: the durable prefix, then one fact declaring the lost range, right after it.
    assert_eq!(seqs.len(), 3, "{seqs:?}");
    assert_eq!(&seqs[..2], &[1, 2]);
    let repaired = &all[2];
    assert_eq!(repaired.kind(), EventType::SnapshotRepaired);
    let EventBody::Snapshot(_, p) = &repaired.body else {
        panic!("{repaired:?}")
    };
    assert_eq!(p.lost_sequence_from, Some(3));
    assert_eq!(p.lost_sequence_through, Some(repaired.sequence - 1));
    assert!(
        repaired.sequence > max_published,
        "a published sequence reused"
    );
    assert!(repaired.sequence <= 2 + RESERVATION_BLOCK + 1);
    // Subscribers follow the log across the declared gap; new events go after it.
    let mut sub = log.subscribe(&s, 2);
    assert_eq!(sub.next().await.unwrap().event_id, repaired.event_id);
    let next = log.append(&s, vec![completed(&t)]).unwrap();
    assert_eq!(next[0].sequence, repaired.sequence + 1);
    assert_eq!(sub.next().await.unwrap().event_id, next[0].event_id);
    // Declared once: a clean reopen adds nothing.
    drop(sub);
    drop(log);
    let log = open(tmp.path(), MANUAL);
    assert_eq!(log.read_all(&s).unwrap().len(), 4);
}

#[tokio::test]
async fn a_subscriber_that_falls_behind_catches_up_through_pending_deltas() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), MANUAL);
    let s = SessionId::new("sess_l").unwrap();
    let t = TurnId::new("turn_1").unwrap();
    log.append(&s, vec![submitted(&t)]).unwrap();
    let mut sub = log.subscribe(&s, 0);
    assert_eq!(sub.next().await.unwrap().sequence, 1);
    // More than the live buffer, all of it pending: catch-up must read memory, not only the
    // database.
    let n = runtime_core::log::SUBSCRIBER_BUFFER + 50;
    for i in 0..n {
        log.append(&s, vec![delta(&t, &i.to_string())]).unwrap();
    }
    assert!(log.pending_count() >= n);
    for want in 2..=(n as u64 + 1) {
        assert_eq!(sub.next().await.unwrap().sequence, want);
    }
}

#[test]
fn a_crash_while_no_turn_streams_declares_no_loss() {
    // Durable facts outside a model stream reserve nothing ahead; a turn's end trims what a
    // stream reserved.
    let t = TurnId::new("turn_1").unwrap();
    let cases: [(&str, Vec<Vec<EventDraft>>); 2] = [
        ("sess_submitted", vec![vec![submitted(&t)]]),
        (
            "sess_ended",
            vec![
                vec![submitted(&t)],
                vec![delta(&t, "a")],
                vec![completed(&t)],
            ],
        ),
    ];
    for (name, batches) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let s = SessionId::new(name).unwrap();
        let n = batches.len() as u64;
        {
            let log = open(tmp.path(), MANUAL);
            for b in batches {
                log.append(&s, b).unwrap();
            }
            std::mem::forget(log); // a crash
        }
        let log = open(tmp.path(), MANUAL);
        let all = log.read_all(&s).unwrap();
        assert_eq!(
            all.iter().map(|e| e.sequence).collect::<Vec<_>>(),
            (1..=n).collect::<Vec<_>>(),
            "{name}"
        );
    }
}
