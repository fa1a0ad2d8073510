//! [`OpenAiClient`]: one streaming `POST {base_url}/chat/completions` per call.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use eventsource_stream::{EventStream, Eventsource};
use futures_util::{Stream, StreamExt};
use reqwest::header::{HeaderMap, ACCEPT, CONTENT_TYPE, RETRY_AFTER};
use reqwest::Url;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::error::{kind_for_status, provider_message, ErrorKind, ProviderError};
use super::retry::{backoff_delay, parse_retry_after};
use super::sse::{error_chain, sse_error, ChunkParser, GuardedBody, MAX_LINE_BYTES};
use super::types::{ChatMessage, ChatRequest, ProviderEvent};

/// Largest error body read to find the provider's message.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Where the model is and how patient to be with it.
#[derive(Clone)]
pub struct ProviderConfig {
    /// The API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    pub model: String,
    /// Sent as `Authorization: Bearer`; local servers usually need none.
    pub api_key: Option<String>,
    /// Longest wait for the response head (connecting included).
    pub request_timeout: Duration,
    /// Longest silence inside a stream before it counts as stalled.
    pub stream_idle_timeout: Duration,
    /// Retries of `429`/`5xx`/connection failures before the stream starts.
    pub max_retries: u32,
    /// First backoff; doubles per retry.
    pub initial_backoff: Duration,
    /// Cap of one backoff. A `Retry-After` longer than this is not waited for: the error is
    /// returned with its `retry_after`.
    pub max_backoff: Duration,
}

impl ProviderConfig {
    /// Defaults: 60 s request timeout, 120 s stream idle timeout, 3 retries from 500 ms to 30 s.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        ProviderConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            request_timeout: Duration::from_secs(60),
            stream_idle_timeout: Duration::from_secs(120),
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
        }
    }
}

impl std::fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("request_timeout", &self.request_timeout)
            .field("stream_idle_timeout", &self.stream_idle_timeout)
            .field("max_retries", &self.max_retries)
            .finish()
    }
}

/// What `model test` reports.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionTest {
    /// From sending the request to the first event of the stream.
    pub first_event: Duration,
    /// From sending the request to the end of the stream.
    pub total: Duration,
    pub finish_reason: String,
}

struct Inner {
    http: reqwest::Client,
    endpoint: Url,
    config: ProviderConfig,
}

/// A client for one OpenAI-compatible endpoint and model. Cheap to clone.
#[derive(Clone)]
pub struct OpenAiClient {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("endpoint", &self.inner.endpoint.as_str())
            .field("config", &self.inner.config)
            .finish()
    }
}

/// `{base_url}/chat/completions`, for a base with or without a trailing slash.
pub(crate) fn endpoint(base_url: &str) -> Result<Url, ProviderError> {
    let invalid = |why: String| ProviderError::new(ErrorKind::InvalidConfig, why);
    let mut url = Url::parse(base_url.trim())
        .map_err(|e| invalid(format!("base URL {base_url:?} is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(invalid(format!(
            "base URL {base_url:?} must be an http:// or https:// URL with a host"
        )));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(
            "the base URL must not carry credentials; use the API key setting".into(),
        ));
    }
    url.set_query(None);
    url.set_fragment(None);
    if !url.path().ends_with('/') {
        let p = format!("{}/", url.path());
        url.set_path(&p);
    }
    url.join("chat/completions")
        .map_err(|e| invalid(format!("base URL {base_url:?}: {e}")))
}

/// `base_url` checked as an `http(s)://` API root (no credentials, query or fragment) and
/// written without a trailing slash.
pub fn normalize_base_url(base_url: &str) -> Result<String, ProviderError> {
    let ep = endpoint(base_url)?;
    let s = ep.as_str();
    Ok(s[..s.len() - "/chat/completions".len()].to_owned())
}

impl OpenAiClient {
    pub fn new(config: ProviderConfig) -> Result<OpenAiClient, ProviderError> {
        let endpoint = endpoint(&config.base_url)?;
        if config.model.trim().is_empty() {
            return Err(ProviderError::new(
                ErrorKind::InvalidConfig,
                "the model name is empty",
            ));
        }
        // reqwest is built without a default crypto provider (no aws-lc build); use ring.
        // Another provider installed first by the process is fine too.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(config.request_timeout)
            .build()
            .map_err(|e| {
                ProviderError::new(
                    ErrorKind::InvalidConfig,
                    format!("cannot set up the HTTP client: {}", error_chain(&e)),
                )
            })?;
        Ok(OpenAiClient {
            inner: Arc::new(Inner {
                http,
                endpoint,
                config,
            }),
        })
    }

    pub fn config(&self) -> &ProviderConfig {
        &self.inner.config
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        self.inner.endpoint.as_str()
    }

