//! Typed payloads for the event types RuntimeCore emits. Every struct keeps fields it does not
//! know in `extra`, so a foreign (or newer) event round-trips unchanged.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

type Extra = Map<String, Value>;

macro_rules! payload {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            $($(#[$fdoc])* #[serde(default, skip_serializing_if = "Option::is_none")] pub $field: Option<$ty>,)*
            /// Fields this version does not model (kept for round-trips).
            #[serde(flatten, default, skip_serializing_if = "Map::is_empty")]
            #[schemars(skip)]
            pub extra: Extra,
        }
    };
}

payload!(
    /// `session.created` / `session.updated`.
    SessionPayload {
        app_id: String,
        status: String,
        workspace_id: String,
        title: String,
        /// The business object the session is about (`agentSession/start`), as given.
        business_object_ref: Value,
        /// `session.updated`: archived (`true`) or restored (`false`) by `agentSession/update`.
        archived: bool,
    }
);
payload!(
    /// `thread.started` / `thread.updated`.
    ThreadPayload { status: String }
);
payload!(
    /// `turn.submitted`: the turn is accepted or queued, before any long work.
    TurnSubmitted {
        /// A ref to the input (never the prompt text itself).
        input_ref: String,
        source: String,
        /// `accepted` or `queued`.
        status: String,
        input_chars: u64,
        structured_output: bool,
        /// `input.attachments` as given (kept and echoed; their content is not read yet).
        attachments: Vec<Value>,
        /// `runtimeOptions.capabilityId` (a capability `capability/list` offers).
        capability_id: String,
        /// `runtimeOptions.metadata` as given.
        metadata: Value,
    }
);
payload!(
    /// `turn.started`.
    TurnStarted { status: String, queued_turn_id: String }
);
payload!(
    /// `turn.completed`.
    TurnCompleted {
        status: String,
        /// `assistant_message` or `structured_output`.
        outcome: String,
        output_chars: u64,
        structured_output: Value,
        finish_reason: String,
    }
);
payload!(
    /// `turn.failed`: also the terminal event of a cancelled turn (`status: "cancelled"`), the
    /// standard having no turn-cancel type.
    TurnFailed { status: String, code: String, message: String, retryable: bool, reason: String }
);
payload!(
    /// `queue.changed`.
    QueueChanged {
        /// `added`, `removed`, `restored` (after a restart) or `resumed`.
        change: String,
        queued_turn_id: String,
        queue_length: u64,
        /// `paused` while a restored queue waits for `agentSession/thread/resume`.
        status: String,
        reason: String,
    }
);
payload!(
    /// `task.*` lifecycle (created, started, completed, failed, cancel_requested, cancelled,
    /// retrying).
    TaskPayload {
        status: String,
        title: String,
        objective: String,
        code: String,
        message: String,
        reason: String,
        failed_run_id: String,
        next_attempt_index: u64,
    }
);
payload!(
    /// `task.attempt.*`.
    TaskAttemptPayload {
        status: String,
        attempt_index: u64,
        retryable: bool,
        failure_category: String,
        message: String,
        next_attempt_policy: String,
    }
);
payload!(
    /// `run.status`.
    RunStatus { phase: String, title: String, detail: String }
);
payload!(
    /// `model.requested`.
    ModelRequested {
        provider_name: String,
        model_name: String,
        status: String,
        message_count: u64,
        tool_count: u64,
        structured_output_attempt: u64,
    }
);
payload!(
    /// `model.delta` / `reasoning.delta`.
    TextDelta { text: String }
);
payload!(
    /// `model.completed`.
    ModelCompleted {
        status: String,
        finish_reason: String,
        output_chars: u64,
        tool_call_count: u64,
        input_tokens: u64,
        output_tokens: u64,
    }
);
payload!(
    /// `model.failed`, `tool.failed`, `runtime.error`, `runtime.warning`.
    Failure { status: String, code: String, message: String, retryable: bool, http_status: u64 }
);
payload!(
    /// `tool.started`.
    ToolStarted { tool_name: String, status: String, risk: String }
);
payload!(
    /// `tool.args`.
    ToolArgs { arguments: Value }
);
payload!(
    /// `tool.result`: the output as the model sees it (within budget) and the ref to the whole.
    ToolResult {
        status: String,
        output_preview: String,
        output_bytes: u64,
        output_lines: u64,
        output_ref: String,
        truncated: bool,
    }
);
payload!(
    /// `output.spilled`: a tool output over budget is kept whole behind `outputRef`.
    OutputSpilled {
        output_ref: String,
        bytes: u64,
        lines: u64,
        budget_bytes: u64,
        budget_lines: u64,
        preview_bytes: u64,
    }
);
payload!(
    /// `permission.evaluated`.
    PermissionEvaluated {
        tool_name: String,
        result: String,
        risk: String,
        owner: String,
        mode: String,
        /// `session_grant` when an earlier `allow_for_session` answer allowed the call.
        decision_source: String,
    }
);
payload!(
    /// `action.required`.
    ActionRequired {
        action_type: String,
        tool_name: String,
        decision_kind: String,
        prompt: String,
        arguments: Value,
        available_decisions: Vec<String>,
        status: String,
        scope: Value,
    }
);
payload!(
    /// `action.resolved`.
    ActionResolved {
        decision: String,
        confirmed: bool,
        status: String,
        source: String,
        /// The tool the decision is about (tool confirmations).
        tool_name: String,
        /// `session` for `allow_for_session` (remembered for the session's later calls of
        /// `toolName`), else `call`.
        scope: String,
    }
);
payload!(
    /// `artifact.changed`.
    ArtifactChanged { artifact_ref: String, kind: String, title: String, bytes: u64, status: String }
);
payload!(
    /// `evidence.changed`.
    EvidenceChanged {
        pack_ref: String,
        replay_ref: String,
        verification_outcomes: Vec<VerificationOutcome>,
    }
);
payload!(
    /// `routing.single_candidate` / `routing.decided` / `routing.not_possible`.
    Routing {
        task_kind: String,
        candidate_count: u64,
        selected_model: String,
        decision_source: String,
        capability_gap: String,
    }
);
payload!(
    /// `rate_limit.hit`, `quota.*`, `cost.recorded`, `limit.changed`. `cost.recorded` (one per
    /// model call) carries the call's `inputTokens`/`outputTokens`, the turn's running
    /// `usedTokens`, its `maxTokens` budget when it has one, and `costUsd` when the provider
    /// reported a price.
    Limit {
        kind: String,
        status: String,
        retry_after_ms: u64,
        amount: f64,
        input_tokens: u64,
        output_tokens: u64,
        used_tokens: u64,
        max_tokens: u64,
        cost_usd: f64,
    }
);
payload!(
    /// `snapshot.repaired` / `snapshot.updated`: recovery facts.
    SnapshotPayload {
        source: String,
        reason: String,
        status: String,
        repaired_turn_ids: Vec<String>,
        /// First sequence of a range a crash lost (group-committed deltas that never became
        /// durable); the range is never reused and ends just before this event.
        lost_sequence_from: u64,
        /// Last sequence of that range.
        lost_sequence_through: u64,
    }
);

/// One verification outcome inside `evidence.changed`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerificationOutcome {
    pub name: String,
    pub status: String,
}
