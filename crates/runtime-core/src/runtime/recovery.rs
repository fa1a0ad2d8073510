//! Recovery at open: a turn the previous process left running is closed as failed (with a
//! `snapshot.repaired` fact first), and its queue comes back paused. The facts are the same
//! constructors a live turn uses.

use std::collections::{HashMap, VecDeque};

use serde_json::Value;

use super::{lock, QueuedTurn, Runtime, RuntimeError, SessionHandle};
use crate::event::facts::{self, ActionStatus};
use crate::event::{EventDraft, Scope};
use crate::ids::*;
use crate::read_model::{TurnStatus, TurnView};

impl Runtime {
    /// Counts every session of the log (for the caps) and closes what a previous process left
    /// running; only sessions with work left (a paused queue) stay in memory beyond the LRU
    /// bound.
    pub(super) fn recover(&self) -> Result<(), RuntimeError> {
        for (sid, _) in self.inner.log.sessions()? {
            let Some(handle) = self.load(&sid)? else {
                tracing::warn!(session = %sid, "session without app or thread in the log; not loaded");
                continue;
            };
            lock(&self.inner.sessions).count(&handle.app_id);
            let thread = handle.thread_id.clone();
            // Close what the previous process left running; keep its queue.
            let (unfinished, queued): (Vec<TurnView>, Vec<TurnId>) = {
                let st = lock(&handle.state);
                st.model
                    .thread(&thread)
                    .map(|th| {
                        (
                            th.turns
                                .iter()
                                .filter(|t| {
                                    !t.status.is_terminal() && t.status != TurnStatus::Queued
                                })
                                .cloned()
                                .collect(),
                            th.queued_turns.clone(),
                        )
                    })
                    .unwrap_or_default()
            };
            for t in unfinished {
                let drafts = self.recovery_drafts(&handle, &t)?;
                self.append(&handle, drafts)?;
                tracing::warn!(session = %sid, turn = %t.turn_id, "interrupted turn recorded as failed");
            }
            if !queued.is_empty() {
                let inputs = self.inner.log.turn_inputs(&sid)?;
                self.restore_queue(&handle, queued, &inputs)?;
            }
            let mut sessions = lock(&self.inner.sessions);
            sessions.insert(sid, handle);
            self.evict(&mut sessions);
        }
        Ok(())
    }

    /// Puts the turns a previous process left queued back in the queue, paused (recorded as
    /// `queue.changed {change: restored, status: paused}`); a queued turn whose input is gone
    /// fails with `input_unavailable`.
    pub(super) fn restore_queue(
        &self,
        h: &SessionHandle,
        queued: Vec<TurnId>,
        inputs: &HashMap<String, (String, Option<Value>)>,
    ) -> Result<(), RuntimeError> {
        let mut queue = VecDeque::new();
        for turn_id in queued {
            match inputs.get(turn_id.as_str()) {
                Some((input, output_schema)) => queue.push_back(QueuedTurn {
                    turn_id,
                    input: input.clone(),
                    output_schema: output_schema.clone(),
                    // A queued turn restored after a restart keeps the app's budget; its own
                    // lower one is not in the log (the task's row has it: a retry uses it).
                    max_tokens: None,
                    trace: Default::default(),
                }),
                None => {
                    let ts = Scope::turn(&h.thread_id, &turn_id);
                    self.append(h, vec![facts::queued_input_unavailable(ts)])?;
                }
            }
        }
        if queue.is_empty() {
            return Ok(());
        }
        let head = queue.front().map(|q| q.turn_id.clone());
        let restored = facts::queue_restored(
            Scope::thread(&h.thread_id),
            head.as_ref(),
            queue.len() as u64,
        );
        self.append(h, vec![restored])?;
        let mut st = lock(&h.state);
        st.queue = queue;
        st.queue_paused = true;
        Ok(())
    }

    /// The facts that close a turn a previous process left running: `snapshot.repaired`, then
    /// its open actions (expired) and tools (failed), its run and task, and the turn itself.
    pub(super) fn recovery_drafts(
        &self,
        h: &SessionHandle,
        t: &TurnView,
    ) -> Result<Vec<EventDraft>, RuntimeError> {
        let ts = Scope::turn(&h.thread_id, &t.turn_id);
        let mut d = vec![facts::snapshot_repaired(ts.clone(), &t.turn_id)];
        let (tools, actions) = self.inner.log.open_in_turn(&h.id, &t.turn_id)?;
        let st = lock(&h.state);
        let calls = st
            .model
            .thread(&h.thread_id)
            .map(|th| th.tool_calls.clone())
            .unwrap_or_default();
        let pending = st
            .model
            .thread(&h.thread_id)
            .map(|th| th.pending_actions.clone())
            .unwrap_or_default();
        drop(st);
        for a in actions {
            let tc = pending
                .iter()
                .find(|p| p.action_id == a)
                .and_then(|p| p.tool_call_id.clone());
            let step = tc
                .as_ref()
                .and_then(|id| calls.iter().find(|c| &c.tool_call_id == id))
                .and_then(|c| c.step_id.clone());
            let scope = Scope {
                action_id: Some(a),
                tool_call_id: tc,
                step_id: step,
                ..ts.clone()
            };
            d.push(facts::action_closed_by_runtime(
                scope,
                ActionStatus::Expired,
            ));
        }
        for id in tools {
            let step = calls
                .iter()
                .find(|c| c.tool_call_id == id)
                .and_then(|c| c.step_id.clone());
            let step = step.unwrap_or_else(|| StepId::derived(t.turn_id.as_str(), 0));
            d.push(facts::tool_interrupted(Scope {
                tool_call_id: Some(id),
                step_id: Some(step),
                ..ts.clone()
            }));
        }
        if let (Some(task), Some(run)) = (&t.task_id, &t.run_id) {
            let task_scope = Scope {
                task_id: Some(task.clone()),
                run_id: Some(run.clone()),
                ..ts.clone()
            };
            d.push(facts::attempt_interrupted(task_scope.clone()));
            d.push(facts::task_interrupted(Scope {
                run_id: None,
                ..task_scope
            }));
        }
        d.push(facts::turn_interrupted(ts));
        Ok(d)
    }
}
