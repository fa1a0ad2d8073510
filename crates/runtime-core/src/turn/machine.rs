//! The sans-IO turn machine. It reads no clock, opens no file or socket and mints no random id:
//! it takes [`Input`]s and returns a [`Step`] of events to record and [`Effect`]s (each with an
//! [`EffectId`]) for the executor to perform. Its whole state is [`TurnCheckpoint`], plain data.
//!
//! One turn is one task; each execution attempt is a run (`task.attempt.*`); a retryable
//! provider failure starts a new run, never overwriting the failed one.
#![deny(clippy::disallowed_methods)]

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::output::{project, OutputBudget};
use crate::backend::{
    BackendError, BackendEvent, BackendInfo, ChatMessage, ChatToolCall, ModelRequest, ToolSpec,
};
use crate::event::*;
use crate::ids::*;

/// Identifies one effect of one turn; responses name it, stale ones are ignored.
pub type EffectId = u64;

/// Limits of one turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnLimits {
    /// Model requests per run before the turn fails with `error_max_turns`.
    pub max_model_rounds: u32,
    /// Re-asks after an answer that does not satisfy the output schema.
    pub max_structured_output_retries: u32,
    /// Runs (attempts) per turn; retryable provider failures start a new run.
    pub max_attempts: u32,
    pub output_budget: OutputBudget,
}

impl Default for TurnLimits {
    fn default() -> Self {
        TurnLimits {
            max_model_rounds: 8,
            max_structured_output_retries: 2,
            max_attempts: 2,
            output_budget: OutputBudget::default(),
        }
    }
}

/// What starts a turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnSpec {
    pub thread_id: ThreadId,
    pub turn_id: TurnId,
    pub trace_id: Option<TraceId>,
    pub system_prompt: Option<String>,
    /// The prior conversation of the thread (completed turns), oldest first.
    pub history: Vec<ChatMessage>,
    pub input: String,
    pub output_schema: Option<Value>,
    pub tools: Vec<ToolSpec>,
    pub backend: BackendInfo,
    pub limits: TurnLimits,
    /// Risky tools the session already allowed (`allow_for_session` answers): their calls run
    /// without asking again.
    #[serde(default)]
    pub session_allowed_tools: Vec<String>,
}

/// A decision on an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    AllowOnce,
    AllowForSession,
    Decline,
    Cancel,
}

impl Decision {
    pub fn allows(self) -> bool {
        matches!(self, Decision::AllowOnce | Decision::AllowForSession)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::AllowOnce => "allow_once",
            Decision::AllowForSession => "allow_for_session",
            Decision::Decline => "decline",
            Decision::Cancel => "cancel",
        }
    }
}

/// A finished tool execution, as the executor reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ToolOutcome {
    /// The whole output, and the ref under which the executor stored it.
    Ok {
        output: String,
        output_ref: String,
        artifacts: Vec<ArtifactRecord>,
    },
    Err {
        code: String,
        message: String,
    },
}

/// An artifact a tool produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArtifactRecord {
    pub artifact_id: ArtifactId,
    pub artifact_ref: String,
    pub kind: String,
    pub title: String,
    pub bytes: u64,
}

/// Inputs to the machine.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    Start,
    Model(EffectId, BackendEvent),
    /// The model stream ended without `Finished`/`Failed`.
    ModelStreamEnded(EffectId),
    ToolDone(EffectId, ToolOutcome),
    Action {
        action_id: ActionId,
        decision: Decision,
    },
    /// An approval that answers with updated tool input (standard §8.5 `updatedInput`): the
    /// call runs once with `arguments` instead of the model's, recorded as a new `tool.args`.
    ActionWithInput {
        action_id: ActionId,
        arguments: Value,
    },
    Cancel,
}

/// Work for the executor.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    CallModel {
        id: EffectId,
        request: ModelRequest,
    },
    RunTool {
        id: EffectId,
        tool_call_id: ToolCallId,
        name: String,
        arguments: Value,
    },
    /// Stop an in-flight model stream or tool.
    Abort {
        id: EffectId,
    },
}

/// What one input produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Step {
    pub events: Vec<EventDraft>,
    pub effects: Vec<Effect>,
}

/// A tool call being assembled from deltas or waiting to run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    pub provider_id: String,
    pub name: String,
    pub arguments: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Phase {
    NotStarted,
    /// Streaming from the model (effect id).
    Model(EffectId),
    /// Waiting for a decision on a risky call.
    Action {
        action_id: ActionId,
        call: usize,
    },
    /// A tool is running (effect id, call index).
    Tool(EffectId, usize),
    /// Between two effects (never observed between inputs).
    Idle,
    Finished,
}

