//! The host UI's workflow runs (`docs/host-api.md`, "Workflow runs"): list and read every app's
//! runs with their step timeline, the pending review or input and the run's evidence; start a
//! `workflow` entry (the Run action: the app and workflow come from the store, never from the
//! caller); answer a review (Approve / Reject / Edit), an input request or a retry decision as
//! the host's user (`AnswerSource::User`: the host UI is the user); cancel. Host-UI only: an app
//! frame reaches none of this (its `lime.workflow` goes through the choke point, and its answers
//! are refused). Every action is audited (`workflow.*`, durably, like `task.*`) and announced as
//! `workflow:changed`.

use runtime_core::workflow::limits::MAX_RUN_INPUT_BYTES;
use runtime_core::workflow::machine::{Pending, RunStatus};
use runtime_core::workflow::runs::{Answer, AnswerSource, RunView};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::workflow_host::{self as host, any_runs, with_runs};
use super::{answer, args, Command, Session};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::hosting::workflow::driver::HostRuns;
use crate::hosting::workflow::timeline::{self, preview, StepFailure, Timeline};
use crate::hosting::workflow::{self, run_evidence, schedule};
use crate::install::manifest::EntryKind;

/// Most runs `workflow_runs` answers (newest first).
pub const MAX_LIST: usize = 200;
/// Longest run id looked up (longer ones cannot exist: `workflow.run_not_found`).
pub const MAX_ID_BYTES: usize = 128;
/// Largest `show` data a detail carries as JSON; larger data is summarized (`showTruncated`).
pub const MAX_SHOW_BYTES: usize = 64 * 1024;

macro_rules! commands {
    ($($name:literal => $f:ident,)*) => {
        pub const COMMANDS: &[Command] = &[$(Command { name: $name, run: $f },)*];
    };
}

commands! {
    "workflow_runs" => workflow_runs,
    "workflow_run" => workflow_run,
    "workflow_start" => workflow_start,
    "workflow_respond" => workflow_respond,
    "workflow_cancel" => workflow_cancel,
    "workflow_schedules" => workflow_schedules,
}

/// A run in a list.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    pub run_id: String,
    pub app_id: String,
    pub workflow: String,
    /// `running`, `waiting`, `succeeded`, `failed`, `cancelled`.
    pub status: String,
    /// What a waiting run waits for: `review`, `input`, `decision`, `timer`, `retry`, `call`.
    pub waiting: Option<String>,
    pub due_at: Option<String>,
    pub finished: bool,
    pub steps: u32,
    pub started_at: Option<String>,
}

/// What a run waits for from a person, as the host draws it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingView {
    /// `review`, `input` or `decision`.
    pub kind: String,
    pub key: String,
    pub state: String,
    pub prompt: String,
    /// A review's data to show (JSON), at most [`MAX_SHOW_BYTES`].
    pub show: Option<Value>,
    /// The show data as bounded text when it was larger.
    pub show_truncated: Option<String>,
    /// An input request's JSON Schema.
    pub schema: Option<Value>,
    pub due_at: Option<String>,
}

/// What `workflow_run` answers.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunDetail {
    pub run: RunSummary,
    /// The start input and each named output, as bounded JSON text.
    pub input: String,
    pub outputs: Map<String, Value>,
    pub result: Option<String>,
    pub error: Option<RunFailure>,
    pub pending: Option<PendingView>,
    pub timeline: Timeline,
    /// The run's `lime.evidence` record, once it ended.
    pub evidence: Option<Value>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunFailure {
    #[serde(flatten)]
    pub failure: StepFailure,
    pub state: Option<String>,
}

fn bad(command: &str, reason: &str) -> HostError {
    HostError::new(ErrorCode::ApiBadArguments, format!("{command}: {reason}"))
        .with("command", command)
        .with("reason", reason.to_owned())
}

fn not_found(run: &str) -> HostError {
    HostError::new(
        ErrorCode::WorkflowRunNotFound,
        "no workflow run with this id",
    )
    .with("runId", run.chars().take(MAX_ID_BYTES).collect::<String>())
}

fn checked_run(run: &str) -> HostResult<&str> {
    if run.is_empty() || run.len() > MAX_ID_BYTES {
        return Err(not_found(run));
    }
    Ok(run)
}

fn status_of(v: &RunView) -> &'static str {
    match &v.state.status {
        RunStatus::Succeeded { .. } => "succeeded",
        RunStatus::Failed { .. } => "failed",
        RunStatus::Cancelled { .. } => "cancelled",
        RunStatus::Running(_) => match &v.waiting {
            Some(Pending::Review { .. } | Pending::Input { .. } | Pending::Decision { .. }) => {
                "waiting"
            }
            _ => "running",
        },
    }
}

fn waiting_of(p: &Pending) -> &'static str {
    match p {
        Pending::Call(_) => "call",
        Pending::Review { .. } => "review",
        Pending::Input { .. } => "input",
        Pending::Timer { .. } => "timer",
        Pending::Backoff { .. } => "retry",
        Pending::Decision { .. } => "decision",
    }
}

