//! Answers to a pending tool confirmation: allow (once or for the session), decline, cancel, or
//! allow once with updated input.
#![deny(clippy::disallowed_methods)]

use serde_json::Value;

use super::{Decision, Phase, Step, TurnMachine};
use crate::event::facts;
use crate::event::Scope;
use crate::ids::ActionId;

impl TurnMachine {
    /// The call waiting for `action_id`, if that is what the turn waits for.
    fn awaited_call(&self, action_id: &ActionId) -> Option<usize> {
        match &self.cp.phase {
            Phase::Action {
                action_id: want,
                call,
            } if want == action_id => Some(*call),
            _ => None,
        }
    }

    pub(super) fn on_answer(&mut self, action_id: ActionId, decision: Decision, step: &mut Step) {
        let Some(call) = self.awaited_call(&action_id) else {
            return;
        };
        let scope = Scope {
            action_id: Some(action_id),
            ..self.tool_scope(call)
        };
        let tool = self.cp.calls[call].name.clone();
        if decision == Decision::AllowForSession && !self.cp.session_allowed_tools.contains(&tool) {
            self.cp.session_allowed_tools.push(tool.clone());
        }
        step.events
            .push(facts::action_answered(scope, decision, tool));
        if decision.allows() {
            self.run_tool(call, step);
        } else {
            self.fail_tool(
                call,
                "permission_denied",
                "the user declined this tool call",
                step,
            );
            self.next_call(step);
        }
    }

    /// Allowed once with `arguments` instead of the model's (a new `tool.args`).
    pub(super) fn on_answer_with_input(
        &mut self,
        action_id: ActionId,
        arguments: Value,
        step: &mut Step,
    ) {
        let Some(call) = self.awaited_call(&action_id) else {
            return;
        };
        let scope = Scope {
            action_id: Some(action_id),
            ..self.tool_scope(call)
        };
        let tool = self.cp.calls[call].name.clone();
        step.events
            .push(facts::action_answered_with_input(scope, tool));
        self.cp.calls[call].arguments = arguments.to_string();
        step.events
            .push(facts::tool_args_updated(self.tool_scope(call), arguments));
        self.run_tool(call, step);
    }
}
