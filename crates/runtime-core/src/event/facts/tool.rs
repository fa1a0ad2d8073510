//! Tool call facts: start, arguments, permission, result or failure, the output kept whole, and
//! what a call produced (artifacts, evidence).

use serde_json::{json, Value};

use super::{draft, some, ArtifactStatus, PermissionResult, Risk, ToolCallStatus};
use crate::event::*;

/// `tool.started`; `risk` is `None` for a tool the turn does not offer.
pub fn tool_started(scope: Scope, tool_name: &str, risk: Option<Risk>) -> EventDraft {
    draft(
        scope,
        EventBody::ToolStarted(
            EventType::ToolStarted,
            ToolStarted {
                tool_name: some(tool_name),
                status: some(ToolCallStatus::Started),
                risk: risk.map(String::from),
                ..Default::default()
            },
        ),
    )
}

/// `tool.args`: the arguments the model sent.
pub fn tool_args(scope: Scope, arguments: Value) -> EventDraft {
    draft(
        scope,
        EventBody::ToolArgs(
            EventType::ToolArgs,
            ToolArgs {
                arguments: Some(arguments),
                ..Default::default()
            },
        ),
    )
}

/// `tool.args {source: updated_input}`: the arguments an approval replaced the model's with.
pub fn tool_args_updated(scope: Scope, arguments: Value) -> EventDraft {
    draft(
        scope,
        EventBody::ToolArgs(
            EventType::ToolArgs,
            ToolArgs {
                arguments: Some(arguments),
                extra: [("source".to_owned(), json!("updated_input"))]
                    .into_iter()
                    .collect(),
            },
        ),
    )
}

/// `permission.evaluated` by the runtime's tool policy (`ask_for_risky`); `session_grant`
/// when an earlier `allow_for_session` answer allowed the call.
pub fn permission_evaluated(
    scope: Scope,
    tool_name: &str,
    result: PermissionResult,
    risk: Risk,
    session_grant: bool,
) -> EventDraft {
    draft(
        scope,
        EventBody::Permission(
            EventType::PermissionEvaluated,
            PermissionEvaluated {
                tool_name: some(tool_name),
                result: some(result),
                decision_source: session_grant.then(|| "session_grant".into()),
                risk: some(risk),
                owner: some("runtime_tool_policy"),
                mode: some("ask_for_risky"),
                ..Default::default()
            },
        ),
    )
}

/// `tool.failed` (failed) with a stable `code`.
pub fn tool_failed(scope: Scope, code: &str, message: &str) -> EventDraft {
    draft(
        scope,
        EventBody::Failure(
            EventType::ToolFailed,
            Failure {
                status: some(ToolCallStatus::Failed),
                code: some(code),
                message: some(message),
                ..Default::default()
            },
        ),
    )
}

/// What `tool.result` and `output.spilled` say about an output: its size, what the model saw
/// and where the whole is kept.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutputFacts<'a> {
    /// At most 1 KiB of what the model sees.
    pub preview: String,
    pub bytes: u64,
    pub lines: u64,
    pub output_ref: &'a str,
    /// Over budget: the model saw a projection and `output.spilled` follows.
    pub spilled: bool,
}

/// `tool.result` (completed).
pub fn tool_result(scope: Scope, o: &ToolOutputFacts<'_>) -> EventDraft {
    draft(
        scope,
        EventBody::ToolResult(
            EventType::ToolResult,
            ToolResult {
                status: some(ToolCallStatus::Completed),
                output_preview: Some(o.preview.clone()),
                output_bytes: Some(o.bytes),
                output_lines: Some(o.lines),
                output_ref: some(o.output_ref),
                truncated: Some(o.spilled),
                ..Default::default()
            },
        ),
    )
}

/// `output.spilled`: an output over budget (`budget_bytes`, `budget_lines`) is kept whole; the
/// model saw `preview_bytes` of it.
pub fn output_spilled(
    scope: Scope,
    o: &ToolOutputFacts<'_>,
    budget_bytes: u64,
    budget_lines: u64,
    preview_bytes: u64,
) -> EventDraft {
    draft(
        scope,
        EventBody::OutputSpilled(
            EventType::OutputSpilled,
            OutputSpilled {
                output_ref: some(o.output_ref),
                bytes: Some(o.bytes),
                lines: Some(o.lines),
                budget_bytes: Some(budget_bytes),
                budget_lines: Some(budget_lines),
                preview_bytes: Some(preview_bytes),
                ..Default::default()
            },
        ),
    )
}

/// `artifact.changed` (created) for an artifact a tool produced.
pub fn artifact_created(
    scope: Scope,
    artifact_ref: String,
    kind: String,
    title: String,
    bytes: u64,
) -> EventDraft {
    draft(
        scope,
        EventBody::Artifact(
            EventType::ArtifactChanged,
            ArtifactChanged {
                artifact_ref: Some(artifact_ref),
                kind: Some(kind),
                title: Some(title),
                bytes: Some(bytes),
                status: some(ArtifactStatus::Created),
                ..Default::default()
            },
        ),
    )
}

/// `evidence.changed`: an evidence pack was exported under `pack_ref`.
pub fn evidence_exported(scope: Scope, pack_ref: String) -> EventDraft {
    draft(
        scope,
        EventBody::Evidence(
            EventType::EvidenceChanged,
            EvidenceChanged {
                pack_ref: Some(pack_ref),
                ..Default::default()
            },
        ),
    )
}