    /// Streams one chat completion. The stream ends after `Finished` or after one error.
    /// Cancelling `cancel` (or dropping the stream) stops reading and closes the connection.
    pub fn stream_chat(
        &self,
        request: &ChatRequest,
        cancel: CancellationToken,
    ) -> impl Stream<Item = Result<ProviderEvent, ProviderError>> + Send + 'static {
        let body = Bytes::from(
            serde_json::to_vec(&request.to_body(&self.inner.config.model))
                .expect("a JSON value always serializes"),
        );
        let state = State::Connect {
            inner: self.inner.clone(),
            body,
            cancel,
        };
        futures_util::stream::unfold(state, step)
    }

    /// One tiny request (`max_tokens: 1`), read to its end: latency, or the provider's error.
    pub async fn test_connection(&self) -> Result<ConnectionTest, ProviderError> {
        let req = ChatRequest {
            messages: vec![ChatMessage::User("Reply with OK.".into())],
            max_tokens: Some(1),
            ..ChatRequest::default()
        };
        let start = Instant::now();
        let mut first = None;
        let stream = self.stream_chat(&req, CancellationToken::new());
        futures_util::pin_mut!(stream);
        while let Some(item) = stream.next().await {
            let ev = item?;
            first.get_or_insert_with(|| start.elapsed());
            if let ProviderEvent::Finished { reason } = ev {
                return Ok(ConnectionTest {
                    first_event: first.unwrap_or_default(),
                    total: start.elapsed(),
                    finish_reason: reason.as_str().to_owned(),
                });
            }
        }
        Err(ProviderError::new(
            ErrorKind::StreamDropped,
            "the stream ended without finishing",
        ))
    }
}

impl OpenAiClient {
    /// [`test_connection`](Self::test_connection) on a private single-thread runtime, for
    /// synchronous callers (the CLI). Must not be called from inside a tokio runtime.
    pub fn test_connection_blocking(&self) -> Result<ConnectionTest, ProviderError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                ProviderError::new(
                    ErrorKind::InvalidConfig,
                    format!("cannot start the I/O runtime: {e}"),
                )
            })?;
        rt.block_on(self.test_connection())
    }
}

type Events = EventStream<GuardedBody>;

enum State {
    Connect {
        inner: Arc<Inner>,
        body: Bytes,
        cancel: CancellationToken,
    },
    Streaming(Box<Streaming>),
    Done,
}

struct Streaming {
    events: Events,
    parser: ChunkParser,
    pending: VecDeque<ProviderEvent>,
    cancel: CancellationToken,
}

type Item = Result<ProviderEvent, ProviderError>;

async fn step(state: State) -> Option<(Item, State)> {
    let mut s = match state {
        State::Done => return None,
        State::Connect {
            inner,
            body,
            cancel,
        } => match connect(&inner, body, &cancel).await {
            Ok(events) => Box::new(Streaming {
                events,
                parser: ChunkParser::default(),
                pending: VecDeque::new(),
                cancel,
            }),
            Err(e) => return Some((Err(e), State::Done)),
        },
        State::Streaming(s) => s,
    };
    loop {
        if let Some(ev) = s.pending.pop_front() {
            let last = matches!(ev, ProviderEvent::Finished { .. });
            let next = if last {
                State::Done
            } else {
                State::Streaming(s)
            };
            return Some((Ok(ev), next));
        }
        if s.cancel.is_cancelled() {
            return Some((Err(ProviderError::cancelled()), State::Done));
        }
        let next = tokio::select! {
            biased;
            _ = s.cancel.cancelled() => return Some((Err(ProviderError::cancelled()), State::Done)),
            next = s.events.next() => next,
        };
        let result = match next {
            Some(Ok(event)) => s.parser.on_data(&event.data, &mut s.pending),
            Some(Err(e)) => Err(sse_error(e)),
            None => s.parser.on_end(&mut s.pending),
        };
        if let Err(e) = result {
            return Some((Err(e), State::Done));
        }
    }
}

/// Sends the request, retrying what may pass, until a success response whose body is SSE.
async fn connect(
    inner: &Inner,
    body: Bytes,
    cancel: &CancellationToken,
) -> Result<Events, ProviderError> {
    let cfg = &inner.config;
    let mut attempt: u32 = 0;
    loop {
        let err = match send_once(inner, body.clone(), cancel).await? {
            Ok(resp) => return into_events(resp, cfg, cancel).await,
            Err(e) => e,
        };
        let retry = matches!(
            err.code,
            ErrorKind::RateLimited | ErrorKind::ServerError | ErrorKind::Unreachable
        ) && attempt < cfg.max_retries
            && err.retry_after.is_none_or(|d| d <= cfg.max_backoff);
        if !retry {
            return Err(err);
        }
        let delay = backoff_delay(
            attempt,
            cfg.initial_backoff,
            cfg.max_backoff,
            err.retry_after,
        );
        tracing::warn!(
            code = err.code.as_str(),
            status = err.status,
            attempt = attempt + 1,
            delay_ms = delay.as_millis() as u64,
            "model provider request failed; retrying"
        );
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ProviderError::cancelled()),
            _ = tokio::time::sleep(delay) => {}
        }
        attempt += 1;
    }
}

