//! The sans-IO workflow run machine. It reads no clock, opens no file or socket and mints no
//! random id: `(definition, facts so far) -> next effect`. A run's whole state is [`RunState`],
//! plain data; applying the same facts to a new machine gives the same state (replay), so a
//! durable log of [`Fact`]s is all a host needs to resume a run after a restart.
//!
//! - [`RunMachine::next_effect`] says what the run waits for: a capability [`Call`] (with an
//!   idempotency key from run id, state key, visit and attempt), a review, an input, a timer, a
//!   decision after an error, or that it is done. Asking twice gives the same effect (after a
//!   restart the executor re-issues it with the same key, so the capability can deduplicate).
//! - [`RunMachine::apply`] takes a fact naming the effect's key; a fact for another key is
//!   refused as stale and changes nothing.
//! - `start`, `branch` and `end` states never wait: the machine passes them as it enters them.
//! - Failures and timeouts follow `recovery` (retry with backoff per `retryPolicy`, a longer
//!   timeout, ask the user, fail, or go to another state); a non-retryable failure is never
//!   retried.
#![deny(clippy::disallowed_methods)]

mod enter;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::definition::{Definition, Kind, OnFailure};
use super::limits::*;

/// Run error codes (in [`RunStatus::Failed`]); step errors keep the capability's own code.
pub mod run_code {
    pub const EXPRESSION_FAILED: &str = "workflow.expression_failed";
    pub const OUTPUT_TOO_LARGE: &str = "workflow.output_too_large";
    pub const STEP_LIMIT: &str = "workflow.step_limit";
    pub const STEP_TIMED_OUT: &str = "workflow.step_timed_out";
    pub const INVALID_UNTIL: &str = "workflow.invalid_until";
    pub const DECLINED_RETRY: &str = "workflow.retry_declined";
    pub const INPUT_TOO_LARGE: &str = "workflow.input_too_large";
    pub const NOT_RUNNABLE: &str = "workflow.not_runnable";
}

/// One capability call a step makes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Call {
    /// `wf:<run>:<state>:<visit>:<attempt>`: the same for a re-issue, new for a retry.
    pub idempotency_key: String,
    pub state: String,
    pub capability: String,
    pub method: String,
    pub args: Value,
    pub timeout_ms: Option<u64>,
}

/// When a timer wakes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Wake {
    AfterMs(u64),
    /// An RFC 3339 timestamp (a `wait` with `until`).
    At(String),
}

/// What the run waits for now. Stored in the state, so `next_effect` is a plain read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "type")]
pub enum Pending {
    Call(Call),
    Review {
        key: String,
        state: String,
        prompt: String,
        show: Value,
        timeout_ms: Option<u64>,
    },
    Input {
        key: String,
        state: String,
        prompt: String,
        schema: Option<Value>,
        timeout_ms: Option<u64>,
    },
    /// A `wait` state's timer.
    Timer {
        key: String,
        state: String,
        wake: Wake,
    },
    /// The delay before the next attempt.
    Backoff {
        key: String,
        state: String,
        wake: Wake,
    },
    /// `show_error_and_allow_retry`: retry or fail, the user decides.
    Decision {
        key: String,
        state: String,
        code: String,
        message: String,
    },
}

impl Pending {
    pub fn key(&self) -> &str {
        match self {
            Pending::Call(c) => &c.idempotency_key,
            Pending::Review { key, .. }
            | Pending::Input { key, .. }
            | Pending::Timer { key, .. }
            | Pending::Backoff { key, .. }
            | Pending::Decision { key, .. } => key,
        }
    }
}

/// Where a running run is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cursor {
    pub state: String,
    pub visit: u32,
    pub attempt: u32,
    pub pending: Pending,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "status")]
pub enum RunStatus {
    Running(Cursor),
    Succeeded {
        result: Value,
    },
    Failed {
        code: String,
        message: String,
        state: Option<String>,
    },
    /// `in_flight`: the key of a call that was running when the run was cancelled (the executor
    /// cancels it, e.g. ends the agent task).
    Cancelled {
        in_flight: Option<String>,
    },
}

/// A run's whole state: plain data, the checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunState {
    pub run_id: String,
    pub input: Value,
    pub outputs: Map<String, Value>,
    /// Visits per state key (a cycle through a wait visits a state again).
    pub visits: BTreeMap<String, u32>,
    /// State visits so far.
    pub steps: u32,
    pub status: RunStatus,
}

/// What happened, recorded durably by the executor and fed back through [`RunMachine::apply`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "fact")]
pub enum Fact {
    Succeeded {
        key: String,
        output: Value,
    },
    Failed {
        key: String,
        code: String,
        message: String,
        retryable: bool,
    },
    TimedOut {
        key: String,
    },
    Reviewed {
        key: String,
        approved: bool,
        data: Option<Value>,
    },
    InputGiven {
        key: String,
        data: Value,
    },
    TimerFired {
        key: String,
    },
    Decided {
        key: String,
        retry: bool,
    },
    Cancelled,
}

