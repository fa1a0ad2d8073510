//! The turn machine's data: what starts a turn, its inputs and effects, and its whole state
//! ([`TurnCheckpoint`], plain data).
#![deny(clippy::disallowed_methods)]

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::backend::{BackendEvent, BackendInfo, ChatMessage, ModelRequest, ToolSpec};
use crate::event::facts::Decision;
use crate::event::EventDraft;
use crate::ids::*;
use crate::turn::output::OutputBudget;

/// Identifies one effect of one turn; responses name it, stale ones are ignored. Serialized as
/// the bare number (a checkpoint's bytes are what they were when this was a `u64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EffectId(u64);

impl EffectId {
    /// The id of a turn's first effect.
    pub const FIRST: EffectId = EffectId(1);

    pub fn get(self) -> u64 {
        self.0
    }

    /// The id after this one.
    pub fn next(self) -> EffectId {
        EffectId(self.0 + 1)
    }
}

impl fmt::Display for EffectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Limits of one turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnLimits {
    /// Model requests per run before the turn fails with `error_max_turns`.
    pub max_model_rounds: u32,
    /// Re-asks after an answer that does not satisfy the output schema.
    pub max_structured_output_retries: u32,
    /// Runs (attempts) per turn; retryable provider failures start a new run.
    pub max_attempts: u32,
    pub output_budget: OutputBudget,
    /// Tokens (input + output, summed over the turn's model calls) the turn may use; a call
    /// that takes the total past it ends the turn with `error_max_budget`. `None`: no budget.
    #[serde(default)]
    pub max_tokens: Option<u64>,
}

impl Default for TurnLimits {
    fn default() -> Self {
        TurnLimits {
            max_model_rounds: 8,
            max_structured_output_retries: 2,
            max_attempts: 2,
            output_budget: OutputBudget::default(),
            max_tokens: None,
        }
    }
}

/// What starts a turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnSpec {
    pub thread_id: ThreadId,
    pub turn_id: TurnId,
    pub trace_id: Option<TraceId>,
    /// The request that caused the turn, on every event of it.
    #[serde(default)]
    pub request_id: Option<RequestId>,
    pub system_prompt: Option<String>,
    /// The prior conversation of the thread (completed turns), oldest first.
    pub history: Vec<ChatMessage>,
    pub input: String,
    pub output_schema: Option<Value>,
    pub tools: Vec<ToolSpec>,
    pub backend: BackendInfo,
    pub limits: TurnLimits,
    /// Risky tools the session already allowed (`allow_for_session` answers): their calls run
    /// without asking again.
    #[serde(default)]
    pub session_allowed_tools: Vec<String>,
}

/// A finished tool execution, as the executor reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ToolOutcome {
    /// The whole output, and the ref under which the executor stored it.
    Ok {
        output: String,
        output_ref: String,
        artifacts: Vec<ArtifactRecord>,
    },
    Err {
        code: String,
        message: String,
    },
}

/// An artifact a tool produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArtifactRecord {
    pub artifact_id: ArtifactId,
    pub artifact_ref: String,
    pub kind: String,
    pub title: String,
    pub bytes: u64,
}

/// Inputs to the machine.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    Start,
    Model(EffectId, BackendEvent),
    /// The model stream ended without `Finished`/`Failed`.
    ModelStreamEnded(EffectId),
    ToolDone(EffectId, ToolOutcome),
    Action {
        action_id: ActionId,
        decision: Decision,
    },
    /// An approval that answers with updated tool input (standard §8.5 `updatedInput`): the
    /// call runs once with `arguments` instead of the model's, recorded as a new `tool.args`.
    ActionWithInput {
        action_id: ActionId,
        arguments: Value,
    },
    Cancel,
}

/// Work for the executor.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    CallModel {
        id: EffectId,
        request: ModelRequest,
    },
    RunTool {
        id: EffectId,
        tool_call_id: ToolCallId,
        name: String,
        arguments: Value,
    },
    /// Stop an in-flight model stream or tool.
    Abort {
        id: EffectId,
    },
}

/// What one input produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Step {
    pub events: Vec<EventDraft>,
    pub effects: Vec<Effect>,
}

/// A tool call being assembled from deltas or waiting to run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    pub provider_id: String,
    pub name: String,
    pub arguments: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Phase {
    NotStarted,
    /// Streaming from the model (effect id).
    Model(EffectId),
    /// Waiting for a decision on a risky call.
    Action {
        action_id: ActionId,
        call: usize,
    },
    /// A tool is running (effect id, call index).
    Tool(EffectId, usize),
    /// Between two effects (never observed between inputs).
    Idle,
    Finished,
}

/// The machine's whole state: plain data, serializable.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnCheckpoint {
    pub spec: TurnSpec,
    pub phase: Phase,
    pub messages: Vec<ChatMessage>,
    pub task_id: TaskId,
    pub attempt: u32,
    pub run_id: RunId,
    pub model_rounds: u32,
    pub structured_retries: u32,
    pub next_effect: EffectId,
    pub next_step: u64,
    pub next_action: u64,
    /// Conversation length when the current run started (a new run restarts from here).
    pub run_start_len: usize,
    pub text: String,
    pub calls: Vec<PendingCall>,
    /// Ids of the current calls (assigned when they start).
    pub call_ids: Vec<Option<(StepId, ToolCallId)>>,
    pub next_call: usize,
    pub tool_calls_total: u64,
    pub usage: (u64, u64),
    /// Tokens the turn's model calls used so far (every run), checked against
    /// `spec.limits.max_tokens`.
    #[serde(default)]
    pub tokens_used: u64,
    /// `spec.session_allowed_tools` plus the tools allowed for the session during this turn.
    #[serde(default)]
    pub session_allowed_tools: Vec<String>,
}
