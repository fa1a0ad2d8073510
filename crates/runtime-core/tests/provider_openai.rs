//! The OpenAI-compatible client against a local HTTP server written here (hyper, 127.0.0.1:0)
//! that speaks the chat completions API: streaming text, a tool call round, structured output,
//! retries (429 with Retry-After, 500), a dropped stream, a malformed line, a stall, a slow
//! response head, cancellation, and provider errors (auth, in-stream).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::{combinators::BoxBody, BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use runtime_core::provider::{
    collect, CancellationToken, ChatMessage, ChatRequest, CollectLimits, ErrorKind, FinishReason,
    OpenAiClient, ProviderConfig, ProviderError, ProviderEvent, ResponseFormat, ToolCall,
    ToolChoice, ToolSpec,
};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// The stand-in server

/// One piece of a streamed body.
#[derive(Clone)]
enum Piece {
    /// Raw bytes, written as they are (may split an SSE line anywhere).
    Raw(String),
    /// `data: <json>\n\n`
    Data(Value),
    Pause(Duration),
    /// Break the connection (the chunked body never ends properly).
    Drop,
    /// Send nothing more, keep the connection open.
    Stall,
    /// Send an SSE comment every 50 ms until the client goes away.
    Trickle,
}

#[derive(Clone)]
enum Reply {
    Sse(Vec<Piece>),
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Wait this long before sending the response head.
    SlowHead(Duration, Box<Reply>),
}

#[derive(Debug, Clone)]
struct Recorded {
    authorization: Option<String>,
    accept: Option<String>,
    path: String,
    body: Value,
}

type Script = Arc<dyn Fn(usize, &Recorded) -> Reply + Send + Sync>;

struct Server {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    /// Set when a streamed body could not be written because the client went away.
    client_gone: Arc<AtomicBool>,
}

impl Server {
    fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
    fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

async fn serve(script: impl Fn(usize, &Recorded) -> Reply + Send + Sync + 'static) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let client_gone = Arc::new(AtomicBool::new(false));
    let counter = Arc::new(AtomicUsize::new(0));
    let script: Script = Arc::new(script);
    let (reqs, gone) = (requests.clone(), client_gone.clone());
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let (reqs, gone, counter, script) =
                (reqs.clone(), gone.clone(), counter.clone(), script.clone());
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                    let (reqs, gone, counter, script) =
                        (reqs.clone(), gone.clone(), counter.clone(), script.clone());
                    async move {
                        let header =
                            |n: &str| req.headers().get(n).map(|v| v.to_str().unwrap().to_owned());
                        let (authorization, accept) = (header("authorization"), header("accept"));
                        let path = req.uri().path().to_owned();
                        let raw = req.into_body().collect().await.unwrap().to_bytes();
                        let rec = Recorded {
                            authorization,
                            accept,
                            path,
                            body: serde_json::from_slice(&raw).unwrap_or(Value::Null),
                        };
                        reqs.lock().unwrap().push(rec.clone());
                        let n = counter.fetch_add(1, Ordering::SeqCst);
                        let reply = script(n, &rec);
                        Ok::<_, Infallible>(respond(reply, gone).await)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), svc)
                    .await;
            });
        }
    });
    Server {
        addr,
        requests,
        client_gone,
    }
}

type Body = BoxBody<Bytes, std::io::Error>;

