//! App Server `appserver.v0` wire types (camelCase). The published JSON Schemas in
//! `schemas/appserver/` are generated from these types (drift-tested).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::*;
use crate::read_model::{SessionReadModel, TurnStatus};

pub const PROTOCOL_VERSION: &str = "appserver.v0";

/// JSON-RPC error codes.
pub mod codes {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    pub const RUNTIME_ERROR: i64 = -32000;
    pub const NOT_INITIALIZED: i64 = -32002;
    pub const ALREADY_INITIALIZED: i64 = -32003;
    pub const SESSION_NOT_FOUND: i64 = -32010;
    pub const TURN_NOT_FOUND: i64 = -32011;
    pub const TURN_ALREADY_ACTIVE: i64 = -32012;
    pub const SESSION_ALREADY_EXISTS: i64 = -32013;
    pub const ACTION_NOT_FOUND: i64 = -32014;
    /// A session cap or the connection's subscription cap is reached (`data.code` says which).
    pub const SESSION_LIMIT: i64 = -32015;
    pub const NEEDS_SETUP: i64 = -32030;
    /// The App Server door (socket) refused the client: wrong `authToken` in `initialize`
    /// (`appserver.bad_token`) or another user's process (`appserver.peer_uid`); the connection
    /// is then closed.
    pub const UNAUTHORIZED: i64 = -32004;
    /// The door serves its most connections already (`appserver.connection_limit`), or a
    /// client did not finish `initialize` in time (`appserver.handshake_timeout`); closed.
    pub const CONNECTION_REFUSED: i64 = -32005;
    /// `runtimeOptions.capabilityId` names no capability this server offers (`capability/list`).
    pub const CAPABILITY_DENIED: i64 = -32020;
    /// Every code, for the docs drift test.
    pub const ALL: &[i64] = &[
        PARSE_ERROR,
        INVALID_REQUEST,
        METHOD_NOT_FOUND,
        INVALID_PARAMS,
        INTERNAL_ERROR,
        RUNTIME_ERROR,
        NOT_INITIALIZED,
        ALREADY_INITIALIZED,
        SESSION_NOT_FOUND,
        TURN_NOT_FOUND,
        TURN_ALREADY_ACTIVE,
        SESSION_ALREADY_EXISTS,
        ACTION_NOT_FOUND,
        SESSION_LIMIT,
        NEEDS_SETUP,
        UNAUTHORIZED,
        CONNECTION_REFUSED,
        CAPABILITY_DENIED,
    ];
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientInfo {
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    pub client_info: ClientInfo,
    #[serde(default)]
    pub capabilities: Option<Value>,
    /// The door's per-launch token (`<data>/runtime/app-server.token`); required on the
    /// socket, ignored on stdio.
    #[serde(default)]
    pub auth_token: Option<String>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
    pub protocol_version: String,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeInfo {
    /// `ready` or `needs-setup` (no model provider configured).
    pub status: String,
    pub runtime_id: RuntimeId,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub server_info: ServerInfo,
    pub platform: Value,
    pub capabilities: Value,
    pub runtime: RuntimeInfo,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionStartParams {
    #[serde(default)]
    pub session_id: Option<SessionId>,
    pub app_id: String,
    #[serde(default)]
    pub workspace_id: Option<String>,
    #[serde(default)]
    pub business_object_ref: Option<Value>,
    #[serde(default)]
    pub locale: Option<String>,
}

/// `AgentSession`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentSession {
    pub session_id: SessionId,
    pub thread_id: ThreadId,
    pub app_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<String>,
    /// As given to `agentSession/start`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub business_object_ref: Option<Value>,
    /// `idle`, `running`, `waitingAction`, `completed`, `failed`, `cancelled`.
    pub status: String,
    pub created_at: String,
    pub updated_at: String,
    pub last_sequence: u64,
    /// Set by `agentSession/update`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// When `agentSession/update` archived it (absent: not archived).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<String>,
    /// Turns of the session's thread (completed, failed, running or queued).
    pub turn_count: u64,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionStartResult {
    pub session: AgentSession,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionRef {
    pub session_id: SessionId,
    /// `agentSession/read`: the caller's workspace; a session of another workspace is refused
    /// (`-32010`, `data.code: appserver.workspace_mismatch`).
    #[serde(default)]
    pub workspace_id: Option<String>,
}

/// `agentSession/update` params: what to change (at least one of `title`, `archived`).
/// Unknown fields are refused (`-32602`): a client never believes a setting changed that this
/// server does not keep.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionUpdateParams {
    pub session_id: SessionId,
    /// The caller's workspace; a session of another workspace is refused like in
    /// `agentSession/read`.
    #[serde(default)]
    pub workspace_id: Option<String>,
    /// The new title; `""` clears it (at most 200 bytes, no control characters).
    #[serde(default)]
    pub title: Option<String>,
    /// Archive (`true`) or restore (`false`) the session. An archived session is left out of
    /// `agentSession/list` unless asked for; it still reads and takes turns.
    #[serde(default)]
    pub archived: Option<bool>,
}

/// `agentSession/update` result.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionUpdateResult {
    pub session: AgentSession,
}

/// `agentSession/list` params.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionListParams {
    /// Archived sessions too.
    #[serde(default)]
    pub include_archived: bool,
    /// Only archived sessions (wins over `includeArchived`).
    #[serde(default)]
    pub archived_only: bool,
    /// Only this workspace's sessions.
    #[serde(default)]
    pub workspace_id: Option<String>,
    /// Only this app's sessions.
    #[serde(default)]
    pub app_id: Option<String>,
    /// Opaque: a previous page's `nextCursor`.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Page size (default [`super::paging::SESSION_PAGE`], at most
    /// [`super::paging::MAX_SESSION_PAGE`]).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `agentSession/list` result: most recently updated first.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionListResult {
    pub sessions: Vec<AgentSession>,
    /// Present when more follow: pass it as `cursor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `agentSession/thread/resume` result.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadResumeResult {
    pub session: AgentSession,
    pub turns: Vec<AgentTurn>,
    /// True when a queue restored after a restart was resumed (its head turn started); false
    /// when there was nothing to resume.
    pub resumed: bool,
}

/// `AgentTurn`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentTurn {
    pub turn_id: TurnId,
    pub session_id: SessionId,
    pub thread_id: ThreadId,
    pub status: TurnStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionReadResult {
    pub session: AgentSession,
    pub turns: Vec<AgentTurn>,
    /// Every read model of the session.
    pub detail: SessionReadModel,
}

#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentInput {
    pub text: String,
    #[serde(default)]
    pub attachments: Vec<Value>,
}

