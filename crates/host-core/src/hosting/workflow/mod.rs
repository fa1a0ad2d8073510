//! Running apps' workflows: RuntimeCore's durable runs (`runtime_core::workflow::runs`) with
//! their steps made through the one choke point.
//!
//! - [`open_runs`]: the runs of a data directory (`<data>/runtime/workflows`, its own
//!   `runtime.lock`: one process drives them; another gets `runtime.busy`).
//! - [`start`]: the workflow and the entry that runs it are read from the store's active
//!   manifest (never from the caller), the definition is checked against the app's declared
//!   capabilities and pinned in the run's record.
//! - [`executor::HostSteps`]: each step is a [`Call`](crate::hosting::capability::call::Call)
//!   from a [`Caller`](crate::hosting::capability::call::Caller) built for the run's app and
//!   workflow entry with the store's version and hashes, through
//!   [`dispatch`](crate::hosting::capability::dispatch::dispatch): declared, ready, granted,
//!   policy, audited with the run id as the caller's session.
//! - [`respond`]: a review or retry decision is answered by the user only (the host UI, the
//!   CLI); [`respond_from_app`] is what an app's own caller gets: `workflow.answer_not_by_user`
//!   for those, and a `user-input` answer checked against the state's schema.
//! - [`driver::HostRuns`]: the host process's runs, driven by a background thread (the window,
//!   `apphost serve`); `lime.workflow` reaches them through `capability::services`.

pub mod driver;
pub mod executor;
pub mod run_evidence;
pub mod schedule;
mod step_args;
pub mod timeline;

use std::path::PathBuf;

use runtime_core::workflow::runs::{
    Answer, AnswerSource, RunError, RunView, StartRun, WorkflowRuns,
};
use serde_json::Value;

use crate::foundation::error::{ErrorCode, HostError};
use crate::foundation::paths::DataDir;
use crate::hosting::capability::call::Caller;
use crate::install::manifest::EntryKind;
use crate::install::store::Store;

/// Host refusal codes of workflow starts (the run service's own are in
/// `runtime_core::workflow::runs::code`).
pub mod code {
    pub const APP_NOT_INSTALLED: &str = "app.not_installed";
    pub const NOT_DECLARED: &str = "workflow.not_declared";
    pub const NO_ENTRY: &str = "workflow.no_entry";
}

/// Where a data directory's workflow runs live.
pub fn runs_dir(data: &DataDir) -> PathBuf {
    data.root().join("runtime").join("workflows")
}

/// Opens (replaying) the data directory's runs; `runtime.busy` when another process has them.
pub fn open_runs(data: &DataDir) -> Result<WorkflowRuns, RunError> {
    WorkflowRuns::open_dir(&runs_dir(data))
}

/// The key of the `workflow` entry that runs `workflow` in `app`'s active manifest.
pub fn entry_of(store: &Store, app: &str, workflow: &str) -> Result<String, RunError> {
    let active = store
        .active_app(app)
        .map_err(|e| RunError::new(code::APP_NOT_INSTALLED, e.message))?;
    let v = active.manifest.view();
    let found = v
        .entries()
        .find(|e| e.kind() == Some(EntryKind::Workflow) && e.workflow() == Some(workflow));
    found
        .and_then(|e| e.key())
        .map(str::to_owned)
        .ok_or_else(|| {
            RunError::new(
                code::NO_ENTRY,
                format!("no workflow entry of {app} runs {workflow}"),
            )
        })
}

/// Starts `workflow` of `app` (recorded, not driven: `WorkflowRuns::drive`, or the host
/// process's [`driver::HostRuns`]).
pub fn start(
    store: &Store,
    runs: &WorkflowRuns,
    app: &str,
    workflow: &str,
    input: Value,
    idempotency_key: Option<String>,
) -> Result<RunView, RunError> {
    start_by(store, runs, app, workflow, input, idempotency_key, None)
}

/// [`start`], recording the app entry whose frame started the run.
pub fn start_by(
    store: &Store,
    runs: &WorkflowRuns,
    app: &str,
    workflow: &str,
    input: Value,
    idempotency_key: Option<String>,
    started_by: Option<&str>,
) -> Result<RunView, RunError> {
    let active = store
        .active_app(app)
        .map_err(|e| RunError::new(code::APP_NOT_INSTALLED, e.message))?;
    let v = active.manifest.view();
    let definition = v
        .workflows()
        .find(|w| w.key() == Some(workflow))
        .map(|w| w.raw().clone())
        .ok_or_else(|| {
            RunError::new(
                code::NOT_DECLARED,
                format!("{app} declares no workflow {workflow}"),
            )
        })?;
    entry_of(store, app, workflow)?;
    let declared = v.requires().capability_names();
    runs.start(StartRun {
        app: app.to_owned(),
        workflow: workflow.to_owned(),
        definition,
        declared,
        input,
        idempotency_key,
        started_by: started_by.map(str::to_owned),
    })
}

/// A user's answer (the host UI, the CLI).
pub fn respond(runs: &WorkflowRuns, run_id: &str, answer: Answer) -> Result<RunView, RunError> {
    runs.respond(run_id, answer, AnswerSource::User)
}

/// An answer coming from an app's own caller (a frame, a step): a review or retry decision is
/// refused with `workflow.answer_not_by_user`, recording nothing (invariant 12e: an app never
/// answers for the user); a `user-input` answer is checked against the state's schema.
pub fn respond_from_app(
    runs: &WorkflowRuns,
    _caller: &Caller,
    run_id: &str,
    answer: Answer,
) -> Result<RunView, RunError> {
    runs.respond(run_id, answer, AnswerSource::App)
}

/// A refusal of the runs as a host error (the CLI's and the host API's codes, `docs/cli.md`).
pub fn host_error(e: RunError) -> HostError {
    use runtime_core::workflow::runs::code as run;
    let code = match e.code {
        code::APP_NOT_INSTALLED => ErrorCode::AppNotInstalled,
        code::NOT_DECLARED => ErrorCode::WorkflowNotDeclared,
        code::NO_ENTRY => ErrorCode::WorkflowNoEntry,
        run::INVALID_DEFINITION => ErrorCode::WorkflowInvalidDefinition,
        run::INVALID_IDEMPOTENCY_KEY | run::INPUT_TOO_LARGE => ErrorCode::WorkflowInvalidInput,
        run::RUN_NOT_FOUND => ErrorCode::WorkflowRunNotFound,
        run::RUN_FINISHED => ErrorCode::WorkflowRunFinished,
        run::NOT_WAITING => ErrorCode::WorkflowNotWaiting,
        run::ANSWER_NOT_BY_USER => ErrorCode::WorkflowAnswerNotByUser,
        run::INPUT_INVALID => ErrorCode::WorkflowInvalidInput,
        run::RUNTIME_BUSY => ErrorCode::RuntimeBusy,
        run::IDEMPOTENCY_CONFLICT => ErrorCode::WorkflowIdempotencyConflict,
        driver::TOO_MANY_RUNS => ErrorCode::WorkflowTooManyRuns,
        _ => ErrorCode::WorkflowRunFailed,
    };
    HostError::new(code, e.message).with("cause", e.code)
}
