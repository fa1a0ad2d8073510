//! The Runtime API directly (what the host uses in-process).

use std::sync::Arc;
use std::time::Duration;

use runtime_core::backend::*;
use runtime_core::event::EventType;
use runtime_core::ids::*;
use runtime_core::runtime::{Runtime, RuntimeConfig, RuntimeError};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_submissions_of_one_turn_id_record_one_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.set_fallback(vec![
        ScriptStep::Sleep(Duration::from_millis(200)),
        ScriptStep::Emit(BackendEvent::Finished {
            reason: "stop".into(),
        }),
    ]);
    let rt = Runtime::open(
        RuntimeConfig::new(tmp.path()),
        Some(Arc::new(b) as Arc<dyn ExecutionBackend>),
    )
    .unwrap();
    let m = rt
        .start_session(AppId::new("demo").unwrap(), None, None)
        .unwrap();
    let sid = m.session.session_id.unwrap();
    let turn = TurnId::new("turn_same").unwrap();
    let handles: Vec<_> = (0..16)
        .map(|_| {
            let rt = rt.clone();
            let sid = sid.clone();
            let turn = turn.clone();
            std::thread::spawn(move || rt.start_turn(&sid, Some(turn), "x".into(), None, true))
        })
        .collect();
    let mut created = 0;
    for h in handles {
        let r = h.join().unwrap().unwrap();
        assert_eq!(r.turn.turn_id, turn);
        created += r.created as usize;
    }
    assert_eq!(created, 1);
    let events = rt.log().read_all(&sid).unwrap();
    assert_eq!(
        events
            .iter()
            .filter(|e| e.kind() == EventType::TurnSubmitted)
            .count(),
        1
    );
    assert!(
        events.iter().all(|e| e.kind() != EventType::QueueChanged),
        "the repeat was not queued"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_turn_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.set_fallback(vec![
        ScriptStep::Sleep(Duration::from_millis(300)),
        ScriptStep::Emit(BackendEvent::Finished {
            reason: "stop".into(),
        }),
    ]);
    let rt = Runtime::open(
        RuntimeConfig::new(tmp.path()),
        Some(Arc::new(b) as Arc<dyn ExecutionBackend>),
    )
    .unwrap();
    let sid = rt
        .start_session(AppId::new("demo").unwrap(), None, None)
        .unwrap()
        .session
        .session_id
        .unwrap();
    rt.start_turn(&sid, None, "first".into(), None, false)
        .unwrap();
    let before = rt.log().last_sequence(&sid).unwrap();
    let refused = TurnId::new("turn_refused").unwrap();
    assert!(matches!(
        rt.start_turn(&sid, Some(refused.clone()), "second".into(), None, false),
        Err(RuntimeError::TurnAlreadyActive(_))
    ));
    assert!(
        !rt.log()
            .turn_inputs(&sid)
            .unwrap()
            .contains_key(refused.as_str()),
        "no input recorded for a refused turn"
    );
    assert!(rt
        .log()
        .read_all(&sid)
        .unwrap()
        .iter()
        .all(|e| e.scope.turn_id.as_ref() != Some(&refused)));
    assert!(rt.log().last_sequence(&sid).unwrap() >= before);
    // Once idle, the same turn id is accepted.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(
        rt.start_turn(&sid, Some(refused), "second".into(), None, false)
            .unwrap()
            .created
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_runtime_owns_a_data_directory_at_a_time() {
    // A second opener (another process: the desktop and `apphost app-server` on one data
    // directory) would run crash recovery over the first one's live turns and race it for
    // sequence numbers: it is refused until the first one is gone.
    let dir = tempfile::tempdir().unwrap();
    let first = Runtime::open(RuntimeConfig::new(dir.path()), None).unwrap();
    match Runtime::open(RuntimeConfig::new(dir.path()), None) {
        Err(RuntimeError::Busy(d)) => assert!(d.contains(&dir.path().display().to_string())),
        Err(e) => panic!("expected Busy, got {e}"),
        Ok(_) => panic!("a second runtime opened the same directory"),
    }
    // Clones share the one lock; dropping the last handle releases it.
    let clone = first.clone();
    drop(first);
    assert!(matches!(
        Runtime::open(RuntimeConfig::new(dir.path()), None),
        Err(RuntimeError::Busy(_))
    ));
    drop(clone);
    let again = Runtime::open(RuntimeConfig::new(dir.path()), None);
    assert!(again.is_ok(), "the lock goes with the runtime");
}
