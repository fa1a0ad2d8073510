//! The App Server's method layer as plain calls: `agentSession/start`, `agentSession/read`,
//! `agentSession/update`, `agentSession/list`, `agentSession/turn/start`,
//! `agentSession/turn/cancel`, `agentSession/action/respond` and the
//! `agentSession/event` stream, each one function over a [`Runtime`] and the method's typed
//! params. The JSON-RPC handlers in `methods.rs` decode the wire params and call these; the
//! host's `lime.agent` tasks (`agent_task/`) call them in-process. One code path: neither
//! caller talks to the runtime's session or turn API for these methods itself.
//!
//! A refusal is a [`MethodError`]: the runtime's own error (mapped to a JSON-RPC code by
//! `From<RuntimeError> for RpcError`, to a task code by `agent_task`) or a params refusal
//! already in its JSON-RPC form (`-32602` with its `data`).

use serde_json::Value;

use super::protocol::*;
use super::views::{agent_session, agent_turn, turns};
use super::{paging, validate, RpcError};
use crate::ids::*;
use crate::log::Subscription;
use crate::read_model::SessionReadModel;
use crate::read_model::TurnStatus;
use crate::runtime::{
    ArchivedFilter, Runtime, RuntimeError, SessionChange, SessionFilter, TurnContext, TurnTrace,
};
use crate::turn::Decision;

/// Why a method call was refused.
#[derive(Debug)]
pub enum MethodError {
    /// The runtime refused (session, turn or action unknown, busy, needs setup, ...).
    Runtime(RuntimeError),
    /// The params were refused before the runtime was asked (`-32602`).
    Params(RpcError),
}

impl From<RuntimeError> for MethodError {
    fn from(e: RuntimeError) -> Self {
        MethodError::Runtime(e)
    }
}

impl From<MethodError> for RpcError {
    fn from(e: MethodError) -> Self {
        match e {
            MethodError::Runtime(e) => e.into(),
            MethodError::Params(e) => e,
        }
    }
}

fn invalid(message: impl std::fmt::Display) -> MethodError {
    MethodError::Params(RpcError::new(
        codes::INVALID_PARAMS,
        format!("invalid params: {message}"),
    ))
}

/// `agentSession/start`: checks the bounded fields, creates the session, answers it.
pub fn start_session(
    rt: &Runtime,
    p: SessionStartParams,
) -> Result<SessionStartResult, MethodError> {
    let app = AppId::new(&p.app_id).map_err(invalid)?;
    validate::session_start(&p).map_err(MethodError::Params)?;
    let model = rt.start_session_about(app, p.session_id, p.workspace_id, p.business_object_ref)?;
    let sid = model
        .session
        .session_id
        .clone()
        .ok_or_else(|| RuntimeError::InvalidParams("the session has no id".into()))?;
    let (app, thread, model) = rt.read(&sid)?;
    Ok(SessionStartResult {
        session: agent_session(&sid, &app, &thread, &model),
    })
}

/// A session of another workspace than the caller's is not found (`-32010`,
/// `appserver.workspace_mismatch`).
fn same_workspace(
    session: &SessionId,
    caller: Option<&String>,
    model: &SessionReadModel,
) -> Result<(), MethodError> {
    match caller {
        Some(w) if model.session.workspace_id.as_ref() != Some(w) => Err(MethodError::Params(
            RpcError::new(
                codes::SESSION_NOT_FOUND,
                "Session not found in this workspace",
            )
            .with(
                serde_json::json!({"sessionId": session, "code": "appserver.workspace_mismatch"}),
            ),
        )),
        _ => Ok(()),
    }
}

/// `agentSession/read`: the session, its turns and every read model.
pub fn read_session(rt: &Runtime, p: &SessionRef) -> Result<SessionReadResult, MethodError> {
    let (app, thread, model) = rt.read(&p.session_id)?;
    same_workspace(&p.session_id, p.workspace_id.as_ref(), &model)?;
    Ok(SessionReadResult {
        session: agent_session(&p.session_id, &app, &thread, &model),
        turns: turns(&p.session_id, &thread, &model),
        detail: model,
    })
}

/// `agentSession/update`: changes the title and/or archive state (a `session.updated` fact
/// when something differs) and answers the session.
pub fn update_session(
    rt: &Runtime,
    p: SessionUpdateParams,
) -> Result<SessionUpdateResult, MethodError> {
    validate::session_update(&p).map_err(MethodError::Params)?;
    let (_, _, before) = rt.read(&p.session_id)?;
    same_workspace(&p.session_id, p.workspace_id.as_ref(), &before)?;
    let change = SessionChange {
        title: p.title,
        archived: p.archived,
    };
    let (app, thread, model) = rt.update_session(&p.session_id, change)?;
    Ok(SessionUpdateResult {
        session: agent_session(&p.session_id, &app, &thread, &model),
    })
}

