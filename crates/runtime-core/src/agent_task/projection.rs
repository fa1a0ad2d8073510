//! The `lime.agent-task-event.v1` projection: one RuntimeCore profile event (a runtime fact of
//! the task's session) becomes at most one [`AgentTaskEvent`]. The mapping is an exhaustive
//! `match` over the standard's 120 event types (no wildcard arm), so a type is either mapped or
//! dropped *explicitly*, with the reason, and adding a type cannot go unnoticed. The host never
//! synthesises task events: everything here derives from a recorded fact.
//!
//! `sequence` is the fact's session sequence. A task reads only its own facts of its session
//! (shared by `resume`, see `agent_task`), so it is monotonic per task, stable across restarts,
//! and a reader resumes after the last sequence it saw with no loss and no duplicate (dropped
//! facts and other tasks' turns leave gaps, which the envelope allows).

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::event::{Event, EventBody, EventType};

/// The envelope's schema version.
pub const TASK_EVENT_SCHEMA_VERSION: &str = "lime.agent-task-event.v1";

/// One task event (`lime.agent-task-event.v1`, standard-agent-app §8.3).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentTaskEvent {
    pub schema_version: &'static str,
    pub event_id: String,
    pub sequence: u64,
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtype: Option<String>,
    pub app_id: String,
    pub task_id: String,
    pub trace_id: String,
    pub session_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    pub at: String,
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub payload: Map<String, Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refs: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
}

/// The task an event belongs to (the envelope's ids that are not in the fact itself).
#[derive(Clone, Debug, PartialEq)]
pub struct TaskIdentity {
    pub app_id: String,
    pub task_id: String,
    pub trace_id: String,
}

/// What becomes of one runtime fact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mapping {
    /// Projected as this task event type, with a fixed subtype or one derived from the fact.
    To(&'static str, Option<&'static str>),
    /// The terminal `result` (subtype from the fact).
    Result,
    /// Not projected, for this reason.
    Dropped(&'static str),
}

const TURN_INTERNAL: &str = "task bookkeeping inside a run: the run's own events carry it";
const NOT_EMITTED: &str = "RuntimeCore does not emit this type for app tasks";
const PRIVATE: &str = "reasoning content is not exported to apps by default (§8.7)";
const HOST_SIDE: &str = "host or operator concern, not part of an app task's activity";

/// The mapping of every runtime event type (exhaustive: see the module doc).
pub fn mapping(t: EventType) -> Mapping {
    use EventType::*;
    use Mapping::*;
    match t {
        SessionCreated => To("system:init", None),
        SessionUpdated | ThreadStarted | ThreadUpdated => Dropped(HOST_SIDE),
        TurnSubmitted => To("task:queued", None),
        TurnStarted => To("task:progress", Some("started")),
        TurnCompleted | TurnFailed => Result,
        TaskCreated | TaskAccepted | TaskStarted | TaskUpdated | TaskCompleted | TaskFailed
        | TaskCancelled | TaskAttemptCompleted | TaskArchived => Dropped(TURN_INTERNAL),
        TaskQueued
        | TaskWaiting
        | TaskBlocked
        | TaskPaused
        | TaskResumed
        | TaskTimedOut
        | TaskLost
        | TaskDelegated
        | TaskDependencyUpdated => Dropped(NOT_EMITTED),
        TaskProgress => To("task:progress", Some("progress")),
        TaskRetrying => To("task:progress", Some("retrying")),
        TaskCancelRequested => To("task:progress", Some("cancel_requested")),
        TaskAttemptStarted => To("task:progress", Some("attempt_started")),
        TaskAttemptFailed => To("task:progress", Some("attempt_failed")),
        RunStatus => To("task:progress", Some("run_status")),
        ModelRequested => To("task:progress", Some("model_requested")),
        ModelDelta => To("assistant:delta", None),
        ModelCompleted => To("task:progress", Some("model_completed")),
        ModelFailed => To("task:progress", Some("model_failed")),
        ReasoningDelta | ReasoningSummary => Dropped(PRIVATE),
        ToolCatalogResolved => Dropped(HOST_SIDE),
        ToolStarted => To("tool:call", Some("started")),
        ToolArgs => To("tool:call", Some("args")),
        ToolProgress => To("tool:call", Some("progress")),
        ToolResult => To("tool:call", Some("result")),
        ToolFailed => To("tool:call", Some("failed")),
        ActionRequired => To("approval:requested", None),
        ActionResolved => To("task:progress", Some("approval_resolved")),
        QueueChanged => To("task:progress", Some("queue_changed")),
        ContextResolved | ContextCompactionStarted | ContextCompactionFailed => Dropped(HOST_SIDE),
        ContextCompactionCompleted => To("system:compact_boundary", None),
        ArtifactChanged => To("artifact:created", None),
        EvidenceChanged => To("evidence:recorded", None),
        SubagentSpawned | SubagentStatus | SubagentInput | SubagentCompleted | SubagentFailed
        | SubagentClosed => Dropped(NOT_EMITTED),
        LimitChanged | RateLimitHit | QuotaLow | QuotaBlocked => To("task:progress", Some("limit")),
        CostEstimated | CostRecorded => To("task:progress", Some("cost")),
        SnapshotUpdated => Dropped(HOST_SIDE),
        SnapshotRepaired => To("task:progress", Some("repaired")),
        RuntimeWarning => To("task:progress", Some("warning")),
        RuntimeError => To("task:progress", Some("runtime_error")),
        PermissionEvaluated => To("task:progress", Some("permission_evaluated")),
        PermissionRequested | PermissionResolved | PolicyChanged => Dropped(NOT_EMITTED),
        SandboxApplied | SandboxViolation | HookStarted | HookCompleted | HookFailed => {
            Dropped(NOT_EMITTED)
        }
        ProcessStarted | ProcessOutput | ProcessInput | ProcessCompleted | ProcessFailed
        | ProcessTerminated => Dropped(NOT_EMITTED),
        TaskProfileResolved
        | RoutingCandidatesResolved
        | RoutingDecided
        | RoutingFallbackApplied
        | RoutingNotPossible
        | RoutingSingleCandidate => Dropped(HOST_SIDE),
        ChannelConnected
        | ChannelDisconnected
        | ChannelResumed
        | ChannelMessage
        | ChannelPermissionForwarded
        | ChannelPermissionReturned => Dropped(NOT_EMITTED),
        JobCreated | JobStarted | JobProgress | JobItemStarted | JobItemCompleted
        | JobItemFailed | JobCompleted | JobFailed | JobCancelled => Dropped(NOT_EMITTED),
        OutputSpilled => To("tool:call", Some("output_spilled")),
        OutputTruncated | OutputRedacted | OutputExpired => Dropped(NOT_EMITTED),
        HistoryWindowLoaded
        | HistoryReconstructed
        | HistoryRollbackStarted
        | HistoryRollbackCompleted => Dropped(NOT_EMITTED),
        BenchmarkDatasetResolved
        | BenchmarkConfigurationResolved
        | BenchmarkTrialStarted
        | BenchmarkTrialCompleted
        | BenchmarkTrialFailed
        | BenchmarkRewardRecorded
        | BenchmarkComparisonCompleted => Dropped(HOST_SIDE),
    }
}

