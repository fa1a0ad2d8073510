//! The App Server's wire views of runtime state: a session, its turns, and the artifact
//! summaries found in its events (`artifact/read`, `evidence/export`).

use super::protocol::*;
use super::MAX_INLINE_CONTENT;
use crate::event::*;
use crate::ids::*;
use crate::read_model::{SessionReadModel, TurnView};
use crate::runtime::Runtime;

pub(super) fn agent_session(
    id: &SessionId,
    app: &AppId,
    thread: &ThreadId,
    m: &SessionReadModel,
) -> AgentSession {
    AgentSession {
        session_id: id.clone(),
        thread_id: thread.clone(),
        app_id: app.to_string(),
        workspace_id: m.session.workspace_id.clone(),
        business_object_ref: m.session.business_object_ref.clone(),
        status: m.session.status.clone(),
        created_at: m.session.created_at.clone().unwrap_or_default(),
        updated_at: m.session.updated_at.clone().unwrap_or_default(),
        last_sequence: m.session.recovery_cursor,
        title: m.session.title.clone(),
        archived_at: m.session.archived_at.clone(),
        turn_count: m.thread(thread).map_or(0, |t| t.turns.len() as u64),
    }
}

pub(super) fn agent_turn(session: &SessionId, thread: &ThreadId, t: &TurnView) -> AgentTurn {
    AgentTurn {
        turn_id: t.turn_id.clone(),
        session_id: session.clone(),
        thread_id: thread.clone(),
        status: t.status,
        started_at: t.started_at.clone(),
        completed_at: t.completed_at.clone(),
        error_code: t.error_code.clone(),
    }
}

pub(super) fn turns(
    session: &SessionId,
    thread: &ThreadId,
    m: &SessionReadModel,
) -> Vec<AgentTurn> {
    m.thread(thread)
        .map(|th| {
            th.turns
                .iter()
                .map(|t| agent_turn(session, thread, t))
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn artifacts(
    rt: &Runtime,
    app: &AppId,
    session: &SessionId,
    events: &[Event],
    turn: Option<&TurnId>,
    include: bool,
) -> Vec<ArtifactSummary> {
    let mut out = Vec::new();
    for e in events {
        if turn.is_some() && e.scope.turn_id.as_ref() != turn {
            continue;
        }
        // How to get the content: a `lime.artifacts` artifact of the app (read through it,
        // rehashed) or a spilled tool output file.
        enum Source {
            Artifact,
            File(Option<std::path::PathBuf>),
        }
        let (r, kind, title, bytes, source) = match &e.body {
            EventBody::Artifact(_, a) => {
                let Some(r) = a.artifact_ref.clone() else {
                    continue;
                };
                (
                    r,
                    a.kind.clone().unwrap_or_else(|| "text".into()),
                    a.title.clone(),
                    a.bytes.unwrap_or(0),
                    Source::Artifact,
                )
            }
            EventBody::OutputSpilled(_, o) => {
                let Some(r) = o.output_ref.clone() else {
                    continue;
                };
                let path = e.scope.tool_call_id.as_ref().map(|c| {
                    rt.config()
                        .data_dir
                        .join("outputs")
                        .join(session.as_str())
                        .join(format!("{}.txt", c.as_str()))
                });
                (
                    r,
                    "tool_output".into(),
                    None,
                    o.bytes.unwrap_or(0),
                    Source::File(path),
                )
            }
            _ => continue,
        };
        let (content, status) = if !include {
            (None, "notRequested")
        } else if bytes > MAX_INLINE_CONTENT {
            (None, "tooLarge")
        } else {
            let read = match source {
                Source::Artifact => rt.tools().artifact_content(app, &r, MAX_INLINE_CONTENT),
                Source::File(path) => path.and_then(|p| std::fs::read(p).ok()),
            };
            match read {
                Some(b) => (Some(String::from_utf8_lossy(&b).into_owned()), "available"),
                None => (None, "unavailable"),
            }
        };
        out.push(ArtifactSummary {
            artifact_ref: r,
            event_id: e.event_id.clone(),
            sequence: e.sequence,
            turn_id: e.scope.turn_id.clone(),
            artifact_id: e.scope.artifact_id.clone(),
            title,
            kind,
            bytes,
            content,
            content_status: status.into(),
        });
    }
    out
}
