//! App agent tasks (`agent_task`): the `lime.agent-task-event.v1` projection of runtime facts,
//! durable per-app idempotency keys, resumable event reads, app isolation.

use std::sync::Arc;
use std::time::Duration;

use runtime_core::agent_task::projection::{mapping, Mapping};
use runtime_core::agent_task::{AgentTaskError, AgentTasks, Response, StartTask};
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
        t.respond(&two, &task, &action, Response::Approve),
        Err(AgentTaskError::NotFound)
    ));
    assert!(t.list(&two, None, 10).unwrap().0.is_empty());
    assert_eq!(t.get(&one, &task).unwrap()["status"], "waiting_approval");
    assert_eq!(
        t.get(&one, &task).unwrap()["pendingActions"][0]["actionId"],
        action.as_str()
    );
    // The owner approves; the tool runs and the task ends.
    t.respond(&one, &task, &action, Response::Approve).unwrap();
    let events = until_results(&t, &one, &task, 1).await;
    assert!(events
        .iter()
        .any(|e| e["type"] == "tool:call" && e["subtype"] == "result"));
    assert_eq!(events.last().unwrap()["subtype"], "success");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("apps/one/a.txt")).unwrap(),
        "x"
    );
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
    t.respond(&a, &task, &action, Response::Reject).unwrap();
    let events = until_results(&t, &a, &task, 1).await;
    assert!(events
        .iter()
        .any(|e| e["type"] == "tool:call" && e["subtype"] == "failed"));
    assert!(!tmp.path().join("apps/one/a.txt").exists());
    // Answering again: nothing pending.
    assert!(matches!(
        t.respond(&a, &task, &action, Response::Approve),
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
        t.respond(&a, &task, &action, Response::Answer(json!("not an object"))),
        Err(AgentTaskError::Invalid(_))
    ));
    t.respond(
        &a,
        &task,
        &action,
        Response::Answer(json!({"path": "a.txt", "content": "user's"})),
    )
    .unwrap();
    let events = until_results(&t, &a, &task, 1).await;
    assert!(events.iter().any(|e| e["type"] == "tool:call"
        && e["subtype"] == "args"
        && e["payload"]["arguments"]["content"] == "user's"));
    assert_eq!(events.last().unwrap()["subtype"], "success");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("apps/one/a.txt")).unwrap(),
        "user's"
    );
}
