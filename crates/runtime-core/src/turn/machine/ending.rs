//! How a turn ends: completed with its answer, failed, or cancelled (closing what is open).
#![deny(clippy::disallowed_methods)]

use serde_json::Value;

use super::{Effect, Phase, Step, TurnMachine};
use crate::event::facts::{self, ActionStatus, RunPhase, ThreadStatus, TurnEnd};
use crate::event::Scope;

/// The code and message of a turn `agentSession/turn/cancel` ended.
const CANCELLED: &str = "cancelled";
const CANCELLED_MESSAGE: &str = "the turn was cancelled";

impl TurnMachine {
    pub(super) fn complete(&mut self, structured: Option<Value>, step: &mut Step) {
        step.events
            .push(facts::attempt_completed(self.task_scope(true)));
        step.events.push(facts::run_status(
            self.task_scope(true),
            RunPhase::Completed,
            self.cp.attempt as u64,
            None,
        ));
        step.events
            .push(facts::task_completed(self.task_scope(false)));
        step.events.push(facts::turn_completed(
            self.terminal_scope(),
            self.cp.text.chars().count() as u64,
            structured,
        ));
        step.events
            .push(facts::snapshot_updated(self.turn_scope(), "completed"));
        step.events.push(facts::thread_updated(
            self.thread_scope(),
            ThreadStatus::Idle,
        ));
        self.cp.phase = Phase::Finished;
    }

    /// Closes what is open (tool call, action) and ends the turn as failed or cancelled.
    pub(super) fn fail_turn(
        &mut self,
        code: &str,
        message: &str,
        retryable: bool,
        end: TurnEnd,
        step: &mut Step,
    ) {
        match (self.cp.phase.clone(), end) {
            (Phase::Action { action_id, call }, _) => {
                step.events.push(facts::action_closed_by_runtime(
                    Scope {
                        action_id: Some(action_id),
                        ..self.tool_scope(call)
                    },
                    ActionStatus::Cancelled,
                ));
                self.fail_tool(call, code, message, step);
            }
            (Phase::Tool(_, call), _) => self.fail_tool(call, code, message, step),
            // A failed response already recorded its `model.failed`; a cancelled stream did not.
            (Phase::Model(_), TurnEnd::Cancelled) => {
                step.events
                    .push(facts::model_cancelled(self.turn_scope(), code, message))
            }
            (Phase::Model(_), TurnEnd::Failed)
            | (Phase::NotStarted | Phase::Idle | Phase::Finished, _) => {}
        }
        let failure_category = match end {
            TurnEnd::Cancelled => CANCELLED,
            TurnEnd::Failed => code,
        };
        step.events.push(facts::attempt_failed(
            self.task_scope(true),
            retryable,
            failure_category,
        ));
        let phase = match end {
            TurnEnd::Cancelled => RunPhase::Cancelled,
            TurnEnd::Failed => RunPhase::Failed,
        };
        step.events.push(facts::run_status(
            self.task_scope(true),
            phase,
            self.cp.attempt as u64,
            Some(failure_category),
        ));
        step.events.push(facts::task_ended(
            self.task_scope(false),
            end,
            code,
            message,
        ));
        step.events.push(facts::turn_failed(
            self.terminal_scope(),
            end,
            code,
            message,
            retryable,
        ));
        step.events
            .push(facts::snapshot_updated(self.turn_scope(), end.as_str()));
        step.events.push(facts::thread_updated(
            self.thread_scope(),
            ThreadStatus::Idle,
        ));
        self.cp.phase = Phase::Finished;
    }

    pub(super) fn cancel(&mut self, step: &mut Step) {
        match self.cp.phase.clone() {
            Phase::NotStarted | Phase::Finished => {
                // A queued turn that never started: intent and terminal, nothing to close.
                step.events.push(facts::turn_cancelled_unstarted(
                    self.turn_scope(),
                    "cancelled before it started",
                ));
                step.events.push(facts::snapshot_updated(
                    self.turn_scope(),
                    TurnEnd::Cancelled.as_str(),
                ));
                self.cp.phase = Phase::Finished;
                return;
            }
            Phase::Model(id) | Phase::Tool(id, _) => step.effects.push(Effect::Abort { id }),
            Phase::Action { .. } | Phase::Idle => {}
        }
        step.events
            .push(facts::task_cancel_requested(self.task_scope(false)));
        self.fail_turn(
            CANCELLED,
            CANCELLED_MESSAGE,
            false,
            TurnEnd::Cancelled,
            step,
        );
    }
}