/// The machine's whole state: plain data, serializable.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnCheckpoint {
    pub spec: TurnSpec,
    pub phase: Phase,
    pub messages: Vec<ChatMessage>,
    pub task_id: TaskId,
    pub attempt: u32,
    pub run_id: RunId,
    pub model_rounds: u32,
    pub structured_retries: u32,
    pub next_effect: EffectId,
    pub next_step: u64,
    pub next_action: u64,
    /// Conversation length when the current run started (a new run restarts from here).
    pub run_start_len: usize,
    pub text: String,
    pub calls: Vec<PendingCall>,
    /// Ids of the current calls (assigned when they start).
    pub call_ids: Vec<Option<(StepId, ToolCallId)>>,
    pub next_call: usize,
    pub tool_calls_total: u64,
    pub usage: (u64, u64),
    /// `spec.session_allowed_tools` plus the tools allowed for the session during this turn.
    #[serde(default)]
    pub session_allowed_tools: Vec<String>,
}

pub struct TurnMachine {
    cp: TurnCheckpoint,
}

const ERROR_MAX_TURNS: &str = "error_max_turns";
pub const ERROR_MAX_STRUCTURED: &str = "error_max_structured_output_retries";

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
                next_effect: 1,
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
            ..Scope::turn(&self.cp.spec.thread_id, &self.cp.spec.turn_id)
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
        self.cp.next_effect += 1;
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
                step.events.push(EventDraft::new(
                    ts.clone(),
                    EventBody::TurnStarted(
                        EventType::TurnStarted,
                        TurnStarted {
                            status: Some("running".into()),
                            ..Default::default()
                        },
                    ),
                ));
                step.events.push(EventDraft::new(
                    self.task_scope(false),
                    EventBody::Task(
                        EventType::TaskCreated,
                        TaskPayload {
                            status: Some("accepted".into()),
                            title: Some("turn".into()),
                            ..Default::default()
                        },
                    ),
                ));
                step.events.push(EventDraft::new(
                    self.task_scope(false),
                    EventBody::Task(
                        EventType::TaskStarted,
                        TaskPayload {
                            status: Some("running".into()),
                            ..Default::default()
                        },
                    ),
                ));
                let b = &self.cp.spec.backend;
                step.events.push(EventDraft::new(
                    ts,
                    EventBody::Routing(
                        EventType::RoutingSingleCandidate,
                        Routing {
                            task_kind: Some("chat".into()),
                            candidate_count: Some(1),
                            selected_model: Some(b.model_name.clone()),
                            decision_source: Some("settings".into()),
                            capability_gap: Some("none".into()),
                            ..Default::default()
                        },
                    ),
                ));
                self.start_attempt(&mut step);
            }
            Input::Model(id, ev) => {
                if self.cp.phase != Phase::Model(id) {
                    return step;
                }
                self.on_model_event(id, ev, &mut step);
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
            } => {
                let Phase::Action {
                    action_id: want,
                    call,
                } = self.cp.phase.clone()
                else {
                    return step;
                };
                if want != action_id {
                    return step;
                }
                let scope = Scope {
                    action_id: Some(action_id),
                    ..self.tool_scope(call)
                };
                let tool = self.cp.calls[call].name.clone();
                step.events.push(EventDraft::new(
                    scope,
                    EventBody::ActionResolved(
                        EventType::ActionResolved,
                        ActionResolved {
                            decision: Some(Decision::AllowOnce.as_str().into()),
                            confirmed: Some(true),
                            status: Some("resolved".into()),
                            source: Some("agentSession/action/respond".into()),
                            tool_name: Some(tool),
                            scope: Some("call".into()),
                            extra: [("updatedInput".to_owned(), json!(true))]
                                .into_iter()
                                .collect(),
                        },
                    ),
                ));
                self.cp.calls[call].arguments = arguments.to_string();
                step.events.push(EventDraft::new(
                    self.tool_scope(call),
                    EventBody::ToolArgs(
                        EventType::ToolArgs,
                        ToolArgs {
                            arguments: Some(arguments),
                            extra: [("source".to_owned(), json!("updated_input"))]
                                .into_iter()
                                .collect(),
                        },
                    ),
                ));
                self.run_tool(call, &mut step);
            }
            Input::Action {
                action_id,
                decision,
            } => {
                let Phase::Action {
                    action_id: want,
                    call,
                } = self.cp.phase.clone()
                else {
                    return step;
                };
                if want != action_id {
                    return step;
                }
                let scope = Scope {
                    action_id: Some(action_id),
                    ..self.tool_scope(call)
                };
                let tool = self.cp.calls[call].name.clone();
                let for_session = decision == Decision::AllowForSession;
                if for_session && !self.cp.session_allowed_tools.contains(&tool) {
                    self.cp.session_allowed_tools.push(tool.clone());
                }
                step.events.push(EventDraft::new(
                    scope,
                    EventBody::ActionResolved(
                        EventType::ActionResolved,
                        ActionResolved {
                            decision: Some(decision.as_str().into()),
                            confirmed: Some(decision.allows()),
                            status: Some("resolved".into()),
                            source: Some("agentSession/action/respond".into()),
                            tool_name: Some(tool),
                            scope: Some(if for_session { "session" } else { "call" }.into()),
                            ..Default::default()
                        },
                    ),
                ));
                if decision.allows() {
                    self.run_tool(call, &mut step);
                } else {
                    self.fail_tool(
                        call,
                        "permission_denied",
                        "the user declined this tool call",
                        &mut step,
                    );
                    self.next_call(&mut step);
                }
            }
            Input::Cancel => self.cancel(&mut step),
        }
        step
    }

    fn start_attempt(&mut self, step: &mut Step) {
        step.events.push(EventDraft::new(
            self.task_scope(true),
            EventBody::TaskAttempt(
                EventType::TaskAttemptStarted,
                TaskAttemptPayload {
                    status: Some("running".into()),
                    attempt_index: Some(self.cp.attempt as u64),
                    ..Default::default()
                },
            ),
        ));
        self.cp.model_rounds = 0;
        self.request_model(step);
    }

    fn request_model(&mut self, step: &mut Step) {
        self.cp.phase = Phase::Idle;
        if self.cp.model_rounds >= self.cp.spec.limits.max_model_rounds {
            self.fail_turn(
                ERROR_MAX_TURNS,
                "the turn reached its model request limit",
                false,
                "failed",
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
        step.events.push(EventDraft::new(
            self.turn_scope(),
            EventBody::ModelRequested(
                EventType::ModelRequested,
                ModelRequested {
                    provider_name: Some(b.provider_name.clone()),
                    model_name: Some(b.model_name.clone()),
                    status: Some("started".into()),
                    message_count: Some(self.cp.messages.len() as u64),
                    tool_count: Some(self.cp.spec.tools.len() as u64),
                    structured_output_attempt: self
                        .cp
                        .spec
                        .output_schema
                        .as_ref()
                        .map(|_| self.cp.structured_retries as u64 + 1),
                    ..Default::default()
                },
            ),
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

    fn on_model_event(&mut self, _id: EffectId, ev: BackendEvent, step: &mut Step) {
        match ev {
            BackendEvent::TextDelta(t) => {
                if t.is_empty() {
                    return;
                }
                self.cp.text.push_str(&t);
                step.events.push(EventDraft::new(
                    self.turn_scope(),
                    EventBody::Delta(
                        EventType::ModelDelta,
                        TextDelta {
                            text: Some(t),
                            ..Default::default()
                        },
                    ),
                ));
            }
            BackendEvent::ReasoningDelta(t) => step.events.push(EventDraft::new(
                self.turn_scope(),
                EventBody::Delta(
                    EventType::ReasoningDelta,
                    TextDelta {
                        text: Some(t),
                        ..Default::default()
                    },
                ),
            )),
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
        step.events.push(EventDraft::new(
            self.turn_scope(),
            EventBody::ModelCompleted(
                EventType::ModelCompleted,
                ModelCompleted {
                    status: Some("completed".into()),
                    finish_reason: Some(reason),
                    output_chars: Some(self.cp.text.chars().count() as u64),
                    tool_call_count: Some(self.cp.calls.len() as u64),
                    input_tokens: Some(inp),
                    output_tokens: Some(out),
                    ..Default::default()
                },
            ),
        ));
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
                            "failed",
                            step,
                        );
                    } else {
                        self.cp.structured_retries += 1;
                        step.events.push(EventDraft::new(
                            self.turn_scope(),
                            EventBody::Failure(
                                EventType::RuntimeWarning,
                                Failure {
                                    code: Some("structured_output_invalid".into()),
                                    message: Some(problem.clone()),
                                    ..Default::default()
                                },
                            ),
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

    fn on_model_failed(&mut self, err: BackendError, step: &mut Step) {
        step.events.push(EventDraft::new(
            self.turn_scope(),
            EventBody::Failure(
                EventType::ModelFailed,
                Failure {
                    status: Some("failed".into()),
                    code: Some(err.code.clone()),
                    message: Some(err.message.clone()),
                    retryable: Some(err.retryable),
                    http_status: err.status.map(u64::from),
                    ..Default::default()
                },
            ),
        ));
        if err.retryable && self.cp.attempt < self.cp.spec.limits.max_attempts {
            let failed = self.cp.run_id.clone();
            step.events.push(EventDraft::new(
                self.task_scope(true),
                EventBody::TaskAttempt(
                    EventType::TaskAttemptFailed,
                    TaskAttemptPayload {
                        status: Some("failed".into()),
                        retryable: Some(true),
                        failure_category: Some("provider_error".into()),
                        message: Some(err.code.clone()),
                        next_attempt_policy: Some("automatic_retry".into()),
                        ..Default::default()
                    },
                ),
            ));
            self.cp.attempt += 1;
            self.cp.run_id = RunId::derived(self.cp.spec.turn_id.as_str(), self.cp.attempt as u64);
            step.events.push(EventDraft::new(
                self.task_scope(false),
                EventBody::Task(
                    EventType::TaskRetrying,
                    TaskPayload {
                        status: Some("retrying".into()),
                        failed_run_id: Some(failed.into_string()),
                        next_attempt_index: Some(self.cp.attempt as u64),
                        reason: Some(err.code),
                        ..Default::default()
                    },
                ),
            ));
            // The new run starts from the conversation as it was when the failed run started.
            self.cp.messages.truncate(self.cp.run_start_len);
            self.start_attempt(step);
        } else {
            self.fail_turn(&err.code, &err.message, err.retryable, "failed", step);
        }
    }

    /// Starts the next pending tool call, or asks the model again when all are done.
    fn next_call(&mut self, step: &mut Step) {
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
        step.events.push(EventDraft::new(
            scope.clone(),
            EventBody::ToolStarted(
                EventType::ToolStarted,
                ToolStarted {
                    tool_name: Some(c.name.clone()),
                    status: Some("started".into()),
                    risk: spec
                        .as_ref()
                        .map(|s| if s.risky { "high".into() } else { "low".into() }),
                    ..Default::default()
                },
            ),
        ));
        let args: Result<Value, String> =
            serde_json::from_str(&c.arguments).map_err(|e| format!("arguments are not JSON: {e}"));
        if let Ok(a) = &args {
            step.events.push(EventDraft::new(
                scope.clone(),
                EventBody::ToolArgs(
                    EventType::ToolArgs,
                    ToolArgs {
                        arguments: Some(a.clone()),
                        ..Default::default()
                    },
                ),
            ));
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
        step.events.push(EventDraft::new(
            self.turn_scope_with_tool(call),
            EventBody::Permission(
                EventType::PermissionEvaluated,
                PermissionEvaluated {
                    tool_name: Some(spec.name.clone()),
                    result: Some(if ask { "ask".into() } else { "allow".into() }),
                    decision_source: granted.then(|| "session_grant".into()),
                    risk: Some(if spec.risky {
                        "high".into()
                    } else {
                        "low".into()
                    }),
                    owner: Some("runtime_tool_policy".into()),
                    mode: Some("ask_for_risky".into()),
                    ..Default::default()
                },
            ),
        ));
        if ask {
            let action_id = ActionId::derived(&turn, self.cp.next_action);
            self.cp.next_action += 1;
            step.events.push(EventDraft::new(
                Scope {
                    action_id: Some(action_id.clone()),
                    ..self.tool_scope(call)
                },
                EventBody::ActionRequired(
                    EventType::ActionRequired,
                    ActionRequired {
                        action_type: Some("tool_confirmation".into()),
                        tool_name: Some(spec.name.clone()),
                        decision_kind: Some("allow_or_deny".into()),
                        prompt: Some(format!("Allow {} to run?", spec.name)),
                        arguments: Some(args),
                        available_decisions: Some(vec![
                            "allow_once".into(),
                            "allow_for_session".into(),
                            "decline".into(),
                            "cancel".into(),
                        ]),
                        status: Some("pending".into()),
                        ..Default::default()
                    },
                ),
            ));
            self.cp.phase = Phase::Action { action_id, call };
        } else {
            self.run_tool(call, step);
        }
    }

    fn turn_scope_with_tool(&self, call: usize) -> Scope {
        self.tool_scope(call)
    }

    fn run_tool(&mut self, call: usize, step: &mut Step) {
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

    fn fail_tool(&mut self, call: usize, code: &str, message: &str, step: &mut Step) {
        step.events.push(EventDraft::new(
            self.tool_scope(call),
            EventBody::Failure(
                EventType::ToolFailed,
                Failure {
                    status: Some("failed".into()),
                    code: Some(code.into()),
                    message: Some(message.into()),
                    ..Default::default()
                },
            ),
        ));
        let provider_id = self.cp.calls[call].provider_id.clone();
        self.cp.messages.push(ChatMessage::Tool {
            tool_call_id: provider_id,
            content: format!("error ({code}): {message}"),
        });
    }

    fn on_tool_done(&mut self, call: usize, outcome: ToolOutcome, step: &mut Step) {
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
                step.events.push(EventDraft::new(
                    scope.clone(),
                    EventBody::ToolResult(
                        EventType::ToolResult,
                        ToolResult {
                            status: Some("completed".into()),
                            output_preview: Some(preview(&p.text)),
                            output_bytes: Some(p.total_bytes as u64),
                            output_lines: Some(p.total_lines as u64),
                            output_ref: Some(output_ref.clone()),
                            truncated: Some(p.spilled),
                            ..Default::default()
                        },
                    ),
                ));
                if p.spilled {
                    step.events.push(EventDraft::new(
                        scope.clone(),
                        EventBody::OutputSpilled(
                            EventType::OutputSpilled,
                            OutputSpilled {
                                output_ref: Some(output_ref.clone()),
                                bytes: Some(p.total_bytes as u64),
                                lines: Some(p.total_lines as u64),
                                budget_bytes: Some(budget.bytes as u64),
                                budget_lines: Some(budget.lines as u64),
                                preview_bytes: Some(p.text.len() as u64),
                                ..Default::default()
                            },
                        ),
                    ));
                }
                for a in artifacts {
                    step.events.push(EventDraft::new(
                        Scope {
                            artifact_id: Some(a.artifact_id.clone()),
                            task_id: Some(self.cp.task_id.clone()),
                            ..scope.clone()
                        },
                        EventBody::Artifact(
                            EventType::ArtifactChanged,
                            ArtifactChanged {
                                artifact_ref: Some(a.artifact_ref),
                                kind: Some(a.kind),
                                title: Some(a.title),
                                bytes: Some(a.bytes),
                                status: Some("created".into()),
                                ..Default::default()
                            },
                        ),
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

    fn complete(&mut self, structured: Option<Value>, step: &mut Step) {
        step.events.push(EventDraft::new(
            self.task_scope(true),
            EventBody::TaskAttempt(
                EventType::TaskAttemptCompleted,
                TaskAttemptPayload {
                    status: Some("completed".into()),
                    ..Default::default()
                },
            ),
        ));
        step.events.push(EventDraft::new(
            self.task_scope(false),
            EventBody::Task(
                EventType::TaskCompleted,
                TaskPayload {
                    status: Some("completed".into()),
                    ..Default::default()
                },
            ),
        ));
        step.events.push(EventDraft::new(
            Scope {
                task_id: Some(self.cp.task_id.clone()),
                run_id: Some(self.cp.run_id.clone()),
                ..self.turn_scope()
            },
            EventBody::TurnCompleted(
                EventType::TurnCompleted,
                TurnCompleted {
                    status: Some("completed".into()),
                    outcome: Some(if structured.is_some() {
                        "structured_output".into()
                    } else {
                        "assistant_message".into()
                    }),
                    output_chars: Some(self.cp.text.chars().count() as u64),
                    structured_output: structured,
                    ..Default::default()
                },
            ),
        ));
        self.cp.phase = Phase::Finished;
    }

    /// Closes what is open (tool call, action) and ends the turn as failed or cancelled.
    fn fail_turn(
        &mut self,
        code: &str,
        message: &str,
        retryable: bool,
        status: &str,
        step: &mut Step,
    ) {
        let cancelled = status == "cancelled";
        match self.cp.phase.clone() {
            Phase::Action { action_id, call } => {
                step.events.push(EventDraft::new(
                    Scope {
                        action_id: Some(action_id),
                        ..self.tool_scope(call)
                    },
                    EventBody::ActionResolved(
                        EventType::ActionResolved,
                        ActionResolved {
                            decision: Some("cancel".into()),
                            confirmed: Some(false),
                            status: Some("cancelled".into()),
                            source: Some("runtime".into()),
                            ..Default::default()
                        },
                    ),
                ));
                self.fail_tool(call, code, message, step);
            }
            Phase::Tool(_, call) => self.fail_tool(call, code, message, step),
            Phase::Model(_) if cancelled => {
                step.events.push(EventDraft::new(
                    self.turn_scope(),
                    EventBody::Failure(
                        EventType::ModelFailed,
                        Failure {
                            status: Some("cancelled".into()),
                            code: Some(code.into()),
                            message: Some(message.into()),
                            ..Default::default()
                        },
                    ),
                ));
            }
            _ => {}
        }
        step.events.push(EventDraft::new(
            self.task_scope(true),
            EventBody::TaskAttempt(
                EventType::TaskAttemptFailed,
                TaskAttemptPayload {
                    status: Some("failed".into()),
                    retryable: Some(retryable),
                    failure_category: Some(if cancelled {
                        "cancelled".into()
                    } else {
                        code.into()
                    }),
                    ..Default::default()
                },
            ),
        ));
        step.events.push(EventDraft::new(
            self.task_scope(false),
            EventBody::Task(
                if cancelled {
                    EventType::TaskCancelled
                } else {
                    EventType::TaskFailed
                },
                TaskPayload {
                    status: Some(status.into()),
                    code: Some(code.into()),
                    message: Some(message.into()),
                    ..Default::default()
                },
            ),
        ));
        step.events.push(EventDraft::new(
            Scope {
                task_id: Some(self.cp.task_id.clone()),
                run_id: Some(self.cp.run_id.clone()),
                ..self.turn_scope()
            },
            EventBody::TurnFailed(
                EventType::TurnFailed,
                TurnFailed {
                    status: Some(status.into()),
                    code: Some(code.into()),
                    message: Some(message.into()),
                    retryable: Some(retryable),
                    ..Default::default()
                },
            ),
        ));
        self.cp.phase = Phase::Finished;
    }

    fn cancel(&mut self, step: &mut Step) {
        match self.cp.phase.clone() {
            Phase::NotStarted | Phase::Finished => {
                // A queued turn that never started: intent and terminal, nothing to close.
                step.events.push(EventDraft::new(
                    self.turn_scope(),
                    EventBody::TurnFailed(
                        EventType::TurnFailed,
                        TurnFailed {
                            status: Some("cancelled".into()),
                            code: Some("cancelled".into()),
                            message: Some("cancelled before it started".into()),
                            reason: Some("agentSession/turn/cancel".into()),
                            ..Default::default()
                        },
                    ),
                ));
                self.cp.phase = Phase::Finished;
                return;
            }
            Phase::Model(id) | Phase::Tool(id, _) => step.effects.push(Effect::Abort { id }),
            Phase::Action { .. } | Phase::Idle => {}
        }
        step.events.push(EventDraft::new(
            self.task_scope(false),
            EventBody::Task(
                EventType::TaskCancelRequested,
                TaskPayload {
                    status: Some("cancelling".into()),
                    reason: Some("agentSession/turn/cancel".into()),
                    ..Default::default()
                },
            ),
        ));
        self.fail_turn(
            "cancelled",
            "the turn was cancelled",
            false,
            "cancelled",
            step,
        );
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

/// Longest text of one schema violation in a `tool.failed` message (and the tool message the
/// model gets back): a violation quotes the offending value, which may be megabytes of model
/// output.
pub const SCHEMA_PROBLEM_CHARS: usize = 300;

fn clip(text: String, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn check_schema(schema: &Value, value: &Value) -> Result<(), String> {
    let v = jsonschema::validator_for(schema).map_err(|e| format!("the schema is invalid: {e}"))?;
    let errors: Vec<String> = v
        .iter_errors(value)
        .take(5)
        .map(|e| {
            clip(
                format!("{} at {}", e, e.instance_path()),
                SCHEMA_PROBLEM_CHARS,
            )
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// The answer must be one JSON value (the whole text, no prose) satisfying `schema`.
pub fn check_structured(schema: &Value, text: &str) -> Result<Value, String> {
    let value: Value = serde_json::from_str(text.trim())
        .map_err(|_| "the answer is not a JSON value".to_owned())?;
    check_schema(schema, &value)?;
    Ok(value)
}
