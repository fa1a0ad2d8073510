//! Read models: plain folds over a session's events. They hold nothing the log does not, so
//! they can be rebuilt at any time ([`SessionReadModel::rebuild`]); the runtime keeps one per
//! live session up to date by applying each appended event.
//!
//! Lists that grow with history (tool calls, decisions, incidents) keep the most recent
//! [`RECENT`] entries plus counters, so a model's size is bounded however long the session.

mod fold;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::Event;
use crate::ids::*;

/// How many recent entries a growing list keeps.
pub const RECENT: usize = 100;

/// Every read model of one session.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionReadModel {
    pub session: SessionSnapshot,
    pub threads: BTreeMap<String, ThreadReadModel>,
    pub tasks: BTreeMap<String, TaskSnapshot>,
    pub permission_sandbox: PermissionSandboxSummary,
    pub routing_limits: RoutingLimitSummary,
    pub evidence: EvidenceSummary,
}

impl SessionReadModel {
    /// The fold from nothing.
    pub fn rebuild<'a>(events: impl IntoIterator<Item = &'a Event>) -> Self {
        let mut m = SessionReadModel::default();
        for e in events {
            m.apply(e);
        }
        m
    }

    /// The session's app and its (first) thread: `None` for a session the log holds no
    /// `session.created` / `thread.started` of (or an app id that is no longer valid).
    pub fn app_and_thread(&self) -> Option<(AppId, ThreadId)> {
        let app = AppId::new(self.session.app_id.as_deref()?).ok()?;
        Some((app, self.session.thread_ids.first()?.clone()))
    }

    pub fn thread(&self, id: &ThreadId) -> Option<&ThreadReadModel> {
        self.threads.get(id.as_str())
    }

    pub fn turn(&self, id: &TurnId) -> Option<&TurnView> {
        self.threads
            .values()
            .flat_map(|t| t.turns.iter())
            .find(|t| &t.turn_id == id)
    }
}

/// SessionSnapshot: the session shell, its threads, tasks, refs and recovery cursor.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSnapshot {
    pub session_id: Option<SessionId>,
    pub runtime_id: Option<RuntimeId>,
    pub app_id: Option<String>,
    pub workspace_id: Option<String>,
    /// The business object the session is about (`agentSession/start`), as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub business_object_ref: Option<serde_json::Value>,
    /// `idle`, `running`, `waitingAction`, `completed`, `failed`, `cancelled`.
    pub status: String,
    /// Set by `agentSession/update` (`session.updated`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// When `agentSession/update` archived the session (the fact's time); `None` when it is
    /// not archived (never archived, or restored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    pub thread_ids: Vec<ThreadId>,
    pub turn_count: u64,
    pub task_count: u64,
    /// The sequence of the last event folded: where a reader resumes.
    pub recovery_cursor: u64,
    pub event_count: u64,
    pub repairs: u64,
}

/// Turn status in read models and on the App Server wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TurnStatus {
    #[default]
    Accepted,
    Queued,
    Running,
    WaitingAction,
    Completed,
    Failed,
    Cancelled,
}

impl TurnStatus {
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TurnStatus::Completed | TurnStatus::Failed | TurnStatus::Cancelled
        )
    }
}

/// One turn as the thread read model shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnView {
    pub turn_id: TurnId,
    pub status: TurnStatus,
    pub submitted_at: Option<String>,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    pub task_id: Option<TaskId>,
    pub run_id: Option<RunId>,
    /// The text of the turn's latest model request (the answer when the turn completed).
    pub output_text: String,
    pub structured_output: Option<Value>,
    pub error_code: Option<String>,
    pub error_message: Option<String>,
    pub tool_call_count: u64,
    /// Tokens the turn's model calls used (`model.completed` usage), for per-task usage.
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
}

/// A pending human / policy decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingAction {
    pub action_id: ActionId,
    pub turn_id: Option<TurnId>,
    pub tool_call_id: Option<ToolCallId>,
    pub action_type: Option<String>,
    pub tool_name: Option<String>,
    pub prompt: Option<String>,
    pub arguments: Option<Value>,
    pub available_decisions: Vec<String>,
    pub requested_at: String,
}