fn summary(v: &RunView) -> RunSummary {
    RunSummary {
        run_id: v.run_id.clone(),
        app_id: v.app.clone(),
        workflow: v.workflow.clone(),
        status: status_of(v).to_owned(),
        waiting: v.waiting.as_ref().map(|p| waiting_of(p).to_owned()),
        due_at: v.due_at.clone(),
        finished: v.finished,
        steps: v.state.steps,
        started_at: Some(v.started_at.clone()),
    }
}

fn pending_view(v: &RunView) -> Option<PendingView> {
    let (kind, key, state, prompt, show, schema) = match v.waiting.as_ref()? {
        Pending::Review {
            key,
            state,
            prompt,
            show,
            ..
        } => ("review", key, state, prompt.clone(), Some(show), None),
        Pending::Input {
            key,
            state,
            prompt,
            schema,
            ..
        } => ("input", key, state, prompt.clone(), None, schema.clone()),
        Pending::Decision { key, state, .. } => (
            "decision",
            key,
            state,
            "The step failed: retry it, or stop the run?".to_owned(),
            None,
            None,
        ),
        _ => return None,
    };
    let small = show.filter(|s| s.to_string().len() <= MAX_SHOW_BYTES);
    Some(PendingView {
        kind: kind.to_owned(),
        key: key.clone(),
        state: state.clone(),
        prompt: timeline::bounded(&prompt, 4096),
        show: small.cloned(),
        show_truncated: show
            .filter(|_| small.is_none())
            .map(|s| timeline::bounded(&s.to_string(), MAX_SHOW_BYTES)),
        schema,
        due_at: v.due_at.clone(),
    })
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "WorkflowRunsArgs")]
pub(crate) struct ListArgs {
    app_id: Option<String>,
    limit: Option<u64>,
}

fn workflow_runs(session: &Session, raw: Value) -> HostResult<Value> {
    let a: ListArgs = args("workflow_runs", raw)?;
    let limit = a.limit.unwrap_or(MAX_LIST as u64).clamp(1, MAX_LIST as u64) as usize;
    if !any_runs(session) {
        return answer(Vec::<RunSummary>::new());
    }
    with_runs(session, |runs, _| {
        let mut items: Vec<RunSummary> =
            runs.list(a.app_id.as_deref()).iter().map(summary).collect();
        items.sort_by(|x, y| y.started_at.cmp(&x.started_at));
        items.truncate(limit);
        answer(items)
    })
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "WorkflowRunArgs")]
pub(crate) struct RunArgs {
    run_id: String,
}

fn detail(session: &Session, runs: &HostRuns, v: &RunView) -> HostResult<RunDetail> {
    let events = runs
        .runs()
        .history(
            &v.run_id,
            runtime_core::workflow::runs::history::MAX_HISTORY,
        )
        .map_err(workflow::host_error)?;
    let (result, error) = match &v.state.status {
        RunStatus::Succeeded { result } => (Some(preview(result)), None),
        RunStatus::Failed {
            code,
            message,
            state,
        } => (
            None,
            Some(RunFailure {
                failure: StepFailure {
                    code: timeline::bounded(code, 128),
                    message: timeline::bounded(message, timeline::MAX_OUTPUT_PREVIEW),
                },
                state: state.clone(),
            }),
        ),
        _ => (None, None),
    };
    let evidence = if v.finished {
        run_evidence::find(&session.data.apps_data(), &v.app, &v.run_id)
            .ok()
            .flatten()
            .and_then(|r| serde_json::to_value(r).ok())
    } else {
        None
    };
    Ok(RunDetail {
        run: summary(v),
        input: preview(&v.state.input),
        outputs: v
            .state
            .outputs
            .iter()
            .take(256)
            .map(|(k, o)| (k.clone(), json!(preview(o))))
            .collect(),
        result,
        error,
        pending: pending_view(v),
        timeline: timeline::fold(&v.run_id, &events),
        evidence,
    })
}

fn workflow_run(session: &Session, raw: Value) -> HostResult<Value> {
    let a: RunArgs = args("workflow_run", raw)?;
    let id = checked_run(&a.run_id)?;
    if !any_runs(session) {
        return Err(not_found(id));
    }
    with_runs(session, |runs, _| {
        let v = runs.get(id).map_err(workflow::host_error)?;
        answer(detail(session, runs, &v)?)
    })
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "WorkflowStartArgs")]
pub(crate) struct StartArgs {
    app_id: String,
    /// The `workflow` entry to run (its `workflow` names the workflow).
    entry_key: String,
    input: Option<Value>,
}