#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeOptions {
    /// A JSON Schema the answer must satisfy (structured output).
    #[serde(default)]
    pub output_schema: Option<Value>,
    #[serde(default)]
    pub capability_id: Option<String>,
    #[serde(default)]
    pub metadata: Option<Value>,
    /// This turn's token budget (input + output over its model calls), 1 or more; it only
    /// lowers the runtime's and the app's. A turn over it ends `error_max_budget`.
    #[serde(default)]
    pub max_tokens: Option<u64>,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartParams {
    pub session_id: SessionId,
    #[serde(default)]
    pub turn_id: Option<TurnId>,
    pub input: AgentInput,
    #[serde(default)]
    pub runtime_options: Option<RuntimeOptions>,
    #[serde(default)]
    pub queue_if_busy: bool,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartResult {
    pub turn: AgentTurn,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnCancelParams {
    pub session_id: SessionId,
    pub turn_id: TurnId,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionRespondParams {
    pub session_id: SessionId,
    /// The `actionId` of the `action.required` event.
    pub request_id: ActionId,
    #[serde(default)]
    pub action_type: Option<String>,
    #[serde(default)]
    pub confirmed: Option<bool>,
    /// `allow_once`, `allow_for_session`, `decline` or `cancel` (wins over `confirmed`).
    #[serde(default)]
    pub decision: Option<String>,
    /// With `allow_once`: run the tool with this input (a JSON object) instead of the model's.
    #[serde(default)]
    pub updated_input: Option<Value>,
}

#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityListParams {
    #[serde(default)]
    pub app_id: Option<String>,
    #[serde(default)]
    pub session_id: Option<SessionId>,
    /// Opaque: a previous page's `nextCursor`.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Page size (default and maximum [`super::paging::CAPABILITY_PAGE`]).
    #[serde(default)]
    pub limit: Option<u32>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Capability {
    pub id: String,
    pub title: String,
    pub description: String,
    pub methods: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    pub requires_approval: bool,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityListResult {
    pub capabilities: Vec<Capability>,
    /// Present when more follow: pass it as `cursor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactReadParams {
    pub session_id: SessionId,
    #[serde(default)]
    pub turn_id: Option<TurnId>,
    #[serde(default)]
    pub artifact_ref: Option<String>,
    #[serde(default)]
    pub include_content: bool,
    /// Opaque: a previous page's `nextCursor`.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Page size (default [`super::paging::ARTIFACT_PAGE`], at most
    /// [`super::paging::MAX_ARTIFACT_PAGE`]).
    #[serde(default)]
    pub limit: Option<u32>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactSummary {
    pub artifact_ref: String,
    pub event_id: EventId,
    pub sequence: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<TurnId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<ArtifactId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `tool_output` for spilled tool outputs, otherwise the artifact's kind.
    pub kind: String,
    pub bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// `notRequested`, `available`, `unavailable`, `tooLarge`.
    pub content_status: String,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactReadResult {
    pub artifacts: Vec<ArtifactSummary>,
    /// Present when the log may hold more: pass it as `cursor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceExportParams {
    pub session_id: SessionId,
    #[serde(default)]
    pub turn_id: Option<TurnId>,
    #[serde(default)]
    pub include_events: bool,
    /// Opaque: a previous export's `nextEventsCursor` (with `includeEvents`).
    #[serde(default)]
    pub events_cursor: Option<String>,
    /// Events per export (default and maximum [`super::paging::EVENT_PAGE`]).
    #[serde(default)]
    pub events_limit: Option<u32>,
}

/// The correlation spine of an export. Ids the scope does not have are absent (never guessed).
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeCorrelation {
    pub runtime_id: RuntimeId,
    pub session_id: SessionId,
    pub thread_id: ThreadId,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<TurnId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<TaskId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<TraceId>,
    /// Correlation ids this scope lacks, named (`turnId`, `taskId`, `runId`, `traceId`).
    pub missing: Vec<String>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvidencePack {
    pub evidence_id: EvidenceId,
    pub pack_ref: String,
    pub thread_status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_turn_status: Option<TurnStatus>,
    pub turn_count: u64,
    pub event_count: u64,
    pub tool_call_count: u64,
    pub failed_tool_call_count: u64,
    pub pending_request_count: u64,
    pub queued_turn_count: u64,
    pub artifact_count: u64,
    pub known_gaps: Vec<String>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceExportResult {
    pub session: AgentSession,
    pub turns: Vec<AgentTurn>,
    pub runtime_correlation: RuntimeCorrelation,
    pub evidence_pack: EvidencePack,
    pub artifacts: Vec<ArtifactSummary>,
    /// The session's events (in the turn's scope when `turnId` is given); only with
    /// `includeEvents`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<Value>>")]
    pub events: Option<Vec<crate::event::Event>>,
    /// Present when more events follow: pass it as `eventsCursor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_events_cursor: Option<String>,
    pub exported_at: String,
}