/// Something that went wrong (model or tool failure, runtime error or warning, repair).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Incident {
    pub sequence: u64,
    pub kind: String,
    pub code: Option<String>,
    pub message: Option<String>,
    pub turn_id: Option<TurnId>,
}

/// One tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallView {
    pub tool_call_id: ToolCallId,
    pub turn_id: Option<TurnId>,
    pub step_id: Option<StepId>,
    pub tool_name: Option<String>,
    /// `running`, `waitingAction`, `completed`, `failed`.
    pub status: String,
    pub output_ref: Option<String>,
    pub spilled: bool,
    pub error_code: Option<String>,
}

/// How the thread's last turn ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastOutcome {
    pub turn_id: TurnId,
    pub status: TurnStatus,
    pub code: Option<String>,
    pub ended_at: String,
}

/// ThreadReadModel: status, active and queued turns, pending actions, incidents, tool calls,
/// last outcome.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadModel {
    pub thread_id: Option<ThreadId>,
    /// `idle`, `queued`, `running`, `blocked`, `completed`, `failed`, `cancelled`.
    pub status: String,
    pub active_turn_id: Option<TurnId>,
    pub queued_turns: Vec<TurnId>,
    pub turns: Vec<TurnView>,
    pub pending_actions: Vec<PendingAction>,
    pub incidents: Vec<Incident>,
    pub incident_count: u64,
    pub tool_calls: Vec<ToolCallView>,
    pub tool_call_count: u64,
    pub failed_tool_call_count: u64,
    pub last_outcome: Option<LastOutcome>,
}

/// One attempt (run) of a task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskAttempt {
    pub run_id: RunId,
    pub attempt_index: u64,
    pub status: String,
    pub failure_category: Option<String>,
    pub started_at: String,
    pub ended_at: Option<String>,
}

/// TaskSnapshot: objective, status, current run, attempts, progress, outputs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskSnapshot {
    pub task_id: Option<TaskId>,
    pub thread_id: Option<ThreadId>,
    pub turn_id: Option<TurnId>,
    pub title: Option<String>,
    pub status: String,
    pub current_run_id: Option<RunId>,
    pub attempts: Vec<TaskAttempt>,
    /// The latest `run.status` phase.
    pub progress: Option<String>,
    pub outputs: Vec<String>,
    pub last_error: Option<String>,
}

/// A permission decision.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionDecision {
    pub turn_id: Option<TurnId>,
    pub tool_call_id: Option<ToolCallId>,
    pub tool_name: Option<String>,
    pub result: String,
    pub source: String,
}

/// PermissionSandboxSummary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionSandboxSummary {
    pub mode: Option<String>,
    pub pending_approvals: Vec<ActionId>,
    pub decisions: Vec<PermissionDecision>,
    pub evaluated_count: u64,
    pub approved_count: u64,
    pub denied_count: u64,
    pub sandbox_profile: Option<Value>,
    pub violations: Vec<Value>,
    /// Risky tools an `allow_for_session` answer allowed for the rest of the session.
    pub session_allowed_tools: Vec<String>,
}

/// RoutingLimitSummary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoutingLimitSummary {
    pub task_kind: Option<String>,
    pub candidate_count: Option<u64>,
    pub selected_model: Option<String>,
    pub decision_source: Option<String>,
    pub single_candidate: bool,
    pub no_candidate: bool,
    pub rate_limit_hits: u64,
    pub quota_state: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub model_requests: u64,
}

/// EvidenceSummary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceSummary {
    pub evidence_refs: Vec<EvidenceId>,
    pub pack_refs: Vec<String>,
    pub replay_refs: Vec<String>,
    pub artifact_refs: Vec<String>,
    pub output_refs: Vec<String>,
    pub verification_outcomes: Vec<crate::event::VerificationOutcome>,
}
