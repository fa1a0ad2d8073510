//! `apphost workflow start|list|show|cancel|respond`: durable workflow runs
//! (`host_core::hosting::workflow`). While the window or `apphost serve` runs, the command is
//! handed to it over its App Server door (`workflow_door.rs`: its driver moves the run, the
//! output is the same); a door that answers but refuses is `runtime.busy`, saying why (that
//! host owns the agent runtime: steps driven here would fail). Otherwise this
//! process owns the runs while the command runs (the runs' `runtime.lock`): `start` and `respond`
//! drive the run until it waits for a person or a timer, or ends, then exit; the run stays
//! durable and the next command replays it; `resume` drives it again (a due timer, a step a
//! stopped process left unfinished).

use clap::Subcommand;
use serde_json::{json, Value};

use super::output;
use super::workflow_door::{self as handoff, Handoff};
use host_core::api::door_workflow::answer_for;
use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::capability::services::Services;
use host_core::hosting::workflow::{self, executor::HostSteps, host_error};
use host_core::install::store::Store;
use runtime_core::workflow::machine::{Pending, RunStatus};
use runtime_core::workflow::runs::{RunView, WorkflowRuns};

#[derive(Debug, Subcommand)]
pub enum WorkflowCommand {
    /// Start a workflow the app declares and drive it until it waits or ends.
    Start {
        app: String,
        workflow: String,
        /// The run's input, as JSON.
        #[arg(long, value_name = "JSON")]
        input: Option<String>,
        /// A second start with the same key returns the first run.
        #[arg(long, value_name = "KEY")]
        idempotency_key: Option<String>,
    },
    /// List runs (of one app).
    List { app: Option<String> },
    /// Show one run: its status, what it waits for, its outputs.
    Show { run_id: String },
    /// Cancel a run that has not ended.
    Cancel { run_id: String },
    /// Drive a run again: a step a stopped process left without its result is made again with
    /// the same idempotency key; a timer that came due fires. Then it waits or ends as `start`.
    Resume { run_id: String },
    /// Answer what a run waits for, as the user: a review (--approve / --reject, --input: the
    /// reviewer's data), an input (--input), or a retry decision (--approve: retry, --reject:
    /// fail); then drive the run on.
    Respond {
        run_id: String,
        #[arg(long, conflicts_with = "reject")]
        approve: bool,
        #[arg(long)]
        reject: bool,
        #[arg(long, value_name = "JSON")]
        input: Option<String>,
    },
}

pub fn run(dir: &DataDir, cmd: WorkflowCommand, json: bool) -> HostResult<i32> {
    // A running host (the window, `apphost serve`) owns the runs: hand the command to it.
    // A host that answers at the door but refuses the command owns the agent runtime: driving
    // here would fail its agent steps, so the CLI says why instead.
    match handoff::call(dir, door_command(&cmd), door_params(&cmd)?)? {
        Handoff::Done(answer) => return print_answer(&cmd, answer, json),
        Handoff::NoHost => {}
        Handoff::Failed(why) => return Err(door_refused(&why)),
    }
    let runs = workflow::open_runs(dir).map_err(busy_or_error)?;
    let view = match cmd {
        WorkflowCommand::Start {
            app,
            workflow: wf,
            input,
            idempotency_key,
        } => {
            let input = parse_input(input.as_deref())?.unwrap_or(json!({}));
            let store = Store::open(dir)?;
            let v = workflow::start(&store, &runs, &app, &wf, input, idempotency_key)
                .map_err(host_error)?;
            drive(dir, &store, &runs, &v.run_id)?
        }
        WorkflowCommand::List { app } => {
            print_list(&runs.list(app.as_deref()), json);
            return Ok(0);
        }
        WorkflowCommand::Show { run_id } => runs.show(&run_id).map_err(host_error)?,
        WorkflowCommand::Cancel { run_id } => runs.cancel(&run_id).map_err(host_error)?,
        WorkflowCommand::Resume { run_id } => {
            runs.show(&run_id).map_err(host_error)?;
            let store = Store::open(dir)?;
            drive(dir, &store, &runs, &run_id)?
        }
        WorkflowCommand::Respond {
            run_id,
            approve,
            reject,
            input,
        } => {
            let data = parse_input(input.as_deref())?;
            let current = runs.show(&run_id).map_err(host_error)?;
            let answer = answer_for(&current, approve, reject, data)?;
            workflow::respond(&runs, &run_id, answer).map_err(host_error)?;
            let store = Store::open(dir)?;
            drive(dir, &store, &runs, &run_id)?
        }
    };
    print_view(&view, json);
    Ok(0)
}

/// The host method a command is handed over as (`apphost/workflow.<name>`).
fn door_command(cmd: &WorkflowCommand) -> &'static str {
    match cmd {
        WorkflowCommand::Start { .. } => "start",
        WorkflowCommand::List { .. } => "list",
        WorkflowCommand::Show { .. } => "show",
        WorkflowCommand::Cancel { .. } => "cancel",
        WorkflowCommand::Resume { .. } => "resume",
        WorkflowCommand::Respond { .. } => "respond",
    }
}

