//! Tool arguments over `ARGS_INLINE_LIMIT` are kept once in `events.db`, behind a reference
//! (`log::args_ref`), and every reader that needs them resolves it.

mod support_schema;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use runtime_core::agent_task::{AgentTasks, Responder, Response, StartTask};
use runtime_core::backend::*;
use runtime_core::event::{EventBody, EventType};
use runtime_core::ids::{AppId, SessionId};
use runtime_core::log::{is_args_ref, LogError, ARGS_INLINE_LIMIT, ARGS_REF_KEY};
use runtime_core::runtime::{Runtime, RuntimeConfig};
use serde_json::{json, Value};
use support_schema::*;

const MIB: usize = 1024 * 1024;

fn open(dir: &Path, b: &ScriptedBackend) -> AgentTasks {
    let rt = Runtime::open(
        RuntimeConfig::new(dir),
        Some(Arc::new(b.clone()) as Arc<dyn ExecutionBackend>),
    )
    .unwrap();
    AgentTasks::open(rt).unwrap()
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

fn session_of(t: &AgentTasks, a: &AppId, task: &str) -> SessionId {
    SessionId::new(
        t.get(a, task).unwrap()["sessionId"]
            .as_str()
            .unwrap()
            .to_owned(),
    )
    .unwrap()
}

/// One model response calling `storage_write` once per argument object.
fn push_calls(b: &ScriptedBackend, calls: &[Value]) {
    let mut steps: Vec<ScriptStep> = calls
        .iter()
        .enumerate()
        .map(|(i, args)| {
            ScriptStep::Emit(BackendEvent::ToolCallDelta {
                index: i as u32,
                id: Some(format!("call_{i}")),
                name: Some("storage_write".into()),
                arguments_delta: args.to_string(),
            })
        })
        .collect();
    steps.push(ScriptStep::Emit(BackendEvent::Finished {
        reason: "tool_calls".into(),
    }));
    b.push(steps);
}

/// Waits until an approval other than `answered` is pending; its action id.
async fn approval_after(t: &AgentTasks, a: &AppId, task: &str, answered: &str) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let v = t.get(a, task).unwrap();
        if let Some(id) = v["pendingActions"][0]["actionId"].as_str() {
            if id != answered {
                return id.to_owned();
            }
        }
        assert!(tokio::time::Instant::now() < deadline, "no approval: {v}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn next_approval(t: &AgentTasks, a: &AppId, task: &str) -> String {
    approval_after(t, a, task, "").await
}

async fn until_status(t: &AgentTasks, a: &AppId, task: &str, status: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while t.get(a, task).unwrap()["status"] != status {
        assert!(
            tokio::time::Instant::now() < deadline,
            "task never {status}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The bytes of `events.db` once its WAL is checkpointed into it.
fn db_bytes(dir: &Path) -> u64 {
    let c = rusqlite_conn(dir);
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    std::fs::metadata(dir.join("events.db")).unwrap().len()
}

fn rusqlite_conn(dir: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(dir.join("events.db")).unwrap()
}

/// Every event that mentions arguments (`tool.args`, `action.required`): the arguments value.
fn mentioned_arguments(rt: &Runtime, s: &SessionId) -> Vec<Value> {
    rt.log()
        .read_all(s)
        .unwrap()
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::ToolArgs(_, p) => p.arguments,
            EventBody::ActionRequired(_, p) => p.arguments,
            _ => None,
        })
        .collect()
}

fn large_args(i: usize, bytes: usize) -> Value {
    // Keys out of alphabetical order and non-ASCII text: the round trip keeps both.
    json!({"path": format!("f{i}.txt"), "content": format!("{i}é{}", "x".repeat(bytes))})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_approved_calls_with_1_mib_arguments_store_each_argument_once() {
    // The attack review's reproduction: every event that mentions a call (its `tool.args` and
    // its `action.required`) carried the whole 1 MiB again.
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    let calls: Vec<Value> = (0..50).map(|i| large_args(i, MIB)).collect();
    push_calls(&b, &calls);
    b.push_text(&["all written"]);
    let t = open(tmp.path(), &b);
    let a = AppId::new("big").unwrap();
    let before = db_bytes(tmp.path());
    let task = start(&t, &a, "write fifty files");
    let mut action = String::new();
    for _ in 0..calls.len() {
        action = approval_after(&t, &a, &task, &action).await;
        t.respond(&a, &task, &action, Response::Approve, Responder::User).unwrap();
    }
    until_status(&t, &a, &task, "succeeded").await;
    let sid = session_of(&t, &a, &task);
    let rt = t.runtime().clone();
    let mentioned = mentioned_arguments(&rt, &sid);
    assert_eq!(mentioned.len(), 100, "two events mention each call");
    let grown = db_bytes(tmp.path()) - before;
    let stored = (calls.len() * MIB) as u64;
    assert!(grown >= stored, "the arguments are stored: {grown}");
    assert!(
        grown < stored + stored / 10,
        "events.db grew by {grown} bytes for {stored} bytes of arguments (once each)"
    );
    assert!(mentioned.iter().all(is_args_ref));
    // No event row carries the arguments inline.
    let widest: i64 = rusqlite_conn(tmp.path())
        .query_row("SELECT MAX(length(body)) FROM events", [], |r| r.get(0))
        .unwrap();
    assert!(widest < 4096, "widest event row: {widest} bytes");
    // The tools ran with exactly the model's arguments.
    for (i, args) in calls.iter().enumerate() {
        let written = std::fs::read_to_string(tmp.path().join(format!("apps/big/f{i}.txt")));
        assert_eq!(written.unwrap(), args["content"].as_str().unwrap());
    }
}

fn tokio_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn large_arguments_round_trip_through_approval_update_and_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    let a = AppId::new("demo").unwrap();
    let model_args = large_args(1, 3 * ARGS_INLINE_LIMIT);
    let updated = json!({"content": format!("user é {}", "y".repeat(2 * ARGS_INLINE_LIMIT)), "path": "u.txt"});
    let second = large_args(2, 2 * ARGS_INLINE_LIMIT);
    let before_restart = tokio_rt();
    let (sid, sid2, task2) = before_restart.block_on(async {
        push_calls(&b, std::slice::from_ref(&model_args));
        b.push_text(&["done"]);
        let t = open(tmp.path(), &b);
        let task = start(&t, &a, "write it");
        let action = next_approval(&t, &a, &task).await;
        // getTask shows the whole input of the approval, not the reference.
        let pending = &t.get(&a, &task).unwrap()["pendingActions"][0];
        assert_eq!(pending["input"], model_args);
        // The approver replaces the input (`updatedInput`) with other large arguments.
        t.respond(&a, &task, &action, Response::Answer(updated.clone()), Responder::User)
            .unwrap();
        until_status(&t, &a, &task, "succeeded").await;
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("apps/demo/u.txt")).unwrap(),
            updated["content"].as_str().unwrap()
        );
        assert!(!tmp.path().join("apps/demo/f1.txt").exists());
        // Task events carry the reference (bounded); it resolves to the exact values.
        let sid = session_of(&t, &a, &task);
        let (events, _) = t.events(&a, &task, 0, 1000).unwrap();
        let arg_events: Vec<&Value> = events
            .iter()
            .filter(|e| e.kind == "tool:call" && e.subtype.as_deref() == Some("args"))
            .map(|e| &e.payload["arguments"])
            .collect();
        assert_eq!(arg_events.len(), 2);
        assert!(arg_events.iter().all(|v| is_args_ref(v)));
        let log = t.runtime().log();
        assert_eq!(
            log.resolve_arguments(&sid, arg_events[0]).unwrap(),
            model_args
        );
        assert_eq!(log.resolve_arguments(&sid, arg_events[1]).unwrap(), updated);
        // Every emitted event validates against the Lime profile.
        let v = profile_event_validator();
        for e in log.read_all(&sid).unwrap() {
            assert_profile_valid(&v, &e.to_json());
        }
        // A second call is still waiting for approval when the runtime stops.
        push_calls(&b, std::slice::from_ref(&second));
        let task2 = start(&t, &a, "again");
        next_approval(&t, &a, &task2).await;
        (sid, session_of(&t, &a, &task2), task2)
    });
    // Stopping the tokio runtime drops the waiting turn (a process stop, as far as the
    // runtime can tell): the next open recovers it.
    before_restart.shutdown_timeout(Duration::from_secs(10));
    tokio_rt().block_on(async {
        let t = open(tmp.path(), &b);
        let log = t.runtime().log();
        assert_eq!(t.get(&a, &task2).unwrap()["status"], "failed");
        assert_eq!(t.get(&a, &task2).unwrap()["pendingActions"], json!([]));
        let refs = mentioned_arguments(t.runtime(), &sid2);
        assert_eq!(refs.len(), 2);
        for r in &refs {
            assert!(is_args_ref(r));
            assert_eq!(log.resolve_arguments(&sid2, r).unwrap(), second);
        }
        let first = mentioned_arguments(t.runtime(), &sid);
        assert_eq!(log.resolve_arguments(&sid, &first[0]).unwrap(), model_args);
        assert_eq!(log.resolve_arguments(&sid, &first[2]).unwrap(), updated);
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn references_resolve_only_for_their_session_and_refuse_forgery_and_tampering() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    let secret = large_args(7, 2 * ARGS_INLINE_LIMIT);
    push_calls(&b, std::slice::from_ref(&secret));
    let t = open(tmp.path(), &b);
    let owner = AppId::new("owner").unwrap();
    let task = start(&t, &owner, "secret");
    next_approval(&t, &owner, &task).await;
    let sid = session_of(&t, &owner, &task);
    let rt = t.runtime().clone();
    let real = mentioned_arguments(&rt, &sid)[0].clone();
    let hash = real[ARGS_REF_KEY].as_str().unwrap().to_owned();

    // Another app's model names the first session's blob in its own (small) arguments: the
    // lookalike is itself stored behind a real reference and resolves to the lookalike.
    let forged = json!({ARGS_REF_KEY: hash, "path": "x.txt", "content": "x"});
    push_calls(&b, std::slice::from_ref(&forged));
    let other = AppId::new("other").unwrap();
    let task_o = start(&t, &other, "forge");
    // (`storage_write` takes no `$argsRef` property: the call fails its schema check after
    // its `tool.args` is recorded; the scripted model then has nothing more to say.)
    until_status(&t, &other, &task_o, "failed").await;
    let sid_o = session_of(&t, &other, &task_o);
    let recorded = mentioned_arguments(&rt, &sid_o)[0].clone();
    assert_ne!(recorded[ARGS_REF_KEY], json!(hash));
    assert_eq!(
        rt.log().resolve_arguments(&sid_o, &recorded).unwrap(),
        forged
    );
    // The real reference does not resolve in another session.
    let code = |r: Result<Value, LogError>| match r {
        Err(LogError::ArgsRef(e)) => e.code(),
        other => panic!("expected an args_ref error, got {other:?}"),
    };
    assert_eq!(
        code(rt.log().resolve_arguments(&sid_o, &real)),
        "args_ref.missing"
    );
    for bad in [
        json!({ARGS_REF_KEY: 1}),
        json!({ARGS_REF_KEY: "sha256:../../etc"}),
        json!({ARGS_REF_KEY: format!("sha256:{}", "f".repeat(64))}),
    ] {
        let c = code(rt.log().resolve_arguments(&sid, &bad));
        assert!(c == "args_ref.malformed" || c == "args_ref.missing", "{c}");
    }
    // A tampered blob is refused (re-hashed on read); reads of the session still answer, the
    // pending input then being the reference with the stable code.
    rusqlite_conn(tmp.path())
        .execute(
            "UPDATE arg_blobs SET body = '{\"path\":\"evil\"}' WHERE hash = ?1",
            [&hash],
        )
        .unwrap();
    assert_eq!(
        code(rt.log().resolve_arguments(&sid, &real)),
        "args_ref.corrupt"
    );
    let input = &t.get(&owner, &task).unwrap()["pendingActions"][0]["input"];
    assert_eq!(input["error"], "args_ref.corrupt");
    assert_eq!(input[ARGS_REF_KEY], json!(hash));
    // Small arguments stay inline.
    assert!(!is_args_ref(&json!({"path": "a"})));
}

#[test]
fn purging_an_app_drops_the_blobs_only_it_referenced() {
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    let shared = large_args(1, 2 * ARGS_INLINE_LIMIT);
    let own = large_args(2, 2 * ARGS_INLINE_LIMIT);
    let gone = AppId::new("gone").unwrap();
    let kept = AppId::new("kept").unwrap();
    let blobs = |dir: &Path| -> i64 {
        rusqlite_conn(dir)
            .query_row("SELECT COUNT(*) FROM arg_blobs", [], |r| r.get(0))
            .unwrap()
    };
    let running = tokio_rt();
    let sk = running.block_on(async {
        push_calls(&b, &[shared.clone(), own.clone()]);
        push_calls(&b, std::slice::from_ref(&shared));
        let t = open(tmp.path(), &b);
        let tg = start(&t, &gone, "two");
        let first = next_approval(&t, &gone, &tg).await;
        t.respond(&gone, &tg, &first, Response::Approve, Responder::User).unwrap();
        approval_after(&t, &gone, &tg, &first).await;
        let tk = start(&t, &kept, "one");
        next_approval(&t, &kept, &tk).await;
        session_of(&t, &kept, &tk)
    });
    running.shutdown_timeout(Duration::from_secs(10));
    assert_eq!(blobs(tmp.path()), 2, "the shared content is stored once");
    runtime_core::agent_task::store::purge_app(tmp.path(), "gone").unwrap();
    assert_eq!(blobs(tmp.path()), 1, "only the other app's blob is left");
    tokio_rt().block_on(async {
        let t = open(tmp.path(), &b);
        let refs = mentioned_arguments(t.runtime(), &sk);
        assert_eq!(refs.len(), 2);
        for r in refs {
            assert_eq!(
                t.runtime().log().resolve_arguments(&sk, &r).unwrap(),
                shared
            );
        }
    });
    runtime_core::agent_task::store::purge_app(tmp.path(), "kept").unwrap();
    assert_eq!(blobs(tmp.path()), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_violation_on_huge_arguments_gives_a_bounded_failure_message() {
    // `storage_write` wants string `content`; a 1 MiB array in its place used to be quoted
    // whole in `tool.failed` and in the message sent back to the model.
    let tmp = tempfile::tempdir().unwrap();
    let b = ScriptedBackend::new();
    let args = json!({"path": "a.txt", "content": vec!["z".repeat(1024); 1024]});
    push_calls(&b, std::slice::from_ref(&args));
    b.push_text(&["ok"]);
    let t = open(tmp.path(), &b);
    let a = AppId::new("demo").unwrap();
    let task = start(&t, &a, "bad");
    until_status(&t, &a, &task, "succeeded").await;
    let sid = session_of(&t, &a, &task);
    let rt = t.runtime().clone();
    let failed: Vec<String> = rt
        .log()
        .read_all(&sid)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind() == EventType::ToolFailed)
        .map(|e| {
            e.to_json()["payload"]["message"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(failed.len(), 1);
    assert!(failed[0].len() < 4096, "{} bytes", failed[0].len());
    let tool_message = b.requests()[1]
        .messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::Tool { content, .. } => Some(content.len()),
            _ => None,
        })
        .unwrap();
    assert!(tool_message < 4096, "{tool_message} bytes to the model");
}
