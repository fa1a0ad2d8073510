//! Turns of a session: submit (start, queue or refuse), resume a restored queue, cancel, answer
//! a pending action, and spawn the executor of the next turn.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;
use tracing::Instrument;

use super::executor::execute;
use super::{
    lock, Control, QueuedTurn, Runtime, RuntimeError, SessionHandle, TurnContext, TurnStarted,
};
use crate::backend::ChatMessage;
use crate::event::facts::{self, QueueChange, SubmitStatus};
use crate::event::Scope;
use crate::ids::*;
use crate::read_model::TurnStatus;
use crate::turn::{Decision, TurnLimits, TurnMachine, TurnSpec};

impl Runtime {
    /// Resumes a queue restored after a restart: the head turn starts. False when there was
    /// nothing to resume (idempotent).
    pub fn resume_queue(&self, session: &SessionId) -> Result<bool, RuntimeError> {
        let h = self.session(session)?;
        let mut st = lock(&h.state);
        if !st.queue_paused {
            return Ok(false);
        }
        if self.backend().is_none() {
            return Err(RuntimeError::NeedsSetup);
        }
        st.queue_paused = false;
        if st.active.is_some() {
            return Ok(true);
        }
        let Some(q) = st.queue.pop_front() else {
            return Ok(false);
        };
        let events = self.inner.log.append(
            &h.id,
            vec![facts::queue_resumed(
                Scope::thread(&h.thread_id),
                &q.turn_id,
                st.queue.len() as u64,
            )],
        )?;
        for e in &events {
            st.model.apply(e);
        }
        let (tx, rx) = mpsc::channel(16);
        st.active = Some((q.turn_id.clone(), tx));
        drop(st);
        self.spawn_turn(h.clone(), q, rx);
        Ok(true)
    }

    /// Submits a turn: recorded (`turn.submitted`) before any work; started now, queued behind
    /// the active turn (`queue_if_busy`), or refused.
    pub fn start_turn(
        &self,
        session: &SessionId,
        turn_id: Option<TurnId>,
        input: String,
        output_schema: Option<Value>,
        queue_if_busy: bool,
    ) -> Result<TurnStarted, RuntimeError> {
        let ctx = TurnContext::default();
        self.start_turn_with(session, turn_id, input, output_schema, queue_if_busy, ctx)
    }

