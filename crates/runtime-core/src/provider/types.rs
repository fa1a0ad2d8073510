//! Requests and events in the shape of the OpenAI chat completions API.

use serde_json::{json, Map, Value};

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    System(String),
    User(String),
    /// What the model said before: text, tool calls, or both.
    Assistant {
        content: Option<String>,
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call, answered by its id.
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// A complete tool call (assembled from [`ProviderEvent::ToolCallDelta`]s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them: JSON text, not validated here.
    pub arguments: String,
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    Auto,
    None,
    Required,
    /// Call this tool.
    Function(String),
}

/// Structured output: the answer must be JSON matching `schema`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseFormat {
    pub name: String,
    pub schema: Value,
    pub strict: bool,
}

/// One chat completions request (always streamed).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatRequest {
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
    pub tool_choice: Option<ToolChoice>,
    pub response_format: Option<ResponseFormat>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
}

/// What a stream yields, in order: deltas, then `Usage` (when the provider reports it), then
/// exactly one `Finished`; nothing follows `Finished`.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderEvent {
    TextDelta(String),
    /// A piece of tool call number `index`: the first piece carries `id` and `name`, later
    /// pieces append to the arguments.
    ToolCallDelta {
        index: u32,
        id: Option<String>,
        name: Option<String>,
        arguments_delta: String,
    },
    Usage {
        prompt_tokens: u64,
        completion_tokens: u64,
    },
    Finished {
        reason: FinishReason,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    Length,
    ToolCalls,
    ContentFilter,
    /// A reason this client does not know, as the provider spelled it.
    Other(String),
}

impl FinishReason {
    pub fn parse(s: &str) -> FinishReason {
        match s {
            "stop" => FinishReason::Stop,
            "length" => FinishReason::Length,
            // `function_call` is the legacy spelling.
            "tool_calls" | "function_call" => FinishReason::ToolCalls,
            "content_filter" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Other(s) => s,
        }
    }
}

impl ChatMessage {
    fn to_wire(&self) -> Value {
        match self {
            ChatMessage::System(c) => json!({"role": "system", "content": c}),
            ChatMessage::User(c) => json!({"role": "user", "content": c}),
            ChatMessage::Assistant {
                content,
                tool_calls,
            } => {
                let mut m = Map::new();
                m.insert("role".into(), "assistant".into());
                m.insert(
                    "content".into(),
                    content.clone().map(Value::String).unwrap_or(Value::Null),
                );
                if !tool_calls.is_empty() {
                    let calls = tool_calls
                        .iter()
                        .map(|c| {
                            json!({"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": c.arguments}})
                        })
                        .collect();
                    m.insert("tool_calls".into(), Value::Array(calls));
                }
                Value::Object(m)
            }
            ChatMessage::Tool {
                tool_call_id,
                content,
            } => json!({"role": "tool", "tool_call_id": tool_call_id, "content": content}),
        }
    }
}

impl ChatRequest {
    /// The JSON body for `POST {base}/chat/completions` with `stream: true` and usage reporting.
    pub fn to_body(&self, model: &str) -> Value {
        let mut m = Map::new();
        m.insert("model".into(), model.into());
        m.insert(
            "messages".into(),
            Value::Array(self.messages.iter().map(ChatMessage::to_wire).collect()),
        );
        m.insert("stream".into(), true.into());
        m.insert("stream_options".into(), json!({"include_usage": true}));
        if !self.tools.is_empty() {
            let tools = self
                .tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.parameters}})
                })
                .collect();
            m.insert("tools".into(), Value::Array(tools));
        }
        if let Some(choice) = &self.tool_choice {
            let v = match choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::None => json!("none"),
                ToolChoice::Required => json!("required"),
                ToolChoice::Function(name) => {
                    json!({"type": "function", "function": {"name": name}})
                }
            };
            m.insert("tool_choice".into(), v);
        }
        if let Some(f) = &self.response_format {
            m.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {
                    "name": f.name, "schema": f.schema, "strict": f.strict}}),
            );
        }
        if let Some(n) = self.max_tokens {
            m.insert("max_tokens".into(), n.into());
        }
        if let Some(t) = self.temperature {
            m.insert("temperature".into(), json!(t));
        }
        Value::Object(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_has_the_openai_shape() {
        let req = ChatRequest {
            messages: vec![
                ChatMessage::System("be brief".into()),
                ChatMessage::User("hi".into()),
                ChatMessage::Assistant {
                    content: None,
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "add".into(),
                        arguments: "{\"a\":1}".into(),
                    }],
                },
                ChatMessage::Tool {
                    tool_call_id: "c1".into(),
                    content: "2".into(),
                },
            ],
            tools: vec![ToolSpec {
                name: "add".into(),
                description: "adds".into(),
                parameters: json!({"type": "object"}),
            }],
            tool_choice: Some(ToolChoice::Function("add".into())),
            response_format: None,
            max_tokens: Some(5),
            temperature: Some(0.5),
        };
        let body = req.to_body("m");
        assert_eq!(body["model"], "m");
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["messages"][2]["content"], Value::Null);
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"a\":1}"
        );
        assert_eq!(body["messages"][3]["tool_call_id"], "c1");
        assert_eq!(body["tools"][0]["function"]["parameters"]["type"], "object");
        assert_eq!(body["tool_choice"]["function"]["name"], "add");
        assert_eq!(body["max_tokens"], 5);
        assert_eq!(body["temperature"], 0.5);
        assert!(body.get("response_format").is_none());
    }
}
