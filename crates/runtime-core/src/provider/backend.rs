//! The real [`ExecutionBackend`]: the OpenAI-compatible client behind the runtime's trait.
//!
//! A thin adapter: requests are translated message by message, provider events map one to one
//! onto [`BackendEvent`]s, a provider error ends the stream with `Failed` carrying the provider's
//! code and message, and the runtime's cancel signal cancels the HTTP stream.

use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::client::{OpenAiClient, ProviderConfig};
use super::error::ProviderError;
use super::types::{self, ChatRequest, FinishReason, ProviderEvent, ResponseFormat};
use super::CancellationToken;
use crate::backend::{
    BackendError, BackendEvent, BackendInfo, CancelSignal, ChatMessage, ExecutionBackend,
    ModelRequest,
};

/// Events buffered between the HTTP stream and the turn executor.
const CHANNEL: usize = 256;

pub struct OpenAiBackend {
    client: OpenAiClient,
    info: BackendInfo,
}

impl OpenAiBackend {
    pub fn new(config: ProviderConfig) -> Result<OpenAiBackend, ProviderError> {
        let info = BackendInfo {
            provider_name: "openai-compatible".to_owned(),
            model_name: config.model.clone(),
        };
        Ok(OpenAiBackend {
            client: OpenAiClient::new(config)?,
            info,
        })
    }
}

/// The provider request for a runtime request.
pub fn to_chat_request(req: &ModelRequest) -> ChatRequest {
    let messages = req
        .messages
        .iter()
        .map(|m| match m {
            ChatMessage::System { content } => types::ChatMessage::System(content.clone()),
            ChatMessage::User { content } => types::ChatMessage::User(content.clone()),
            ChatMessage::Assistant {
                content,
                tool_calls,
            } => types::ChatMessage::Assistant {
                content: (!content.is_empty()).then(|| content.clone()),
                tool_calls: tool_calls
                    .iter()
                    .map(|c| types::ToolCall {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    })
                    .collect(),
            },
            ChatMessage::Tool {
                tool_call_id,
                content,
            } => types::ChatMessage::Tool {
                tool_call_id: tool_call_id.clone(),
                content: content.clone(),
            },
        })
        .collect();
    ChatRequest {
        messages,
        tools: req
            .tools
            .iter()
            .map(|t| types::ToolSpec {
                name: t.name.clone(),
                description: t.description.clone(),
                parameters: t.parameters.clone(),
            })
            .collect(),
        response_format: req.response_format.as_ref().map(|schema| ResponseFormat {
            name: "result".to_owned(),
            schema: schema.clone(),
            strict: false,
        }),
        ..ChatRequest::default()
    }
}

/// One provider event as a runtime event.
pub fn to_backend_event(e: ProviderEvent) -> BackendEvent {
    match e {
        ProviderEvent::TextDelta(t) => BackendEvent::TextDelta(t),
        ProviderEvent::ToolCallDelta {
            index,
            id,
            name,
            arguments_delta,
        } => BackendEvent::ToolCallDelta {
            index,
            id,
            name,
            arguments_delta,
        },
        ProviderEvent::Usage {
            prompt_tokens,
            completion_tokens,
        } => BackendEvent::Usage {
            input_tokens: prompt_tokens,
            output_tokens: completion_tokens,
        },
        ProviderEvent::Finished { reason } => BackendEvent::Finished {
            reason: match reason {
                FinishReason::Stop => "stop".to_owned(),
                FinishReason::Length => "length".to_owned(),
                FinishReason::ToolCalls => "tool_calls".to_owned(),
                FinishReason::ContentFilter => "content_filter".to_owned(),
                FinishReason::Other(o) => o,
            },
        },
    }
}

/// A provider error as the runtime's failure.
pub fn to_backend_error(e: ProviderError) -> BackendError {
    BackendError {
        code: e.code.as_str().to_owned(),
        message: e.message,
        status: e.status,
        retryable: e.retryable,
    }
}

impl ExecutionBackend for OpenAiBackend {
    fn info(&self) -> BackendInfo {
        self.info.clone()
    }

    fn stream(
        &self,
        request: ModelRequest,
        mut cancel: CancelSignal,
    ) -> mpsc::Receiver<BackendEvent> {
        let (tx, rx) = mpsc::channel(CHANNEL);
        let token = CancellationToken::new();
        let stream = self
            .client
            .stream_chat(&to_chat_request(&request), token.clone());
        tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            loop {
                let next = tokio::select! {
                    _ = cancel.cancelled() => {
                        token.cancel();
                        return;
                    }
                    next = stream.next() => next,
                };
                let event = match next {
                    None => return,
                    Some(Ok(e)) => to_backend_event(e),
                    Some(Err(e)) => BackendEvent::Failed(to_backend_error(e)),
                };
                let last = matches!(
                    event,
                    BackendEvent::Finished { .. } | BackendEvent::Failed(_)
                );
                if tx.send(event).await.is_err() || last {
                    token.cancel();
                    return;
                }
            }
        });
        rx
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{ChatToolCall, ToolSpec};

    #[test]
    fn requests_and_events_translate_one_to_one() {
        let req = ModelRequest {
            messages: vec![
                ChatMessage::System {
                    content: "s".into(),
                },
                ChatMessage::User {
                    content: "u".into(),
                },
                ChatMessage::Assistant {
                    content: String::new(),
                    tool_calls: vec![ChatToolCall {
                        id: "c1".into(),
                        name: "t".into(),
                        arguments: "{}".into(),
                    }],
                },
                ChatMessage::Tool {
                    tool_call_id: "c1".into(),
                    content: "r".into(),
                },
            ],
            tools: vec![ToolSpec {
                name: "t".into(),
                description: "d".into(),
                parameters: serde_json::json!({"type": "object"}),
                risky: true,
            }],
            response_format: Some(serde_json::json!({"type": "object"})),
        };
        let chat = to_chat_request(&req);
        assert_eq!(chat.messages.len(), 4);
        assert!(matches!(
            &chat.messages[2],
            types::ChatMessage::Assistant { content: None, tool_calls } if tool_calls.len() == 1
        ));
        assert_eq!(chat.tools[0].name, "t");
        assert!(chat.response_format.is_some());
        assert_eq!(
            to_backend_event(ProviderEvent::Finished {
                reason: FinishReason::ToolCalls
            }),
            BackendEvent::Finished {
                reason: "tool_calls".into()
            }
        );
        assert_eq!(
            to_backend_event(ProviderEvent::Usage {
                prompt_tokens: 3,
                completion_tokens: 4
            }),
            BackendEvent::Usage {
                input_tokens: 3,
                output_tokens: 4
            }
        );
    }
}
