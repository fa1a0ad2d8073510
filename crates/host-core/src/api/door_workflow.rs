//! `apphost/workflow.*`: the CLI's `apphost workflow start|list|show|cancel|resume|respond`
//! handed to the running host over its App Server door (host extension methods, RuntimeCore
//! `app_server::host_methods`; not part of `appserver.v0`). The host's driver (`HostRuns`)
//! moves the runs; `start`, `respond` and `resume` answer once the run waits for a person or a
//! timer, or ends (at most [`SETTLE_TIMEOUT`]), so the CLI prints what it would have printed
//! driving the run itself. The door's token is the gate: any client that holds it (our user)
//! acts as the user, as the CLI does; answers are `AnswerSource::User`. Every action is
//! audited (`workflow.*`, `"by": "door"`) and announced as `workflow:changed`.
//! Wire: `docs/app-server.md` ("Host methods").

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use runtime_core::app_server::host_methods::{Caller, HostHandler, HostMethods};
use runtime_core::app_server::protocol::codes;
use runtime_core::app_server::RpcError;
use runtime_core::workflow::machine::Pending;
use runtime_core::workflow::runs::{Answer, AnswerSource, RunView};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};

use super::workflow_host::{self as host, any_runs, with_runs};
use super::Session;
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::hosting::workflow;