fn workflow_start(session: &Session, raw: Value) -> HostResult<Value> {
    let a: StartArgs = args("workflow_start", raw)?;
    let input = a.input.unwrap_or_else(|| json!({}));
    if input.to_string().len() > MAX_RUN_INPUT_BYTES {
        return Err(HostError::new(
            ErrorCode::WorkflowInvalidInput,
            format!("the input is over {MAX_RUN_INPUT_BYTES} bytes of JSON"),
        ));
    }
    // The workflow comes from the store's active manifest, never from the caller.
    let wf = session.with_bridge(|_, store| {
        let active = store.active_app(&a.app_id)?;
        let view = active.manifest.view();
        let entry = view
            .entry(&a.entry_key)
            .filter(|e| e.kind() == Some(EntryKind::Workflow));
        match entry.and_then(|e| e.workflow()) {
            Some(w) => Ok(w.to_owned()),
            None => Err(HostError::new(
                ErrorCode::WorkflowNoEntry,
                "the app has no workflow entry with this key",
            )
            .with("entryKey", a.entry_key.chars().take(64).collect::<String>())),
        }
    })??;
    let (v, s) = with_runs(session, |runs, store| {
        let v = runs
            .start(store, &a.app_id, &wf, input, None, None)
            .map_err(workflow::host_error)?;
        host::follow(session, runs, &v);
        Ok((v.clone(), summary(&v)))
    })?;
    host::audit(
        session,
        "workflow.start",
        &a.app_id,
        json!({"runId": v.run_id, "workflow": wf, "entryKey": a.entry_key, "by": "host-user"}),
    );
    host::changed(session, &v, "workflow.start");
    answer(s)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "WorkflowRespondArgs")]
pub(crate) struct RespondArgs {
    run_id: String,
    /// `approve`, `reject`, `edit` (approve with edited `data`), `input` (with `data`), `retry`
    /// or `stop` (a failed step's decision).
    decision: String,
    data: Option<Value>,
}

/// The answer the decision makes (an input's data is checked against its schema by the runs).
fn answer_of(a: &RespondArgs) -> HostResult<Answer> {
    let bad = |r: &str| bad("workflow_respond", r);
    if let Some(d) = &a.data {
        if d.to_string().len() > MAX_RUN_INPUT_BYTES {
            return Err(bad("data is over 256 KiB of JSON"));
        }
    }
    let data = a.data.clone().filter(|d| !d.is_null());
    Ok(match (a.decision.as_str(), data) {
        ("approve", None) => Answer::Review {
            approved: true,
            data: None,
        },
        ("edit", Some(d)) => Answer::Review {
            approved: true,
            data: Some(d),
        },
        ("edit", None) => return Err(bad("edit needs the edited data")),
        ("reject", d) => Answer::Review {
            approved: false,
            data: d,
        },
        ("input", Some(d)) => Answer::Input { data: d },
        ("input", None) => return Err(bad("input needs data")),
        ("retry", None) => Answer::Decision { retry: true },
        ("stop", None) => Answer::Decision { retry: false },
        ("approve" | "retry" | "stop", Some(_)) => {
            return Err(bad(
                "approve, retry and stop take no data (edit carries data)",
            ))
        }
        _ => {
            return Err(bad(
                "decision must be approve, reject, edit, input, retry or stop",
            ))
        }
    })
}

fn workflow_respond(session: &Session, raw: Value) -> HostResult<Value> {
    let a: RespondArgs = args("workflow_respond", raw)?;
    let id = checked_run(&a.run_id)?.to_owned();
    if !any_runs(session) {
        return Err(not_found(&id));
    }
    let ans = answer_of(&a)?;
    let (v, s) = with_runs(session, |runs, _| {
        let v = runs
            .respond(&id, ans, AnswerSource::User)
            .map_err(workflow::host_error)?;
        host::follow(session, runs, &v);
        Ok((v.clone(), summary(&v)))
    })?;
    host::audit(
        session,
        "workflow.respond",
        &v.app,
        json!({"runId": id, "decision": a.decision, "edited": a.data.is_some(), "by": "host-user"}),
    );
    host::changed(session, &v, "workflow.respond");
    answer(s)
}

fn workflow_cancel(session: &Session, raw: Value) -> HostResult<Value> {
    let a: RunArgs = args("workflow_cancel", raw)?;
    let id = checked_run(&a.run_id)?;
    if !any_runs(session) {
        return Err(not_found(id));
    }
    let (v, s) = with_runs(session, |runs, _| {
        let v = runs.cancel(id).map_err(workflow::host_error)?;
        Ok((v.clone(), summary(&v)))
    })?;
    host::audit(
        session,
        "workflow.cancel",
        &v.app,
        json!({"runId": id, "by": "host-user"}),
    );
    host::changed(session, &v, "workflow.cancel");
    answer(s)
}

fn workflow_schedules(session: &Session, raw: Value) -> HostResult<Value> {
    let _: super::NoArgs = args("workflow_schedules", raw)?;
    let records = schedule::load(&schedule::records_path(&session.data));
    answer(
        records
            .into_values()
            .collect::<Vec<schedule::ScheduleRecord>>(),
    )
}
