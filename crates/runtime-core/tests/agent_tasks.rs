//! App agent tasks (`agent_task`): the `lime.agent-task-event.v1` projection of runtime facts,
//! durable per-app idempotency keys, resumable event reads, app isolation.

use std::sync::Arc;
use std::time::Duration;

use runtime_core::agent_task::projection::{mapping, Mapping};
use runtime_core::agent_task::{
    AgentTaskError, AgentTasks, Responder, Response, SessionPolicy, StartTask, UserOnly,
};
use runtime_core::backend::*;
use runtime_core::event::EventType;
use runtime_core::ids::AppId;
use runtime_core::runtime::{Runtime, RuntimeConfig};
use serde_json::{json, Value};

fn schema() -> jsonschema::Validator {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../schemas/apphost/agent-task-event.schema.json");
    let s: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    jsonschema::options()
        .should_validate_formats(true)
        .build(&s)
        .unwrap()
}

fn open(dir: &std::path::Path, b: Option<ScriptedBackend>) -> AgentTasks {
    let rt = Runtime::open(
        RuntimeConfig::new(dir),
        b.map(|b| Arc::new(b) as Arc<dyn ExecutionBackend>),
    )
    .unwrap();
    AgentTasks::open(rt).unwrap()
}

fn app(n: &str) -> AppId {
    AppId::new(n).unwrap()
}

fn start(t: &AgentTasks, a: &AppId, input: &str) -> String {
    t.start(
        a,
        StartTask {
            input: input.into(),
            ..Default::default()
        },
    )
    .unwrap()
    .task_id
}

/// Every event of the task until `n` results, validated against the schema.
async fn until_results(t: &AgentTasks, a: &AppId, task: &str, n: usize) -> Vec<Value> {
    let v = schema();
    let mut out = Vec::new();
    let mut s = t.subscribe(a, task, 0).unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while out
        .iter()
        .filter(|e: &&Value| e["type"] == "result")
        .count()
        < n
    {
        let e = tokio::time::timeout_at(deadline, s.next())
            .await
            .expect("task events in time")
            .unwrap();
        let j = serde_json::to_value(&e).unwrap();
        if let Err(err) = v.validate(&j) {
            panic!("{j} does not validate: {err}");
        }
        out.push(j);
    }
    out
}

