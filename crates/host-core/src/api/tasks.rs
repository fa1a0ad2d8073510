//! The host UI's task activity (`docs/host-api.md`, "Agent tasks"): every app's `lime.agent`
//! tasks, read and acted on as the host's user. The tasks are the bridge's own
//! ([`crate::hosting::bridge::host::BridgeHost::agent_tasks`]: one runtime per session); this module only
//! decodes arguments, maps errors to host codes, audits the actions and tells the UI
//! (`tasks:changed`). The app id comes from the arguments (the host UI is trusted), but a task
//! of another app is `task.not_found`, exactly like a missing one.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{answer, args, Command, Session};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use runtime_core::agent_task::{AgentTaskError, AgentTasks, Responder, Response};
use runtime_core::ids::AppId;

/// The outbox event kind telling the UI a task changed (`{appId, taskId, reason}`).
pub const TASKS_CHANGED: &str = "tasks:changed";
/// Most tasks `list_tasks` answers (and the default).
pub const MAX_LIST: usize = runtime_core::agent_task::MAX_LIST;
/// Default and largest number of events one `task_detail` answer carries.
pub const DEFAULT_EVENTS: usize = 500;
pub const MAX_EVENTS: usize = runtime_core::agent_task::MAX_EVENTS_PAGE;
/// Longest task or action id looked up (longer ones cannot exist: `task.not_found`).
pub const MAX_ID_BYTES: usize = 128;
/// The task statuses `list_tasks` filters on.
pub const STATUSES: &[&str] = &[
    "submitting",
    "queued",
    "running",
    "waiting_approval",
    "succeeded",
    "failed",
    "cancelled",
];

macro_rules! commands {
    ($($name:literal => $f:ident,)*) => {
        pub const COMMANDS: &[Command] = &[$(Command { name: $name, run: $f },)*];
    };
}

commands! {
    "list_tasks" => list_tasks,
    "task_detail" => task_detail,
    "task_cancel" => task_cancel,
    "task_retry" => task_retry,
    "task_respond" => task_respond,
}

/// The bridge's tasks (opening its runtime on first use).
fn tasks(session: &Session) -> HostResult<AgentTasks> {
    session
        .with_bridge(|host, store| host.agent_tasks(store))?
        .map_err(|m| HostError::new(ErrorCode::TaskRuntimeFailed, m))
}

fn app_id(command: &str, app: &str) -> HostResult<AppId> {
    AppId::new(app).map_err(|_| {
        HostError::new(
            ErrorCode::ApiBadArguments,
            format!("{command}: appId is not an app id"),
        )
        .with("command", command)
        .with("reason", "appId")
    })
}

fn task_err(e: AgentTaskError, app: &str, task: &str) -> HostError {
    let shown = |s: &str| s.chars().take(MAX_ID_BYTES).collect::<String>();
    match e {
        AgentTaskError::NotFound => {
            HostError::new(ErrorCode::TaskNotFound, "no task with this id in this app")
                .with("appId", shown(app))
                .with("taskId", shown(task))
        }
        AgentTaskError::NeedsSetup => HostError::new(
            ErrorCode::ModelNotConfigured,
            "no model is set up: set one on the Model page",
        ),
        AgentTaskError::Invalid(m) => HostError::new(ErrorCode::ApiBadArguments, m),
        AgentTaskError::Busy => HostError::new(
            ErrorCode::TaskBusy,
            "the task's latest run has not ended: cancel it or wait for its result",
        ),
        // A retry while another task's turn runs in the same (resumed) session.
        AgentTaskError::SessionBusy => HostError::new(
            ErrorCode::TaskBusy,
            "another task's turn in this task's session has not ended: wait for it or cancel it",
        )
        .with("reason", "session_busy"),
        AgentTaskError::ActionNotFound(a) => HostError::new(
            ErrorCode::TaskActionNotFound,
            "no pending approval with this id in this task",
        )
        .with("actionId", shown(&a)),
        // Never for the host's user (Responder::User); kept total.
        AgentTaskError::UserOnly(why) => {
            HostError::new(ErrorCode::ApiBadArguments, why.code()).with("reason", why.code())
        }
        AgentTaskError::Storage(m) => HostError::new(ErrorCode::TaskRuntimeFailed, m),
        // Only a new task can reach a cap; the host's commands never create one.
        e @ AgentTaskError::Limit { .. } => {
            HostError::new(ErrorCode::TaskRuntimeFailed, e.to_string()).with("reason", "task_limit")
        }
    }
}

/// The task id, or `task.not_found` for one that cannot exist.
fn checked_task<'a>(app: &str, task: &'a str) -> HostResult<&'a str> {
    if task.is_empty() || task.len() > MAX_ID_BYTES {
        return Err(task_err(AgentTaskError::NotFound, app, task));
    }
    Ok(task)
}

