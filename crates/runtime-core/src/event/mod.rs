//! The Lime profile event envelope (`lime-profile-0.4.0`) with typed payloads.
//!
//! An [`Event`] is the smallest runtime fact. RuntimeCore builds [`EventDraft`]s (scope ids +
//! typed body) with the constructors of [`facts`], one per fact; the event log stamps them with
//! `runtimeId`, `sessionId`, `eventId`, `timestamp` and the session's next `sequence` when it
//! appends them.

pub mod facts;
mod payload;
mod types;

pub use payload::*;
pub use types::{EventType, ScopeField};

use schemars::JsonSchema;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ids::*;

/// The profile version every event carries.
pub const SCHEMA_VERSION: &str = "lime-profile-0.4.0";

/// The scope ids an event may carry at the top level (never only in its payload).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<ThreadId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<TurnId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<TaskId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_id: Option<AttemptId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<StepId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<ToolCallId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_id: Option<ActionId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_id: Option<SubagentId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<ArtifactId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_id: Option<EvidenceId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<TraceId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_id: Option<SpanId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
}

impl Scope {
    pub fn has(&self, f: ScopeField) -> bool {
        match f {
            ScopeField::Thread => self.thread_id.is_some(),
            ScopeField::Turn => self.turn_id.is_some(),
            ScopeField::Step => self.step_id.is_some(),
            ScopeField::ToolCall => self.tool_call_id.is_some(),
            ScopeField::Action => self.action_id.is_some(),
            ScopeField::Task => self.task_id.is_some(),
            ScopeField::Run => self.run_id.is_some(),
            ScopeField::Subagent => self.subagent_id.is_some(),
            ScopeField::Evidence => self.evidence_id.is_some(),
        }
    }

    /// The first scope id the profile requires for `kind` that is missing.
    pub fn missing_for(&self, kind: EventType) -> Option<ScopeField> {
        kind.required_scope()
            .iter()
            .copied()
            .find(|f| !self.has(*f))
    }

    pub fn thread(thread: &ThreadId) -> Scope {
        Scope {
            thread_id: Some(thread.clone()),
            ..Scope::default()
        }
    }

    pub fn turn(thread: &ThreadId, turn: &TurnId) -> Scope {
        Scope {
            thread_id: Some(thread.clone()),
            turn_id: Some(turn.clone()),
            ..Scope::default()
        }
    }
}

macro_rules! bodies {
    ($($variant:ident($ty:ty) => [$($kind:ident),+],)*) => {
        /// A typed event body: the `type` and its `payload`. Types RuntimeCore does not model
        /// are kept as [`EventBody::Other`] with their raw payload object.
        #[derive(Clone, Debug, PartialEq)]
        pub enum EventBody {
            $($variant(EventType, $ty),)*
            Other(EventType, Map<String, Value>),
        }

        impl EventBody {
            pub fn kind(&self) -> EventType {
                match self {
                    $(EventBody::$variant(k, _) => *k,)*
                    EventBody::Other(k, _) => *k,
                }
            }

            /// Decodes `payload` as the typed payload of `kind`.
            pub fn decode(kind: EventType, payload: Value) -> Result<EventBody, serde_json::Error> {
                match kind {
                    $($(EventType::$kind)|+ => Ok(EventBody::$variant(kind, serde_json::from_value(payload)?)),)*
                    _ => match payload {
                        Value::Object(m) => Ok(EventBody::Other(kind, m)),
                        _ => Err(serde::de::Error::custom("payload must be an object")),
                    },
                }
            }

            fn serialize_payload<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(EventBody::$variant(_, p) => p.serialize(s),)*
                    EventBody::Other(_, m) => m.serialize(s),
                }
            }

            /// Checks that `kind` belongs to the variant (constructors take the kind explicitly).
            pub fn is_consistent(&self) -> bool {
                match self {
                    $(EventBody::$variant(k, _) => matches!(k, $(EventType::$kind)|+),)*
                    EventBody::Other(k, _) => {
                        EventBody::decode(*k, Value::Object(Map::new())).map(|b| matches!(b, EventBody::Other(..))).unwrap_or(false)
                    }
                }
            }
        }
    };
}

