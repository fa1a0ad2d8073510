//! Model request and stream facts.

use super::{draft, some, ModelStatus};
use crate::event::*;

/// What `model.requested` says about a request.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelRequestFacts<'a> {
    pub provider_name: &'a str,
    pub model_name: &'a str,
    pub message_count: u64,
    pub tool_count: u64,
    /// 1 for the first answer of a turn with an output schema, +1 per re-ask; `None` without a
    /// schema.
    pub structured_output_attempt: Option<u64>,
}

/// `model.requested` (started).
pub fn model_requested(scope: Scope, r: ModelRequestFacts<'_>) -> EventDraft {
    draft(
        scope,
        EventBody::ModelRequested(
            EventType::ModelRequested,
            ModelRequested {
                provider_name: some(r.provider_name),
                model_name: some(r.model_name),
                status: some(ModelStatus::Started),
                message_count: Some(r.message_count),
                tool_count: Some(r.tool_count),
                structured_output_attempt: r.structured_output_attempt,
                ..Default::default()
            },
        ),
    )
}

/// `model.delta`: streamed answer text.
pub fn model_delta(scope: Scope, text: String) -> EventDraft {
    delta(scope, EventType::ModelDelta, text)
}

/// `reasoning.delta`: streamed reasoning text.
pub fn reasoning_delta(scope: Scope, text: String) -> EventDraft {
    delta(scope, EventType::ReasoningDelta, text)
}

fn delta(scope: Scope, kind: EventType, text: String) -> EventDraft {
    draft(
        scope,
        EventBody::Delta(
            kind,
            TextDelta {
                text: Some(text),
                ..Default::default()
            },
        ),
    )
}

/// What `model.completed` says about a finished response.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelCompletion {
    pub finish_reason: String,
    pub output_chars: u64,
    pub tool_call_count: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// `model.completed`.
pub fn model_completed(scope: Scope, c: ModelCompletion) -> EventDraft {
    draft(
        scope,
        EventBody::ModelCompleted(
            EventType::ModelCompleted,
            ModelCompleted {
                status: some(ModelStatus::Completed),
                finish_reason: Some(c.finish_reason),
                output_chars: Some(c.output_chars),
                tool_call_count: Some(c.tool_call_count),
                input_tokens: Some(c.input_tokens),
                output_tokens: Some(c.output_tokens),
                ..Default::default()
            },
        ),
    )
}

/// `model.failed` (failed): the provider refused or the stream broke.
pub fn model_failed(
    scope: Scope,
    code: &str,
    message: &str,
    retryable: bool,
    http_status: Option<u16>,
) -> EventDraft {
    draft(
        scope,
        EventBody::Failure(
            EventType::ModelFailed,
            Failure {
                status: some(ModelStatus::Failed),
                code: some(code),
                message: some(message),
                retryable: Some(retryable),
                http_status: http_status.map(u64::from),
                ..Default::default()
            },
        ),
    )
}

/// `model.failed {status: cancelled}`: the turn was cancelled while the model streamed.
pub fn model_cancelled(scope: Scope, code: &str, message: &str) -> EventDraft {
    draft(
        scope,
        EventBody::Failure(
            EventType::ModelFailed,
            Failure {
                status: some(ModelStatus::Cancelled),
                code: some(code),
                message: some(message),
                ..Default::default()
            },
        ),
    )
}

/// `runtime.warning` (no status): something the turn recovers from, e.g. an answer that did
/// not satisfy the output schema and is asked again.
pub fn runtime_warning(scope: Scope, code: &str, message: String) -> EventDraft {
    draft(
        scope,
        EventBody::Failure(
            EventType::RuntimeWarning,
            Failure {
                code: some(code),
                message: Some(message),
                ..Default::default()
            },
        ),
    )
}
