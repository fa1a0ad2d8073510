//! `runtimeCorrelation` on the app-facing evidence pack (`lime.evidence.export`, issue 19 §3):
//! with `taskId` (one of the app's own agent tasks) the ids of the task's latest run in the
//! runtime (runtime, session, thread, turn, run, trace); without, the export call's own trace id
//! and every other id named in `missing` (the standard: mark missing correlation, never guess).

use serde_json::{json, Value};

use super::agent::AgentService;
use super::{err, CallError};
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::Allowed;
use crate::install::store::Store;

/// The ids the standard's `runtimeCorrelation` carries, in its order.
pub const CORRELATION_IDS: [&str; 7] = [
    "runtimeId",
    "sessionId",
    "threadId",
    "turnId",
    "taskId",
    "runId",
    "traceId",
];

/// The export argument naming the task (call arguments, not a manifest key).
const TASK_ID: &str = "taskId";

/// `args.taskId` of an export: absent / `null`, or a string of at most 128 bytes.
pub(super) fn task_id<'v>(a: &Allowed, args: &'v Value) -> Result<Option<&'v str>, CallError> {
    match args.get(TASK_ID) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() && s.len() <= 128 => Ok(Some(s)),
        Some(_) => Err(err(
            a,
            ErrorCode::InvalidArgument,
            "args.taskId must be the id of one of the app's agent tasks",
            Some("evidence.invalid_argument"),
        )),
    }
}

/// The pack's `runtimeCorrelation`.
pub(super) fn correlation(
    agent: &mut AgentService,
    store: &Store,
    a: &Allowed,
    task: Option<&str>,
) -> Result<Value, CallError> {
    let Some(task) = task else {
        let missing: Vec<&str> = CORRELATION_IDS
            .iter()
            .copied()
            .filter(|k| *k != "traceId")
            .collect();
        return Ok(json!({
            "runtimeId": null, "sessionId": null, "threadId": null, "turnId": null,
            "taskId": null, "runId": null, "traceId": a.trace_id(), "missing": missing,
        }));
    };
    let app = runtime_core::AppId::new(a.app()).map_err(|_| not_found(a))?;
    let tasks = agent.tasks(store).map_err(|m| {
        tracing::warn!(error = %m, "evidence export cannot open the agent runtime");
        let mut e = err(
            a,
            ErrorCode::UnknownError,
            "the host could not read the app's agent tasks",
            Some("evidence.runtime_unavailable"),
        );
        e.retryable = true;
        e
    })?;
    tasks.correlation(&app, task).map_err(|e| match e {
        runtime_core::agent_task::AgentTaskError::NotFound => not_found(a),
        other => {
            tracing::warn!(error = %other, "evidence export cannot read a task");
            let mut e = err(
                a,
                ErrorCode::UnknownError,
                "the host could not read the task",
                Some("evidence.runtime_unavailable"),
            );
            e.retryable = true;
            e
        }
    })
}

fn not_found(a: &Allowed) -> CallError {
    err(
        a,
        ErrorCode::NotFound,
        "no agent task with this id in this app",
        Some("evidence.task_not_found"),
    )
}