async fn respond(reply: Reply, gone: Arc<AtomicBool>) -> Response<Body> {
    match reply {
        Reply::SlowHead(d, inner) => {
            tokio::time::sleep(d).await;
            Box::pin(respond(*inner, gone)).await
        }
        Reply::Status {
            status,
            headers,
            body,
        } => {
            let mut r = Response::builder()
                .status(status)
                .header("content-type", "application/json");
            for (k, v) in headers {
                r = r.header(k, v);
            }
            r.body(
                Full::new(Bytes::from(body))
                    .map_err(|never| match never {})
                    .boxed(),
            )
            .unwrap()
        }
        Reply::Sse(pieces) => {
            let (tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(4);
            tokio::spawn(async move {
                for p in pieces {
                    let send = |s: String| tx.send(Ok(Frame::data(Bytes::from(s))));
                    let ok = match p {
                        Piece::Raw(s) => send(s).await.is_ok(),
                        Piece::Data(v) => send(format!("data: {v}\n\n")).await.is_ok(),
                        Piece::Pause(d) => {
                            tokio::time::sleep(d).await;
                            true
                        }
                        Piece::Drop => {
                            let _ = tx
                                .send(Err(std::io::Error::other("connection dropped")))
                                .await;
                            return;
                        }
                        Piece::Stall => {
                            tx.closed().await;
                            gone.store(true, Ordering::SeqCst);
                            return;
                        }
                        Piece::Trickle => loop {
                            if send(": ping\n\n".into()).await.is_err() {
                                gone.store(true, Ordering::SeqCst);
                                return;
                            }
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        },
                    };
                    if !ok {
                        gone.store(true, Ordering::SeqCst);
                        return;
                    }
                }
            });
            let stream = futures_util::stream::unfold(rx, |mut rx| async move {
                rx.recv().await.map(|item| (item, rx))
            });
            Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .body(BodyExt::boxed(StreamBody::new(stream)))
                .unwrap()
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn text_chunk(s: &str) -> Piece {
    Piece::Data(
        json!({"id": "c", "object": "chat.completion.chunk", "model": "m",
               "choices": [{"index": 0, "delta": {"content": s}, "finish_reason": null}]}),
    )
}

fn finish_chunk(reason: &str) -> Piece {
    Piece::Data(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}))
}

fn usage_chunk(p: u64, c: u64) -> Piece {
    Piece::Data(
        json!({"choices": [], "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}}),
    )
}

fn done() -> Piece {
    Piece::Raw("data: [DONE]\n\n".into())
}

fn hello_stream() -> Reply {
    Reply::Sse(vec![
        text_chunk("Hel"),
        text_chunk("lo"),
        finish_chunk("stop"),
        usage_chunk(7, 2),
        done(),
    ])
}

fn config(server: &Server) -> ProviderConfig {
    let mut c = ProviderConfig::new(server.base_url(), "test-model");
    c.request_timeout = Duration::from_secs(5);
    c.stream_idle_timeout = Duration::from_secs(5);
    c.max_retries = 2;
    c.initial_backoff = Duration::from_millis(20);
    c.max_backoff = Duration::from_secs(3);
    c
}

fn client(c: ProviderConfig) -> OpenAiClient {
    OpenAiClient::new(c).unwrap()
}

fn user(s: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::User(s.into())],
        ..ChatRequest::default()
    }
}

/// Every item of the stream (it must end by itself).
async fn drain(
    client: &OpenAiClient,
    req: &ChatRequest,
) -> Vec<Result<ProviderEvent, ProviderError>> {
    let s = client.stream_chat(req, CancellationToken::new());
    tokio::time::timeout(Duration::from_secs(20), s.collect::<Vec<_>>())
        .await
        .expect("the stream must end by itself")
}

fn only_error(items: &[Result<ProviderEvent, ProviderError>]) -> ProviderError {
    let last = items.last().expect("at least one item").clone();
    assert!(
        items[..items.len() - 1].iter().all(|i| i.is_ok()),
        "only the last item may be an error: {items:?}"
    );
    last.expect_err("the stream must end with an error")
}

// ---------------------------------------------------------------------------------------------
// Tests

#[tokio::test]
async fn streams_text_usage_and_finish_in_order() {
    let server = serve(|_, _| {
        Reply::Sse(vec![
            // One event split across writes, and two events in one write.
            Piece::Raw("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"con".into()),
            Piece::Raw("tent\":\"Hel\"},\"finish_reason\":null}]}\n".into()),
            Piece::Raw("\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n".into()),
            usage_chunk(7, 2),
            done(),
        ])
    })
    .await;
    let mut cfg = config(&server);
    cfg.api_key = Some("sk-test-123".into());
    let items = drain(&client(cfg), &user("hi")).await;
    let events: Vec<_> = items.into_iter().map(Result::unwrap).collect();
    assert_eq!(
        events,
        vec![
            ProviderEvent::TextDelta("Hel".into()),
            ProviderEvent::TextDelta("lo".into()),
            ProviderEvent::Usage {
                prompt_tokens: 7,
                completion_tokens: 2
            },
            ProviderEvent::Finished {
                reason: FinishReason::Stop
            },
        ]
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.authorization.as_deref(), Some("Bearer sk-test-123"));
    assert_eq!(r.accept.as_deref(), Some("text/event-stream"));
    assert_eq!(r.body["model"], "test-model");
    assert_eq!(r.body["stream"], true);
    assert_eq!(r.body["stream_options"]["include_usage"], true);
    assert_eq!(
        r.body["messages"],
        json!([{"role": "user", "content": "hi"}])
    );
}

#[tokio::test]
async fn no_key_means_no_authorization_header() {
    let server = serve(|_, _| hello_stream()).await;
    let items = drain(&client(config(&server)), &user("hi")).await;
    assert!(items.iter().all(Result::is_ok));
    assert_eq!(server.requests()[0].authorization, None);
}

#[tokio::test]
async fn a_tool_call_round_assembles_split_deltas_and_sends_the_result_back() {
    let server = serve(|n, _| {
        if n == 0 {
            Reply::Sse(vec![
                Piece::Data(json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null,
                    "tool_calls": [{"index": 0, "id": "call_abc", "type": "function",
                                    "function": {"name": "add", "arguments": ""}}]}}]})),
                Piece::Data(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"a\": 1,"}}]}}]})),
                // A second call starts while the first is still open.
                Piece::Data(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "call_def", "type": "function",
                    "function": {"name": "now", "arguments": "{}"}}]}}]})),
                Piece::Raw("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"argu".into()),
                Piece::Raw("ments\":\" \\\"b\\\": 2}\"}}]}}]}\n\n".into()),
                finish_chunk("tool_calls"),
                usage_chunk(20, 9),
                done(),
            ])
        } else {
            Reply::Sse(vec![text_chunk("3"), finish_chunk("stop"), done()])
        }
    })
    .await;
    let c = client(config(&server));
    let tools = vec![ToolSpec {
        name: "add".into(),
        description: "Adds two numbers".into(),
        parameters: json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                           "required": ["a", "b"]}),
    }];
    let mut req = ChatRequest {
        messages: vec![
            ChatMessage::System("use tools".into()),
            ChatMessage::User("1+2?".into()),
        ],
        tools: tools.clone(),
        tool_choice: Some(ToolChoice::Auto),
        ..ChatRequest::default()
    };
    let first = collect(
        c.stream_chat(&req, CancellationToken::new()),
        CollectLimits::default(),
    )
    .await
    .unwrap();
    assert_eq!(first.finish_reason, FinishReason::ToolCalls);
    assert_eq!(first.usage, Some((20, 9)));
    assert_eq!(
        first.tool_calls,
        vec![
            ToolCall {
                id: "call_abc".into(),
                name: "add".into(),
                arguments: "{\"a\": 1, \"b\": 2}".into()
            },
            ToolCall {
                id: "call_def".into(),
                name: "now".into(),
                arguments: "{}".into()
            },
        ]
    );
    let args: Value = serde_json::from_str(&first.tool_calls[0].arguments).unwrap();
    assert_eq!(args, json!({"a": 1, "b": 2}));

    req.messages.push(ChatMessage::Assistant {
        content: None,
        tool_calls: first.tool_calls.clone(),
    });
    req.messages.push(ChatMessage::Tool {
        tool_call_id: "call_abc".into(),
        content: "3".into(),
    });
    let second = collect(
        c.stream_chat(&req, CancellationToken::new()),
        CollectLimits::default(),
    )
    .await
    .unwrap();
    assert_eq!(second.text, "3");

    let reqs = server.requests();
    let b0 = &reqs[0].body;
    assert_eq!(b0["tools"][0]["type"], "function");
    assert_eq!(b0["tools"][0]["function"]["name"], "add");
    assert_eq!(
        b0["tools"][0]["function"]["parameters"],
        tools[0].parameters
    );
    assert_eq!(b0["tool_choice"], "auto");
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    assert_eq!(msgs[2]["role"], "assistant");
    assert_eq!(msgs[2]["tool_calls"][0]["id"], "call_abc");
    assert_eq!(
        msgs[2]["tool_calls"][0]["function"]["arguments"],
        "{\"a\": 1, \"b\": 2}"
    );
    assert_eq!(
        msgs[3],
        json!({"role": "tool", "tool_call_id": "call_abc", "content": "3"})
    );
}

