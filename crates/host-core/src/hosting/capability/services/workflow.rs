//! `lime.workflow`: an app's own workflow runs, on the host process's driver
//! ([`HostRuns`]). The app id and the calling entry always come from the [`Allowed`] proof:
//!
//! - `start({workflow, input?, idempotencyKey?})`: only a workflow the caller's app declares,
//!   read from the store's active manifest (never from the arguments; another app's workflow
//!   name is simply not declared: `workflow.not_declared`); the calling entry is recorded as
//!   the run's `startedBy`; at most `MAX_UNFINISHED_RUNS_PER_APP` unfinished runs per app
//!   (`workflow.too_many_runs`); the same key with another input is
//!   `workflow.idempotency_conflict`. The run's events then reach the calling frame
//!   ([`Effect::WatchRun`]).
//! - `get({runId})`, `list({status?})`, `cancel({runId})`, `watch({runId, afterSequence?})`:
//!   another app's run is answered exactly like a missing one (`workflow.run_not_found`).
//! - `respond({runId, input})`: data for a `user-input` state, checked against the state's
//!   `schema` (`workflow.input_invalid`, `details.path`) and size (`workflow.input_too_large`).
//!   A review or retry decision is the user's, in AppHost's Tasks page: from an app it is
//!   `workflow.answer_not_by_user` (the runtime's own rule), `details.answerIn` says where.

use runtime_core::workflow::machine::{Pending, RunStatus};
use runtime_core::workflow::runs::{
    check_input, code as run, Answer, AnswerSource, RunError, RunView,
};
use serde_json::{json, Map, Value};

use super::args::{invalid, object, opt_str, req_str};
use super::{err, Effect, Reply};
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{Allowed, CallError};
use crate::hosting::capability::method::WorkflowMethod;
use crate::hosting::workflow::code as host_code;
use crate::hosting::workflow::driver::{HostRuns, TOO_MANY_RUNS};
use crate::install::store::Store;

/// Most runs one `list` answers (newest first).
pub const MAX_LISTED_RUNS: usize = 100;
/// Longest run id or workflow key an argument may carry (longer: not found).
const MAX_ID_LEN: usize = 128;
/// Where a review or retry decision is answered (`details.answerIn` of
/// `workflow.answer_not_by_user`).
const ANSWER_IN: &str = "AppHost: Tasks page (the run's pending review)";

pub(super) fn call(
    store: &Store,
    runs: &HostRuns,
    a: &Allowed,
    method: WorkflowMethod,
    args: &Value,
) -> Result<Reply, CallError> {
    match method {
        WorkflowMethod::Start => {
            let o = object(a, args, &["workflow", "key", "input", "idempotencyKey"])?;
            // The standard's shape names the workflow `key` (`lime.workflow.start({key, input})`).
            let workflow = match (opt_str(a, o, "workflow")?, opt_str(a, o, "key")?) {
                (Some(w), None) | (None, Some(w)) => w,
                (Some(w), Some(k)) if w == k => w,
                (Some(_), Some(_)) => {
                    return Err(invalid(
                        a,
                        "args.workflow and args.key name different workflows",
                    ))
                }
                (None, None) => return Err(invalid(a, "args.workflow is required")),
            };
            if workflow.is_empty() || workflow.len() > MAX_ID_LEN {
                return Err(run_err(
                    a,
                    RunError::new(host_code::NOT_DECLARED, "no such workflow"),
                ));
            }
            let input = o.get("input").cloned().unwrap_or_else(|| json!({}));
            let key = opt_str(a, o, "idempotencyKey")?.map(str::to_owned);
            let view = runs
                .start(store, a.app(), workflow, input, key, Some(a.entry()))
                .map_err(|e| run_err(a, e))?;
            let value = json!({ "runId": view.run_id, "run": view_json(&view) });
            Ok(Reply {
                value: value.clone(),
                effect: Some(Effect::WatchRun {
                    run_id: view.run_id,
                    after: 0,
                    value,
                }),
            })
        }
        WorkflowMethod::Get => {
            let o = object(a, args, &["runId"])?;
            let view = own(runs, a, o)?;
            Ok(Reply::value(json!({ "run": view_json(&view) })))
        }
        WorkflowMethod::List => {
            let o = object(a, args, &["status"])?;
            let status = opt_str(a, o, "status")?;
            if let Some(s) = status {
                if !matches!(s, "running" | "succeeded" | "failed" | "cancelled") {
                    return Err(invalid(
                        a,
                        "args.status must be \"running\", \"succeeded\", \"failed\" or \"cancelled\"",
                    ));
                }
            }
            let mut mine = runs.list(Some(a.app()));
            // Newest first (run ids are random: by start time, then id).
            mine.sort_by(|x, y| (&y.started_at, &y.run_id).cmp(&(&x.started_at, &x.run_id)));
            let listed: Vec<Value> = mine
                .iter()
                .filter(|v| status.is_none_or(|s| s == status_name(v)))
                .take(MAX_LISTED_RUNS)
                .map(view_json)
                .collect();
            Ok(Reply::value(json!({ "runs": listed })))
        }
        WorkflowMethod::Cancel => {
            let o = object(a, args, &["runId"])?;
            let view = own(runs, a, o)?;
            let view = runs.cancel(&view.run_id).map_err(|e| run_err(a, e))?;
            Ok(Reply::value(json!({ "run": view_json(&view) })))
        }
        WorkflowMethod::Respond => {
            let o = object(a, args, &["runId", "input", "decision"])?;
            let view = own(runs, a, o)?;
            let answer = app_answer(a, &view, o)?;
            let view = runs
                .respond(&view.run_id, answer, AnswerSource::App)
                .map_err(|e| run_err(a, e))?;
            Ok(Reply::value(json!({ "run": view_json(&view) })))
        }
        WorkflowMethod::Watch => {
            let o = object(a, args, &["runId", "afterSequence"])?;
            let view = own(runs, a, o)?;
            let after = match o.get("afterSequence") {
                None | Some(Value::Null) => 0,
                Some(v) => v.as_u64().ok_or_else(|| {
                    invalid(a, "args.afterSequence must be a non-negative integer")
                })?,
            };
            let value = json!({ "watching": true, "runId": view.run_id, "afterSequence": after });
            Ok(Reply {
                value: value.clone(),
                effect: Some(Effect::WatchRun {
                    run_id: view.run_id,
                    after,
                    value,
                }),
            })
        }
    }
}

