//! `evidence/export`: records an `evidence.changed` event for the session (or one turn of it)
//! and answers the pack: the session, its turns, the runtime correlation, counts, artifact
//! summaries (at most [`MAX_EXPORT_ARTIFACTS`]) and, on request, one page of events.

use serde_json::Value;

use super::protocol::*;
use super::views::{agent_session, artifacts, turns};
use super::{paging, ser, Connection, RpcError, MAX_EXPORT_ARTIFACTS};
use crate::event::*;
use crate::ids::*;
use crate::runtime::RuntimeError;

impl Connection {
    pub(super) fn export_evidence(&mut self, ep: EvidenceExportParams) -> Result<Value, RpcError> {
        let _span = tracing::info_span!("evidence.record", session = %ep.session_id).entered();
        let (app, thread, model) = self.rt.read(&ep.session_id)?;
        let turn = match &ep.turn_id {
            Some(t) => Some(
                model
                    .turn(t)
                    .cloned()
                    .ok_or_else(|| RuntimeError::TurnNotFound(t.to_string()))?,
            ),
            None => None,
        };
        let evidence_id = EvidenceId::random();
        let pack_ref = format!(
            "evidence://{}/{}",
            ep.session_id.as_str(),
            evidence_id.as_str()
        );
        // One trace: the export of a turn carries the turn's own trace (a task's `traceId`)
        // and the request that caused it, as its events do.
        let (trace, request) = match &turn {
            Some(t) => turn_trace(&self.rt, &ep.session_id, &t.turn_id)?,
            None => (None, None),
        };
        let scope = Scope {
            evidence_id: Some(evidence_id.clone()),
            trace_id: trace.clone(),
            request_id: request,
            turn_id: turn.as_ref().map(|t| t.turn_id.clone()),
            task_id: turn.as_ref().and_then(|t| t.task_id.clone()),
            run_id: turn.as_ref().and_then(|t| t.run_id.clone()),
            ..Scope::thread(&thread)
        };
        self.rt.record(
            &ep.session_id,
            vec![facts::evidence_exported(scope, pack_ref.clone())],
        )?;
        let (_, _, model) = self.rt.read(&ep.session_id)?;
        let in_scope = |e: &Event| {
            turn.as_ref()
                .is_none_or(|t| e.scope.turn_id.as_ref() == Some(&t.turn_id))
        };
        // Counts and artifact summaries over the whole scope, a page of events at a time.
        let (mut event_count, mut artifact_count, mut arts) = (0u64, 0u64, Vec::new());
        let mut from = 1;
        loop {
            let page = self
                .rt
                .log()
                .read(&ep.session_id, from, crate::log::CATCH_UP_PAGE)
                .map_err(RuntimeError::from)?;
            let Some(last) = page.last().map(|e| e.sequence) else {
                break;
            };
            for e in page.iter().filter(|e| in_scope(e)) {
                event_count += 1;
                for a in artifacts(
                    &self.rt,
                    &app,
                    &ep.session_id,
                    std::slice::from_ref(e),
                    None,
                    false,
                ) {
                    artifact_count += 1;
                    if arts.len() < MAX_EXPORT_ARTIFACTS {
                        arts.push(a);
                    }
                }
            }
            if page.len() < crate::log::CATCH_UP_PAGE {
                break;
            }
            from = last + 1;
        }
        // The events themselves, one bounded page per export.
        let (events, next_events_cursor) = if ep.include_events {
            let after = paging::position(ep.events_cursor.as_deref())?;
            let n = paging::limit(ep.events_limit, paging::EVENT_PAGE, paging::EVENT_PAGE);
            let mut out = Vec::new();
            let (through, ended) = paging::walk(self.rt.log(), &ep.session_id, after, |e| {
                if !in_scope(&e) {
                    return true;
                }
                if out.len() >= n {
                    return false;
                }
                out.push(e);
                true
            })
            .map_err(RuntimeError::from)?;
            (Some(out), (!ended).then(|| paging::cursor(through)))
        } else {
            (None, None)
        };
        let th = model.thread(&thread).cloned().unwrap_or_default();
        let latest = th.turns.last().map(|t| t.status);
        let mut missing = Vec::new();
        let task_id = turn.as_ref().and_then(|t| t.task_id.clone());
        let run_id = turn.as_ref().and_then(|t| t.run_id.clone());
        if turn.is_none() {
            missing.push("turnId".to_owned());
        }
        if task_id.is_none() {
            missing.push("taskId".to_owned());
        }
        if run_id.is_none() {
            missing.push("runId".to_owned());
        }
        if trace.is_none() {
            missing.push("traceId".to_owned());
        }
        let mut gaps = Vec::new();
        if artifact_count > arts.len() as u64 {
            gaps.push("artifacts_truncated".to_owned());
        }
        if th.pending_actions.iter().any(|_| true) {
            gaps.push("pending_actions_unresolved".to_owned());
        }
        ser(EvidenceExportResult {
            session: agent_session(&ep.session_id, &app, &thread, &model),
            turns: turns(&ep.session_id, &thread, &model),
            runtime_correlation: RuntimeCorrelation {
                runtime_id: self.rt.log().runtime_id().clone(),
                session_id: ep.session_id.clone(),
                thread_id: thread.clone(),
                turn_id: turn.as_ref().map(|t| t.turn_id.clone()),
                task_id,
                run_id,
                trace_id: trace,
                missing,
            },
            evidence_pack: EvidencePack {
                evidence_id,
                pack_ref,
                thread_status: th.status.clone(),
                latest_turn_status: latest,
                turn_count: model.session.turn_count,
                event_count,
                tool_call_count: th.tool_call_count,
                failed_tool_call_count: th.failed_tool_call_count,
                pending_request_count: th.pending_actions.len() as u64,
                queued_turn_count: th.queued_turns.len() as u64,
                artifact_count,
                known_gaps: gaps,
            },
            artifacts: arts,
            events,
            next_events_cursor,
            exported_at: format_timestamp(self.rt.log().clock().now()),
        })
    }
}

/// The trace and request ids the turn's first event carries (`turn.submitted`); a turn recorded
/// before traces were carried has the derived `trace_<turnId>_0`.
fn turn_trace(
    rt: &crate::runtime::Runtime,
    session: &SessionId,
    turn: &TurnId,
) -> Result<(Option<TraceId>, Option<RequestId>), RuntimeError> {
    let mut from = 1;
    loop {
        let page = rt.log().read(session, from, crate::log::CATCH_UP_PAGE)?;
        if let Some(e) = page.iter().find(|e| e.scope.turn_id.as_ref() == Some(turn)) {
            let trace = e.scope.trace_id.clone();
            let trace = trace.or_else(|| Some(TraceId::derived(turn.as_str(), 0)));
            return Ok((trace, e.scope.request_id.clone()));
        }
        match page.last() {
            Some(last) if page.len() == crate::log::CATCH_UP_PAGE => from = last.sequence + 1,
            _ => return Ok((Some(TraceId::derived(turn.as_str(), 0)), None)),
        }
    }
}
