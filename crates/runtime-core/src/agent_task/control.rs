//! Acting on tasks: cancel (one, or every task of an app), retry (a new run), and the pending
//! action and its answer; the task's identity and event scope.

use serde_json::Value;

use super::projection::TaskIdentity;
use crate::app_server::protocol::{ActionRespondParams, TurnCancelParams};
use crate::ids::*;
use crate::read_model::PendingAction;
use crate::runtime::RuntimeError;
use crate::turn::Decision;

use super::*;

impl AgentTasks {
    /// Cancels the latest run (`cancelTask`); a run that already ended is left alone.
    pub fn cancel(&self, app: &AppId, task_id: &str) -> Result<Value, AgentTaskError> {
        let row = self.row(app, task_id)?;
        let session = sid(&row.session_id)?;
        if let Some(last) = row.runs.last() {
            let turn =
                TurnId::new(last.clone()).map_err(|e| AgentTaskError::Storage(e.to_string()))?;
            let cancel = TurnCancelParams {
                session_id: session,
                turn_id: turn,
            };
            match calls::cancel_turn(&self.runtime, &cancel) {
                Ok(_) | Err(MethodError::Runtime(RuntimeError::TurnNotFound(_))) => {}
                Err(e) => return Err(e.into()),
            }
        }
        self.view(&row)
    }

    /// Cancels every unfinished run of the app's tasks (the app was disabled, updated or
    /// uninstalled); returns how many were asked to stop.
    pub fn cancel_app(&self, app: &AppId) -> Result<usize, AgentTaskError> {
        let mut n = 0;
        let mut after: Option<(String, String)> = None;
        loop {
            let rows = self.store.list(
                app.as_str(),
                after.as_ref().map(|(c, t)| (c.as_str(), t.as_str())),
                MAX_LIST,
            )?;
            let Some(last) = rows.last() else {
                return Ok(n);
            };
            after = Some((last.created_at.clone(), last.task_id.clone()));
            for row in &rows {
                if let Some(v) = self.latest_turn(row)? {
                    if !v.status.is_terminal() {
                        let cancel = TurnCancelParams {
                            session_id: sid(&row.session_id)?,
                            turn_id: v.turn_id,
                        };
                        calls::cancel_turn(&self.runtime, &cancel)?;
                        n += 1;
                    }
                }
            }
        }
    }

    /// Starts a new run of an ended task (`retryTask`): same input, same output schema.
    pub fn retry(&self, app: &AppId, task_id: &str) -> Result<Value, AgentTaskError> {
        let row = self.row(app, task_id)?;
        if self.runtime.status() != "ready" {
            return Err(AgentTaskError::NeedsSetup);
        }
        let last = row.runs.last().cloned().unwrap_or_default();
        let _guard = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        match self.latest_turn(&row)? {
            Some(v) if v.status.is_terminal() => {}
            _ => return Err(AgentTaskError::Busy),
        }
        // Another task's turn in a shared session: refused, never queued behind it.
        self.check_session_idle(&row.session_id)?;
        let turn = TurnId::random().into_string();
        if self.store.add_run(&row.task_id, &last, &turn)?.is_none() {
            return Err(AgentTaskError::Busy);
        }
        let row = self.row(app, task_id)?;
        self.ensure_started(app, &row, None)?;
        self.view(&row)
    }

    /// The runtime's record of a pending action of this task's own runs. Only an action of the
    /// task's own runs can be named: a session may be shared with other tasks of the app
    /// (`resume`), whose approvals are theirs.
    pub fn pending_action(
        &self,
        app: &AppId,
        task_id: &str,
        action_id: &str,
    ) -> Result<PendingAction, AgentTaskError> {
        let row = self.row(app, task_id)?;
        let session = sid(&row.session_id)?;
        let missing = || AgentTaskError::ActionNotFound(action_id.to_owned());
        let action = ActionId::new(action_id.to_owned()).map_err(|_| missing())?;
        let model = self.read_session(&session).map_err(|_| missing())?;
        model
            .threads
            .values()
            .flat_map(|th| th.pending_actions.iter())
            .find(|p| {
                p.action_id == action
                    && match &p.turn_id {
                        Some(t) => row.runs.iter().any(|r| r == t.as_str()),
                        None => !row.joined,
                    }
            })
            .cloned()
            .ok_or_else(missing)
    }

    /// Answers a pending approval of the task's latest run, as `by`: an app may only reject a
    /// user-only action ([`approval::check`], re-derived from the runtime's record of it);
    /// a refused answer changes nothing (the action stays pending).
    pub fn respond(
        &self,
        app: &AppId,
        task_id: &str,
        action_id: &str,
        response: Response,
        by: Responder,
    ) -> Result<(), AgentTaskError> {
        let row = self.row(app, task_id)?;
        let session = sid(&row.session_id)?;
        let pending = self.pending_action(app, task_id, action_id)?;
        approval::check(&pending, &response, by)?;
        let (decision, updated_input) = match response {
            Response::Approve => (Decision::AllowOnce, None),
            Response::ApproveForSession => (Decision::AllowForSession, None),
            Response::Reject => (Decision::Decline, None),
            Response::Answer(input) => (Decision::AllowOnce, Some(input)),
        };
        let answer = ActionRespondParams {
            session_id: session,
            request_id: pending.action_id,
            action_type: None,
            confirmed: None,
            decision: Some(decision.as_str().to_owned()),
            updated_input,
        };
        calls::respond_action(&self.runtime, answer)?;
        Ok(())
    }

    /// The task's identity for projecting its events.
    pub fn identity(
        &self,
        app: &AppId,
        task_id: &str,
    ) -> Result<(TaskIdentity, SessionId), AgentTaskError> {
        let (ident, session, _) = self.scope(app, task_id)?;
        Ok((ident, session))
    }
}
