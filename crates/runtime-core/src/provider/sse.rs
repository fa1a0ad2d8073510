//! From response bytes to [`ProviderEvent`]s: a guard on the raw body (idle timeout, line-length
//! limit), eventsource-stream for the SSE framing, and [`ChunkParser`] for the chat completion
//! chunks inside `data:` fields.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;
use serde_json::Value;

use super::error::{provider_message, shorten, ErrorKind, ProviderError};
use super::types::{FinishReason, ProviderEvent};

/// Longest SSE line accepted (a chunk carries one small delta; this is generous).
pub(crate) const MAX_LINE_BYTES: usize = 1024 * 1024;

type ByteStream = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

#[derive(Debug)]
pub(crate) enum BodyError {
    Http(reqwest::Error),
    Idle(Duration),
    LineTooLong(usize),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::Http(e) => write!(f, "{e}"),
            BodyError::Idle(d) => write!(f, "no data for {} ms", d.as_millis()),
            BodyError::LineTooLong(n) => write!(f, "a stream line exceeded {n} bytes"),
        }
    }
}

/// The response body with a stall timer (reset by every received byte) and a bound on the
/// length of one line, so a stalled or hostile server costs bounded time and memory.
pub(crate) struct GuardedBody {
    inner: ByteStream,
    idle: Duration,
    sleep: Pin<Box<tokio::time::Sleep>>,
    line_len: usize,
    max_line: usize,
    done: bool,
}

impl GuardedBody {
    pub(crate) fn new(inner: ByteStream, idle: Duration, max_line: usize) -> Self {
        GuardedBody {
            inner,
            idle,
            sleep: Box::pin(tokio::time::sleep(idle)),
            line_len: 0,
            max_line,
            done: false,
        }
    }
}

impl Stream for GuardedBody {
    type Item = Result<Bytes, BodyError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        match this.inner.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(bytes))) => {
                let deadline = tokio::time::Instant::now() + this.idle;
                this.sleep.as_mut().reset(deadline);
                match bytes.iter().rposition(|&b| b == b'\n' || b == b'\r') {
                    Some(i) => this.line_len = bytes.len() - i - 1,
                    None => this.line_len += bytes.len(),
                }
                if this.line_len > this.max_line {
                    this.done = true;
                    return Poll::Ready(Some(Err(BodyError::LineTooLong(this.max_line))));
                }
                Poll::Ready(Some(Ok(bytes)))
            }
            Poll::Ready(Some(Err(e))) => {
                this.done = true;
                Poll::Ready(Some(Err(BodyError::Http(e))))
            }
            Poll::Ready(None) => {
                this.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => match this.sleep.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    this.done = true;
                    Poll::Ready(Some(Err(BodyError::Idle(this.idle))))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

use std::future::Future as _;

/// The error for a failure of the SSE layer.
pub(crate) fn sse_error(e: eventsource_stream::EventStreamError<BodyError>) -> ProviderError {
    use eventsource_stream::EventStreamError as E;
    match e {
        E::Transport(BodyError::Idle(d)) => ProviderError::new(
            ErrorKind::Timeout,
            format!(
                "the stream stalled: no data for {} ms (stream idle timeout)",
                d.as_millis()
            ),
        ),
        E::Transport(BodyError::LineTooLong(n)) => ProviderError::new(
            ErrorKind::MalformedStream,
            format!("a stream line exceeded {n} bytes"),
        ),
        E::Transport(BodyError::Http(e)) => ProviderError::new(
            ErrorKind::StreamDropped,
            format!("the stream broke off: {}", error_chain(&e)),
        ),
        E::Utf8(e) => ProviderError::new(
            ErrorKind::MalformedStream,
            format!("the stream is not UTF-8: {e}"),
        ),
        E::Parser(e) => ProviderError::new(
            ErrorKind::MalformedStream,
            format!(
                "the stream is not valid SSE: {}",
                shorten(&e.to_string(), 200)
            ),
        ),
    }
}

/// `e` and its sources, joined (reqwest's own message is often just "error decoding body").
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}

/// Turns `data:` payloads into events. Usage is held back and emitted just before `Finished`
/// (some servers repeat it on every chunk); `Finished` is emitted once, at `[DONE]` (or at the
/// end of a stream that did send a finish reason).
#[derive(Debug, Default)]
pub(crate) struct ChunkParser {
    finish: Option<FinishReason>,
    usage: Option<(u64, u64)>,
    finished: bool,
}