#[tokio::test]
async fn structured_output_request_carries_response_format() {
    let server = serve(|_, _| {
        Reply::Sse(vec![
            text_chunk("{\"verdict\":"),
            text_chunk("\"ok\"}"),
            finish_chunk("stop"),
            done(),
        ])
    })
    .await;
    let schema = json!({"type": "object", "properties": {"verdict": {"type": "string"}},
                        "required": ["verdict"], "additionalProperties": false});
    let req = ChatRequest {
        messages: vec![ChatMessage::User("judge".into())],
        response_format: Some(ResponseFormat {
            name: "verdict".into(),
            schema: schema.clone(),
            strict: true,
        }),
        max_tokens: Some(64),
        temperature: Some(0.0),
        ..ChatRequest::default()
    };
    let c = client(config(&server));
    let out = collect(
        c.stream_chat(&req, CancellationToken::new()),
        CollectLimits::default(),
    )
    .await
    .unwrap();
    assert_eq!(out.text, "{\"verdict\":\"ok\"}");
    let body = &server.requests()[0].body;
    assert_eq!(
        body["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "verdict", "schema": schema, "strict": true}})
    );
    assert_eq!(body["max_tokens"], 64);
    assert_eq!(body["temperature"], 0.0);
}

#[tokio::test]
async fn rate_limited_with_retry_after_seconds_then_success() {
    let server = serve(|n, _| {
        if n == 0 {
            Reply::Status {
                status: 429,
                headers: vec![("retry-after".into(), "1".into())],
                body: json!({"error": {"message": "slow down"}}).to_string(),
            }
        } else {
            hello_stream()
        }
    })
    .await;
    let start = Instant::now();
    let items = drain(&client(config(&server)), &user("hi")).await;
    let waited = start.elapsed();
    assert!(items.iter().all(Result::is_ok), "{items:?}");
    assert_eq!(server.requests().len(), 2);
    // Retry-After (1 s) wins over the 20 ms backoff.
    assert!(
        waited >= Duration::from_millis(950),
        "waited only {waited:?}"
    );
}

#[tokio::test]
async fn rate_limited_with_retry_after_date_then_success() {
    let server = serve(|n, _| {
        if n == 0 {
            let at = std::time::SystemTime::now() + Duration::from_secs(2);
            Reply::Status {
                status: 429,
                headers: vec![("retry-after".into(), httpdate::fmt_http_date(at))],
                body: String::new(),
            }
        } else {
            hello_stream()
        }
    })
    .await;
    let start = Instant::now();
    let items = drain(&client(config(&server)), &user("hi")).await;
    assert!(items.iter().all(Result::is_ok), "{items:?}");
    assert_eq!(server.requests().len(), 2);
    // The date has whole seconds: 2 s ahead is at least 1 s after truncation.
    assert!(
        start.elapsed() >= Duration::from_millis(950),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn rate_limited_past_the_backoff_cap_is_returned_not_waited() {
    let server = serve(|_, _| Reply::Status {
        status: 429,
        headers: vec![("retry-after".into(), "3600".into())],
        body: json!({"error": {"message": "quota exceeded"}}).to_string(),
    })
    .await;
    let start = Instant::now();
    let e = only_error(&drain(&client(config(&server)), &user("hi")).await);
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(e.code, ErrorKind::RateLimited);
    assert_eq!(e.code.as_str(), "provider.rate_limited");
    assert_eq!(e.message, "quota exceeded");
    assert_eq!(e.retry_after, Some(Duration::from_secs(3600)));
    assert!(e.retryable);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn server_errors_are_retried_then_reported_with_the_provider_message() {
    let server = serve(|_, _| Reply::Status {
        status: 500,
        headers: vec![],
        body: json!({"error": {"message": "model overloaded", "type": "server_error"}}).to_string(),
    })
    .await;
    let e = only_error(&drain(&client(config(&server)), &user("hi")).await);
    assert_eq!(e.code, ErrorKind::ServerError);
    assert_eq!(e.status, Some(500));
    assert_eq!(e.message, "model overloaded");
    assert!(e.retryable);
    // One try and max_retries (2) retries.
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn auth_errors_surface_the_provider_message_and_are_not_retried() {
    let server = serve(|_, _| Reply::Status {
        status: 401,
        headers: vec![],
        body: json!({"error": {"message": "Incorrect API key provided: sk-wr***ng.", "type": "invalid_request_error", "code": "invalid_api_key"}}).to_string(),
    })
    .await;
    let mut cfg = config(&server);
    cfg.api_key = Some("sk-wrong".into());
    let e = only_error(&drain(&client(cfg), &user("hi")).await);
    assert_eq!(e.code, ErrorKind::Auth);
    assert_eq!(e.code.as_str(), "provider.auth");
    assert_eq!(e.status, Some(401));
    assert_eq!(e.message, "Incorrect API key provided: sk-wr***ng.");
    assert!(!e.retryable);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn other_statuses_keep_the_provider_message() {
    let server = serve(|_, _| Reply::Status {
        status: 404,
        headers: vec![],
        body: json!({"error": "model 'nope' not found"}).to_string(),
    })
    .await;
    let e = only_error(&drain(&client(config(&server)), &user("hi")).await);
    assert_eq!(e.code, ErrorKind::HttpStatus);
    assert_eq!(e.status, Some(404));
    assert_eq!(e.message, "model 'nope' not found");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_dropped_stream_ends_with_an_error_after_the_deltas_it_sent() {
    let server = serve(|_, _| {
        Reply::Sse(vec![
            text_chunk("partial"),
            Piece::Pause(Duration::from_millis(200)),
            Piece::Drop,
        ])
    })
    .await;
    let items = drain(&client(config(&server)), &user("hi")).await;
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(items[0], Ok(ProviderEvent::TextDelta("partial".into())));
    let e = only_error(&items);
    assert_eq!(e.code, ErrorKind::StreamDropped);
    assert!(e.retryable);
    // Nothing is retried once the stream has started.
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_stream_that_ends_before_finishing_is_dropped_not_finished() {
    let server = serve(|_, _| Reply::Sse(vec![text_chunk("half an ans")])).await;
    let items = drain(&client(config(&server)), &user("hi")).await;
    assert_eq!(only_error(&items).code, ErrorKind::StreamDropped);
    assert!(!items
        .iter()
        .any(|i| matches!(i, Ok(ProviderEvent::Finished { .. }))));
}

#[tokio::test]
async fn a_malformed_line_ends_the_stream_with_malformed_stream() {
    let server = serve(|_, _| {
        Reply::Sse(vec![
            text_chunk("ok so far"),
            Piece::Raw("data: {\"choices\": [ {\"delta\": \n\n".into()),
            text_chunk("never read"),
            done(),
        ])
    })
    .await;
    let items = drain(&client(config(&server)), &user("hi")).await;
    assert_eq!(items.len(), 2, "{items:?}");
    let e = only_error(&items);
    assert_eq!(e.code, ErrorKind::MalformedStream);
    assert!(
        e.message.contains("{\"choices\": [ {\"delta\":"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn an_error_inside_the_stream_surfaces_the_provider_message() {
    let server = serve(|_, _| {
        Reply::Sse(vec![
            text_chunk("a"),
            Piece::Data(json!({"error": {"message": "the model crashed", "type": "server_error"}})),
        ])
    })
    .await;
    let e = only_error(&drain(&client(config(&server)), &user("hi")).await);
    assert_eq!(e.code, ErrorKind::StreamError);
    assert_eq!(e.message, "the model crashed");
}

#[tokio::test]
async fn a_200_that_is_not_a_stream_is_reported() {
    let server = serve(|_, _| Reply::Status {
        status: 200,
        headers: vec![],
        body: json!({"error": {"message": "streaming is disabled"}}).to_string(),
    })
    .await;
    let e = only_error(&drain(&client(config(&server)), &user("hi")).await);
    assert_eq!(e.code, ErrorKind::StreamError);
    assert_eq!(e.message, "streaming is disabled");
}

#[tokio::test]
async fn a_stalled_stream_times_out() {
    let server = serve(|_, _| Reply::Sse(vec![text_chunk("thinking"), Piece::Stall])).await;
    let mut cfg = config(&server);
    cfg.stream_idle_timeout = Duration::from_millis(300);
    let start = Instant::now();
    let items = drain(&client(cfg), &user("hi")).await;
    let took = start.elapsed();
    assert_eq!(items[0], Ok(ProviderEvent::TextDelta("thinking".into())));
    let e = only_error(&items);
    assert_eq!(e.code, ErrorKind::Timeout);
    assert!(e.message.contains("stalled"), "{}", e.message);
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(4),
        "{took:?}"
    );
}

#[tokio::test]
async fn keepalive_comments_are_not_a_stall() {
    let server = serve(|_, _| {
        let mut pieces = vec![text_chunk("a")];
        for _ in 0..6 {
            pieces.push(Piece::Pause(Duration::from_millis(100)));
            pieces.push(Piece::Raw(": keep-alive\n\n".into()));
        }
        pieces.extend([finish_chunk("stop"), done()]);
        Reply::Sse(pieces)
    })
    .await;
    let mut cfg = config(&server);
    cfg.stream_idle_timeout = Duration::from_millis(300);
    let items = drain(&client(cfg), &user("hi")).await;
    assert!(items.iter().all(Result::is_ok), "{items:?}");
}

#[tokio::test]
async fn a_slow_response_head_hits_the_request_timeout() {
    let server =
        serve(|_, _| Reply::SlowHead(Duration::from_secs(3), Box::new(hello_stream()))).await;
    let mut cfg = config(&server);
    cfg.request_timeout = Duration::from_millis(300);
    let start = Instant::now();
    let e = only_error(&drain(&client(cfg), &user("hi")).await);
    assert_eq!(e.code, ErrorKind::Timeout);
    assert!(start.elapsed() < Duration::from_secs(2));
    // Timeouts are not retried (each retry would wait as long again).
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn cancelling_mid_stream_stops_reading_and_closes_the_connection() {
    let server = serve(|_, _| Reply::Sse(vec![text_chunk("first"), Piece::Trickle])).await;
    let c = client(config(&server));
    let cancel = CancellationToken::new();
    let stream = c.stream_chat(&user("hi"), cancel.clone());
    futures_util::pin_mut!(stream);
    let first = stream.next().await.unwrap();
    assert_eq!(first, Ok(ProviderEvent::TextDelta("first".into())));
    assert!(!server.client_gone.load(Ordering::SeqCst));
    cancel.cancel();
    let next = tokio::time::timeout(Duration::from_secs(2), stream.next())
        .await
        .expect("cancel ends the stream at once")
        .unwrap();
    assert_eq!(next.unwrap_err().code, ErrorKind::Cancelled);
    assert!(stream.next().await.is_none(), "nothing follows the error");
    // The server notices the client went away: the connection was closed, not left reading.
    let deadline = Instant::now() + Duration::from_secs(3);
    while !server.client_gone.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the connection was not closed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn cancelling_during_backoff_stops_retrying() {
    let server = serve(|_, _| Reply::Status {
        status: 503,
        headers: vec![("retry-after".into(), "2".into())],
        body: String::new(),
    })
    .await;
    let c = client(config(&server));
    let cancel = CancellationToken::new();
    let stream = c.stream_chat(&user("hi"), cancel.clone());
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let start = Instant::now();
    let items: Vec<_> = stream.collect().await;
    canceller.await.unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(only_error(&items).code, ErrorKind::Cancelled);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_unreachable_server_is_reported_after_bounded_retries() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let mut cfg = ProviderConfig::new(format!("http://{addr}/v1"), "m");
    cfg.max_retries = 1;
    cfg.initial_backoff = Duration::from_millis(10);
    let c = client(cfg);
    let e = only_error(&drain(&c, &user("hi")).await);
    assert_eq!(e.code, ErrorKind::Unreachable);
    assert_eq!(e.status, None);
}

#[tokio::test]
async fn test_connection_reports_latency_or_the_provider_error() {
    let server = serve(|n, _| {
        if n == 0 {
            Reply::Sse(vec![
                text_chunk("OK"),
                finish_chunk("length"),
                usage_chunk(9, 1),
                done(),
            ])
        } else {
            Reply::Status {
                status: 403,
                headers: vec![],
                body: json!({"error": {"message": "project has no access to model"}}).to_string(),
            }
        }
    })
    .await;
    let c = client(config(&server));
    let t = c.test_connection().await.unwrap();
    assert_eq!(t.finish_reason, "length");
    assert!(t.first_event <= t.total);
    let body = &server.requests()[0].body;
    assert_eq!(body["max_tokens"], 1);
    let e = c.test_connection().await.unwrap_err();
    assert_eq!(e.code, ErrorKind::Auth);
    assert_eq!(e.message, "project has no access to model");
}

#[tokio::test]
async fn collect_limits_bound_the_answer() {
    let server = serve(|_, _| {
        Reply::Sse(vec![
            text_chunk("0123456789"),
            text_chunk("0123456789"),
            finish_chunk("stop"),
            done(),
        ])
    })
    .await;
    let c = client(config(&server));
    let limits = CollectLimits {
        max_text_bytes: 15,
        ..CollectLimits::default()
    };
    let e = collect(c.stream_chat(&user("hi"), CancellationToken::new()), limits)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorKind::ResponseTooLarge);
}
