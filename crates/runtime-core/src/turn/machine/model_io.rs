//! The turn's model side: starting a run, requesting the model, folding its stream, and what a
//! finished or failed response leads to (tool calls, the answer, a re-ask, a new run).
#![deny(clippy::disallowed_methods)]

use super::schema::check_structured;
use super::{
    Effect, PendingCall, Phase, Step, TurnMachine, ERROR_MAX_BUDGET, ERROR_MAX_STRUCTURED,
    ERROR_MAX_TURNS,
};
use crate::backend::{BackendError, BackendEvent, ChatMessage, ChatToolCall, ModelRequest};
use crate::event::facts::{
    self, ModelCompletion, ModelRequestFacts, RunPhase, TurnEnd, UsageFacts,
};
use crate::ids::RunId;

impl TurnMachine {
    pub(super) fn start_attempt(&mut self, step: &mut Step) {
        step.events.push(facts::attempt_started(
            self.task_scope(true),
            self.cp.attempt as u64,
        ));
        step.events.push(facts::run_status(
            self.task_scope(true),
            RunPhase::Running,
            self.cp.attempt as u64,
            None,
        ));
        self.cp.model_rounds = 0;
        self.request_model(step);
    }

    pub(super) fn request_model(&mut self, step: &mut Step) {
        self.cp.phase = Phase::Idle;
        if self.cp.model_rounds >= self.cp.spec.limits.max_model_rounds {
            self.fail_turn(
                ERROR_MAX_TURNS,
                "the turn reached its model request limit",
                false,
                TurnEnd::Failed,
                step,
            );
            return;
        }
        self.cp.model_rounds += 1;
        self.cp.text.clear();
        self.cp.calls.clear();
        self.cp.call_ids.clear();
        self.cp.next_call = 0;
        let id = self.effect_id();
        let b = &self.cp.spec.backend;
        step.events.push(facts::model_requested(
            self.turn_scope(),
            ModelRequestFacts {
                provider_name: &b.provider_name,
                model_name: &b.model_name,
                message_count: self.cp.messages.len() as u64,
                tool_count: self.cp.spec.tools.len() as u64,
                structured_output_attempt: self
                    .cp
                    .spec
                    .output_schema
                    .as_ref()
                    .map(|_| self.cp.structured_retries as u64 + 1),
            },
        ));
        step.effects.push(Effect::CallModel {
            id,
            request: ModelRequest {
                messages: self.cp.messages.clone(),
                tools: self.cp.spec.tools.clone(),
                response_format: self.cp.spec.output_schema.clone(),
            },
        });
        self.cp.phase = Phase::Model(id);
    }

    pub(super) fn on_model_event(&mut self, ev: BackendEvent, step: &mut Step) {
        match ev {
            BackendEvent::TextDelta(t) => {
                if t.is_empty() {
                    return;
                }
                self.cp.text.push_str(&t);
                step.events.push(facts::model_delta(self.turn_scope(), t));
            }
            BackendEvent::ReasoningDelta(t) => step
                .events
                .push(facts::reasoning_delta(self.turn_scope(), t)),
            BackendEvent::ToolCallDelta {
                index,
                id,
                name,
                arguments_delta,
            } => {
                let i = index as usize;
                if i > 64 {
                    return; // more parallel calls than any provider sends: ignored
                }
                while self.cp.calls.len() <= i {
                    self.cp.calls.push(PendingCall::default());
                }
                let c = &mut self.cp.calls[i];
                if let Some(id) = id {
                    c.provider_id = id;
                }
                if let Some(n) = name {
                    c.name.push_str(&n);
                }
                c.arguments.push_str(&arguments_delta);
            }
            BackendEvent::Usage {
                input_tokens,
                output_tokens,
            } => {
                self.cp.usage.0 += input_tokens;
                self.cp.usage.1 += output_tokens;
            }
            BackendEvent::Finished { reason } => self.on_model_finished(reason, step),
            BackendEvent::Failed(err) => self.on_model_failed(err, step),
        }
    }