bodies! {
    Session(SessionPayload) => [SessionCreated, SessionUpdated],
    Thread(ThreadPayload) => [ThreadStarted, ThreadUpdated],
    TurnSubmitted(TurnSubmitted) => [TurnSubmitted],
    TurnStarted(TurnStarted) => [TurnStarted],
    TurnCompleted(TurnCompleted) => [TurnCompleted],
    TurnFailed(TurnFailed) => [TurnFailed],
    Queue(QueueChanged) => [QueueChanged],
    Task(TaskPayload) => [TaskCreated, TaskStarted, TaskCompleted, TaskFailed, TaskCancelRequested, TaskCancelled, TaskRetrying],
    TaskAttempt(TaskAttemptPayload) => [TaskAttemptStarted, TaskAttemptCompleted, TaskAttemptFailed],
    RunStatus(RunStatus) => [RunStatus],
    ModelRequested(ModelRequested) => [ModelRequested],
    Delta(TextDelta) => [ModelDelta, ReasoningDelta],
    ModelCompleted(ModelCompleted) => [ModelCompleted],
    Failure(Failure) => [ModelFailed, ToolFailed, RuntimeError, RuntimeWarning],
    ToolStarted(ToolStarted) => [ToolStarted],
    ToolArgs(ToolArgs) => [ToolArgs],
    ToolResult(ToolResult) => [ToolResult],
    OutputSpilled(OutputSpilled) => [OutputSpilled],
    Permission(PermissionEvaluated) => [PermissionEvaluated],
    ActionRequired(ActionRequired) => [ActionRequired],
    ActionResolved(ActionResolved) => [ActionResolved],
    Artifact(ArtifactChanged) => [ArtifactChanged],
    Evidence(EvidenceChanged) => [EvidenceChanged],
    Routing(Routing) => [RoutingSingleCandidate, RoutingDecided, RoutingNotPossible],
    Limit(Limit) => [RateLimitHit, QuotaLow, QuotaBlocked, CostRecorded, LimitChanged],
    Snapshot(SnapshotPayload) => [SnapshotRepaired, SnapshotUpdated],
}

/// What RuntimeCore wants to record, before the log stamps it.
#[derive(Clone, Debug, PartialEq)]
pub struct EventDraft {
    pub scope: Scope,
    pub body: EventBody,
}

impl EventDraft {
    pub fn new(scope: Scope, body: EventBody) -> Self {
        EventDraft { scope, body }
    }

    pub fn kind(&self) -> EventType {
        self.body.kind()
    }
}

impl From<Event> for EventDraft {
    /// The draft an event was appended from (its scope and body, without the log's stamps).
    fn from(ev: Event) -> EventDraft {
        EventDraft::new(ev.scope, ev.body)
    }
}

/// One recorded runtime fact, in the Lime profile envelope.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub schema_version: String,
    pub runtime_id: RuntimeId,
    pub session_id: SessionId,
    pub event_id: EventId,
    /// RFC 3339, UTC.
    pub timestamp: String,
    /// Per session, from 1, gap-free.
    pub sequence: u64,
    pub scope: Scope,
    pub body: EventBody,
}

impl Event {
    pub fn kind(&self) -> EventType {
        self.body.kind()
    }

    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("events always serialize")
    }

    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).expect("events always serialize")
    }
}

impl Serialize for Event {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct P<'a>(&'a EventBody);
        impl Serialize for P<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.0.serialize_payload(s)
            }
        }
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("type", &self.kind())?;
        m.serialize_entry("eventId", &self.event_id)?;
        m.serialize_entry("timestamp", &self.timestamp)?;
        m.serialize_entry("schemaVersion", &self.schema_version)?;
        m.serialize_entry("runtimeId", &self.runtime_id)?;
        m.serialize_entry("sessionId", &self.session_id)?;
        let sc = &self.scope;
        macro_rules! opt {
            ($($f:ident => $n:literal),*) => {$(if let Some(v) = &sc.$f { m.serialize_entry($n, v)?; })*};
        }
        opt!(thread_id => "threadId", turn_id => "turnId", task_id => "taskId", run_id => "runId",
             attempt_id => "attemptId", step_id => "stepId", tool_call_id => "toolCallId",
             action_id => "actionId", subagent_id => "subagentId", artifact_id => "artifactId",
             evidence_id => "evidenceId", trace_id => "traceId", span_id => "spanId",
             request_id => "requestId");
        m.serialize_entry("sequence", &self.sequence)?;
        m.serialize_entry("payload", &P(&self.body))?;
        m.end()
    }
}

