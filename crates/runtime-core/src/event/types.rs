//! The standard's event type names (the Lime profile event schema's closed enum, 120 names).
//! Generated once from `agentruntime-lime-profile-event.schema.json`; a test checks the list is
//! identical to the schema's.

use std::fmt;

macro_rules! event_types {
    ($($variant:ident => $name:literal,)*) => {
        /// One of the standard's event type names. Nothing else is a valid top-level `type`:
        /// product details live inside typed payloads.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum EventType { $($variant,)* }

        impl EventType {
            /// Every type name, in the schema's order.
            pub const ALL: &'static [EventType] = &[$(EventType::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $(EventType::$variant => $name,)* }
            }

            pub fn parse(s: &str) -> Option<EventType> {
                match s { $($name => Some(EventType::$variant),)* _ => None }
            }
        }
    };
}

event_types! {
    SessionCreated => "session.created",
    SessionUpdated => "session.updated",
    ThreadStarted => "thread.started",
    ThreadUpdated => "thread.updated",
    TurnSubmitted => "turn.submitted",
    TurnStarted => "turn.started",
    TurnCompleted => "turn.completed",
    TurnFailed => "turn.failed",
    TaskCreated => "task.created",
    TaskAccepted => "task.accepted",
    TaskQueued => "task.queued",
    TaskStarted => "task.started",
    TaskUpdated => "task.updated",
    TaskProgress => "task.progress",
    TaskWaiting => "task.waiting",
    TaskBlocked => "task.blocked",
    TaskPaused => "task.paused",
    TaskResumed => "task.resumed",
    TaskRetrying => "task.retrying",
    TaskCancelRequested => "task.cancel_requested",
    TaskCancelled => "task.cancelled",
    TaskTimedOut => "task.timed_out",
    TaskFailed => "task.failed",
    TaskLost => "task.lost",
    TaskCompleted => "task.completed",
    TaskArchived => "task.archived",
    RunStatus => "run.status",
    ModelRequested => "model.requested",
    ModelDelta => "model.delta",
    ModelCompleted => "model.completed",
    ModelFailed => "model.failed",
    ReasoningDelta => "reasoning.delta",
    ReasoningSummary => "reasoning.summary",
    ToolCatalogResolved => "tool.catalog.resolved",
    ToolStarted => "tool.started",
    ToolArgs => "tool.args",
    ToolProgress => "tool.progress",
    ToolResult => "tool.result",
    ToolFailed => "tool.failed",
    ActionRequired => "action.required",
    ActionResolved => "action.resolved",
    QueueChanged => "queue.changed",
    ContextResolved => "context.resolved",
    ContextCompactionStarted => "context.compaction.started",
    ContextCompactionCompleted => "context.compaction.completed",
    ContextCompactionFailed => "context.compaction.failed",
    ArtifactChanged => "artifact.changed",
    EvidenceChanged => "evidence.changed",
    SubagentSpawned => "subagent.spawned",
    SubagentStatus => "subagent.status",
    SubagentInput => "subagent.input",
    SubagentCompleted => "subagent.completed",
    SubagentFailed => "subagent.failed",
    SubagentClosed => "subagent.closed",
    LimitChanged => "limit.changed",
    SnapshotUpdated => "snapshot.updated",
    RuntimeWarning => "runtime.warning",
    RuntimeError => "runtime.error",
    PermissionEvaluated => "permission.evaluated",
    PermissionRequested => "permission.requested",
    PermissionResolved => "permission.resolved",
    SandboxApplied => "sandbox.applied",
    SandboxViolation => "sandbox.violation",
    HookStarted => "hook.started",
    HookCompleted => "hook.completed",
    HookFailed => "hook.failed",
    PolicyChanged => "policy.changed",
    ProcessStarted => "process.started",
    ProcessOutput => "process.output",
    ProcessInput => "process.input",
    ProcessCompleted => "process.completed",
    ProcessFailed => "process.failed",
    ProcessTerminated => "process.terminated",
    TaskProfileResolved => "task.profile.resolved",
    RoutingCandidatesResolved => "routing.candidates.resolved",
    RoutingDecided => "routing.decided",
    RoutingFallbackApplied => "routing.fallback.applied",
    RoutingNotPossible => "routing.not_possible",
    RoutingSingleCandidate => "routing.single_candidate",
    TaskDelegated => "task.delegated",
    TaskDependencyUpdated => "task.dependency.updated",
    TaskAttemptStarted => "task.attempt.started",
    TaskAttemptCompleted => "task.attempt.completed",
    TaskAttemptFailed => "task.attempt.failed",
    CostEstimated => "cost.estimated",
    CostRecorded => "cost.recorded",
    RateLimitHit => "rate_limit.hit",
    QuotaLow => "quota.low",
    QuotaBlocked => "quota.blocked",
    ChannelConnected => "channel.connected",
    ChannelDisconnected => "channel.disconnected",
    ChannelResumed => "channel.resumed",
    ChannelMessage => "channel.message",
    ChannelPermissionForwarded => "channel.permission_forwarded",
    ChannelPermissionReturned => "channel.permission_returned",
    JobCreated => "job.created",
    JobStarted => "job.started",
    JobProgress => "job.progress",
    JobItemStarted => "job.item.started",
    JobItemCompleted => "job.item.completed",
    JobItemFailed => "job.item.failed",
    JobCompleted => "job.completed",
    JobFailed => "job.failed",
    JobCancelled => "job.cancelled",
    OutputSpilled => "output.spilled",
    OutputTruncated => "output.truncated",
    OutputRedacted => "output.redacted",
    OutputExpired => "output.expired",
    HistoryWindowLoaded => "history.window.loaded",
    HistoryReconstructed => "history.reconstructed",
    HistoryRollbackStarted => "history.rollback.started",
    HistoryRollbackCompleted => "history.rollback.completed",
    SnapshotRepaired => "snapshot.repaired",
    BenchmarkDatasetResolved => "benchmark.dataset.resolved",
    BenchmarkConfigurationResolved => "benchmark.configuration.resolved",
    BenchmarkTrialStarted => "benchmark.trial.started",
    BenchmarkTrialCompleted => "benchmark.trial.completed",
    BenchmarkTrialFailed => "benchmark.trial.failed",
    BenchmarkRewardRecorded => "benchmark.reward.recorded",
    BenchmarkComparisonCompleted => "benchmark.comparison.completed",
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for EventType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for EventType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        EventType::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown event type {s:?}")))
    }
}

