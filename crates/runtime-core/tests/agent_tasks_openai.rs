//! App agent tasks driven by the real OpenAI-compatible client (`OpenAiBackend`) against a
//! local stand-in server started here (hyper on 127.0.0.1:0, SSE chat completions): streamed
//! deltas in order, a tool call that waits for approval (approved once, rejected once),
//! cancel mid-stream, retry as a new run, structured output invalid then valid. Every task
//! event validates against `schemas/apphost/agent-task-event.schema.json`.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use runtime_core::agent_task::{AgentTasks, Responder, Response as Answer, StartTask};
use runtime_core::backend::ExecutionBackend;
use runtime_core::ids::AppId;
use runtime_core::provider::{OpenAiBackend, ProviderConfig};
use runtime_core::runtime::{Runtime, RuntimeConfig};
use serde_json::{json, Value};

/// One streamed answer: SSE `data:` chunks with optional pauses (ms) between them.
#[derive(Clone)]
enum Piece {
    Data(Value),
    Pause(u64),
}

fn text_chunks(parts: &[&str]) -> Vec<Piece> {
    let mut v: Vec<Piece> = parts
        .iter()
        .map(|t| Piece::Data(json!({"choices": [{"index": 0, "delta": {"content": t}}]})))
        .collect();
    v.push(Piece::Data(
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ));
    v
}

fn tool_call(name: &str, args: &str) -> Vec<Piece> {
    vec![
        Piece::Data(json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": args}}]}}]})),
        Piece::Data(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})),
    ]
}

/// Serves the scripted answers in order (the last one again when they run out).
async fn serve(answers: Vec<Vec<Piece>>) -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let answers = Arc::new(answers);
    let n = Arc::new(AtomicUsize::new(0));
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let recorded = bodies.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (answers, n, bodies) = (answers.clone(), n.clone(), bodies.clone());
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                    let (answers, n, bodies) = (answers.clone(), n.clone(), bodies.clone());
                    async move {
                        let raw = req.into_body().collect().await.unwrap().to_bytes();
                        bodies
                            .lock()
                            .unwrap()
                            .push(serde_json::from_slice(&raw).unwrap_or(Value::Null));
                        let i = n.fetch_add(1, Ordering::SeqCst).min(answers.len() - 1);
                        let pieces = answers[i].clone();
                        let (tx, rx) =
                            tokio::sync::mpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(4);
                        tokio::spawn(async move {
                            for p in pieces {
                                match p {
                                    Piece::Data(v) => {
                                        let f = Frame::data(Bytes::from(format!("data: {v}\n\n")));
                                        if tx.send(Ok(f)).await.is_err() {
                                            return;
                                        }
                                    }
                                    Piece::Pause(ms) => {
                                        tokio::time::sleep(Duration::from_millis(ms)).await
                                    }
                                }
                            }
                            let _ = tx
                                .send(Ok(Frame::data(Bytes::from("data: [DONE]\n\n"))))
                                .await;
                        });
                        let body: BoxBody<Bytes, std::io::Error> =
                            BodyExt::boxed(StreamBody::new(tokio_stream_from(rx)));
                        Ok::<_, Infallible>(
                            Response::builder()
                                .header("content-type", "text/event-stream")
                                .body(body)
                                .unwrap(),
                        )
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), svc)
                    .await;
            });
        }
    });
    (format!("http://{addr}/v1"), recorded)
}

