//! The host's [`StepExecutor`]: a workflow step is a capability call of the run's app and
//! workflow entry through [`dispatch`], like a frame's call.
//!
//! The caller is rebuilt for every step from the store (the app's active version, package and
//! manifest hashes, the entry that runs the workflow), never from the run's record; the run id
//! is the caller's session in the audit record. A step that would need a permission prompt
//! fails (`permission.not_granted`): a run has no frame to ask in; grant it first.
//!
//! An `agent-task` step starts a `lime.agent` task with the step's idempotency key (a
//! re-issued step finds the same task) and waits for its result, reading it from the
//! host's own task view (the start was the audited call), until the step's timeout, or until
//! the run is interrupted ([`HostSteps::interrupted_by`]: a cancel, the app closing), which
//! cancels the task at once. A `lime.services.call` step is interrupted the same way: the
//! call's cancel token follows the interrupt, so the service gets `$/cancelRequest` (a Wasm
//! call stops between fuel slices, a local-http or remote request is aborted) and the step is abandoned at once, not at `timeoutMs`.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use runtime_core::workflow::runs::{StepCall, StepError, StepExecutor};
use serde_json::{json, Map, Value};

use crate::foundation::profile::HostProfile;
use crate::hosting::capability::call::{Call, Caller};
use crate::hosting::capability::dispatch::{dispatch, Allowed, CallError, SessionAnswers, Verdict};
use crate::install::store::{ChangeStamp, Store};

/// What a step needs of the host's `lime.*` services (`capability::services::Services`
/// implements it; the trait keeps this module below the services, which own the host's
/// workflow driver).
pub trait StepServices {
    /// An allowed call's value (`Services::call_with`, its effect dropped: a run has no frame).
    /// `cancel` ends a backend-service call in flight (`lime.services.call`: the service gets
    /// `$/cancelRequest`, a Wasm call stops, a local-http or remote request is aborted) when the run is interrupted.
    fn step_call(
        &mut self,
        store: &Store,
        allowed: &Allowed,
        args: &Value,
        cancel: &service_sandbox::CancelToken,
    ) -> Result<Value, CallError>;
    /// The agent tasks over the process's one agent runtime (`Services::agent_tasks`).
    fn step_agent_tasks(
        &mut self,
        store: &Store,
    ) -> Result<runtime_core::agent_task::AgentTasks, String>;
    /// Closes what is open for `app` (its per-app handles); the agent runtime is the
    /// session's and stays open.
    fn step_close_app(&mut self, app: &str);
}

/// Whether a run's in-flight step must stop now: `(run id, app)`.
pub type Interrupt = Arc<dyn Fn(&str, &str) -> bool + Send + Sync>;

/// What a step stopped by an interrupt answers: not a result (nothing is recorded; the next
/// drive re-issues the step with the same key, unless the run was cancelled).
pub const INTERRUPTED: &str = runtime_core::workflow::runs::code::STEP_ABANDONED;

/// How long an agent step waits for its task when the step sets no timeout.
pub const DEFAULT_AGENT_WAIT_MS: u64 = 300_000;
/// How often an agent step looks at its task.
const AGENT_POLL: Duration = Duration::from_millis(20);

/// Runs steps for one drive of the runs, over the host's store and services.
pub struct HostSteps<'a> {
    store: &'a Store,
    profile: &'a HostProfile,
    services: RefCell<&'a mut dyn StepServices>,
    interrupt: Option<Interrupt>,
    /// The last step's caller (app, workflow, caller), valid while no other connection has
    /// committed to the store since it was read: the caller's version, hashes and entry change
    /// only by an install, update, rollback or uninstall, never by this driver's own writes
    /// (its calls' audit records). Saves two manifest reads per step.
    last_caller: RefCell<Option<(ChangeStamp, String, String, Caller)>>,
}

impl<'a> HostSteps<'a> {
    pub fn new(
        store: &'a Store,
        profile: &'a HostProfile,
        services: &'a mut dyn StepServices,
    ) -> Self {
        HostSteps {
            store,
            profile,
            services: RefCell::new(services),
            interrupt: None,
            last_caller: RefCell::new(None),
        }
    }

    /// Stops an agent step (cancelling its task) as soon as `interrupt` says so.
    pub fn interrupted_by(mut self, interrupt: Interrupt) -> Self {
        self.interrupt = Some(interrupt);
        self
    }

    fn interrupted(&self, run_id: &str, app: &str) -> bool {
        self.interrupt.as_ref().is_some_and(|f| f(run_id, app))
    }

    /// A token cancelled once the run is interrupted (polled while a service call waits).
    fn cancel_token(&self, run_id: &str, app: &str) -> service_sandbox::CancelToken {
        let Some(f) = self.interrupt.clone() else {
            return service_sandbox::CancelToken::default();
        };
        let (run, app) = (run_id.to_owned(), app.to_owned());
        service_sandbox::CancelToken::from_probe(Arc::new(move || f(&run, &app)))
    }