/// The command's params for the host (its `--input` checked here first, as when driving).
fn door_params(cmd: &WorkflowCommand) -> HostResult<Value> {
    Ok(match cmd {
        WorkflowCommand::Start {
            app,
            workflow: wf,
            input,
            idempotency_key,
        } => {
            let input = parse_input(input.as_deref())?.unwrap_or(json!({}));
            json!({"app": app, "workflow": wf, "input": input, "idempotencyKey": idempotency_key})
        }
        WorkflowCommand::List { app } => json!({ "app": app }),
        WorkflowCommand::Show { run_id }
        | WorkflowCommand::Cancel { run_id }
        | WorkflowCommand::Resume { run_id } => json!({ "runId": run_id }),
        WorkflowCommand::Respond {
            run_id,
            approve,
            reject,
            input,
        } => {
            let input = parse_input(input.as_deref())?;
            json!({"runId": run_id, "approve": approve, "reject": reject, "input": input})
        }
    })
}

/// Prints the host's answer exactly as the command prints what it drove itself.
fn print_answer(cmd: &WorkflowCommand, answer: Value, json: bool) -> HostResult<i32> {
    let garbled = |e: serde_json::Error| {
        HostError::new(
            ErrorCode::Internal,
            format!("the running AppHost answered something this CLI cannot read: {e}"),
        )
    };
    if let WorkflowCommand::List { .. } = cmd {
        let all: Vec<RunView> = serde_json::from_value(answer).map_err(garbled)?;
        print_list(&all, json);
    } else {
        let view: RunView = serde_json::from_value(answer).map_err(garbled)?;
        print_view(&view, json);
    }
    Ok(0)
}

fn print_list(all: &[RunView], json: bool) {
    if json {
        output::print_json(&all);
    } else if all.is_empty() {
        out_line!("no workflow runs");
    } else {
        for v in all {
            out_line!(
                "{:<38} {:<16} {:<24} {}",
                v.run_id,
                v.app,
                v.workflow,
                status(v)
            );
        }
    }
}

fn print_view(view: &RunView, json: bool) {
    if json {
        output::print_json(view);
    } else {
        describe(view);
    }
}

/// Another process drives the runs: the window or `apphost serve` (its Tasks page answers and
/// cancels them), or another `apphost workflow` command.
fn busy_or_error(e: runtime_core::workflow::runs::RunError) -> HostError {
    if e.code != runtime_core::workflow::runs::code::RUNTIME_BUSY {
        return host_error(e);
    }
    HostError::new(
        ErrorCode::RuntimeBusy,
        "AppHost is running: use its Tasks page (the running AppHost drives this data directory's workflow runs)",
    )
    .with("cause", e.code)
    .with("detail", e.message)
}

/// A running host answered at the door but did not take the command (`why`: a wrong token,
/// a closed connection).
fn door_refused(why: &str) -> HostError {
    HostError::new(
        ErrorCode::RuntimeBusy,
        format!("AppHost is running, but its App Server door did not take this command ({why}): use its Tasks page"),
    )
    .with("door", why)
}

fn drive(dir: &DataDir, store: &Store, runs: &WorkflowRuns, run_id: &str) -> HostResult<RunView> {
    let profile = HostProfile::current();
    let mut services = Services::new(dir.apps_data());
    let steps = HostSteps::new(store, &profile, &mut services);
    runs.drive(run_id, &steps).map_err(host_error)
}

fn parse_input(text: Option<&str>) -> HostResult<Option<Value>> {
    text.map(|t| {
        serde_json::from_str(t).map_err(|e| {
            HostError::new(
                ErrorCode::WorkflowInvalidInput,
                format!("--input is not JSON: {e}"),
            )
        })
    })
    .transpose()
}

fn status(v: &RunView) -> String {
    match (&v.state.status, &v.waiting) {
        (RunStatus::Running(_), Some(p)) => match p {
            Pending::Call(c) => format!("running {}", c.state),
            Pending::Review { state, .. } => format!("waiting for review ({state})"),
            Pending::Input { state, .. } => format!("waiting for input ({state})"),
            Pending::Decision { state, code, .. } => {
                format!("waiting for a retry decision ({state}: {code})")
            }
            Pending::Timer { state, .. } | Pending::Backoff { state, .. } => format!(
                "waiting until {} ({state})",
                v.due_at.as_deref().unwrap_or("?")
            ),
        },
        (RunStatus::Succeeded { .. }, _) => "succeeded".into(),
        (RunStatus::Failed { code, .. }, _) => format!("failed: {code}"),
        (RunStatus::Cancelled { .. }, _) => "cancelled".into(),
        (RunStatus::Running(_), None) => "running".into(),
    }
}

fn describe(v: &RunView) {
    out_line!(
        "run {} of {} {}: {}",
        v.run_id,
        v.app,
        v.workflow,
        status(v)
    );
    match &v.waiting {
        Some(Pending::Review { prompt, show, .. }) => {
            out_line!("  {prompt}");
            out_line!("  {show}");
            out_line!(
                "  answer: apphost workflow respond {} --approve | --reject",
                v.run_id
            );
        }
        Some(Pending::Input { prompt, .. }) => {
            out_line!("  {prompt}");
            out_line!(
                "  answer: apphost workflow respond {} --input JSON",
                v.run_id
            );
        }
        Some(Pending::Decision { message, .. }) => {
            out_line!("  {message}");
            out_line!(
                "  answer: apphost workflow respond {} --approve (try the step again) | --reject (fail the run)",
                v.run_id
            );
        }
        _ => {}
    }
    match &v.state.status {
        RunStatus::Succeeded { result } => out_line!("  result: {result}"),
        RunStatus::Failed { message, .. } => out_line!("  {message}"),
        _ => {}
    }
}
