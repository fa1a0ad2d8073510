//! `lime.agent.startTask`'s caps (attack review): tasks per app and in total, and the runtime's
//! session caps reached through tasks. A refusal is `task_limit` and records nothing.

use std::sync::Arc;

use runtime_core::agent_task::{AgentTaskError, AgentTasks, SessionPolicy, StartTask, TaskLimits};
use runtime_core::backend::*;
use runtime_core::ids::AppId;
use runtime_core::runtime::{Runtime, RuntimeConfig};
use runtime_core::session_cache::SessionLimits;

fn open(dir: &std::path::Path, sessions: SessionLimits, tasks: TaskLimits) -> AgentTasks {
    let b = ScriptedBackend::new();
    b.set_fallback(vec![ScriptStep::Emit(BackendEvent::Finished {
        reason: "stop".into(),
    })]);
    let mut cfg = RuntimeConfig::new(dir);
    cfg.sessions = sessions;
    let rt = Runtime::open(cfg, Some(Arc::new(b) as Arc<dyn ExecutionBackend>)).unwrap();
    AgentTasks::open(rt).unwrap().with_limits(tasks)
}

fn app(n: &str) -> AppId {
    AppId::new(n).unwrap()
}

fn task(input: &str, key: Option<&str>, session: SessionPolicy) -> StartTask {
    StartTask {
        input: input.into(),
        idempotency_key: key.map(str::to_owned),
        session,
        ..Default::default()
    }
}

fn count(t: &AgentTasks, a: &AppId) -> usize {
    t.list(a, None, 100).unwrap().0.len()
}

fn stored_sessions(t: &AgentTasks) -> usize {
    t.runtime().log().sessions().unwrap().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_past_the_per_app_and_total_caps_are_refused_and_nothing_is_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let t = open(
        tmp.path(),
        SessionLimits::default(),
        TaskLimits {
            per_app: 3,
            total: 5,
        },
    );
    let (a, b) = (app("alpha"), app("beta"));
    for i in 0..3 {
        let key = format!("k{i}");
        t.start(&a, task("hi", Some(&key), SessionPolicy::New))
            .unwrap();
    }
    // The attack: keep starting tasks. Past the cap: a stable code, nothing recorded.
    for _ in 0..10 {
        let e = t
            .start(&a, task("more", None, SessionPolicy::New))
            .unwrap_err();
        assert_eq!(e.code(), "task_limit");
        assert!(matches!(
            e,
            AgentTaskError::Limit {
                what: "task",
                scope: "app",
                limit: 3
            }
        ));
    }
    let e = t
        .start(
            &a,
            task("more", None, SessionPolicy::ResumeRef("order-1".into())),
        )
        .unwrap_err();
    assert_eq!(e.code(), "task_limit");
    assert_eq!(count(&t, &a), 3);
    assert_eq!(
        stored_sessions(&t),
        3,
        "no session was started for a refusal"
    );
    // An idempotent retry of an existing task is not a new task: still answered.
    let again = t
        .start(&a, task("hi", Some("k1"), SessionPolicy::New))
        .unwrap();
    assert!(!again.created);
    // Other apps have their own cap, under the total one.
    for _ in 0..2 {
        t.start(&b, task("hi", None, SessionPolicy::New)).unwrap();
    }
    let e = t
        .start(&b, task("hi", None, SessionPolicy::New))
        .unwrap_err();
    assert!(matches!(
        e,
        AgentTaskError::Limit {
            what: "task",
            scope: "workspace",
            limit: 5
        }
    ));
    assert_eq!(count(&t, &b), 2);
    assert_eq!(stored_sessions(&t), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_would_break_a_session_cap_is_refused_before_it_is_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let t = open(
        tmp.path(),
        SessionLimits {
            resident: 2,
            per_app: 2,
            total: 100,
        },
        TaskLimits::default(),
    );
    let a = app("alpha");
    for _ in 0..2 {
        t.start(&a, task("hi", None, SessionPolicy::New)).unwrap();
    }
    let e = t
        .start(&a, task("hi", None, SessionPolicy::New))
        .unwrap_err();
    assert_eq!(e.code(), "task_limit");
    assert!(matches!(
        e,
        AgentTaskError::Limit {
            what: "session",
            scope: "app",
            limit: 2
        }
    ));
    assert_eq!(count(&t, &a), 2, "no task row for the refusal");
    assert_eq!(stored_sessions(&t), 2);
}