    /// [`Runtime::start_turn`] with what the client gave beside the text and the turn's trace.
    pub fn start_turn_with(
        &self,
        session: &SessionId,
        turn_id: Option<TurnId>,
        input: String,
        output_schema: Option<Value>,
        queue_if_busy: bool,
        ctx: TurnContext,
    ) -> Result<TurnStarted, RuntimeError> {
        let h = self.session(session)?;
        // Everything up to the decision happens under the session lock, so two submissions
        // (even with the same caller turnId) cannot both start or both be recorded.
        let mut st = lock(&h.state);
        if let Some(id) = &turn_id {
            if let Some(t) = st.model.turn(id) {
                return Ok(TurnStarted {
                    turn: t.clone(),
                    created: false,
                });
            }
        }
        if self.backend().is_none() {
            return Err(RuntimeError::NeedsSetup);
        }
        if let Some(schema) = &output_schema {
            jsonschema::validator_for(schema).map_err(|e| {
                RuntimeError::InvalidParams(format!("outputSchema is not a valid JSON Schema: {e}"))
            })?;
        }
        if let Some((active, _)) = &st.active {
            if !queue_if_busy {
                return Err(RuntimeError::TurnAlreadyActive(active.to_string()));
            }
        }
        if st.queue_paused && !queue_if_busy {
            let ids: Vec<String> = st.queue.iter().map(|q| q.turn_id.to_string()).collect();
            return Err(RuntimeError::QueuePaused(ids.join(",")));
        }
        let turn_id = turn_id.unwrap_or_else(TurnId::random);
        if !self
            .inner
            .log
            .put_turn_input(session, &turn_id, &input, output_schema.as_ref())?
        {
            return Err(RuntimeError::InvalidParams(format!(
                "turnId {turn_id} was already used in this session"
            )));
        }
        let ts = Scope {
            trace_id: Some(ctx.trace.trace_of(&turn_id)),
            request_id: ctx.trace.request_id.clone(),
            ..Scope::turn(&h.thread_id, &turn_id)
        };
        let submitted = |status: SubmitStatus| {
            facts::turn_submitted(
                ts.clone(),
                &turn_id,
                status,
                input.chars().count() as u64,
                output_schema.is_some(),
                &ctx.given,
            )
        };
        if st.active.is_some() || st.queue_paused {
            let drafts = vec![
                submitted(SubmitStatus::Queued),
                facts::queue_changed(
                    ts.clone(),
                    QueueChange::Added,
                    &turn_id,
                    st.queue.len() as u64 + 1,
                ),
            ];
            let events = self.inner.log.append(&h.id, drafts)?;
            for e in &events {
                st.model.apply(e);
            }
            st.queue.push_back(QueuedTurn {
                turn_id: turn_id.clone(),
                input,
                output_schema,
                trace: ctx.trace,
                max_tokens: ctx.max_tokens,
            });
        } else {
            let events = self
                .inner
                .log
                .append(&h.id, vec![submitted(SubmitStatus::Accepted)])?;
            for e in &events {
                st.model.apply(e);
            }
            let (tx, rx) = mpsc::channel(16);
            st.active = Some((turn_id.clone(), tx));
            drop(st);
            let q = QueuedTurn {
                turn_id: turn_id.clone(),
                input,
                output_schema,
                trace: ctx.trace,
                max_tokens: ctx.max_tokens,
            };
            self.spawn_turn(h.clone(), q, rx);
            st = lock(&h.state);
        }
        let turn = st.model.turn(&turn_id).cloned().expect("just submitted");
        Ok(TurnStarted {
            turn,
            created: true,
        })
    }

    /// Cancels a turn: an active one stops (provider stream aborted) and ends cancelled; a
    /// queued one is removed and ends cancelled; an ended one is left alone (no-op).
    pub fn cancel_turn(
        &self,
        session: &SessionId,
        turn: &TurnId,
    ) -> Result<TurnStatus, RuntimeError> {
        let h = self.session(session)?;
        let mut st = lock(&h.state);
        let Some(view) = st.model.turn(turn).cloned() else {
            return Err(RuntimeError::TurnNotFound(turn.to_string()));
        };
        if view.status.is_terminal() {
            return Ok(view.status);
        }
        if let Some((active, tx)) = &st.active {
            if active == turn {
                let _ = tx.try_send(Control::Cancel);
                return Ok(view.status);
            }
        }
        if let Some(pos) = st.queue.iter().position(|q| &q.turn_id == turn) {
            st.queue.remove(pos);
            let qlen = st.queue.len() as u64;
            drop(st);
            let ts = Scope::turn(&h.thread_id, turn);
            self.append(
                &h,
                vec![
                    facts::queue_changed(ts.clone(), QueueChange::Removed, turn, qlen),
                    facts::turn_cancelled_unstarted(ts, "cancelled while queued"),
                ],
            )?;
            return Ok(TurnStatus::Cancelled);
        }
        Ok(view.status)
    }

    /// Resolves a pending action. Only this resolves it; an unanswered action is not approval.
    pub fn respond_action(
        &self,
        session: &SessionId,
        action: &ActionId,
        decision: Decision,
    ) -> Result<(), RuntimeError> {
        self.respond(session, action, Control::Action(action.clone(), decision))
    }

    /// Approves a pending tool confirmation once, with `arguments` replacing the model's input
    /// (recorded as a new `tool.args`).
    pub fn respond_action_with_input(
        &self,
        session: &SessionId,
        action: &ActionId,
        arguments: Value,
    ) -> Result<(), RuntimeError> {
        if !arguments.is_object() {
            return Err(RuntimeError::InvalidParams(
                "updated input must be a JSON object".into(),
            ));
        }
        self.respond(
            session,
            action,
            Control::ActionWithInput(action.clone(), arguments),
        )
    }

