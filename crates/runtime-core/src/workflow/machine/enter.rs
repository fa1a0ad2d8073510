//! Entering a state: pass `start`, `branch` and `end`; set up what a waiting state waits for.
#![deny(clippy::disallowed_methods)]

use serde_json::{json, Value};

use super::*;
use crate::workflow::definition::{AgentTarget, Settings, State, WaitFor};
use crate::workflow::expr::Scope;
use crate::workflow::validate::step_call;

impl RunMachine {
    /// Enters `key` and every state after it that does not wait.
    pub(super) fn enter(&mut self, key: &str) {
        let mut key = key.to_string();
        // Each pass visits a state; the step limit bounds the loop (validation refuses cycles
        // that never wait, but the machine does not rely on it).
        loop {
            let Some(s) = self.def.state(&key).cloned() else {
                self.state.status = fail(run_code::NOT_RUNNABLE, format!("no state {key:?}"), None);
                return;
            };
            self.state.steps += 1;
            if self.state.steps > MAX_RUN_STEPS {
                self.state.status = fail(
                    run_code::STEP_LIMIT,
                    format!("more than {MAX_RUN_STEPS} steps"),
                    Some(key),
                );
                return;
            }
            let visit = {
                let v = self.state.visits.entry(key.clone()).or_insert(0);
                *v += 1;
                *v
            };
            let next = match &s.settings {
                Settings::Start => s.next.clone(),
                Settings::Branch { cases, default } => match self.choose(cases) {
                    Ok(Some(n)) => Some(n),
                    Ok(None) => default.clone(),
                    Err(status) => {
                        self.state.status = (*status).with_state(&s.key);
                        return;
                    }
                },
                Settings::End { result } => {
                    let result = match result {
                        Some(t) => t.eval(&self.scope()),
                        None => Ok(Value::Null),
                    };
                    self.state.status = match result {
                        Ok(result) => RunStatus::Succeeded { result },
                        Err(e) => fail(
                            run_code::EXPRESSION_FAILED,
                            e.to_string(),
                            Some(s.key.clone()),
                        ),
                    };
                    return;
                }
                _ => return self.attempt(&s.key, visit, 1),
            };
            match next {
                Some(n) => key = n,
                None => {
                    self.state.status = fail(
                        run_code::NOT_RUNNABLE,
                        format!("state {:?} has no next", s.key),
                        Some(s.key.clone()),
                    );
                    return;
                }
            }
        }
    }

    /// Sets up attempt `attempt` of visit `visit` of a waiting state.
    pub(super) fn attempt(&mut self, key: &str, visit: u32, attempt: u32) {
        let Some(s) = self.def.state(key).cloned() else {
            return;
        };
        let effect_key = effect_key(&self.state.run_id, key, visit, attempt);
        let pending = match self.pending_for(&s, effect_key, attempt) {
            Ok(p) => p,
            Err(status) => {
                self.state.status = *status;
                return;
            }
        };
        self.state.status = RunStatus::Running(Cursor {
            state: s.key.clone(),
            visit,
            attempt,
            pending,
        });
    }