/// The namespace of these methods.
pub const NAMESPACE: &str = "apphost/workflow";
/// Longest a `start`, `respond` or `resume` waits for the run to settle before it answers the
/// run as it is (still running).
pub const SETTLE_TIMEOUT: Duration = Duration::from_secs(60);
/// How often a waiting call looks at the run.
const SETTLE_POLL: Duration = Duration::from_millis(10);

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct StartParams {
    app: String,
    workflow: String,
    input: Option<Value>,
    idempotency_key: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ListParams {
    app: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RunParams {
    run_id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RespondParams {
    run_id: String,
    #[serde(default)]
    approve: bool,
    #[serde(default)]
    reject: bool,
    input: Option<Value>,
}

type Method = fn(&Session, Option<Value>, &Caller) -> HostResult<Value>;

const METHODS: &[(&str, Method)] = &[
    ("start", start),
    ("list", list),
    ("show", show),
    ("cancel", cancel),
    ("resume", resume),
    ("respond", respond),
];

/// The methods, each holding the session weakly (the door never keeps a closed session alive).
pub fn methods(session: &Arc<Session>) -> HostMethods {
    let mut table = HostMethods::new();
    for (name, run) in METHODS {
        let weak: Weak<Session> = Arc::downgrade(session);
        let run = *run;
        let handler: HostHandler = Arc::new(move |p, caller| {
            let session = weak.upgrade().ok_or_else(|| {
                rpc_error(HostError::new(
                    ErrorCode::RuntimeBusy,
                    "the host session has closed",
                ))
            })?;
            run(&session, p, caller).map_err(rpc_error)
        });
        table
            .add(&format!("{NAMESPACE}.{name}"), handler)
            .expect("the workflow methods are namespaced");
    }
    table
}

/// A host error as the door answers it: `-32000` with `data.code` the stable AppHost code.
fn rpc_error(e: HostError) -> RpcError {
    RpcError::new(codes::RUNTIME_ERROR, e.message.clone())
        .with_data(json!({"code": e.code.as_str(), "details": e.details}))
}

fn params<T: DeserializeOwned>(p: Option<Value>) -> HostResult<T> {
    serde_json::from_value(p.unwrap_or_else(|| json!({})))
        .map_err(|e| HostError::new(ErrorCode::ApiBadArguments, format!("invalid params: {e}")))
}

fn view_json(v: &RunView) -> HostResult<Value> {
    serde_json::to_value(v).map_err(|e| HostError::new(ErrorCode::WorkflowRunFailed, e.to_string()))
}

fn not_found(run: &str) -> HostError {
    HostError::new(
        ErrorCode::WorkflowRunNotFound,
        "no workflow run with this id",
    )
    .with("runId", run.chars().take(128).collect::<String>())
}

fn get(session: &Session, run: &str) -> HostResult<RunView> {
    if !any_runs(session) {
        return Err(not_found(run));
    }
    with_runs(session, |runs, _| {
        runs.get(run).map_err(workflow::host_error)
    })
}

/// Whether the driver is done with the run for now: it waits for a person or a timer, or ended.
fn settled(v: &RunView) -> bool {
    v.finished || !matches!(v.waiting, None | Some(Pending::Call(_)))
}

/// The run once [`settled`], or as it is after [`SETTLE_TIMEOUT`] or once the caller hung up
/// (the run goes on in the host; nobody waits for this answer).
fn settle(session: &Session, v: RunView, caller: &Caller) -> HostResult<RunView> {
    let until = Instant::now() + SETTLE_TIMEOUT;
    let mut v = v;
    while !settled(&v) && Instant::now() < until && !caller.hung_up() {
        std::thread::sleep(SETTLE_POLL);
        v = get(session, &v.run_id)?;
    }
    Ok(v)
}

fn start(session: &Session, p: Option<Value>, caller: &Caller) -> HostResult<Value> {
    let a: StartParams = params(p)?;
    let input = a.input.unwrap_or_else(|| json!({}));
    let v = with_runs(session, |runs, store| {
        let v = runs
            .start(store, &a.app, &a.workflow, input, a.idempotency_key, None)
            .map_err(workflow::host_error)?;
        host::follow(session, runs, &v);
        Ok(v)
    })?;
    host::audit(
        session,
        "workflow.start",
        &v.app,
        json!({"runId": v.run_id, "workflow": v.workflow, "by": "door"}),
    );
    host::changed(session, &v, "workflow.start");
    view_json(&settle(session, v, caller)?)
}

fn list(session: &Session, p: Option<Value>, _: &Caller) -> HostResult<Value> {
    let a: ListParams = params(p)?;
    if !any_runs(session) {
        return Ok(json!([]));
    }
    let all = with_runs(session, |runs, _| Ok(runs.list(a.app.as_deref())))?;
    serde_json::to_value(all)
        .map_err(|e| HostError::new(ErrorCode::WorkflowRunFailed, e.to_string()))
}

fn show(session: &Session, p: Option<Value>, _: &Caller) -> HostResult<Value> {
    let a: RunParams = params(p)?;
    view_json(&get(session, &a.run_id)?)
}

/// The host drives every unfinished run already: `resume` waits for it like `start`.
fn resume(session: &Session, p: Option<Value>, caller: &Caller) -> HostResult<Value> {
    let a: RunParams = params(p)?;
    let v = get(session, &a.run_id)?;
    view_json(&settle(session, v, caller)?)
}

fn cancel(session: &Session, p: Option<Value>, _: &Caller) -> HostResult<Value> {
    let a: RunParams = params(p)?;
    get(session, &a.run_id)?;
    let v = with_runs(session, |runs, _| {
        runs.cancel(&a.run_id).map_err(workflow::host_error)
    })?;
    host::audit(
        session,
        "workflow.cancel",
        &v.app,
        json!({"runId": v.run_id, "by": "door"}),
    );
    host::changed(session, &v, "workflow.cancel");
    view_json(&v)
}

fn respond(session: &Session, p: Option<Value>, caller: &Caller) -> HostResult<Value> {
    let a: RespondParams = params(p)?;
    if a.approve && a.reject {
        return Err(HostError::new(
            ErrorCode::ApiBadArguments,
            "approve and reject exclude each other",
        ));
    }
    let current = get(session, &a.run_id)?;
    let answer = answer_for(&current, a.approve, a.reject, a.input)?;
    let v = with_runs(session, |runs, _| {
        let v = runs
            .respond(&a.run_id, answer, AnswerSource::User)
            .map_err(workflow::host_error)?;
        host::follow(session, runs, &v);
        Ok(v)
    })?;
    host::audit(
        session,
        "workflow.respond",
        &v.app,
        json!({"runId": v.run_id, "approve": a.approve, "reject": a.reject, "by": "door"}),
    );
    host::changed(session, &v, "workflow.respond");
    view_json(&settle(session, v, caller)?)
}

/// The answer `apphost workflow respond` makes of its flags for what the run waits for (the
/// CLI driving the run itself and the door use the same rule).
pub fn answer_for(
    v: &RunView,
    approve: bool,
    reject: bool,
    data: Option<Value>,
) -> HostResult<Answer> {
    let need = |what: &str| {
        HostError::new(
            ErrorCode::WorkflowNotWaiting,
            format!("the run waits for {what}"),
        )
        .with("runId", &v.run_id)
    };
    match &v.waiting {
        Some(Pending::Review { .. }) if approve || reject => Ok(Answer::Review {
            approved: approve,
            data,
        }),
        Some(Pending::Review { .. }) => Err(need("a review: --approve or --reject")),
        Some(Pending::Input { .. }) => match data {
            Some(data) => Ok(Answer::Input { data }),
            None => Err(need("an input: --input JSON")),
        },
        Some(Pending::Decision { .. }) if approve || reject => {
            Ok(Answer::Decision { retry: approve })
        }
        Some(Pending::Decision { .. }) => {
            Err(need("a retry decision: --approve (retry) or --reject"))
        }
        Some(_) => Err(need("a timer or a step, not an answer")),
        None => Err(HostError::new(
            ErrorCode::WorkflowRunFinished,
            format!("run {} has ended", v.run_id),
        )),
    }
}