impl Fact {
    pub fn key(&self) -> Option<&str> {
        match self {
            Fact::Succeeded { key, .. }
            | Fact::Failed { key, .. }
            | Fact::TimedOut { key }
            | Fact::Reviewed { key, .. }
            | Fact::InputGiven { key, .. }
            | Fact::TimerFired { key }
            | Fact::Decided { key, .. } => Some(key),
            Fact::Cancelled => None,
        }
    }
}

/// What to do next.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "effect")]
pub enum Effect {
    Wait(Pending),
    Done(RunStatus),
}

/// Why a fact was refused; the state is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    #[error("workflow.stale_fact: the run does not wait for this fact")]
    Stale,
    #[error("workflow.run_finished: the run has finished")]
    Finished,
    #[error("workflow.fact_mismatch: {0}")]
    Mismatch(&'static str),
}

/// A run of one definition.
#[derive(Clone, Debug)]
pub struct RunMachine {
    def: Arc<Definition>,
    state: RunState,
}

impl RunMachine {
    /// Starts a run: enters the start state and passes every state that does not wait.
    pub fn start(def: Arc<Definition>, run_id: &str, input: Value) -> RunMachine {
        let mut state = RunState {
            run_id: run_id.to_string(),
            input: Value::Null,
            outputs: Map::new(),
            visits: BTreeMap::new(),
            steps: 0,
            status: RunStatus::Cancelled { in_flight: None },
        };
        let size = serde_json::to_vec(&input)
            .map(|b| b.len())
            .unwrap_or(usize::MAX);
        let mut m = RunMachine {
            def,
            state: state.clone(),
        };
        if size > MAX_RUN_INPUT_BYTES {
            state.status = fail(
                run_code::INPUT_TOO_LARGE,
                format!("{size} bytes; at most {MAX_RUN_INPUT_BYTES}"),
                None,
            );
            m.state = state;
            return m;
        }
        m.state.input = input;
        match m.def.start().map(|s| s.key.clone()) {
            Some(k) => {
                if let Err(e) = super::expr::on_expr_stack(|| m.enter(&k)) {
                    m.state.status = fail(e.code, e.message, None);
                }
            }
            None => m.state.status = fail(run_code::NOT_RUNNABLE, "no start state".into(), None),
        }
        m
    }

    /// Resumes from a checkpoint (for tests and caches; replaying facts gives the same state).
    pub fn resume(def: Arc<Definition>, state: RunState) -> RunMachine {
        RunMachine { def, state }
    }

    pub fn state(&self) -> &RunState {
        &self.state
    }

    pub fn definition(&self) -> &Definition {
        &self.def
    }

    pub fn next_effect(&self) -> Effect {
        match &self.state.status {
            RunStatus::Running(c) => Effect::Wait(c.pending.clone()),
            done => Effect::Done(done.clone()),
        }
    }

    /// Applies one fact. A refused fact leaves the state as it was.
    pub fn apply(&mut self, fact: Fact) -> Result<(), ApplyError> {
        // Entering states evaluates expressions: do it all on one expression thread.
        match super::expr::on_expr_stack(|| self.apply_here(fact)) {
            Ok(r) => r,
            Err(e) => {
                self.state.status = fail(e.code, e.message, None);
                Ok(())
            }
        }
    }

    fn apply_here(&mut self, fact: Fact) -> Result<(), ApplyError> {
        let RunStatus::Running(cursor) = &self.state.status else {
            return Err(ApplyError::Finished);
        };
        let cursor = cursor.clone();
        if let Fact::Cancelled = fact {
            let in_flight = match &cursor.pending {
                Pending::Call(c) => Some(c.idempotency_key.clone()),
                _ => None,
            };
            self.state.status = RunStatus::Cancelled { in_flight };
            return Ok(());
        }
        if fact.key() != Some(cursor.pending.key()) {
            return Err(ApplyError::Stale);
        }
        match (&cursor.pending, fact) {
            (Pending::Call(_), Fact::Succeeded { output, .. }) => self.finish_step(&cursor, output),
            (
                Pending::Call(_),
                Fact::Failed {
                    code,
                    message,
                    retryable,
                    ..
                },
            ) => self.recover(&cursor, false, retryable, code, message),
            (
                Pending::Call(_) | Pending::Review { .. } | Pending::Input { .. },
                Fact::TimedOut { .. },
            ) => self.recover(
                &cursor,
                true,
                true,
                run_code::STEP_TIMED_OUT.into(),
                "the step timed out".into(),
            ),
            (Pending::Review { .. }, Fact::Reviewed { approved, data, .. }) => {
                let decision = if approved { "approved" } else { "rejected" };
                self.finish_step(&cursor, json!({"decision": decision, "data": data}))
            }
            (Pending::Input { .. }, Fact::InputGiven { data, .. }) => {
                self.finish_step(&cursor, data)
            }
            (Pending::Timer { .. }, Fact::TimerFired { .. }) => {
                self.finish_step(&cursor, Value::Null)
            }
            (Pending::Backoff { .. }, Fact::TimerFired { .. }) => {
                self.attempt(&cursor.state, cursor.visit, cursor.attempt + 1)
            }
            (Pending::Decision { code, message, .. }, Fact::Decided { retry, .. }) => {
                if retry && cursor.attempt < MAX_ATTEMPTS {
                    self.attempt(&cursor.state, cursor.visit, cursor.attempt + 1)
                } else {
                    let code = if retry {
                        code.clone()
                    } else {
                        run_code::DECLINED_RETRY.to_string()
                    };
                    self.state.status = fail(&code, message.clone(), Some(cursor.state.clone()));
                }
            }
            _ => {
                return Err(ApplyError::Mismatch(
                    "this fact does not answer what the run waits for",
                ))
            }
        }
        Ok(())
    }