fn tokio_stream_from(
    mut rx: tokio::sync::mpsc::Receiver<Result<Frame<Bytes>, std::io::Error>>,
) -> impl futures_util::Stream<Item = Result<Frame<Bytes>, std::io::Error>> {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

fn schema() -> jsonschema::Validator {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../schemas/apphost/agent-task-event.schema.json");
    let s: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    jsonschema::validator_for(&s).unwrap()
}

fn open(dir: &std::path::Path, base_url: &str) -> AgentTasks {
    let backend = OpenAiBackend::new(ProviderConfig::new(base_url, "stand-in")).unwrap();
    let rt = Runtime::open(
        RuntimeConfig::new(dir),
        Some(Arc::new(backend) as Arc<dyn ExecutionBackend>),
    )
    .unwrap();
    AgentTasks::open(rt).unwrap()
}

/// Events of `task` from the start until `n` results (validated); calls `on` for each.
async fn follow(
    t: &AgentTasks,
    a: &AppId,
    task: &str,
    n: usize,
    mut on: impl FnMut(&Value),
) -> Vec<Value> {
    let v = schema();
    let mut s = t.subscribe(a, task, 0).unwrap();
    let mut out: Vec<Value> = Vec::new();
    while out.iter().filter(|e| e["type"] == "result").count() < n {
        let e = tokio::time::timeout(Duration::from_secs(20), s.next())
            .await
            .expect("events in time")
            .unwrap();
        let j = serde_json::to_value(&e).unwrap();
        if let Err(err) = v.validate(&j) {
            panic!("{j}: {err}");
        }
        on(&j);
        out.push(j);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deltas_from_a_real_stream_arrive_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let parts: Vec<String> = (0..200).map(|i| format!("{i},")).collect();
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    let (url, _) = serve(vec![text_chunks(&refs)]).await;
    let t = open(tmp.path(), &url);
    let a = AppId::new("one").unwrap();
    let task = t
        .start(
            &a,
            StartTask {
                input: "count".into(),
                ..Default::default()
            },
        )
        .unwrap()
        .task_id;
    let events = follow(&t, &a, &task, 1, |_| {}).await;
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "assistant:delta")
        .map(|e| e["payload"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, parts.concat());
    assert_eq!(events.last().unwrap()["subtype"], "success");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_waits_for_approval_approved_then_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    let (url, bodies) = serve(vec![
        tool_call("storage_write", r#"{"path":"notes.md","content":"- item"}"#),
        text_chunks(&["written"]),
        tool_call("storage_write", r#"{"path":"other.md","content":"x"}"#),
        text_chunks(&["not written"]),
    ])
    .await;
    let t = open(tmp.path(), &url);
    let a = AppId::new("one").unwrap();
    for (i, (answer, file, exists)) in [
        (Answer::Approve, "notes.md", true),
        (Answer::Reject, "other.md", false),
    ]
    .into_iter()
    .enumerate()
    {
        let task = t
            .start(
                &a,
                StartTask {
                    input: format!("write {i}"),
                    ..Default::default()
                },
            )
            .unwrap()
            .task_id;
        let tt = t.clone();
        let (a2, task2) = (a.clone(), task.clone());
        let events = follow(&t, &a, &task, 1, move |e| {
            if e["type"] == "approval:requested" {
                assert_eq!(e["payload"]["toolName"], "storage_write");
                let action = e["payload"]["actionId"].as_str().unwrap();
                tt.respond(&a2, &task2, action, answer.clone(), Responder::User)
                    .unwrap();
            }
        })
        .await;
        assert!(events.iter().any(|e| e["type"] == "approval:requested"));
        assert_eq!(
            tmp.path().join("apps/one/files").join(file).exists(),
            exists,
            "{file}"
        );
        assert_eq!(events.last().unwrap()["subtype"], "success");
    }
    // The rejected call's result went back to the model as a failure.
    let last = bodies.lock().unwrap().last().cloned().unwrap();
    assert!(last.to_string().contains("declined"), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_stream_then_retry_is_a_new_run() {
    let tmp = tempfile::tempdir().unwrap();
    let mut slow = text_chunks(&["partial"]);
    slow.insert(1, Piece::Pause(30_000));
    let (url, _) = serve(vec![slow, text_chunks(&["second run"])]).await;
    let t = open(tmp.path(), &url);
    let a = AppId::new("one").unwrap();
    let task = t
        .start(
            &a,
            StartTask {
                input: "x".into(),
                ..Default::default()
            },
        )
        .unwrap()
        .task_id;
    let tt = t.clone();
    let (a2, task2) = (a.clone(), task.clone());
    let events = follow(&t, &a, &task, 1, move |e| {
        if e["type"] == "assistant:delta" {
            tt.cancel(&a2, &task2).unwrap();
        }
    })
    .await;
    assert_eq!(events.last().unwrap()["subtype"], "cancelled");
    t.retry(&a, &task).unwrap();
    let events = follow(&t, &a, &task, 2, |_| {}).await;
    let results: Vec<&Value> = events.iter().filter(|e| e["type"] == "result").collect();
    assert_eq!(results[1]["subtype"], "success");
    assert_ne!(results[0]["turnId"], results[1]["turnId"]);
    assert_eq!(t.get(&a, &task).unwrap()["result"]["text"], "second run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_output_invalid_then_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let (url, _) = serve(vec![
        text_chunks(&[r#"{"label": "urgent"}"#]),
        text_chunks(&[r#"{"label": "bug"}"#]),
    ])
    .await;
    let t = open(tmp.path(), &url);
    let a = AppId::new("one").unwrap();
    let task = t
        .start(
            &a,
            StartTask {
                input: "triage".into(),
                output_schema: Some(json!({"type": "object", "required": ["label"],
                    "properties": {"label": {"enum": ["bug", "feature"]}}})),
                ..Default::default()
            },
        )
        .unwrap()
        .task_id;
    let events = follow(&t, &a, &task, 1, |_| {}).await;
    let last = events.last().unwrap();
    assert_eq!(last["subtype"], "success");
    assert_eq!(last["payload"]["structuredOutput"], json!({"label": "bug"}));
}
