//! [`ProviderError`]: one stable code, the provider's own message when it sent one, the HTTP
//! status when there was one, and whether trying again later may help.

use std::time::Duration;

macro_rules! kinds {
    ($( $(#[$doc:meta])* $variant:ident = $text:literal, )*) => {
        /// Why a provider request failed. The wire strings are stable (documented in
        /// `docs/cli.md`, mirrored by host-core's error codes).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorKind { $( $(#[$doc])* $variant, )* }

        impl ErrorKind {
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$variant,)*];
            pub fn as_str(self) -> &'static str {
                match self { $(ErrorKind::$variant => $text,)* }
            }
        }
    };
}

kinds! {
    /// The base URL or the client could not be set up.
    InvalidConfig = "provider.invalid_config",
    /// No connection could be made (DNS, refused, TLS).
    Unreachable = "provider.unreachable",
    /// No response head within the request timeout, or the stream stalled past its idle timeout.
    Timeout = "provider.timeout",
    /// `401`/`403`: the key is missing, wrong or not allowed.
    Auth = "provider.auth",
    /// `429` after every retry.
    RateLimited = "provider.rate_limited",
    /// `5xx` after every retry.
    ServerError = "provider.server_error",
    /// Any other non-success status (bad request, unknown model, ...).
    HttpStatus = "provider.http_status",
    /// The provider sent an error object inside the stream.
    StreamError = "provider.stream_error",
    /// The stream ended (or the connection broke) before it was finished.
    StreamDropped = "provider.stream_dropped",
    /// A stream line that is not a chat completion chunk, or an over-long line.
    MalformedStream = "provider.malformed_stream",
    /// The answer exceeded the size the caller accepts.
    ResponseTooLarge = "provider.response_too_large",
    /// The caller cancelled the request.
    Cancelled = "provider.cancelled",
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ProviderError {
    pub code: ErrorKind,
    /// The provider's own message when it sent one; otherwise what went wrong. Never contains
    /// the API key or prompt text.
    pub message: String,
    pub status: Option<u16>,
    /// Trying again later may succeed (timeouts, drops, rate limits, server errors).
    pub retryable: bool,
    /// The provider's `Retry-After`, when it sent one.
    pub retry_after: Option<Duration>,
}

impl ProviderError {
    pub fn new(code: ErrorKind, message: impl Into<String>) -> Self {
        let retryable = matches!(
            code,
            ErrorKind::Unreachable
                | ErrorKind::Timeout
                | ErrorKind::RateLimited
                | ErrorKind::ServerError
                | ErrorKind::StreamDropped
        );
        ProviderError {
            code,
            message: message.into(),
            status: None,
            retryable,
            retry_after: None,
        }
    }

    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    pub(crate) fn cancelled() -> Self {
        ProviderError::new(ErrorKind::Cancelled, "the request was cancelled")
    }
}

/// The kind for a non-success HTTP status.
pub(crate) fn kind_for_status(status: u16) -> ErrorKind {
    match status {
        401 | 403 => ErrorKind::Auth,
        429 => ErrorKind::RateLimited,
        500..=599 => ErrorKind::ServerError,
        _ => ErrorKind::HttpStatus,
    }
}

/// The message inside an error body: `{"error": {"message": ...}}` (OpenAI, vLLM, llama.cpp),
/// `{"error": "..."}` (Ollama) or `{"message": ...}`; else the body text itself, cut short.
pub(crate) fn provider_message(body: &str) -> Option<String> {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(body) {
        let m = v
            .pointer("/error/message")
            .or_else(|| v.get("error").filter(|e| e.is_string()))
            .or_else(|| v.get("message"))
            .or_else(|| v.get("detail"))
            .and_then(|m| m.as_str());
        if let Some(m) = m {
            return Some(shorten(m, 2000));
        }
    }
    let t = body.trim();
    (!t.is_empty()).then(|| shorten(t, 500))
}

pub(crate) fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_namespaced() {
        let mut seen = std::collections::HashSet::new();
        for k in ErrorKind::ALL {
            assert!(seen.insert(k.as_str()));
            assert!(k.as_str().starts_with("provider."));
        }
    }

    #[test]
    fn provider_messages_are_found_in_the_usual_shapes() {
        assert_eq!(
            provider_message(r#"{"error":{"message":"bad key","type":"x"}}"#).as_deref(),
            Some("bad key")
        );
        assert_eq!(
            provider_message(r#"{"error":"model not found"}"#).as_deref(),
            Some("model not found")
        );
        assert_eq!(
            provider_message("plain text").as_deref(),
            Some("plain text")
        );
        assert_eq!(provider_message("  "), None);
        assert_eq!(shorten("ééé", 3), "é…");
    }

    #[test]
    fn statuses_map_to_kinds() {
        assert_eq!(kind_for_status(401), ErrorKind::Auth);
        assert_eq!(kind_for_status(429), ErrorKind::RateLimited);
        assert_eq!(kind_for_status(503), ErrorKind::ServerError);
        assert_eq!(kind_for_status(404), ErrorKind::HttpStatus);
    }
}