/// `agentSession/list`: a page of the sessions the filter keeps, most recently updated first.
pub fn list_sessions(
    rt: &Runtime,
    p: &SessionListParams,
) -> Result<SessionListResult, MethodError> {
    if let Some(w) = &p.workspace_id {
        validate::workspace_id(w).map_err(MethodError::Params)?;
    }
    let filter = SessionFilter {
        workspace_id: p.workspace_id.clone(),
        app_id: p.app_id.clone(),
        archived: match (p.archived_only, p.include_archived) {
            (true, _) => ArchivedFilter::Only,
            (false, true) => ArchivedFilter::Include,
            (false, false) => ArchivedFilter::Exclude,
        },
    };
    let after = paging::position(p.cursor.as_deref()).map_err(MethodError::Params)?;
    let n = paging::limit(p.limit, paging::SESSION_PAGE, paging::MAX_SESSION_PAGE);
    let after = usize::try_from(after).unwrap_or(usize::MAX);
    let page = rt.list_sessions(&filter, after, n)?;
    let end = after.saturating_add(n).min(page.total);
    Ok(SessionListResult {
        sessions: page
            .sessions
            .iter()
            .map(|s| agent_session(&s.session_id, &s.app_id, &s.thread_id, &s.model))
            .collect(),
        next_cursor: (end < page.total).then(|| paging::cursor(end as u64)),
    })
}

/// What `agentSession/turn/start` did, and from where a follower of the session reads its
/// events (the durable position before the turn was submitted).
pub struct TurnStartOutcome {
    pub result: TurnStartResult,
    pub follow_after: u64,
    /// False when the caller's `turnId` named an existing turn (idempotent retry).
    pub created: bool,
}

/// `agentSession/turn/start`: submits (or queues) a turn. `attachments`, `capabilityId` and
/// `metadata` are checked ([`validate::turn_given`]) and kept in `turn.submitted`; `trace` is
/// the correlation the in-process caller brings (a task's `traceId`, the bridge `requestId`).
pub fn start_turn(
    rt: &Runtime,
    p: TurnStartParams,
    trace: TurnTrace,
) -> Result<TurnStartOutcome, MethodError> {
    let (_, thread, model) = rt.read(&p.session_id)?;
    let opts = p.runtime_options.unwrap_or_default();
    let given = validate::turn_given(p.input.attachments, opts.capability_id, opts.metadata)
        .map_err(MethodError::Params)?;
    if opts.max_tokens == Some(0) {
        let mut e = crate::app_server::RpcError::new(
            crate::app_server::codes::INVALID_PARAMS,
            "invalid params: runtimeOptions.maxTokens must be 1 or more",
        );
        e.data = Some(
            serde_json::json!({"code": "appserver.invalid_field", "field": "runtimeOptions.maxTokens"}),
        );
        return Err(MethodError::Params(e));
    }
    let ctx = TurnContext {
        given,
        trace,
        max_tokens: opts.max_tokens,
    };
    let started = rt.start_turn_with(
        &p.session_id,
        p.turn_id,
        p.input.text,
        opts.output_schema,
        p.queue_if_busy,
        ctx,
    )?;
    Ok(TurnStartOutcome {
        result: TurnStartResult {
            turn: agent_turn(&p.session_id, &thread, &started.turn),
        },
        follow_after: model.session.recovery_cursor,
        created: started.created,
    })
}

/// `agentSession/turn/cancel`: asks the turn to stop; answers its status.
pub fn cancel_turn(rt: &Runtime, p: &TurnCancelParams) -> Result<TurnStatus, MethodError> {
    Ok(rt.cancel_turn(&p.session_id, &p.turn_id)?)
}

/// `agentSession/action/respond`: answers a pending action (`decision` wins over
/// `confirmed`; `updatedInput` approves once with that tool input).
pub fn respond_action(rt: &Runtime, p: ActionRespondParams) -> Result<(), MethodError> {
    let decision = match (p.decision.as_deref(), p.confirmed) {
        (Some("allow_once"), _) => Decision::AllowOnce,
        (Some("allow_for_session"), _) => Decision::AllowForSession,
        (Some("decline"), _) => Decision::Decline,
        (Some("cancel"), _) => Decision::Cancel,
        (Some(other), _) => return Err(invalid(format_args!("unknown decision {other:?}"))),
        (None, Some(true)) => Decision::AllowOnce,
        (None, Some(false)) => Decision::Decline,
        (None, None) => return Err(invalid("decision or confirmed is required")),
    };
    match p.updated_input {
        None | Some(Value::Null) => {
            rt.respond_action(&p.session_id, &p.request_id, decision)?;
        }
        Some(input) if decision == Decision::AllowOnce => {
            rt.respond_action_with_input(&p.session_id, &p.request_id, input)?;
        }
        Some(_) => {
            return Err(invalid(
                "updatedInput goes only with an allow_once decision",
            ))
        }
    }
    Ok(())
}

/// `agentSession/event`: the session's events after `after`, live and resumable (what a
/// connection forwards as notifications).
pub fn follow(rt: &Runtime, session: &SessionId, after: u64) -> Subscription {
    rt.log().subscribe(session, after)
}