    fn caller(&self, step: &StepCall<'_>) -> Result<Caller, StepError> {
        let stamp = self.store.change_stamp().ok();
        if let (Some(now), Some((at, app, workflow, caller))) =
            (&stamp, &*self.last_caller.borrow())
        {
            if app == step.app && workflow == step.workflow && at.only_own_changes_until(now) {
                return Ok(Caller {
                    session_id: step.run_id.to_owned(),
                    ..caller.clone()
                });
            }
        }
        let caller = self.read_caller(step)?;
        *self.last_caller.borrow_mut() = stamp.map(|s| {
            (
                s,
                step.app.to_owned(),
                step.workflow.to_owned(),
                caller.clone(),
            )
        });
        Ok(caller)
    }

    fn read_caller(&self, step: &StepCall<'_>) -> Result<Caller, StepError> {
        let entry =
            super::entry_of(self.store, step.app, step.workflow).map_err(|e| StepError {
                code: e.code.to_owned(),
                message: e.message,
                retryable: false,
                timed_out: false,
            })?;
        let active = self
            .store
            .active_app(step.app)
            .map_err(|e| refused(super::code::APP_NOT_INSTALLED, e.message))?;
        Ok(Caller {
            app_id: active.name,
            entry_key: entry,
            version: active.version,
            session_id: step.run_id.to_owned(),
            package_hash: active.package_hash,
            manifest_hash: active.manifest_hash,
        })
    }

    /// One call through the choke point.
    fn one_call(
        &self,
        caller: &Caller,
        capability: &str,
        method: &str,
        args: Value,
        key: &str,
    ) -> Result<Value, StepError> {
        let mut options = Map::new();
        options.insert("idempotencyKey".into(), json!(key));
        let call = Call {
            request_id: key.to_owned(),
            capability: capability.to_owned(),
            method: method.to_owned(),
            args,
            options,
        };
        let trace = format!("trace_{}", caller.session_id);
        let mut answers = SessionAnswers::default();
        match dispatch(
            self.store,
            self.profile,
            caller,
            &call,
            &trace,
            &mut answers,
        ) {
            Verdict::Allowed(proof) => {
                let cancel = self.cancel_token(&caller.session_id, &caller.app_id);
                let mut services = self.services.borrow_mut();
                match services.step_call(self.store, &proof, &call.args, &cancel) {
                    Ok(value) => Ok(value),
                    Err(e)
                        if e.cause_code == Some("service.cancelled")
                            && self.interrupted(&caller.session_id, &caller.app_id) =>
                    {
                        Err(interrupted())
                    }
                    Err(e) => Err(StepError {
                        code: e.cause_code.unwrap_or(e.code.as_str()).to_owned(),
                        message: e.message,
                        retryable: e.retryable,
                        timed_out: false,
                    }),
                }
            }
            Verdict::Denied(e) => Err(StepError {
                code: e.cause_code.unwrap_or(e.code.as_str()).to_owned(),
                message: e.message,
                retryable: e.retryable,
                timed_out: false,
            }),
            Verdict::Ask(q) => Err(refused(
                "permission.not_granted",
                format!(
                    "{}.{} needs the user's permission {}: grant it, then retry the run",
                    q.capability,
                    q.method,
                    q.permission.as_deref().unwrap_or("(a policy confirmation)")
                ),
            )),
        }
    }