/// Whether any app ever had a task: the task store exists (the agent runtime keeps it in
/// `<data>/runtime/`, beside `apps/`). Without it every task is `task.not_found` and listing is
/// empty, and nothing is created: a refused command leaves the data directory as it was.
fn any_tasks(session: &Session) -> bool {
    session.data.db_path().is_file()
        && session
            .data
            .root()
            .join("runtime")
            .join("agent-tasks.sqlite")
            .is_file()
}

/// Audits a host action on a task (durably, like the center's grants) and tells the UI. The
/// action is done by then (the runtime is not host.db): a failed audit is logged, not answered.
fn acted(session: &Session, action: &str, app: &str, details: Value) {
    let audited = session
        .with_bridge(|_, store| store.record_audit_durably(action, Some(app), None, &details));
    if let Err(e) | Ok(Err(e)) = audited {
        tracing::warn!(action, app, error = %e.message, "cannot audit a host action on a task");
    }
    let mut payload = details;
    payload["appId"] = json!(app);
    payload["reason"] = json!(action);
    session.outbox.push(TASKS_CHANGED, payload);
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "ListTasksArgs")]
pub(crate) struct ListArgs {
    app_id: Option<String>,
    status: Option<String>,
    limit: Option<u64>,
}

fn list_tasks(session: &Session, raw: Value) -> HostResult<Value> {
    let a: ListArgs = args("list_tasks", raw)?;
    let app = a
        .app_id
        .as_deref()
        .map(|s| app_id("list_tasks", s))
        .transpose()?;
    if let Some(s) = &a.status {
        if !STATUSES.contains(&s.as_str()) {
            return Err(HostError::new(
                ErrorCode::ApiBadArguments,
                format!("list_tasks: status must be one of {}", STATUSES.join(", ")),
            )
            .with("command", "list_tasks")
            .with("reason", "status"));
        }
    }
    let limit = a.limit.unwrap_or(MAX_LIST as u64).clamp(1, MAX_LIST as u64) as usize;
    if !any_tasks(session) {
        return answer(json!([]));
    }
    let tasks = tasks(session)?;
    // A status filter looks at the newest MAX_LIST tasks.
    let fetch = if a.status.is_some() { MAX_LIST } else { limit };
    let mut items = tasks
        .recent(app.as_ref(), fetch)
        .map_err(|e| task_err(e, "", ""))?;
    if let Some(s) = &a.status {
        items.retain(|t| t["status"] == s.as_str());
    }
    items.truncate(limit);
    for t in &mut items {
        let n = t["pendingActions"].as_array().map_or(0, Vec::len);
        t["pendingApprovals"] = json!(n);
    }
    answer(items)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "TaskDetailArgs")]
pub(crate) struct DetailArgs {
    app_id: String,
    task_id: String,
    after_sequence: Option<u64>,
    limit: Option<u64>,
}

fn task_detail(session: &Session, raw: Value) -> HostResult<Value> {
    let a: DetailArgs = args("task_detail", raw)?;
    let app = app_id("task_detail", &a.app_id)?;
    let id = checked_task(&a.app_id, &a.task_id)?;
    if !any_tasks(session) {
        return Err(task_err(AgentTaskError::NotFound, &a.app_id, id));
    }
    let tasks = tasks(session)?;
    let err = |e| task_err(e, &a.app_id, id);
    let mut task = tasks.get(&app, id).map_err(err)?;
    let input = tasks.input(&app, id).map_err(err)?;
    let after = a.after_sequence.unwrap_or(0);
    let limit = a
        .limit
        .unwrap_or(DEFAULT_EVENTS as u64)
        .clamp(1, MAX_EVENTS as u64) as usize;
    let (events, next) = tasks.events(&app, id, after, limit).map_err(err)?;
    task["appId"] = json!(a.app_id);
    task["input"] = json!(input);
    answer(json!({
        "task": task,
        "events": events,
        "nextAfterSequence": next,
    }))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "TaskArgs")]
pub(crate) struct TaskArgs {
    app_id: String,
    task_id: String,
}

fn task_cancel(session: &Session, raw: Value) -> HostResult<Value> {
    let a: TaskArgs = args("task_cancel", raw)?;
    let app = app_id("task_cancel", &a.app_id)?;
    let id = checked_task(&a.app_id, &a.task_id)?;
    if !any_tasks(session) {
        return Err(task_err(AgentTaskError::NotFound, &a.app_id, id));
    }
    let tasks = tasks(session)?;
    let view = tasks
        .cancel(&app, id)
        .map_err(|e| task_err(e, &a.app_id, id))?;
    acted(session, "task.cancel", &a.app_id, json!({"taskId": id}));
    answer(view)
}