/// The answer an app asked to give, for what the run waits for. Only a `user-input` state
/// takes the app's data (checked here with the path, and again by the runtime); anything else
/// is handed to the runtime as the app's answer, which refuses it by its own rule.
fn app_answer(a: &Allowed, view: &RunView, o: &Map<String, Value>) -> Result<Answer, CallError> {
    let data = o.get("input").filter(|v| !v.is_null()).cloned();
    let decision = opt_str(a, o, "decision")?;
    match &view.waiting {
        None => Err(run_err(
            a,
            RunError::new(run::RUN_FINISHED, "the run has ended"),
        )),
        Some(Pending::Input { schema, .. }) => {
            let data = data.ok_or_else(|| invalid(a, "args.input is required"))?;
            if let Err(r) = check_input(schema.as_ref(), &data) {
                let mut e = run_err(a, r.clone().into());
                e.details = Some(Box::new(json!({ "path": r.path })));
                return Err(e);
            }
            Ok(Answer::Input { data })
        }
        Some(Pending::Review { .. }) => Ok(Answer::Review {
            approved: decision == Some("approve"),
            data,
        }),
        Some(Pending::Decision { .. }) => Ok(Answer::Decision {
            retry: decision == Some("approve"),
        }),
        Some(_) => Err(run_err(
            a,
            RunError::new(
                run::NOT_WAITING,
                "the run waits for a step or a timer, not an answer",
            ),
        )),
    }
}

/// The caller's own run named by `args.runId`; another app's run is not found.
fn own(runs: &HostRuns, a: &Allowed, o: &Map<String, Value>) -> Result<RunView, CallError> {
    let id = req_str(a, o, "runId")?;
    let not_found = || {
        run_err(
            a,
            RunError::new(run::RUN_NOT_FOUND, "no run with this id in this app"),
        )
    };
    if id.is_empty() || id.len() > MAX_ID_LEN {
        return Err(not_found());
    }
    match runs.get(id) {
        Ok(v) if v.app == a.app() => Ok(v),
        _ => Err(not_found()),
    }
}

fn status_name(v: &RunView) -> &'static str {
    match v.state.status {
        RunStatus::Running(_) => "running",
        RunStatus::Succeeded { .. } => "succeeded",
        RunStatus::Failed { .. } => "failed",
        RunStatus::Cancelled { .. } => "cancelled",
    }
}

/// A run as an app sees it: the run view with its status name.
fn view_json(v: &RunView) -> Value {
    let mut out = serde_json::to_value(v).unwrap_or(Value::Null);
    out["status"] = json!(status_name(v));
    out
}

/// The driver could not be opened (another process drives the runs, the log failed).
pub(super) fn host_failed(a: &Allowed, message: &str) -> CallError {
    let mut e = err(
        a,
        ErrorCode::UnknownError,
        &format!("AppHost cannot run workflows now: {message}"),
        Some("workflow.host_failed"),
    );
    e.retryable = true;
    e
}

/// A refusal of the runs as a bridge error: the stable `workflow.*` code is the cause.
fn run_err(a: &Allowed, e: RunError) -> CallError {
    let code = match e.code {
        run::RUN_NOT_FOUND | host_code::NOT_DECLARED | host_code::NO_ENTRY => ErrorCode::NotFound,
        run::ANSWER_NOT_BY_USER => ErrorCode::PermissionDenied,
        TOO_MANY_RUNS => ErrorCode::RateLimited,
        run::RUN_FINISHED | run::NOT_WAITING => ErrorCode::WorkflowInvalidState,
        run::INPUT_INVALID
        | run::INPUT_TOO_LARGE
        | run::INVALID_IDEMPOTENCY_KEY
        | run::IDEMPOTENCY_CONFLICT
        | run::INVALID_DEFINITION => ErrorCode::InvalidArgument,
        _ => return host_failed(a, &e.message),
    };
    let mut out = err(a, code, &e.message, Some(e.code));
    if e.code == run::ANSWER_NOT_BY_USER {
        out.details = Some(Box::new(json!({ "answerIn": ANSWER_IN })));
    }
    out
}