impl schemars::JsonSchema for EventType {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "EventType".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
        schemars::json_schema!({ "type": "string", "enum": names })
    }
}

impl EventType {
    /// Turn lifecycle types that end a turn.
    pub fn is_turn_terminal(self) -> bool {
        matches!(self, EventType::TurnCompleted | EventType::TurnFailed)
    }

    /// Streamed text a client only displays (`model.delta`, `reasoning.delta`): published from
    /// memory at once and made durable by group commit (see `log`). Everything else is durable
    /// before anyone sees it.
    pub fn is_group_committed(self) -> bool {
        matches!(self, EventType::ModelDelta | EventType::ReasoningDelta)
    }

    /// The scope ids the Lime profile requires on this type, beyond the base envelope
    /// (mirrors the profile schema's `if/then` rules).
    pub fn required_scope(self) -> &'static [ScopeField] {
        use ScopeField::*;
        let n = self.as_str();
        let prefix = n.split('.').next().unwrap_or("");
        if n.starts_with("tool.") {
            return &[Thread, Turn, Step, ToolCall];
        }
        if n.starts_with("action.") {
            return &[Thread, Turn, Action];
        }
        if n.starts_with("task.attempt.") {
            return &[Task, Run];
        }
        if n.starts_with("task.") {
            return &[Task];
        }
        if n.starts_with("thread.") {
            return &[Thread];
        }
        if n.starts_with("subagent.") {
            return &[Subagent];
        }
        if n == "evidence.changed" {
            return &[Evidence];
        }
        if n == "benchmark.trial.started" {
            return &[Thread, Turn, Task, Run];
        }
        if n.starts_with("benchmark.trial.") || n.starts_with("benchmark.reward.") {
            return &[Task, Run];
        }
        match prefix {
            "turn" | "model" | "reasoning" | "permission" | "sandbox" | "hook" | "context"
            | "routing" | "cost" | "rate_limit" | "quota" => &[Thread, Turn],
            _ => &[],
        }
    }
}

/// A scope id slot of the envelope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeField {
    Thread,
    Turn,
    Step,
    ToolCall,
    Action,
    Task,
    Run,
    Subagent,
    Evidence,
}

impl ScopeField {
    pub fn wire_name(self) -> &'static str {
        match self {
            ScopeField::Thread => "threadId",
            ScopeField::Turn => "turnId",
            ScopeField::Step => "stepId",
            ScopeField::ToolCall => "toolCallId",
            ScopeField::Action => "actionId",
            ScopeField::Task => "taskId",
            ScopeField::Run => "runId",
            ScopeField::Subagent => "subagentId",
            ScopeField::Evidence => "evidenceId",
        }
    }
}