    fn on_model_finished(&mut self, reason: String, step: &mut Step) {
        let (inp, out) = std::mem::take(&mut self.cp.usage);
        step.events.push(facts::model_completed(
            self.turn_scope(),
            ModelCompletion {
                finish_reason: reason,
                output_chars: self.cp.text.chars().count() as u64,
                tool_call_count: self.cp.calls.len() as u64,
                input_tokens: inp,
                output_tokens: out,
            },
        ));
        if self.over_budget(inp, out, step) {
            return;
        }
        self.cp
            .calls
            .retain(|c| !c.name.is_empty() || !c.arguments.is_empty());
        if !self.cp.calls.is_empty() {
            for (n, c) in self.cp.calls.iter_mut().enumerate() {
                if c.provider_id.is_empty() {
                    c.provider_id = format!("call_{n}");
                }
            }
            self.cp.messages.push(ChatMessage::Assistant {
                content: self.cp.text.clone(),
                tool_calls: self
                    .cp
                    .calls
                    .iter()
                    .map(|c| ChatToolCall {
                        id: c.provider_id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    })
                    .collect(),
            });
            self.cp.call_ids = vec![None; self.cp.calls.len()];
            self.cp.next_call = 0;
            self.next_call(step);
            return;
        }
        let text = self.cp.text.clone();
        self.cp.messages.push(ChatMessage::Assistant {
            content: text.clone(),
            tool_calls: Vec::new(),
        });
        match self.cp.spec.output_schema.clone() {
            None => self.complete(None, step),
            Some(schema) => match check_structured(&schema, &text) {
                Ok(value) => self.complete(Some(value), step),
                Err(problem) => {
                    if self.cp.structured_retries
                        >= self.cp.spec.limits.max_structured_output_retries
                    {
                        self.fail_turn(
                            ERROR_MAX_STRUCTURED,
                            &format!("the answer did not satisfy the output schema after {} retries: {problem}", self.cp.structured_retries),
                            false,
                            TurnEnd::Failed,
                            step,
                        );
                    } else {
                        self.cp.structured_retries += 1;
                        step.events.push(facts::runtime_warning(
                            self.turn_scope(),
                            "structured_output_invalid",
                            problem.clone(),
                        ));
                        self.cp.messages.push(ChatMessage::User {
                            content: format!(
                                "Your answer is not valid: {problem}. Reply with only a JSON value that satisfies this JSON Schema: {schema}"
                            ),
                        });
                        self.request_model(step);
                    }
                }
            },
        }
    }

    /// Records the call's usage (`cost.recorded`) and, when the turn's total passed its token
    /// budget, ends the turn with `error_max_budget` (the answer or tool calls of that response
    /// are not acted on).
    fn over_budget(&mut self, inp: u64, out: u64, step: &mut Step) -> bool {
        self.cp.tokens_used = self.cp.tokens_used.saturating_add(inp).saturating_add(out);
        let max = self.cp.spec.limits.max_tokens;
        step.events.push(facts::usage_recorded(
            self.task_scope(true),
            UsageFacts {
                input_tokens: inp,
                output_tokens: out,
                used_tokens: self.cp.tokens_used,
                max_tokens: max,
                cost_usd: None,
            },
        ));
        match max {
            Some(max) if self.cp.tokens_used > max => {
                self.cp.phase = Phase::Idle;
                self.fail_turn(
                    ERROR_MAX_BUDGET,
                    &format!(
                        "the turn used {} tokens, over its budget of {max}",
                        self.cp.tokens_used
                    ),
                    false,
                    TurnEnd::Failed,
                    step,
                );
                true
            }
            _ => false,
        }
    }

    /// A failed response: a retryable one starts a new run while runs are left, anything else
    /// ends the turn.
    pub(super) fn on_model_failed(&mut self, err: BackendError, step: &mut Step) {
        step.events.push(facts::model_failed(
            self.turn_scope(),
            &err.code,
            &err.message,
            err.retryable,
            err.status,
        ));
        if err.retryable && self.cp.attempt < self.cp.spec.limits.max_attempts {
            let failed = self.cp.run_id.clone();
            step.events.push(facts::attempt_failed_retrying(
                self.task_scope(true),
                &err.code,
            ));
            step.events.push(facts::run_status(
                self.task_scope(true),
                RunPhase::Failed,
                self.cp.attempt as u64,
                Some(&err.code),
            ));
            self.cp.attempt += 1;
            self.cp.run_id = RunId::derived(self.cp.spec.turn_id.as_str(), self.cp.attempt as u64);
            step.events.push(facts::task_retrying(
                self.task_scope(false),
                failed,
                self.cp.attempt as u64,
                err.code,
            ));
            // The new run starts from the conversation as it was when the failed run started.
            self.cp.messages.truncate(self.cp.run_start_len);
            self.start_attempt(step);
        } else {
            self.fail_turn(
                &err.code,
                &err.message,
                err.retryable,
                TurnEnd::Failed,
                step,
            );
        }
    }
}