fn task_retry(session: &Session, raw: Value) -> HostResult<Value> {
    let a: TaskArgs = args("task_retry", raw)?;
    let app = app_id("task_retry", &a.app_id)?;
    let id = checked_task(&a.app_id, &a.task_id)?;
    if !any_tasks(session) {
        return Err(task_err(AgentTaskError::NotFound, &a.app_id, id));
    }
    let tasks = tasks(session)?;
    let view = tasks
        .retry(&app, id)
        .map_err(|e| task_err(e, &a.app_id, id))?;
    let run = view["runs"].as_array().map_or(0, Vec::len);
    acted(
        session,
        "task.retry",
        &a.app_id,
        json!({"taskId": id, "run": run}),
    );
    answer(view)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "TaskRespondArgs")]
pub(crate) struct RespondArgs {
    app_id: String,
    task_id: String,
    action_id: String,
    decision: String,
    updated_input: Option<Value>,
    remember: Option<String>,
}

fn task_respond(session: &Session, raw: Value) -> HostResult<Value> {
    let a: RespondArgs = args("task_respond", raw)?;
    let app = app_id("task_respond", &a.app_id)?;
    let id = checked_task(&a.app_id, &a.task_id)?;
    let bad = |reason: &str| {
        HostError::new(
            ErrorCode::ApiBadArguments,
            format!("task_respond: {reason}"),
        )
        .with("command", "task_respond")
        .with("reason", reason.to_owned())
    };
    let updated = match a.updated_input {
        None | Some(Value::Null) => None,
        Some(v @ Value::Object(_))
            if v.to_string().len() <= runtime_core::agent_task::MAX_INPUT_BYTES =>
        {
            Some(v)
        }
        Some(_) => {
            return Err(bad(
                "updatedInput must be a JSON object (the tool's input) of at most 256 KiB",
            ))
        }
    };
    let for_session = match a.remember.as_deref() {
        None | Some("call") => false,
        Some("session") => true,
        Some(_) => return Err(bad("remember must be \"call\" or \"session\"")),
    };
    let response = match (a.decision.as_str(), updated) {
        (_, Some(_)) if for_session => {
            return Err(bad("remember \"session\" takes no updatedInput"))
        }
        ("approve" | "answer", Some(input)) => Response::Answer(input),
        ("approve", None) if for_session => Response::ApproveForSession,
        ("approve", None) => Response::Approve,
        ("reject", None) if for_session => {
            return Err(bad("remember \"session\" is for approve only"))
        }
        ("reject", None) => Response::Reject,
        ("answer", None) => return Err(bad("decision \"answer\" needs updatedInput")),
        ("reject", Some(_)) => return Err(bad("reject takes no updatedInput")),
        _ => {
            return Err(bad(
                "decision must be \"approve\", \"reject\" or \"answer\"",
            ))
        }
    };
    if a.action_id.is_empty() || a.action_id.len() > MAX_ID_BYTES {
        return Err(task_err(
            AgentTaskError::ActionNotFound(a.action_id.clone()),
            &a.app_id,
            id,
        ));
    }
    if !any_tasks(session) {
        return Err(task_err(AgentTaskError::NotFound, &a.app_id, id));
    }
    let tasks = tasks(session)?;
    tasks
        .respond(&app, id, &a.action_id, response, Responder::User)
        .map_err(|e| task_err(e, &a.app_id, id))?;
    acted(
        session,
        "task.respond",
        &a.app_id,
        json!({"taskId": id, "actionId": a.action_id, "decision": a.decision,
               "remember": if for_session { "session" } else { "call" }, "by": "host-user"}),
    );
    answer(json!({"responded": true}))
}

/// The `tasks:changed` payload an asynchronous task event for a frame implies: one for the
/// events that change a task's status or approvals (never per streamed delta, so a long answer
/// does not flood the outbox; the open task also follows the `outgoing` events themselves).
pub fn changed_by(o: &crate::hosting::bridge::host::Outgoing) -> Option<Value> {
    let crate::hosting::bridge::host::Outgoing::Post { message, .. } = o else {
        return None;
    };
    let e = message.get("payload")?.get("event")?;
    let kind = e.get("type")?.as_str()?;
    let sub = e.get("subtype").and_then(Value::as_str);
    let status_change = matches!(kind, "task:queued" | "approval:requested" | "result")
        || (kind == "task:progress" && matches!(sub, Some("started" | "approval_resolved")));
    status_change
        .then(|| json!({"appId": e.get("appId"), "taskId": e.get("taskId"), "reason": kind}))
}
