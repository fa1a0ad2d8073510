//! `lime.workflow`: the app's own workflow runs (`run` is the run view of docs/bridge-protocol.md).

use super::*;

fn run_id() -> Value {
    bounded(1, 200)
}
fn run() -> Value {
    described(
        any_object(),
        "The run view: {runId, workflow, status, waiting, …}.",
    )
}

pub fn contract() -> NamespaceContract {
    let by_id = closed(&[("runId", run_id())], &["runId"]);
    let one_run = object(&[("run", run())], &["run"]);
    NamespaceContract {
        capability: "lime.workflow",
        rows: vec![
            row(
                "start",
                "Start a declared workflow (host `{workflow}` or the standard's `{key}`).",
                json!({"anyOf": [
                    closed(&[("workflow", string()), ("input", any()), ("idempotencyKey", bounded(1, 200))], &["workflow"]),
                    closed(&[("key", string()), ("input", any()), ("idempotencyKey", bounded(1, 200))], &["key"]),
                ]}),
                object(&[("runId", string()), ("run", run())], &["runId", "run"]),
            ),
            row(
                "get",
                "One of the app's runs.",
                by_id.clone(),
                one_run.clone(),
            ),
            row(
                "list",
                "The app's runs, newest first.",
                nullable(closed(&[("status", string())], &[])),
                object(&[("runs", array(run()))], &["runs"]),
            ),
            row("cancel", "Cancel a run.", by_id, one_run.clone()),
            row(
                "respond",
                "Answer a run's `user-input` state.",
                closed(
                    &[("runId", run_id()), ("input", any())],
                    &["runId", "input"],
                ),
                one_run,
            ),
            row(
                "watch",
                "Forward a run's events to this frame.",
                closed(
                    &[("runId", run_id()), ("afterSequence", integer(0, None))],
                    &["runId"],
                ),
                object(
                    &[("watching", boolean()), ("runId", string())],
                    &["watching", "runId"],
                ),
            ),
        ],
    }
}
