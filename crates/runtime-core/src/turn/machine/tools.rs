//! The turn's tool side: starting each call the model asked for (arguments, schema, permission),
//! running it, and folding its result or failure back into the conversation.
#![deny(clippy::disallowed_methods)]

use serde_json::{json, Value};

use super::schema::check_schema;
use super::{Effect, Phase, Step, ToolOutcome, TurnMachine};
use crate::backend::ChatMessage;
use crate::event::facts::{self, PermissionResult, Risk, ToolOutputFacts};
use crate::event::Scope;
use crate::ids::*;
use crate::turn::output::project;

fn risk(risky: bool) -> Risk {
    if risky {
        Risk::High
    } else {
        Risk::Low
    }
}

impl TurnMachine {
    /// Starts the next pending tool call, or asks the model again when all are done.
    pub(super) fn next_call(&mut self, step: &mut Step) {
        if self.cp.next_call >= self.cp.calls.len() {
            self.request_model(step);
            return;
        }
        let call = self.cp.next_call;
        self.cp.next_call += 1;
        let n = self.cp.next_step;
        self.cp.next_step += 1;
        self.cp.tool_calls_total += 1;
        let turn = self.cp.spec.turn_id.as_str().to_owned();
        self.cp.call_ids[call] = Some((StepId::derived(&turn, n), ToolCallId::derived(&turn, n)));
        let c = self.cp.calls[call].clone();
        let spec = self
            .cp
            .spec
            .tools
            .iter()
            .find(|t| t.name == c.name)
            .cloned();
        let scope = self.tool_scope(call);
        step.events.push(facts::tool_started(
            scope.clone(),
            &c.name,
            spec.as_ref().map(|s| risk(s.risky)),
        ));
        let args: Result<Value, String> =
            serde_json::from_str(&c.arguments).map_err(|e| format!("arguments are not JSON: {e}"));
        if let Ok(a) = &args {
            step.events.push(facts::tool_args(scope.clone(), a.clone()));
        }
        let Some(spec) = spec else {
            self.fail_tool(
                call,
                "unknown_tool",
                &format!("no tool named {:?} is available", c.name),
                step,
            );
            return self.next_call(step);
        };
        let args = match args.and_then(|a| check_schema(&spec.parameters, &a).map(|()| a)) {
            Ok(a) => a,
            Err(problem) => {
                self.fail_tool(call, "invalid_arguments", &problem, step);
                return self.next_call(step);
            }
        };
        // A risky tool the session allowed (`allow_for_session`) runs without asking again.
        let granted = spec.risky && self.cp.session_allowed_tools.contains(&spec.name);
        let ask = spec.risky && !granted;
        let result = if ask {
            PermissionResult::Ask
        } else {
            PermissionResult::Allow
        };
        step.events.push(facts::permission_evaluated(
            scope,
            &spec.name,
            result,
            risk(spec.risky),
            granted,
        ));
        if ask {
            let action_id = ActionId::derived(&turn, self.cp.next_action);
            self.cp.next_action += 1;
            step.events.push(facts::tool_confirmation_required(
                Scope {
                    action_id: Some(action_id.clone()),
                    ..self.tool_scope(call)
                },
                &spec.name,
                args,
            ));
            self.cp.phase = Phase::Action { action_id, call };
        } else {
            self.run_tool(call, step);
        }
    }

    pub(super) fn run_tool(&mut self, call: usize, step: &mut Step) {
        let c = self.cp.calls[call].clone();
        let args = serde_json::from_str(&c.arguments).unwrap_or(json!({}));
        let id = self.effect_id();
        let (_, tool_call_id) = self.cp.call_ids[call].clone().expect("started");
        step.effects.push(Effect::RunTool {
            id,
            tool_call_id,
            name: c.name,
            arguments: args,
        });
        self.cp.phase = Phase::Tool(id, call);
    }

    /// Records the call as failed and tells the model why.
    pub(super) fn fail_tool(&mut self, call: usize, code: &str, message: &str, step: &mut Step) {
        step.events
            .push(facts::tool_failed(self.tool_scope(call), code, message));
        let provider_id = self.cp.calls[call].provider_id.clone();
        self.cp.messages.push(ChatMessage::Tool {
            tool_call_id: provider_id,
            content: format!("error ({code}): {message}"),
        });
    }

    pub(super) fn on_tool_done(&mut self, call: usize, outcome: ToolOutcome, step: &mut Step) {
        match outcome {
            ToolOutcome::Err { code, message } => self.fail_tool(call, &code, &message, step),
            ToolOutcome::Ok {
                output,
                output_ref,
                artifacts,
            } => {
                let budget = self.cp.spec.limits.output_budget;
                let p = project(&output, budget);
                let scope = self.tool_scope(call);
                let facts_of_output = ToolOutputFacts {
                    preview: preview(&p.text),
                    bytes: p.total_bytes as u64,
                    lines: p.total_lines as u64,
                    output_ref: &output_ref,
                    spilled: p.spilled,
                };
                step.events
                    .push(facts::tool_result(scope.clone(), &facts_of_output));
                if p.spilled {
                    step.events.push(facts::output_spilled(
                        scope.clone(),
                        &facts_of_output,
                        budget.bytes as u64,
                        budget.lines as u64,
                        p.text.len() as u64,
                    ));
                }
                for a in artifacts {
                    step.events.push(facts::artifact_created(
                        Scope {
                            artifact_id: Some(a.artifact_id.clone()),
                            task_id: Some(self.cp.task_id.clone()),
                            ..scope.clone()
                        },
                        a.artifact_ref,
                        a.kind,
                        a.title,
                        a.bytes,
                    ));
                }
                let content = if p.spilled {
                    let sep = if p.text.ends_with('\n') || p.text.is_empty() {
                        ""
                    } else {
                        "\n"
                    };
                    format!(
                        "{}{sep}[output truncated: {} bytes, {} lines in total; the whole output is kept as {}]",
                        p.text, p.total_bytes, p.total_lines, output_ref
                    )
                } else {
                    p.text
                };
                let provider_id = self.cp.calls[call].provider_id.clone();
                self.cp.messages.push(ChatMessage::Tool {
                    tool_call_id: provider_id,
                    content,
                });
            }
        }
        self.next_call(step);
    }
}

/// A short preview for events (the model sees the projection; events carry at most 1 KiB).
fn preview(s: &str) -> String {
    let mut end = s.len().min(1024);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}