/// The wire shape used to decode an event (then the payload is decoded by type).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireEvent {
    #[serde(rename = "type")]
    kind: EventType,
    event_id: EventId,
    timestamp: String,
    schema_version: String,
    runtime_id: RuntimeId,
    session_id: SessionId,
    sequence: u64,
    payload: Value,
    #[serde(default)]
    thread_id: Option<ThreadId>,
    #[serde(default)]
    turn_id: Option<TurnId>,
    #[serde(default)]
    task_id: Option<TaskId>,
    #[serde(default)]
    run_id: Option<RunId>,
    #[serde(default)]
    attempt_id: Option<AttemptId>,
    #[serde(default)]
    step_id: Option<StepId>,
    #[serde(default)]
    tool_call_id: Option<ToolCallId>,
    #[serde(default)]
    action_id: Option<ActionId>,
    #[serde(default)]
    subagent_id: Option<SubagentId>,
    #[serde(default)]
    artifact_id: Option<ArtifactId>,
    #[serde(default)]
    evidence_id: Option<EvidenceId>,
    #[serde(default)]
    trace_id: Option<TraceId>,
    #[serde(default)]
    span_id: Option<SpanId>,
    #[serde(default)]
    request_id: Option<RequestId>,
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let w = WireEvent::deserialize(d)?;
        if w.schema_version != SCHEMA_VERSION {
            return Err(D::Error::custom(format!(
                "schemaVersion must be {SCHEMA_VERSION:?}, got {:?}",
                w.schema_version
            )));
        }
        if !is_rfc3339(&w.timestamp) {
            return Err(D::Error::custom("timestamp is not RFC 3339"));
        }
        let scope = Scope {
            thread_id: w.thread_id,
            turn_id: w.turn_id,
            task_id: w.task_id,
            run_id: w.run_id,
            attempt_id: w.attempt_id,
            step_id: w.step_id,
            tool_call_id: w.tool_call_id,
            action_id: w.action_id,
            subagent_id: w.subagent_id,
            artifact_id: w.artifact_id,
            evidence_id: w.evidence_id,
            trace_id: w.trace_id,
            span_id: w.span_id,
            request_id: w.request_id,
        };
        if let Some(f) = scope.missing_for(w.kind) {
            return Err(D::Error::custom(format!(
                "{} requires {}",
                w.kind,
                f.wire_name()
            )));
        }
        let body = EventBody::decode(w.kind, w.payload).map_err(D::Error::custom)?;
        Ok(Event {
            schema_version: w.schema_version,
            runtime_id: w.runtime_id,
            session_id: w.session_id,
            event_id: w.event_id,
            timestamp: w.timestamp,
            sequence: w.sequence,
            scope,
            body,
        })
    }
}

/// Decodes one event from JSON text (the fuzzed entry point).
pub fn decode_event(text: &str) -> Result<Event, serde_json::Error> {
    serde_json::from_str(text)
}

/// The current time as the profile's RFC 3339 timestamp (UTC, millisecond precision).
pub fn format_timestamp(ts: jiff::Timestamp) -> String {
    format!("{ts:.3}")
}

/// RFC 3339 `date-time` (a `T` separator, an explicit offset, no bracketed annotation).
pub fn is_rfc3339(s: &str) -> bool {
    s.len() >= 20
        && s.as_bytes().get(10) == Some(&b'T')
        && !s.contains('[')
        // `get`, not `[19..]`: byte 19 may fall inside a multi-byte character (a panic, found
        // by the `event_decode` fuzz target).
        && (s.ends_with('Z') || s.get(19..).is_some_and(|t| t.contains(['+', '-'])))
        && s.parse::<jiff::Timestamp>().is_ok()
}