#[test]
fn every_runtime_event_type_is_mapped_or_explicitly_dropped() {
    assert_eq!(EventType::ALL.len(), 120);
    let mut produced = std::collections::BTreeSet::new();
    let mut dropped = 0;
    for t in EventType::ALL {
        match mapping(*t) {
            Mapping::To(kind, _) => {
                produced.insert(kind);
            }
            Mapping::Result => {
                produced.insert("result");
            }
            Mapping::Dropped(reason) => {
                assert!(!reason.is_empty());
                dropped += 1;
            }
        }
    }
    // Only a run's terminal facts become `result`; each run has exactly one of them.
    let results: Vec<_> = EventType::ALL
        .iter()
        .filter(|t| mapping(**t) == Mapping::Result)
        .collect();
    assert_eq!(results, [&EventType::TurnCompleted, &EventType::TurnFailed]);
    for kind in [
        "system:init",
        "system:compact_boundary",
        "task:queued",
        "task:progress",
        "assistant:delta",
        "tool:call",
        "approval:requested",
        "artifact:created",
        "evidence:recorded",
        "result",
    ] {
        assert!(produced.contains(kind), "{kind} is never produced");
    }
    assert!(dropped > 0 && dropped < 120);
    assert_eq!(
        mapping(EventType::ActionRequired),
        Mapping::To("approval:requested", None)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_streams_deltas_in_order_and_ends_with_one_result() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.push_text(&["Hel", "lo ", "world"]);
    let t = open(tmp.path(), Some(b));
    let a = app("demo");
    let started = t
        .start(
            &a,
            StartTask {
                input: "say hello".into(),
                ..Default::default()
            },
        )
        .unwrap();
    assert!(started.created);
    assert!(!started.trace_id.is_empty() && !started.session_id.is_empty());
    let events = until_results(&t, &a, &started.task_id, 1).await;
    assert_eq!(events[0]["type"], "system:init");
    assert!(events.iter().any(|e| e["type"] == "task:queued"));
    let seqs: Vec<u64> = events
        .iter()
        .map(|e| e["sequence"].as_u64().unwrap())
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "monotonic: {seqs:?}");
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "assistant:delta")
        .map(|e| e["payload"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Hello world");
    let results: Vec<_> = events.iter().filter(|e| e["type"] == "result").collect();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["subtype"], "success");
    assert!(events
        .iter()
        .all(|e| e["taskId"] == started.task_id.as_str()
            && e["appId"] == "demo"
            && e["traceId"] == started.trace_id.as_str()));
    let view = t.get(&a, &started.task_id).unwrap();
    assert_eq!(view["status"], "succeeded");
    assert_eq!(view["result"]["text"], "Hello world");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_from_any_sequence_loses_and_duplicates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.push_text(&["a", "b", "c", "d"]);
    let t = open(tmp.path(), Some(b));
    let a = app("demo");
    let task = start(&t, &a, "x");
    let all = until_results(&t, &a, &task, 1).await;
    let (paged, _) = t.events(&a, &task, 0, 1000).unwrap();
    let paged: Vec<Value> = paged
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert_eq!(paged, all, "a read and a subscription agree");
    for (i, e) in all.iter().enumerate() {
        let after = e["sequence"].as_u64().unwrap();
        // Small pages, to cross page boundaries.
        let mut got = Vec::new();
        let mut pos = after;
        loop {
            let (page, next) = t.events(&a, &task, pos, 2).unwrap();
            if page.is_empty() {
                break;
            }
            got.extend(page.iter().map(|e| serde_json::to_value(e).unwrap()));
            pos = next;
        }
        assert_eq!(got, all[i + 1..], "resume after {after}");
        let mut s = t.subscribe(&a, &task, after).unwrap();
        let mut live = Vec::new();
        while let Some(e) = s.try_next().unwrap() {
            live.push(serde_json::to_value(&e).unwrap());
        }
        assert_eq!(live, all[i + 1..], "subscribe after {after}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotency_keys_are_durable_and_per_app() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.set_fallback(vec![ScriptStep::Emit(BackendEvent::Finished {
        reason: "stop".into(),
    })]);
    let (first, other_app) = {
        let t = open(tmp.path(), Some(b.clone()));
        let req = || StartTask {
            input: "x".into(),
            idempotency_key: Some("order-17".into()),
            ..Default::default()
        };
        let first = t.start(&app("one"), req()).unwrap();
        let again = t.start(&app("one"), req()).unwrap();
        assert!(first.created && !again.created);
        assert_eq!(first, TaskStartedEq::with_created(&again, true));
        let other = t.start(&app("two"), req()).unwrap();
        assert!(other.created);
        assert_ne!(other.task_id, first.task_id);
        until_results(&t, &app("one"), &first.task_id, 1).await;
        (first, other)
    };
    // After a restart, the same key still names the same task (one run, not two).
    let t = open(tmp.path(), Some(b));
    let again = t
        .start(
            &app("one"),
            StartTask {
                input: "x".into(),
                idempotency_key: Some("order-17".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(again.task_id, first.task_id);
    assert!(!again.created);
    assert_eq!(
        t.get(&app("one"), &first.task_id).unwrap()["runs"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(t.list(&app("two"), None, 10).unwrap().0.len(), 1);
    assert_eq!(
        t.list(&app("two"), None, 10).unwrap().0[0]["taskId"],
        other_app.task_id.as_str()
    );
}

struct TaskStartedEq;
impl TaskStartedEq {
    fn with_created(
        s: &runtime_core::agent_task::TaskStarted,
        created: bool,
    ) -> runtime_core::agent_task::TaskStarted {
        runtime_core::agent_task::TaskStarted {
            created,
            ..s.clone()
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_app_can_neither_read_nor_cancel_nor_answer_a_task() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.push_tool_call("c1", "storage_write", r#"{"path":"a.txt","content":"x"}"#);
    b.push_text(&["done"]);
    let t = open(tmp.path(), Some(b));
    let (one, two) = (app("one"), app("two"));
    let task = start(&t, &one, "write");
    // Wait for the approval.
    let mut s = t.subscribe(&one, &task, 0).unwrap();
    let action = loop {
        let e = tokio::time::timeout(Duration::from_secs(10), s.next())
            .await
            .unwrap()
            .unwrap();
        if e.kind == "approval:requested" {
            break e.payload["actionId"].as_str().unwrap().to_owned();
        }
    };
    assert!(matches!(t.get(&two, &task), Err(AgentTaskError::NotFound)));
    assert!(matches!(
        t.cancel(&two, &task),
        Err(AgentTaskError::NotFound)
    ));
    assert!(matches!(
        t.retry(&two, &task),
        Err(AgentTaskError::NotFound)
    ));
    assert!(matches!(
        t.events(&two, &task, 0, 10),
        Err(AgentTaskError::NotFound)
    ));
    assert!(t.subscribe(&two, &task, 0).is_err());
    assert!(matches!(
        t.respond(&two, &task, &action, Response::Approve, Responder::User),
        Err(AgentTaskError::NotFound)
    ));
    assert!(t.list(&two, None, 10).unwrap().0.is_empty());
    assert_eq!(t.get(&one, &task).unwrap()["status"], "waiting_approval");
    assert_eq!(
        t.get(&one, &task).unwrap()["pendingActions"][0]["actionId"],
        action.as_str()
    );
    // The owner approves; the tool runs and the task ends.
    t.respond(&one, &task, &action, Response::Approve, Responder::User)
        .unwrap();
    let events = until_results(&t, &one, &task, 1).await;
    assert!(events
        .iter()
        .any(|e| e["type"] == "tool:call" && e["subtype"] == "result"));
    assert_eq!(events.last().unwrap()["subtype"], "success");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("apps/one/files/a.txt")).unwrap(),
        "x"
    );
}

/// Approval belongs to the user (ARCHITECTURE.md): the app that owns the task may reject a risky
/// tool's confirmation, never approve it (once or for the session) nor run it with its own input;
/// a refused answer leaves the action pending and the tool not run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_may_reject_a_risky_call_but_only_the_user_approves_it() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.push_tool_call("c1", "storage_write", r#"{"path":"a.txt","content":"x"}"#);
    b.push_text(&["written"]);
    let t = open(tmp.path(), Some(b));
    let a = app("one");
    let task = start(&t, &a, "write");
    let mut s = t.subscribe(&a, &task, 0).unwrap();
    let action = loop {
        let e = tokio::time::timeout(Duration::from_secs(10), s.next())
            .await
            .unwrap()
            .unwrap();
        if e.kind == "approval:requested" {
            break e.payload["actionId"].as_str().unwrap().to_owned();
        }
    };
    let pending = t.pending_action(&a, &task, &action).unwrap();
    assert_eq!(pending.action_type.as_deref(), Some("tool_confirmation"));
    assert!(runtime_core::agent_task::approval::user_only(&pending));
    for (response, why) in [
        (Response::Approve, UserOnly::Approval),
        (Response::ApproveForSession, UserOnly::Approval),
        (
            Response::Answer(json!({"path": "evil.txt", "content": "app's"})),
            UserOnly::UpdatedInput,
        ),
    ] {
        let refused = t.respond(&a, &task, &action, response, Responder::App);
        assert!(
            matches!(&refused, Err(AgentTaskError::UserOnly(w)) if *w == why),
            "{refused:?}"
        );
        assert_eq!(refused.unwrap_err().code(), why.code());
    }
    let view = t.get(&a, &task).unwrap();
    assert_eq!(view["status"], "waiting_approval", "{view}");
    assert_eq!(view["pendingActions"][0]["actionId"], action.as_str());
    assert!(!tmp.path().join("apps/one/a.txt").exists());
    assert!(!tmp.path().join("apps/one/evil.txt").exists());
    // The user approves: the model's input runs.
    t.respond(&a, &task, &action, Response::Approve, Responder::User)
        .unwrap();
    until_results(&t, &a, &task, 1).await;
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("apps/one/a.txt")).unwrap(),
        "x"
    );
    assert!(!tmp.path().join("apps/one/evil.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_tool_call_does_not_run() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.push_tool_call("c1", "storage_write", r#"{"path":"a.txt","content":"x"}"#);
    b.push_text(&["ok, not written"]);
    let t = open(tmp.path(), Some(b));
    let a = app("one");
    let task = start(&t, &a, "write");
    let mut s = t.subscribe(&a, &task, 0).unwrap();
    let action = loop {
        let e = tokio::time::timeout(Duration::from_secs(10), s.next())
            .await
            .unwrap()
            .unwrap();
        if e.kind == "approval:requested" {
            break e.payload["actionId"].as_str().unwrap().to_owned();
        }
    };
    // The app itself may reject.
    t.respond(&a, &task, &action, Response::Reject, Responder::App)
        .unwrap();
    let events = until_results(&t, &a, &task, 1).await;
    assert!(events
        .iter()
        .any(|e| e["type"] == "tool:call" && e["subtype"] == "failed"));
    assert!(!tmp.path().join("apps/one/files/a.txt").exists());
    // Answering again: nothing pending.
    assert!(matches!(
        t.respond(&a, &task, &action, Response::Approve, Responder::User),
        Err(AgentTaskError::ActionNotFound(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_stream_ends_cancelled_and_retry_starts_a_new_run() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.push(vec![
        ScriptStep::Emit(BackendEvent::TextDelta("partial".into())),
        ScriptStep::Sleep(Duration::from_secs(30)),
        ScriptStep::Emit(BackendEvent::Finished {
            reason: "stop".into(),
        }),
    ]);
    b.push_text(&["second run"]);
    let t = open(tmp.path(), Some(b));
    let a = app("one");
    let task = start(&t, &a, "x");
    let mut s = t.subscribe(&a, &task, 0).unwrap();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(10), s.next())
            .await
            .unwrap()
            .unwrap();
        if e.kind == "assistant:delta" {
            break;
        }
    }
    assert!(matches!(t.retry(&a, &task), Err(AgentTaskError::Busy)));
    t.cancel(&a, &task).unwrap();
    let events = until_results(&t, &a, &task, 1).await;
    assert_eq!(events.last().unwrap()["subtype"], "cancelled");
    let view = t.retry(&a, &task).unwrap();
    assert_eq!(view["runs"].as_array().unwrap().len(), 2);
    let events = until_results(&t, &a, &task, 2).await;
    let results: Vec<&Value> = events.iter().filter(|e| e["type"] == "result").collect();
    assert_eq!(results[1]["subtype"], "success");
    assert_ne!(
        results[0]["turnId"], results[1]["turnId"],
        "a retry is a new run"
    );
    assert_eq!(
        events.iter().filter(|e| e["type"] == "task:queued").count(),
        2,
        "each run is queued once"
    );
    assert_eq!(t.get(&a, &task).unwrap()["result"]["text"], "second run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_output_is_validated_then_retried_then_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.push_text(&["not json"]);
    b.push_text(&[r#"{"label":"bug"}"#]);
    b.set_fallback(vec![
        ScriptStep::Emit(BackendEvent::TextDelta(r#"{"wrong":1}"#.into())),
        ScriptStep::Emit(BackendEvent::Finished {
            reason: "stop".into(),
        }),
    ]);
    let t = open(tmp.path(), Some(b));
    let a = app("one");
    let schema = json!({"type":"object","required":["label"],"properties":{"label":{"enum":["bug","feature"]}}});
    let req = || StartTask {
        input: "triage".into(),
        output_schema: Some(schema.clone()),
        ..Default::default()
    };
    let ok = t.start(&a, req()).unwrap().task_id;
    let events = until_results(&t, &a, &ok, 1).await;
    assert_eq!(events.last().unwrap()["subtype"], "success");
    assert!(events
        .iter()
        .any(|e| e["type"] == "task:progress" && e["subtype"] == "warning"));
    assert_eq!(
        t.get(&a, &ok).unwrap()["result"]["structuredOutput"],
        json!({"label":"bug"})
    );
    let bad = t.start(&a, req()).unwrap().task_id;
    let events = until_results(&t, &a, &bad, 1).await;
    assert_eq!(
        events.last().unwrap()["subtype"],
        "error_max_structured_output_retries"
    );
    assert_eq!(
        t.get(&a, &bad).unwrap()["result"]["structuredOutput"],
        Value::Null
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_start_fails_needs_setup_and_records_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let t = open(tmp.path(), None);
    assert_eq!(t.status(), "needs-setup");
    let a = app("one");
    let r = t.start(
        &a,
        StartTask {
            input: "x".into(),
            idempotency_key: Some("k".into()),
            ..Default::default()
        },
    );
    assert!(matches!(r, Err(AgentTaskError::NeedsSetup)));
    assert!(t.list(&a, None, 10).unwrap().0.is_empty());
    assert!(t.runtime().log().sessions().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_refused_before_anything_is_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let t = open(tmp.path(), Some(ScriptedBackend::new()));
    let a = app("one");
    for req in [
        StartTask {
            input: "x".repeat(256 * 1024 + 1),
            ..Default::default()
        },
        StartTask {
            input: "x".into(),
            idempotency_key: Some(String::new()),
            ..Default::default()
        },
        StartTask {
            input: "x".into(),
            idempotency_key: Some("k".repeat(201)),
            ..Default::default()
        },
        StartTask {
            input: "x".into(),
            output_schema: Some(json!({"type": 12})),
            ..Default::default()
        },
    ] {
        assert!(matches!(t.start(&a, req), Err(AgentTaskError::Invalid(_))));
    }
    assert!(t.list(&a, None, 10).unwrap().0.is_empty());
    assert!(t.runtime().log().sessions().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_with_updated_input_runs_the_tool_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.push_tool_call(
        "c1",
        "storage_write",
        r#"{"path":"a.txt","content":"model's"}"#,
    );
    b.push_text(&["written"]);
    let t = open(tmp.path(), Some(b));
    let a = app("one");
    let task = start(&t, &a, "write");
    let mut s = t.subscribe(&a, &task, 0).unwrap();
    let action = loop {
        let e = tokio::time::timeout(Duration::from_secs(10), s.next())
            .await
            .unwrap()
            .unwrap();
        if e.kind == "approval:requested" {
            break e.payload["actionId"].as_str().unwrap().to_owned();
        }
    };
    assert!(matches!(
        t.respond(
            &a,
            &task,
            &action,
            Response::Answer(json!("not an object")),
            Responder::User
        ),
        Err(AgentTaskError::Invalid(_))
    ));
    t.respond(
        &a,
        &task,
        &action,
        Response::Answer(json!({"path": "a.txt", "content": "user's"})),
        Responder::User,
    )
    .unwrap();
    let events = until_results(&t, &a, &task, 1).await;
    assert!(events.iter().any(|e| e["type"] == "tool:call"
        && e["subtype"] == "args"
        && e["payload"]["arguments"]["content"] == "user's"));
    assert_eq!(events.last().unwrap()["subtype"], "success");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("apps/one/files/a.txt")).unwrap(),
        "user's"
    );
}

fn start_in(
    t: &AgentTasks,
    a: &AppId,
    input: &str,
    session: SessionPolicy,
) -> Result<String, AgentTaskError> {
    t.start(
        a,
        StartTask {
            input: input.into(),
            session,
            ..Default::default()
        },
    )
    .map(|s| s.task_id)
}

/// The user messages of a model request, in order.
fn user_turns(r: &ModelRequest) -> Vec<String> {
    r.messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::User { content } => Some(content.clone()),
            _ => None,
        })
        .collect()
}

fn assistant_turns(r: &ModelRequest) -> Vec<String> {
    r.messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Assistant { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_by_task_id_runs_a_new_task_in_the_earlier_conversation() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.push_text(&["first ", "answer"]);
    b.push_text(&["second answer"]);
    let t = open(tmp.path(), Some(b.clone()));
    let a = app("demo");
    let ta = start(&t, &a, "question one");
    let ea = until_results(&t, &a, &ta, 1).await;
    let tb = start_in(
        &t,
        &a,
        "question two",
        SessionPolicy::ResumeTask(ta.clone()),
    )
    .unwrap();
    assert_ne!(ta, tb);
    let eb = until_results(&t, &a, &tb, 1).await;
    // The second run's model request carries the first conversation, then the new input.
    let reqs = b.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(user_turns(&reqs[1]), ["question one", "question two"]);
    assert_eq!(assistant_turns(&reqs[1]), ["first answer"]);
    assert_eq!(user_turns(&reqs[0]), ["question one"]);
    // One session, two tasks; each task's events are its own run's only.
    let (va, vb) = (t.get(&a, &ta).unwrap(), t.get(&a, &tb).unwrap());
    assert_eq!(va["sessionId"], vb["sessionId"]);
    assert_eq!(vb["result"]["text"], "second answer");
    assert_eq!(va["result"]["text"], "first answer");
    let turn = |v: &Value| v["runs"][0]["turnId"].as_str().unwrap().to_owned();
    let (turn_a, turn_b) = (turn(&va), turn(&vb));
    assert!(ea.iter().all(|e| e["taskId"] == ta.as_str()
        && (e["turnId"] == turn_a.as_str() || e.get("turnId").is_none())));
    assert!(eb
        .iter()
        .all(|e| e["taskId"] == tb.as_str() && e["turnId"] == turn_b.as_str()));
    assert_eq!(
        ea[0]["type"], "system:init",
        "the creator keeps the session's facts"
    );
    assert_ne!(eb[0]["type"], "system:init");
    assert_eq!(eb.iter().filter(|e| e["type"] == "result").count(), 1);
    let seqs = |es: &[Value]| {
        es.iter()
            .map(|e| e["sequence"].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    assert!(seqs(&eb).windows(2).all(|w| w[0] < w[1]));
    assert!(seqs(&eb)[0] > *seqs(&ea).last().unwrap());
    // A's reads after B ran still end at A's own result.
    let (again_a, _) = t.events(&a, &ta, 0, 1000).unwrap();
    assert_eq!(
        again_a
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect::<Vec<_>>(),
        ea
    );
    // Resume-from-sequence for B is lossless, paged and live, from any point (even one of A's).
    let mut points: Vec<u64> = vec![0];
    points.extend(seqs(&ea));
    points.extend(seqs(&eb));
    for after in points {
        let want: Vec<Value> = eb
            .iter()
            .filter(|e| e["sequence"].as_u64().unwrap() > after)
            .cloned()
            .collect();
        let mut got = Vec::new();
        let mut pos = after;
        loop {
            let (page, next) = t.events(&a, &tb, pos, 2).unwrap();
            if page.is_empty() {
                break;
            }
            got.extend(page.iter().map(|e| serde_json::to_value(e).unwrap()));
            pos = next;
        }
        assert_eq!(got, want, "paged after {after}");
        let mut s = t.subscribe(&a, &tb, after).unwrap();
        let mut live = Vec::new();
        while let Some(e) = s.try_next().unwrap() {
            live.push(serde_json::to_value(&e).unwrap());
        }
        assert_eq!(live, want, "live after {after}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_by_business_ref_shares_one_session_per_app_and_ref() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.push_text(&["one"]);
    b.push_text(&["two"]);
    b.push_text(&["other app"]);
    let t = open(tmp.path(), Some(b.clone()));
    let (a, other) = (app("demo"), app("other"));
    let r = || SessionPolicy::ResumeRef("order-17".into());
    let t1 = start_in(&t, &a, "first", r()).unwrap();
    let e1 = until_results(&t, &a, &t1, 1).await;
    assert_eq!(
        e1[0]["type"], "system:init",
        "the first task with a ref creates the session"
    );
    let t2 = start_in(&t, &a, "second", r()).unwrap();
    let e2 = until_results(&t, &a, &t2, 1).await;
    assert_eq!(
        t.get(&a, &t1).unwrap()["sessionId"],
        t.get(&a, &t2).unwrap()["sessionId"]
    );
    assert!(e2.iter().all(|e| e["type"] != "system:init"));
    assert_eq!(user_turns(&b.requests()[1]), ["first", "second"]);
    // Another app's same ref is its own (new) session: it sees nothing of this one.
    let t3 = start_in(&t, &other, "third", r()).unwrap();
    let e3 = until_results(&t, &other, &t3, 1).await;
    assert_eq!(e3[0]["type"], "system:init");
    assert_ne!(
        t.get(&other, &t3).unwrap()["sessionId"],
        t.get(&a, &t1).unwrap()["sessionId"]
    );
    assert_eq!(user_turns(&b.requests()[2]), ["third"]);
    // Another app's task id is not found, exactly like a missing one; nothing is recorded.
    for (app_, id) in [(&other, t1.as_str()), (&a, "task_missing"), (&a, "")] {
        assert!(matches!(
            start_in(&t, app_, "x", SessionPolicy::ResumeTask(id.into())),
            Err(AgentTaskError::NotFound)
        ));
    }
    for bad in ["", "a\nb", &"x".repeat(201)] {
        assert!(matches!(
            start_in(&t, &a, "x", SessionPolicy::ResumeRef(bad.to_owned())),
            Err(AgentTaskError::Invalid(_))
        ));
    }
    assert_eq!(t.list(&a, None, 10).unwrap().0.len(), 2);
    assert_eq!(t.list(&other, None, 10).unwrap().0.len(), 1);
    // The shared session survives a restart: the next resume still sees both turns.
    drop(t);
    b.push_text(&["after restart"]);
    let t = open(tmp.path(), Some(b.clone()));
    let t4 = start_in(&t, &a, "fourth", r()).unwrap();
    until_results(&t, &a, &t4, 1).await;
    assert_eq!(
        user_turns(b.requests().last().unwrap()),
        ["first", "second", "fourth"]
    );
    // Uninstall purge removes the app's refs with its tasks: the ref then starts afresh.
    drop(t);
    let purged = runtime_core::agent_task::store::purge_app(tmp.path(), "demo").unwrap();
    assert_eq!(purged.tasks, 3);
    b.push_text(&["fresh"]);
    let t = open(tmp.path(), Some(b.clone()));
    let t5 = start_in(&t, &a, "fifth", r()).unwrap();
    let e5 = until_results(&t, &a, &t5, 1).await;
    assert_eq!(e5[0]["type"], "system:init");
    assert_eq!(user_turns(b.requests().last().unwrap()), ["fifth"]);
    assert_eq!(t.list(&other, None, 10).unwrap().0.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_session_is_refused_not_queued() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.push_tool_call("c1", "storage_write", r#"{"path":"a.txt","content":"x"}"#);
    b.push_text(&["done"]);
    b.push_text(&["b done"]);
    let t = open(tmp.path(), Some(b.clone()));
    let a = app("demo");
    let ta = start_in(&t, &a, "write", SessionPolicy::ResumeRef("doc-1".into())).unwrap();
    let mut s = t.subscribe(&a, &ta, 0).unwrap();
    let action = loop {
        let e = tokio::time::timeout(Duration::from_secs(10), s.next())
            .await
            .unwrap()
            .unwrap();
        if e.kind == "approval:requested" {
            break e.payload["actionId"].as_str().unwrap().to_owned();
        }
    };
    // A's turn waits for approval: neither its id nor its ref may start a turn in the session.
    for p in [
        SessionPolicy::ResumeTask(ta.clone()),
        SessionPolicy::ResumeRef("doc-1".into()),
    ] {
        let e = start_in(&t, &a, "more", p).unwrap_err();
        assert!(matches!(e, AgentTaskError::SessionBusy), "{e:?}");
        assert_eq!(e.code(), "session_busy");
    }
    assert_eq!(
        t.list(&a, None, 10).unwrap().0.len(),
        1,
        "nothing was recorded"
    );
    // An idempotency key of an existing task still answers that task, busy or not.
    t.respond(&a, &ta, &action, Response::Approve, Responder::User)
        .unwrap();
    until_results(&t, &a, &ta, 1).await;
    let started = t
        .start(
            &a,
            StartTask {
                input: "b".into(),
                idempotency_key: Some("k".into()),
                session: SessionPolicy::ResumeTask(ta.clone()),
                ..Default::default()
            },
        )
        .unwrap();
    let tb = started.task_id.clone();
    let again = t
        .start(
            &a,
            StartTask {
                input: "b".into(),
                idempotency_key: Some("k".into()),
                session: SessionPolicy::ResumeTask(ta.clone()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(again.task_id, tb);
    assert!(started.created && !again.created);
    until_results(&t, &a, &tb, 1).await;
    assert_eq!(b.requests().len(), 3, "the key started one run, not two");
    // Retrying A while B's run is active in the shared session: refused too.
    b.push(vec![ScriptStep::Sleep(Duration::from_secs(30))]);
    t.retry(&a, &tb).unwrap();
    let e = t.retry(&a, &ta).unwrap_err();
    assert!(matches!(e, AgentTaskError::SessionBusy), "{e:?}");
    t.cancel(&a, &tb).unwrap();
    let ended = until_results(&t, &a, &tb, 2).await;
    assert_eq!(ended.last().unwrap()["subtype"], "cancelled");
    // A's next run asks for approval in the shared session: only A can answer it.
    b.push_tool_call("c2", "storage_write", r#"{"path":"b.txt","content":"y"}"#);
    b.push_text(&["declined"]);
    let (_, seen) = t.events(&a, &ta, 0, 1000).unwrap();
    t.retry(&a, &ta).unwrap();
    let mut s = t.subscribe(&a, &ta, seen).unwrap();
    let action = loop {
        let e = tokio::time::timeout(Duration::from_secs(10), s.next())
            .await
            .unwrap()
            .unwrap();
        if e.kind == "approval:requested" {
            break e.payload["actionId"].as_str().unwrap().to_owned();
        }
    };
    assert!(matches!(
        t.respond(&a, &tb, &action, Response::Approve, Responder::User),
        Err(AgentTaskError::ActionNotFound(_))
    ));
    assert_eq!(t.get(&a, &tb).unwrap()["pendingActions"], json!([]));
    t.respond(&a, &ta, &action, Response::Reject, Responder::User)
        .unwrap();
    until_results(&t, &a, &ta, 2).await;
    assert!(!tmp.path().join("apps/demo/files/b.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_resumes_of_one_idle_session_start_exactly_one_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    b.push_text(&["first"]);
    b.set_fallback(vec![ScriptStep::Sleep(Duration::from_secs(30))]);
    let t = open(tmp.path(), Some(b.clone()));
    let a = app("demo");
    let first = start_in(&t, &a, "x", SessionPolicy::ResumeRef("doc".into())).unwrap();
    until_results(&t, &a, &first, 1).await;
    let outcomes: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let (t, a, first) = (&t, &a, &first);
                s.spawn(move || {
                    let p = if i % 2 == 0 {
                        SessionPolicy::ResumeRef("doc".into())
                    } else {
                        SessionPolicy::ResumeTask(first.clone())
                    };
                    start_in(t, a, "again", p)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let won: Vec<_> = outcomes.iter().filter_map(|o| o.as_ref().ok()).collect();
    assert_eq!(won.len(), 1, "{outcomes:?}");
    assert!(outcomes
        .iter()
        .filter_map(|o| o.as_ref().err())
        .all(|e| matches!(e, AgentTaskError::SessionBusy)));
    assert_eq!(t.list(&a, None, 10).unwrap().0.len(), 2);
    t.cancel(&a, won[0]).unwrap();
}