/// One attempt. Outer `Err` ends everything (cancelled); inner `Err` is a failed attempt.
async fn send_once(
    inner: &Inner,
    body: Bytes,
    cancel: &CancellationToken,
) -> Result<Result<reqwest::Response, ProviderError>, ProviderError> {
    let cfg = &inner.config;
    let mut rb = inner
        .http
        .post(inner.endpoint.clone())
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "text/event-stream")
        .body(body);
    if let Some(key) = cfg.api_key.as_deref().filter(|k| !k.is_empty()) {
        rb = rb.bearer_auth(key); // marked sensitive by reqwest
    }
    let span = tracing::info_span!("llm.request", model = %cfg.model);
    let send = tokio::time::timeout(cfg.request_timeout, rb.send()).instrument(span);
    let sent = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(ProviderError::cancelled()),
        r = send => r,
    };
    let resp = match sent {
        Err(_) => {
            return Ok(Err(ProviderError::new(
                ErrorKind::Timeout,
                format!(
                    "no response from {} within {} ms (request timeout)",
                    inner.endpoint,
                    cfg.request_timeout.as_millis()
                ),
            )))
        }
        Ok(Err(e)) => return Ok(Err(send_error(&e))),
        Ok(Ok(resp)) => resp,
    };
    let status = resp.status();
    if status.is_success() {
        return Ok(Ok(resp));
    }
    let retry_after = retry_after(resp.headers());
    let text = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(ProviderError::cancelled()),
        t = tokio::time::timeout(cfg.request_timeout, read_bounded(resp, MAX_ERROR_BODY)) => t.unwrap_or_default(),
    };
    let code = kind_for_status(status.as_u16());
    let message = provider_message(&text).unwrap_or_else(|| {
        format!(
            "HTTP {} {}",
            status.as_u16(),
            status.canonical_reason().unwrap_or("")
        )
        .trim_end()
        .to_owned()
    });
    let mut e = ProviderError::new(code, message).with_status(status.as_u16());
    e.retry_after = retry_after;
    Ok(Err(e))
}

fn send_error(e: &reqwest::Error) -> ProviderError {
    let text = error_chain(e);
    if e.is_timeout() {
        ProviderError::new(ErrorKind::Timeout, text)
    } else if e.is_connect() {
        ProviderError::new(ErrorKind::Unreachable, text)
    } else if e.is_builder() {
        ProviderError::new(ErrorKind::InvalidConfig, text)
    } else {
        // The connection broke before a response head arrived.
        ProviderError::new(ErrorKind::Unreachable, text)
    }
}

fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let v = headers.get(RETRY_AFTER)?.to_str().ok()?;
    parse_retry_after(v, SystemTime::now())
}

/// At most `max` bytes of the body, as text (lossy).
async fn read_bounded(mut resp: reqwest::Response, max: usize) -> String {
    let mut buf = Vec::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        let room = max - buf.len();
        buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if buf.len() >= max {
            break;
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

async fn into_events(
    resp: reqwest::Response,
    cfg: &ProviderConfig,
    cancel: &CancellationToken,
) -> Result<Events, ProviderError> {
    let content_type = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if !content_type.starts_with("text/event-stream") {
        // Not a stream: an error object some servers send with 200, or a server that ignored
        // `stream: true`. Either way there are no deltas to read.
        let text = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ProviderError::cancelled()),
            t = tokio::time::timeout(cfg.request_timeout, read_bounded(resp, MAX_ERROR_BODY)) => t.unwrap_or_default(),
        };
        let is_error = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .is_some_and(|v| v.get("error").is_some_and(|e| !e.is_null()));
        return Err(if is_error {
            ProviderError::new(
                ErrorKind::StreamError,
                provider_message(&text).unwrap_or_default(),
            )
        } else {
            ProviderError::new(
                ErrorKind::MalformedStream,
                format!(
                    "expected an event stream (text/event-stream), got {:?}",
                    if content_type.is_empty() {
                        "no content type"
                    } else {
                        &content_type
                    }
                ),
            )
        });
    }
    let bytes = Box::pin(resp.bytes_stream());
    Ok(GuardedBody::new(bytes, cfg.stream_idle_timeout, MAX_LINE_BYTES).eventsource())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_join_with_or_without_slash() {
        assert_eq!(
            endpoint("http://h:1/v1").unwrap().as_str(),
            "http://h:1/v1/chat/completions"
        );
        assert_eq!(
            endpoint("https://h/v1/").unwrap().as_str(),
            "https://h/v1/chat/completions"
        );
        assert_eq!(
            endpoint("http://h").unwrap().as_str(),
            "http://h/chat/completions"
        );
        for bad in [
            "ftp://h/v1",
            "not a url",
            "http://user:pw@h/v1",
            "file:///x",
        ] {
            assert_eq!(
                endpoint(bad).unwrap_err().code,
                ErrorKind::InvalidConfig,
                "{bad}"
            );
        }
    }

    #[test]
    fn debug_never_shows_the_key() {
        let mut c = ProviderConfig::new("http://h/v1", "m");
        c.api_key = Some("sk-secret-123".into());
        assert!(!format!("{c:?}").contains("sk-secret-123"));
        let client = OpenAiClient::new(c).unwrap();
        assert!(!format!("{client:?}").contains("sk-secret-123"));
    }
}