impl ChunkParser {
    pub(crate) fn on_data(
        &mut self,
        data: &str,
        out: &mut VecDeque<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        if self.finished {
            return Ok(());
        }
        let data = data.trim();
        if data == "[DONE]" {
            self.finish_now(out);
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::new(
                ErrorKind::MalformedStream,
                format!(
                    "a stream event is not a JSON chunk ({e}): {}",
                    shorten(data, 200)
                ),
            )
        })?;
        let Value::Object(obj) = &v else {
            return Err(ProviderError::new(
                ErrorKind::MalformedStream,
                format!(
                    "a stream event is not a JSON object: {}",
                    shorten(data, 200)
                ),
            ));
        };
        if let Some(err) = obj.get("error").filter(|e| !e.is_null()) {
            let message =
                provider_message(&v.to_string()).unwrap_or_else(|| shorten(&err.to_string(), 500));
            let mut e = ProviderError::new(ErrorKind::StreamError, message);
            if let Some(code) = err.get("code").and_then(Value::as_u64) {
                e.status = u16::try_from(code).ok();
            }
            return Err(e);
        }
        if let Some(u) = obj.get("usage").filter(|u| u.is_object()) {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            self.usage = Some((n("prompt_tokens"), n("completion_tokens")));
        }
        let choices = match obj.get("choices") {
            None | Some(Value::Null) => return Ok(()),
            Some(Value::Array(c)) => c,
            Some(_) => return Err(malformed("choices is not an array", data)),
        };
        // One completion is requested (n = 1): only choice 0 counts.
        let Some(choice) = choices
            .iter()
            .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        else {
            return Ok(());
        };
        if let Some(delta) = choice.get("delta").filter(|d| !d.is_null()) {
            if !delta.is_object() {
                return Err(malformed("delta is not an object", data));
            }
            match delta.get("content") {
                Some(Value::String(s)) if !s.is_empty() => {
                    out.push_back(ProviderEvent::TextDelta(s.clone()))
                }
                None | Some(Value::Null) | Some(Value::String(_)) => {}
                Some(_) => return Err(malformed("delta.content is not a string", data)),
            }
            match delta.get("tool_calls") {
                None | Some(Value::Null) => {}
                Some(Value::Array(calls)) => {
                    for (pos, call) in calls.iter().enumerate() {
                        out.push_back(tool_call_delta(call, pos, data)?);
                    }
                }
                Some(_) => return Err(malformed("delta.tool_calls is not an array", data)),
            }
        }
        match choice.get("finish_reason") {
            None | Some(Value::Null) => {}
            Some(Value::String(r)) => self.finish = Some(FinishReason::parse(r)),
            Some(_) => return Err(malformed("finish_reason is not a string", data)),
        }
        Ok(())
    }

    /// The body ended. Fine after a finish reason (some servers omit `[DONE]`); a drop before.
    pub(crate) fn on_end(
        &mut self,
        out: &mut VecDeque<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        if self.finished {
            return Ok(());
        }
        if self.finish.is_some() {
            self.finish_now(out);
            return Ok(());
        }
        Err(ProviderError::new(
            ErrorKind::StreamDropped,
            "the stream ended before the model finished (no finish reason, no [DONE])",
        ))
    }

    fn finish_now(&mut self, out: &mut VecDeque<ProviderEvent>) {
        self.finished = true;
        if let Some((p, c)) = self.usage {
            out.push_back(ProviderEvent::Usage {
                prompt_tokens: p,
                completion_tokens: c,
            });
        }
        let reason = self
            .finish
            .take()
            .unwrap_or_else(|| FinishReason::Other("unknown".into()));
        out.push_back(ProviderEvent::Finished { reason });
    }
}

fn malformed(what: &str, data: &str) -> ProviderError {
    ProviderError::new(
        ErrorKind::MalformedStream,
        format!("{what} in stream chunk: {}", shorten(data, 200)),
    )
}

fn tool_call_delta(call: &Value, pos: usize, data: &str) -> Result<ProviderEvent, ProviderError> {
    if !call.is_object() {
        return Err(malformed("a tool call delta is not an object", data));
    }
    let index = match call.get("index") {
        None | Some(Value::Null) => pos as u64,
        Some(v) => v
            .as_u64()
            .ok_or_else(|| malformed("tool call index is not a number", data))?,
    };
    let index = u32::try_from(index).map_err(|_| malformed("tool call index too large", data))?;
    let text = |v: Option<&Value>, what: &str| -> Result<Option<String>, ProviderError> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(malformed(
                &format!("tool call {what} is not a string"),
                data,
            )),
        }
    };
    let func = call.get("function");
    Ok(ProviderEvent::ToolCallDelta {
        index,
        id: text(call.get("id"), "id")?.filter(|s| !s.is_empty()),
        name: text(func.and_then(|f| f.get("name")), "name")?.filter(|s| !s.is_empty()),
        arguments_delta: text(func.and_then(|f| f.get("arguments")), "arguments")?
            .unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str]) -> Result<Vec<ProviderEvent>, ProviderError> {
        let mut p = ChunkParser::default();
        let mut out = VecDeque::new();
        for l in lines {
            p.on_data(l, &mut out)?;
        }
        Ok(out.into_iter().collect())
    }

    #[test]
    fn usage_comes_last_before_finished() {
        let ev = run(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#,
            "[DONE]",
        ])
        .unwrap();
        assert_eq!(
            ev,
            vec![
                ProviderEvent::TextDelta("Hi".into()),
                ProviderEvent::Usage {
                    prompt_tokens: 3,
                    completion_tokens: 1
                },
                ProviderEvent::Finished {
                    reason: FinishReason::Stop
                },
            ]
        );
    }

    #[test]
    fn wrong_types_are_malformed_not_ignored() {
        for bad in [
            "[1,2]",
            r#"{"choices":{}}"#,
            r#"{"choices":[{"delta":{"content":5}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":"x"}]}}]}"#,
            "{not json",
        ] {
            let e = run(&[bad]).unwrap_err();
            assert_eq!(e.code, ErrorKind::MalformedStream, "{bad}");
        }
    }

    #[test]
    fn an_error_object_in_the_stream_keeps_the_provider_message() {
        let e =
            run(&[r#"{"error":{"message":"context length exceeded","code":400}}"#]).unwrap_err();
        assert_eq!(e.code, ErrorKind::StreamError);
        assert_eq!(e.message, "context length exceeded");
        assert_eq!(e.status, Some(400));
    }

    #[test]
    fn end_without_finish_is_a_drop() {
        let mut p = ChunkParser::default();
        let mut out = VecDeque::new();
        p.on_data(r#"{"choices":[{"delta":{"content":"a"}}]}"#, &mut out)
            .unwrap();
        assert_eq!(
            p.on_end(&mut out).unwrap_err().code,
            ErrorKind::StreamDropped
        );
    }
}
