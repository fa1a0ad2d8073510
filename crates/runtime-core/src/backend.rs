//! The model-provider boundary: [`ExecutionBackend`] (async, streaming, cancellable) and
//! [`ScriptedBackend`], a deterministic backend for tests. The real OpenAI-compatible backend
//! lives in `provider` and is adapted to this trait by the host.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, watch};

/// One message of the conversation sent to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum ChatMessage {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        content: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ChatToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// A tool call as the provider named it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them (JSON text).
    pub arguments: String,
}

/// A tool offered to the model (function name, description, JSON Schema of its arguments).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
    /// Risky tools need an explicit `agentSession/action/respond` approval per call.
    pub risky: bool,
}

/// One request to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRequest {
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
    /// The JSON Schema the answer must satisfy (structured output), if any.
    pub response_format: Option<Value>,
}

/// A provider failure, normalized.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackendError {
    pub code: String,
    pub message: String,
    pub status: Option<u16>,
    pub retryable: bool,
}

/// What a model stream yields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum BackendEvent {
    TextDelta(String),
    ReasoningDelta(String),
    ToolCallDelta {
        index: u32,
        id: Option<String>,
        name: Option<String>,
        arguments_delta: String,
    },
    Usage {
        input_tokens: u64,
        output_tokens: u64,
    },
    Finished {
        reason: String,
    },
    Failed(BackendError),
}

/// The provider and model a backend talks to (for routing facts).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BackendInfo {
    pub provider_name: String,
    pub model_name: String,
}

/// Cancellation as a value: the executor holds the [`CancelHandle`], the backend watches the
/// [`CancelSignal`].
#[derive(Clone, Debug)]
pub struct CancelSignal(watch::Receiver<bool>);

#[derive(Debug)]
pub struct CancelHandle(watch::Sender<bool>);

pub fn cancel_pair() -> (CancelHandle, CancelSignal) {
    let (tx, rx) = watch::channel(false);
    (CancelHandle(tx), CancelSignal(rx))
}

impl CancelHandle {
    pub fn cancel(&self) {
        let _ = self.0.send(true);
    }
}

impl CancelSignal {
    pub fn is_cancelled(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves once cancelled (never, if the handle is dropped uncancelled).
    pub async fn cancelled(&mut self) {
        loop {
            if *self.0.borrow_and_update() {
                return;
            }
            if self.0.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

/// The model provider. `stream` starts one request and returns its events; the stream ends
/// after `Finished` or `Failed` (a stream that ends without either was dropped). When `cancel`
/// fires the backend stops producing and drops the stream.
pub trait ExecutionBackend: Send + Sync {
    fn info(&self) -> BackendInfo;
    fn stream(&self, request: ModelRequest, cancel: CancelSignal) -> mpsc::Receiver<BackendEvent>;
}

/// One scripted model response.
#[derive(Clone, Debug)]
pub enum ScriptStep {
    Emit(BackendEvent),
    Sleep(Duration),
    /// End the stream without `Finished` (a dropped connection).
    Drop,
}

/// A backend that plays scripted responses, one per request, and records the requests.
#[derive(Clone, Default)]
pub struct ScriptedBackend {
    scripts: Arc<Mutex<VecDeque<Vec<ScriptStep>>>>,
    requests: Arc<Mutex<Vec<ModelRequest>>>,
    fallback: Arc<Mutex<Option<Vec<ScriptStep>>>>,
}

impl ScriptedBackend {
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues one response.
    pub fn push(&self, script: Vec<ScriptStep>) -> &Self {
        self.scripts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push_back(script);
        self
    }

    /// Queues a plain text answer streamed in the given chunks.
    pub fn push_text(&self, chunks: &[&str]) -> &Self {
        let mut s: Vec<ScriptStep> = chunks
            .iter()
            .map(|c| ScriptStep::Emit(BackendEvent::TextDelta((*c).to_owned())))
            .collect();
        s.push(ScriptStep::Emit(BackendEvent::Usage {
            input_tokens: 10,
            output_tokens: chunks.len() as u64,
        }));
        s.push(ScriptStep::Emit(BackendEvent::Finished {
            reason: "stop".into(),
        }));
        self.push(s)
    }

    /// Queues one tool call.
    pub fn push_tool_call(&self, id: &str, name: &str, arguments: &str) -> &Self {
        self.push(vec![
            ScriptStep::Emit(BackendEvent::ToolCallDelta {
                index: 0,
                id: Some(id.into()),
                name: Some(name.into()),
                arguments_delta: arguments.into(),
            }),
            ScriptStep::Emit(BackendEvent::Finished {
                reason: "tool_calls".into(),
            }),
        ])
    }

    /// The response played when the queue is empty (default: a `script_exhausted` failure).
    pub fn set_fallback(&self, script: Vec<ScriptStep>) {
        *self.fallback.lock().unwrap_or_else(|p| p.into_inner()) = Some(script);
    }

    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl ExecutionBackend for ScriptedBackend {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            provider_name: "scripted".into(),
            model_name: "scripted-model".into(),
        }
    }

    fn stream(
        &self,
        request: ModelRequest,
        mut cancel: CancelSignal,
    ) -> mpsc::Receiver<BackendEvent> {
        self.requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(request);
        let script = self
            .scripts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front()
            .or_else(|| {
                self.fallback
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone()
            })
            .unwrap_or_else(|| {
                vec![ScriptStep::Emit(BackendEvent::Failed(BackendError {
                    code: "script_exhausted".into(),
                    message: "the scripted backend has no response queued".into(),
                    status: None,
                    retryable: false,
                }))]
            });
        let (tx, rx) = mpsc::channel(64);
        tokio::spawn(async move {
            for step in script {
                if cancel.is_cancelled() {
                    return;
                }
                match step {
                    ScriptStep::Emit(ev) => {
                        if tx.send(ev).await.is_err() {
                            return;
                        }
                    }
                    ScriptStep::Sleep(d) => {
                        tokio::select! {
                            _ = tokio::time::sleep(d) => {}
                            _ = cancel.cancelled() => return,
                        }
                    }
                    ScriptStep::Drop => return,
                }
            }
        });
        rx
    }
}