    fn pending_for(&self, s: &State, key: String, attempt: u32) -> Result<Pending, Box<RunStatus>> {
        let scope = self.scope();
        let eval_err = |e: crate::workflow::expr::ExprError| {
            boxed_fail(
                run_code::EXPRESSION_FAILED,
                e.to_string(),
                Some(s.key.clone()),
            )
        };
        let eval =
            |t: &Option<crate::workflow::template::Template>| -> Result<Value, Box<RunStatus>> {
                match t {
                    Some(t) => t.eval(&scope).map_err(eval_err),
                    None => Ok(Value::Null),
                }
            };
        let timeout_ms = self.timeout_for(s, attempt);
        let call = |args: Value| {
            let (capability, method) = step_call(s).unwrap_or(("", ""));
            Pending::Call(Call {
                idempotency_key: key.clone(),
                state: s.key.clone(),
                capability: capability.to_string(),
                method: method.to_string(),
                args,
                timeout_ms,
            })
        };
        Ok(match &s.settings {
            Settings::AgentTask {
                target,
                input,
                expected_output,
            } => {
                let mut args = json!({ "input": eval(input)? });
                match target {
                    AgentTarget::Entry(e) => args["entry"] = json!(e),
                    AgentTarget::TaskKind(k) => args["taskKind"] = json!(k),
                }
                if let Some(x) = expected_output {
                    args["expectedOutput"] = x.clone();
                }
                call(args)
            }
            Settings::ToolCall { uses, arguments } => {
                let args = eval(arguments)?;
                match step_call(s) {
                    Some(("lime.tools", "invoke")) if uses != "lime.tools.invoke" => {
                        call(json!({"key": uses, "input": args}))
                    }
                    _ => call(args),
                }
            }
            Settings::StorageWrite { storage_key, value } => {
                let value = value.eval(&scope).map_err(eval_err)?;
                call(json!({"key": storage_key, "value": value}))
            }
            Settings::ArtifactCreate {
                artifact_kind,
                title,
                content,
            } => {
                let title = title.eval(&scope).map_err(eval_err)?;
                let content = content.eval(&scope).map_err(eval_err)?;
                call(json!({"kind": artifact_kind, "title": title, "content": content}))
            }
            Settings::HumanReview { prompt, show } => Pending::Review {
                key,
                state: s.key.clone(),
                prompt: prompt.clone(),
                show: eval(show)?,
                timeout_ms,
            },
            Settings::UserInput { prompt, schema } => Pending::Input {
                key,
                state: s.key.clone(),
                prompt: prompt.clone(),
                schema: schema.clone(),
                timeout_ms,
            },
            Settings::Wait(WaitFor::DurationMs(ms)) => Pending::Timer {
                key,
                state: s.key.clone(),
                wake: Wake::AfterMs(*ms),
            },
            Settings::Wait(WaitFor::Until(e)) => {
                let at = e.eval(&scope).map_err(eval_err)?;
                let ts = at
                    .as_str()
                    .and_then(|t| t.parse::<jiff::Timestamp>().ok())
                    .ok_or_else(|| {
                        boxed_fail(
                            run_code::INVALID_UNTIL,
                            "until must give an RFC 3339 timestamp".into(),
                            Some(s.key.clone()),
                        )
                    })?;
                Pending::Timer {
                    key,
                    state: s.key.clone(),
                    wake: Wake::At(ts.to_string()),
                }
            }
            Settings::Start | Settings::Branch { .. } | Settings::End { .. } => {
                return Err(boxed_fail(
                    run_code::NOT_RUNNABLE,
                    "not a waiting state".into(),
                    Some(s.key.clone()),
                ))
            }
        })
    }

    /// The step's timeout for this attempt: doubled per attempt under `retry_with_longer_timeout`.
    fn timeout_for(&self, s: &State, attempt: u32) -> Option<u64> {
        let base = self.def.timeout_of(s)?;
        let longer = matches!(
            self.def.recovery_of(s).and_then(|r| r.on_timeout.as_ref()),
            Some(OnFailure::RetryWithLongerTimeout)
        );
        if !longer {
            return Some(base);
        }
        let mut t = base;
        for _ in 1..attempt {
            t = t.saturating_mul(2);
        }
        Some(t.min(MAX_DURATION_MS))
    }

    fn choose(
        &self,
        cases: &[crate::workflow::definition::Case],
    ) -> Result<Option<String>, Box<RunStatus>> {
        let scope = self.scope();
        for c in cases {
            match c.when.eval_bool(&scope) {
                Ok(true) => return Ok(Some(c.next.clone())),
                Ok(false) => {}
                Err(e) => return Err(boxed_fail(run_code::EXPRESSION_FAILED, e.to_string(), None)),
            }
        }
        Ok(None)
    }

    fn scope(&self) -> Scope<'_> {
        Scope {
            input: &self.state.input,
            outputs: &self.state.outputs,
        }
    }
}

impl RunStatus {
    fn with_state(self, key: &str) -> RunStatus {
        match self {
            RunStatus::Failed {
                code,
                message,
                state: None,
            } => RunStatus::Failed {
                code,
                message,
                state: Some(key.to_string()),
            },
            other => other,
        }
    }
}

fn boxed_fail(code: &str, message: String, state: Option<String>) -> Box<RunStatus> {
    Box::new(fail(code, message, state))
}