    fn agent_step(&self, caller: &Caller, step: &StepCall<'_>) -> Result<Value, StepError> {
        let c = step.call;
        let mut args = Map::new();
        args.insert(
            "input".into(),
            c.args.get("input").cloned().unwrap_or(json!({})),
        );
        args.insert("idempotencyKey".into(), json!(c.idempotency_key));
        if let Some(e) = c.args.get("expectedOutput").filter(|v| !v.is_null()) {
            args.insert("expectedOutput".into(), e.clone());
        }
        let started = self.one_call(
            caller,
            "lime.agent",
            "startTask",
            Value::Object(args),
            &c.idempotency_key,
        )?;
        let task_id = started["taskId"].as_str().unwrap_or_default().to_owned();
        let app = runtime_core::ids::AppId::new(&caller.app_id)
            .map_err(|_| refused("app.not_installed", "the app id is not valid".into()))?;
        let wait = Duration::from_millis(c.timeout_ms.unwrap_or(DEFAULT_AGENT_WAIT_MS));
        let deadline = Instant::now() + wait;
        loop {
            // The host's own view of the task the allowed call started (not audited per poll).
            let task = {
                let mut services = self.services.borrow_mut();
                let tasks = services
                    .step_agent_tasks(self.store)
                    .map_err(|m| refused("agent.unavailable", m))?;
                tasks
                    .get(&app, &task_id)
                    .map_err(|e| refused(e.code(), e.to_string()))?
            };
            let result = &task["result"];
            if restarted_run(result, &task["runs"]) {
                // The task's turn was cut by a crash of the process that drove this step (its
                // run recovered as `interrupted_by_restart`): the re-issued step runs the same
                // task again (a new run of it, not a second task), a bounded number of times.
                let tasks = self
                    .services
                    .borrow_mut()
                    .step_agent_tasks(self.store)
                    .map_err(|m| refused("agent.unavailable", m))?;
                tasks
                    .retry(&app, &task_id)
                    .map_err(|e| refused(e.code(), e.to_string()))?;
                continue;
            }
            if !result.is_null() {
                if result["status"] == "succeeded" {
                    let structured = &result["structuredOutput"];
                    return Ok(if structured.is_null() {
                        result["text"].clone()
                    } else {
                        structured.clone()
                    });
                }
                return Err(StepError {
                    code: result["errorCode"]
                        .as_str()
                        .unwrap_or("agent.task_failed")
                        .to_owned(),
                    message: result["errorMessage"]
                        .as_str()
                        .unwrap_or("the agent task did not succeed")
                        .to_owned(),
                    retryable: false,
                    timed_out: false,
                });
            }
            if self.interrupted(step.run_id, &caller.app_id) {
                let tasks = self
                    .services
                    .borrow_mut()
                    .step_agent_tasks(self.store)
                    .map_err(|m| refused("agent.unavailable", m))?;
                if let Err(e) = tasks.cancel(&app, &task_id) {
                    tracing::warn!("cannot cancel the task of an interrupted step: {e}");
                }
                return Err(interrupted());
            }
            if Instant::now() >= deadline {
                return Err(StepError {
                    code: "workflow.step_timed_out".into(),
                    message: "the agent task did not finish in time".into(),
                    retryable: true,
                    timed_out: true,
                });
            }
            std::thread::sleep(AGENT_POLL);
        }
    }
}

/// Most runs an agent step's task gets when crashes keep cutting its turn (the first and up to
/// three after restarts); then the step fails with the task's `interrupted_by_restart`.
pub const MAX_AGENT_TASK_RUNS: usize = 4;

/// Whether a task's latest run ended only because the process driving it stopped, and the
/// task may run again.
fn restarted_run(result: &Value, runs: &Value) -> bool {
    result["status"] == "failed"
        && result["errorCode"] == runtime_core::event::facts::INTERRUPTED
        && runs.as_array().map_or(usize::MAX, Vec::len) < MAX_AGENT_TASK_RUNS
}

/// A step stopped by an interrupt: abandoned, not failed (see [`INTERRUPTED`]).
fn interrupted() -> StepError {
    StepError {
        code: INTERRUPTED.to_owned(),
        message: "the run was cancelled or its app closed".to_owned(),
        retryable: true,
        timed_out: false,
    }
}

fn refused(code: &str, message: String) -> StepError {
    StepError {
        code: code.to_owned(),
        message,
        retryable: false,
        timed_out: false,
    }
}

/// The step calls whose re-issue with the same idempotency key finds the first effect or
/// repeats it harmlessly (`StepExecutor::reissue_is_safe`): reads, a storage write of the same
/// value, an artifact, an evidence record and an agent task found by their key. Not an MCP
/// tool (`lime.tools.invoke`: another system's effect) nor `lime.events.publish` (frames would
/// get the event twice).
pub const REISSUE_SAFE: &[(&str, &str)] = &[
    ("lime.storage", "get"),
    ("lime.storage", "set"),
    ("lime.knowledge", "search"),
    ("lime.artifacts", "create"),
    ("lime.evidence", "record"),
    ("lime.agent", "startTask"),
];

impl StepExecutor for HostSteps<'_> {
    fn reissue_is_safe(&self, call: &runtime_core::workflow::machine::Call) -> bool {
        REISSUE_SAFE
            .iter()
            .any(|(c, m)| *c == call.capability && *m == call.method)
    }

    fn call(&self, step: &StepCall<'_>) -> Result<Value, StepError> {
        if self.interrupted(step.run_id, step.app) {
            return Err(interrupted());
        }
        let caller = self.caller(step)?;
        let c = step.call;
        super::failpoint::hit("workflow.before_effect");
        let result = if c.capability == "lime.agent" && c.method == "startTask" {
            self.agent_step(&caller, step)
        } else {
            self.one_call(
                &caller,
                &c.capability,
                &c.method,
                super::step_args::adapt(&c.capability, &c.method, &c.args),
                &c.idempotency_key,
            )
        };
        super::failpoint::hit("workflow.after_effect");
        result
    }
}
