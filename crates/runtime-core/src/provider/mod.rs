//! The model backend: a client for the OpenAI-compatible chat completions API, the one spoken by
//! hosted providers and by llama.cpp, vLLM and Ollama.
//!
//! [`OpenAiClient::stream_chat`] sends one streaming request and yields [`ProviderEvent`]s (text
//! deltas, tool-call deltas, usage, the finish reason) or ends with one [`ProviderError`] whose
//! `code` is a stable string (`provider.*`, see [`ErrorKind`]). What the client guarantees:
//!
//! - `429` and `5xx` answers (and connection failures) *before the stream starts* are retried
//!   up to `max_retries` times with bounded exponential backoff, honouring `Retry-After`
//!   (seconds or an HTTP date); once a single delta has been yielded nothing is retried.
//! - Waiting for the response head is bounded by `request_timeout`; a stream that sends no byte
//!   for `stream_idle_timeout` ends with `provider.timeout`.
//! - A stream that ends before `data: [DONE]` (and before a finish reason) ends with
//!   `provider.stream_dropped`; a line that is not a JSON chunk ends with
//!   `provider.malformed_stream`; an error object sent by the provider, in the body of an error
//!   status or inside the stream, surfaces with the provider's own message.
//! - Cancellation (the [`CancellationToken`](tokio_util::sync::CancellationToken) passed in, or
//!   dropping the stream) stops reading at once and closes the connection.
//! - Memory is bounded: SSE lines, error bodies and collected output have size limits.
//!
//! HTTP is reqwest (rustls with the ring provider: no OpenSSL), SSE framing is
//! eventsource-stream; nothing here parses HTTP by hand. The API key is sent as a bearer token
//! and never logged or put in an error message. Prompt text is not logged.

mod backend;
mod client;
mod collect;
mod error;
mod retry;
mod sse;
mod types;

pub use backend::OpenAiBackend;
pub use client::{normalize_base_url, ConnectionTest, OpenAiClient, ProviderConfig};
pub use collect::{collect, ChatResponse, CollectLimits};
pub use error::{ErrorKind, ProviderError};
pub use retry::{backoff_delay, parse_retry_after};
pub use tokio_util::sync::CancellationToken;
pub use types::{
    ChatMessage, ChatRequest, FinishReason, ProviderEvent, ResponseFormat, ToolCall, ToolChoice,
    ToolSpec,
};