/// The `result` subtype of a run's terminal fact.
pub fn result_subtype(e: &Event) -> &'static str {
    match &e.body {
        EventBody::TurnCompleted(..) => "success",
        EventBody::TurnFailed(_, f) => {
            if f.status.as_deref() == Some("cancelled") {
                return "cancelled";
            }
            match f.code.as_deref() {
                Some("cancelled") => "cancelled",
                Some("error_max_structured_output_retries") => {
                    "error_max_structured_output_retries"
                }
                Some("error_max_turns") => "error_max_turns",
                Some("error_max_budget") => "error_max_budget",
                Some("permission_denied") => "error_permission_denied",
                _ => "error_during_execution",
            }
        }
        _ => "error_during_execution",
    }
}

/// Projects one fact of the task's session; `None` when its type is dropped.
pub fn project(task: &TaskIdentity, e: &Event) -> Option<AgentTaskEvent> {
    let (kind, subtype) = match mapping(e.kind()) {
        Mapping::Dropped(_) => return None,
        Mapping::To(kind, sub) => (kind, sub.map(str::to_owned)),
        Mapping::Result => ("result", Some(result_subtype(e).to_owned())),
    };
    let mut payload = match serde_json::to_value(e) {
        Ok(Value::Object(mut m)) => match m.remove("payload") {
            Some(Value::Object(p)) => p,
            _ => Map::new(),
        },
        _ => Map::new(),
    };
    // The fact's own type stays visible, and the scope ids an app needs to answer or read.
    payload.insert("runtimeType".into(), json!(e.kind().as_str()));
    let sc = &e.scope;
    for (k, v) in [
        ("runId", sc.run_id.as_ref().map(|v| v.as_str())),
        ("toolCallId", sc.tool_call_id.as_ref().map(|v| v.as_str())),
        ("actionId", sc.action_id.as_ref().map(|v| v.as_str())),
        ("artifactId", sc.artifact_id.as_ref().map(|v| v.as_str())),
        ("evidenceId", sc.evidence_id.as_ref().map(|v| v.as_str())),
    ] {
        if let Some(v) = v {
            payload.insert(k.into(), json!(v));
        }
    }
    let mut refs = Vec::new();
    for key in ["artifactRef", "packRef", "outputRef"] {
        if let Some(Value::String(r)) = payload.get(key) {
            refs.push(r.clone());
        }
    }
    let usage = match &e.body {
        EventBody::ModelCompleted(_, m)
            if m.input_tokens.is_some() || m.output_tokens.is_some() =>
        {
            Some(json!({"inputTokens": m.input_tokens, "outputTokens": m.output_tokens}))
        }
        _ => None,
    };
    Some(AgentTaskEvent {
        schema_version: TASK_EVENT_SCHEMA_VERSION,
        event_id: e.event_id.as_str().to_owned(),
        sequence: e.sequence,
        kind,
        subtype,
        app_id: task.app_id.clone(),
        task_id: task.task_id.clone(),
        trace_id: task.trace_id.clone(),
        session_id: e.session_id.as_str().to_owned(),
        turn_id: sc.turn_id.as_ref().map(|t| t.as_str().to_owned()),
        at: e.timestamp.clone(),
        payload,
        refs,
        usage,
    })
}