    pub(super) fn respond(
        &self,
        session: &SessionId,
        action: &ActionId,
        control: Control,
    ) -> Result<(), RuntimeError> {
        let h = self.session(session)?;
        let st = lock(&h.state);
        let pending = st.model.thread(&h.thread_id).and_then(|t| {
            t.pending_actions
                .iter()
                .find(|a| &a.action_id == action)
                .cloned()
        });
        let Some(p) = pending else {
            return Err(RuntimeError::ActionNotFound(action.to_string()));
        };
        match (&st.active, &p.turn_id) {
            (Some((active, tx)), Some(t)) if active == t => tx
                .try_send(control)
                .map_err(|_| RuntimeError::ActionNotFound(action.to_string())),
            _ => Err(RuntimeError::ActionNotFound(action.to_string())),
        }
    }

    /// The limits of a turn of `app`: the runtime's, with the app's token budget and the
    /// turn's own (a task's `budget.maxTokens`) when they are lower (a budget is only ever
    /// lowered here: a task cannot lift its app's).
    fn turn_limits(&self, app: &AppId, turn_budget: Option<u64>) -> TurnLimits {
        let mut limits = self.inner.config.limits.clone();
        let lowest = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        limits.max_tokens = lowest(
            lowest(
                limits.max_tokens,
                self.inner.config.tool_policy.token_budget(app),
            ),
            turn_budget,
        );
        limits
    }

    pub(super) fn spawn_turn(
        &self,
        h: Arc<SessionHandle>,
        q: QueuedTurn,
        rx: mpsc::Receiver<Control>,
    ) {
        let QueuedTurn {
            turn_id,
            input,
            output_schema,
            trace,
            max_tokens,
        } = q;
        let rt = self.clone();
        // Checked by start_turn and resume_queue; a backend is never taken away.
        let backend = self.backend().expect("checked by start_turn");
        let (history, session_allowed_tools) = {
            let st = lock(&h.state);
            (
                st.history.clone(),
                st.model.permission_sandbox.session_allowed_tools.clone(),
            )
        };
        let spec = TurnSpec {
            thread_id: h.thread_id.clone(),
            turn_id: turn_id.clone(),
            trace_id: Some(trace.trace_of(&turn_id)),
            request_id: trace.request_id,
            system_prompt: self.inner.config.system_prompt.clone(),
            history,
            input: input.clone(),
            output_schema,
            // The external tools are described on a blocking thread below.
            tools: Vec::new(),
            backend: backend.info(),
            limits: self.turn_limits(&h.app_id, max_tokens),
            session_allowed_tools,
        };
        let span = tracing::info_span!("agent.task", session = %h.id, turn = %turn_id);
        self.inner.tokio.spawn(
            async move {
                let mut spec = spec;
                let tools = rt.inner.tools.clone();
                let (app, session) = (h.app_id.clone(), h.id.as_str().to_owned());
                spec.tools = if tools.tool_grants().of(&session).is_empty() {
                    tools.specs_for(&app, &session)
                } else {
                    // The host's external tools may need a server started to be listed.
                    tokio::task::spawn_blocking(move || tools.specs_for(&app, &session))
                        .await
                        .unwrap_or_else(|_| rt.inner.tools.current_specs())
                };
                let machine = TurnMachine::new(spec);
                let outcome = execute(&rt, &h, machine, backend, rx).await;
                let mut st = lock(&h.state);
                if let Some(answer) = outcome {
                    st.history.push(ChatMessage::User { content: input });
                    st.history.push(ChatMessage::Assistant {
                        content: answer,
                        tool_calls: Vec::new(),
                    });
                }
                st.active = None;
                let next = st.queue.pop_front();
                if let Some(q) = next {
                    let (tx, rx) = mpsc::channel(16);
                    st.active = Some((q.turn_id.clone(), tx));
                    drop(st);
                    rt.spawn_turn(h.clone(), q, rx);
                }
            }
            .instrument(span),
        );
    }
}