    /// Keeps a finished step's output (bounded) and moves on.
    fn finish_step(&mut self, cursor: &Cursor, output: Value) {
        let Some(s) = self.def.state(&cursor.state).cloned() else {
            return;
        };
        if let Some(name) = &s.output {
            if let Err(msg) = self.keep_output(name, output) {
                self.state.status = fail(run_code::OUTPUT_TOO_LARGE, msg, Some(s.key.clone()));
                return;
            }
        }
        match &s.next {
            Some(next) => self.enter(next),
            None => {
                self.state.status = fail(
                    run_code::NOT_RUNNABLE,
                    format!("state {:?} has no next", s.key),
                    Some(s.key.clone()),
                )
            }
        }
    }

    fn keep_output(&mut self, name: &str, output: Value) -> Result<(), String> {
        let size = serde_json::to_vec(&output)
            .map(|b| b.len())
            .unwrap_or(usize::MAX);
        if size > MAX_STEP_OUTPUT_BYTES {
            return Err(format!(
                "output {name}: {size} bytes; at most {MAX_STEP_OUTPUT_BYTES}"
            ));
        }
        let mut outputs = self.state.outputs.clone();
        outputs.insert(name.to_string(), output);
        let total = serde_json::to_vec(&outputs)
            .map(|b| b.len())
            .unwrap_or(usize::MAX);
        if total > MAX_RUN_DATA_BYTES {
            return Err(format!(
                "the run's outputs: {total} bytes; at most {MAX_RUN_DATA_BYTES}"
            ));
        }
        self.state.outputs = outputs;
        Ok(())
    }

    /// A step failed or timed out: follow its recovery.
    fn recover(
        &mut self,
        cursor: &Cursor,
        timeout: bool,
        retryable: bool,
        code: String,
        message: String,
    ) {
        let Some(s) = self.def.state(&cursor.state).cloned() else {
            return;
        };
        let action = self
            .def
            .recovery_of(&s)
            .and_then(|r| {
                if timeout {
                    r.on_timeout.clone()
                } else {
                    r.on_error.clone()
                }
            })
            .unwrap_or(OnFailure::Fail);
        let retry = matches!(action, OnFailure::Retry | OnFailure::RetryWithLongerTimeout);
        let attempts_left = cursor.attempt < self.def.max_attempts(&s);
        match action {
            _ if retry && retryable && attempts_left => {
                let key = format!("{}:backoff", cursor.pending.key());
                let wake = Wake::AfterMs(self.def.backoff_ms(&s, cursor.attempt));
                self.state.status = RunStatus::Running(Cursor {
                    pending: Pending::Backoff {
                        key,
                        state: s.key.clone(),
                        wake,
                    },
                    ..cursor.clone()
                });
            }
            OnFailure::AskUser => {
                let key = format!("{}:decision", cursor.pending.key());
                self.state.status = RunStatus::Running(Cursor {
                    pending: Pending::Decision {
                        key,
                        state: s.key.clone(),
                        code,
                        message,
                    },
                    ..cursor.clone()
                });
            }
            OnFailure::Goto(target) => {
                if let Some(name) = &s.output {
                    let error =
                        json!({"error": {"code": code, "message": message, "timedOut": timeout}});
                    if let Err(msg) = self.keep_output(name, error) {
                        self.state.status =
                            fail(run_code::OUTPUT_TOO_LARGE, msg, Some(s.key.clone()));
                        return;
                    }
                }
                self.enter(&target);
            }
            _ => self.state.status = fail(&code, message, Some(s.key.clone())),
        }
    }
}

fn fail(code: &str, message: String, state: Option<String>) -> RunStatus {
    RunStatus::Failed {
        code: code.to_string(),
        message,
        state,
    }
}

/// The idempotency key of one attempt of one visit of one state.
pub fn effect_key(run_id: &str, state: &str, visit: u32, attempt: u32) -> String {
    format!("wf:{run_id}:{state}:{visit}:{attempt}")
}

/// Whether a kind's pending effect is a capability call.
pub fn is_call(kind: Kind) -> bool {
    kind.calls()
}

#[cfg(test)]
mod tests;
