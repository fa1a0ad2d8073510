//! The sans-IO turn machine. It reads no clock, opens no file or socket and mints no random id:
//! it takes [`Input`]s and returns a [`Step`] of events to record and [`Effect`]s (each with an
//! [`EffectId`]) for the executor to perform. Its whole state is [`TurnCheckpoint`], plain data.
//!
//! One turn is one task; each execution attempt is a run (`task.attempt.*`); a retryable
//! provider failure starts a new run, never overwriting the failed one.
//!
//! Every event comes from a constructor of [`crate::event::facts`]. The parts: [`state`] (the
//! data), `model_io` (requests, streams, retries), `tools` (calls, results, permission),
//! `approval` (answers to actions), `ending` (complete, fail, cancel), [`schema`] (structured
//! output checks). Each part denies `clippy::disallowed_methods` (no clock, no file system).
#![deny(clippy::disallowed_methods)]

mod approval;
mod ending;
mod model_io;
pub mod schema;
pub mod state;
mod tools;

pub use crate::event::facts::Decision;
pub use schema::{check_structured, SCHEMA_PROBLEM_CHARS};
pub use state::*;

use crate::backend::{BackendError, ChatMessage};
use crate::event::facts::{self, ThreadStatus};
use crate::event::Scope;
use crate::ids::*;

pub struct TurnMachine {
    cp: TurnCheckpoint,
}

const ERROR_MAX_TURNS: &str = "error_max_turns";
pub const ERROR_MAX_STRUCTURED: &str = "error_max_structured_output_retries";
/// A turn whose token usage passed its budget (`TurnLimits::max_tokens`).
pub const ERROR_MAX_BUDGET: &str = "error_max_budget";

impl TurnMachine {
    pub fn new(spec: TurnSpec) -> TurnMachine {
        let mut messages = Vec::new();
        if let Some(p) = &spec.system_prompt {
            messages.push(ChatMessage::System { content: p.clone() });
        }
        messages.extend(spec.history.iter().cloned());
        messages.push(ChatMessage::User {
            content: spec.input.clone(),
        });
        let run_start_len = messages.len();
        let session_allowed_tools = spec.session_allowed_tools.clone();
        TurnMachine {
            cp: TurnCheckpoint {
                task_id: TaskId::derived(spec.turn_id.as_str(), 0),
                run_id: RunId::derived(spec.turn_id.as_str(), 1),
                spec,
                phase: Phase::NotStarted,
                messages,
                attempt: 1,
                model_rounds: 0,
                structured_retries: 0,
                next_effect: EffectId::FIRST,
                next_step: 1,
                next_action: 1,
                run_start_len,
                text: String::new(),
                calls: Vec::new(),
                call_ids: Vec::new(),
                next_call: 0,
                tool_calls_total: 0,
                session_allowed_tools,
                usage: (0, 0),
                tokens_used: 0,
            },
        }
    }

    pub fn resume(cp: TurnCheckpoint) -> TurnMachine {
        TurnMachine { cp }
    }

    pub fn checkpoint(&self) -> &TurnCheckpoint {
        &self.cp
    }

    pub fn is_finished(&self) -> bool {
        self.cp.phase == Phase::Finished
    }

    pub fn turn_id(&self) -> &TurnId {
        &self.cp.spec.turn_id
    }

    fn turn_scope(&self) -> Scope {
        Scope {
            trace_id: self.cp.spec.trace_id.clone(),
            request_id: self.cp.spec.request_id.clone(),
            ..Scope::turn(&self.cp.spec.thread_id, &self.cp.spec.turn_id)
        }
    }

    fn thread_scope(&self) -> Scope {
        Scope {
            trace_id: self.cp.spec.trace_id.clone(),
            request_id: self.cp.spec.request_id.clone(),
            ..Scope::thread(&self.cp.spec.thread_id)
        }
    }

    fn task_scope(&self, with_run: bool) -> Scope {
        Scope {
            task_id: Some(self.cp.task_id.clone()),
            run_id: with_run.then(|| self.cp.run_id.clone()),
            attempt_id: with_run
                .then(|| AttemptId::derived(self.cp.spec.turn_id.as_str(), self.cp.attempt as u64)),
            ..self.turn_scope()
        }
    }

    /// The scope of the turn's terminal event: the turn, its task and its current run.
    fn terminal_scope(&self) -> Scope {
        Scope {
            task_id: Some(self.cp.task_id.clone()),
            run_id: Some(self.cp.run_id.clone()),
            ..self.turn_scope()
        }
    }

    fn tool_scope(&self, call: usize) -> Scope {
        let (step, id) = self.cp.call_ids[call]
            .clone()
            .expect("started calls have ids");
        Scope {
            step_id: Some(step),
            tool_call_id: Some(id),
            ..self.turn_scope()
        }
    }

    fn effect_id(&mut self) -> EffectId {
        let id = self.cp.next_effect;
        self.cp.next_effect = id.next();
        id
    }

    /// Feeds one input.
    pub fn handle(&mut self, input: Input) -> Step {
        let mut step = Step::default();
        if self.is_finished() {
            return step;
        }
        match input {
            Input::Start => {
                if self.cp.phase != Phase::NotStarted {
                    return step;
                }
                let ts = self.turn_scope();
                step.events.push(facts::turn_started(ts.clone()));
                step.events.push(facts::thread_updated(
                    self.thread_scope(),
                    ThreadStatus::Running,
                ));
                step.events
                    .push(facts::task_created(self.task_scope(false)));
                step.events
                    .push(facts::task_started(self.task_scope(false)));
                let model = &self.cp.spec.backend.model_name;
                step.events.push(facts::routing_single_candidate(ts, model));
                self.start_attempt(&mut step);
            }
            Input::Model(id, ev) => {
                if self.cp.phase != Phase::Model(id) {
                    return step;
                }
                self.on_model_event(ev, &mut step);
            }
            Input::ModelStreamEnded(id) => {
                if self.cp.phase != Phase::Model(id) {
                    return step;
                }
                self.on_model_failed(
                    BackendError {
                        code: "provider_stream_dropped".into(),
                        message: "the model stream ended before the response finished".into(),
                        status: None,
                        retryable: false,
                    },
                    &mut step,
                );
            }
            Input::ToolDone(id, outcome) => {
                let Phase::Tool(eid, call) = self.cp.phase.clone() else {
                    return step;
                };
                if eid != id {
                    return step;
                }
                self.on_tool_done(call, outcome, &mut step);
            }
            Input::ActionWithInput {
                action_id,
                arguments,
            } => self.on_answer_with_input(action_id, arguments, &mut step),
            Input::Action {
                action_id,
                decision,
            } => self.on_answer(action_id, decision, &mut step),
            Input::Cancel => self.cancel(&mut step),
        }
        step
    }
}
