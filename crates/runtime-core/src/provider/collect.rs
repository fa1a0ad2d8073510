//! Reading a whole stream into one [`ChatResponse`]: text concatenated, tool calls assembled
//! from their deltas, within size limits.

use std::collections::BTreeMap;

use futures_util::{Stream, StreamExt};

use super::error::{ErrorKind, ProviderError};
use super::types::{FinishReason, ProviderEvent, ToolCall};

/// Bounds on what one answer may hold.
#[derive(Debug, Clone, Copy)]
pub struct CollectLimits {
    pub max_text_bytes: usize,
    pub max_tool_calls: usize,
    pub max_argument_bytes: usize,
}

impl Default for CollectLimits {
    /// 4 MiB of text, 64 tool calls of at most 1 MiB of arguments each.
    fn default() -> Self {
        CollectLimits {
            max_text_bytes: 4 * 1024 * 1024,
            max_tool_calls: 64,
            max_argument_bytes: 1024 * 1024,
        }
    }
}

/// One whole answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    pub text: String,
    /// In index order. A call whose id the provider did not send gets `call_<index>`.
    pub tool_calls: Vec<ToolCall>,
    /// `(prompt_tokens, completion_tokens)` when the provider reported usage.
    pub usage: Option<(u64, u64)>,
    pub finish_reason: FinishReason,
}

/// Reads `stream` to its `Finished` event, or returns its first error.
pub async fn collect<S>(stream: S, limits: CollectLimits) -> Result<ChatResponse, ProviderError>
where
    S: Stream<Item = Result<ProviderEvent, ProviderError>>,
{
    futures_util::pin_mut!(stream);
    let mut text = String::new();
    let mut calls: BTreeMap<u32, (Option<String>, Option<String>, String)> = BTreeMap::new();
    let mut usage = None;
    let too_large = |what: String| ProviderError::new(ErrorKind::ResponseTooLarge, what);
    while let Some(item) = stream.next().await {
        match item? {
            ProviderEvent::TextDelta(t) => {
                if text.len() + t.len() > limits.max_text_bytes {
                    return Err(too_large(format!(
                        "the answer exceeded {} bytes of text",
                        limits.max_text_bytes
                    )));
                }
                text.push_str(&t);
            }
            ProviderEvent::ToolCallDelta {
                index,
                id,
                name,
                arguments_delta,
            } => {
                if !calls.contains_key(&index) && calls.len() >= limits.max_tool_calls {
                    return Err(too_large(format!(
                        "the answer has more than {} tool calls",
                        limits.max_tool_calls
                    )));
                }
                let call = calls.entry(index).or_default();
                if call.0.is_none() {
                    call.0 = id;
                }
                if call.1.is_none() {
                    call.1 = name;
                }
                if call.2.len() + arguments_delta.len() > limits.max_argument_bytes {
                    return Err(too_large(format!(
                        "tool call {index} exceeded {} bytes of arguments",
                        limits.max_argument_bytes
                    )));
                }
                call.2.push_str(&arguments_delta);
            }
            ProviderEvent::Usage {
                prompt_tokens,
                completion_tokens,
            } => usage = Some((prompt_tokens, completion_tokens)),
            ProviderEvent::Finished { reason } => {
                let mut tool_calls = Vec::with_capacity(calls.len());
                for (index, (id, name, arguments)) in calls {
                    let name = name.ok_or_else(|| {
                        ProviderError::new(
                            ErrorKind::MalformedStream,
                            format!("tool call {index} has no function name"),
                        )
                    })?;
                    tool_calls.push(ToolCall {
                        id: id.unwrap_or_else(|| format!("call_{index}")),
                        name,
                        arguments,
                    });
                }
                return Ok(ChatResponse {
                    text,
                    tool_calls,
                    usage,
                    finish_reason: reason,
                });
            }
        }
    }
    Err(ProviderError::new(
        ErrorKind::StreamDropped,
        "the stream ended without finishing",
    ))
}
