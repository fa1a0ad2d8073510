//! `lime.agent`: the app's agent tasks (RuntimeCore). Argument schemas name the fields the host
//! reads; their finer rules (`sessionPolicy`, bindings) stay in `services/start_task_shape.rs`.

use super::*;

fn task_id() -> Value {
    bounded(1, 200)
}
fn after_sequence() -> Value {
    integer(0, None)
}

pub fn contract() -> NamespaceContract {
    let start = closed(
        &[
            (
                "input",
                described(any(), "A string or any JSON (≤ 256 KiB as text)."),
            ),
            ("idempotencyKey", bounded(1, 200)),
            ("expectedOutput", any_object()),
            (
                "sessionPolicy",
                json!({"anyOf": [{"type": "string"}, {"type": "object"}]}),
            ),
            ("options", any_object()),
            ("appId", string()),
            ("entry", string()),
            ("entryKey", string()),
            ("taskKind", bounded(1, 128)),
            ("context", any_object()),
            ("metadata", any_object()),
            (
                "businessObjectRef",
                json!({"anyOf": [{"type": "string"}, {"type": "object"}]}),
            ),
            ("capabilityHints", array(any())),
            ("knowledge", any()),
            ("tools", any()),
            ("files", any()),
            ("secrets", any()),
            (
                "budget",
                described(
                    closed(&[("maxTokens", integer(1, Some(1_000_000_000_000)))], &[]),
                    "The task's token budget per run; the app's budget still applies (the lower wins).",
                ),
            ),
        ],
        &["input"],
    );
    let task_only = closed(&[("taskId", task_id())], &["taskId"]);
    let since = closed(
        &[("taskId", task_id()), ("afterSequence", after_sequence())],
        &["taskId"],
    );
    let mut events_args = since.clone();
    events_args["properties"]["limit"] = limit();
    NamespaceContract {
        capability: "lime.agent",
        rows: vec![
            row(
                "startTask",
                "Start a task; answers at once, events follow as `host:event`s.",
                start,
                object(
                    &[
                        ("taskId", string()),
                        ("traceId", string()),
                        ("sessionId", string()),
                        ("created", boolean()),
                    ],
                    &["taskId", "traceId", "sessionId", "created"],
                ),
            ),
            row(
                "getTask",
                "A task's status, runs, pending actions and result.",
                task_only.clone(),
                object(
                    &[
                        ("taskId", string()),
                        ("traceId", string()),
                        ("sessionId", string()),
                        (
                            "status",
                            json!({"enum": ["queued", "running", "waiting_approval", "succeeded", "failed", "cancelled"]}),
                        ),
                        ("runs", array(any())),
                        ("pendingActions", array(any())),
                        ("result", any()),
                    ],
                    &["taskId", "status"],
                ),
            ),
            row(
                "listTasks",
                "The app's tasks, a page at a time.",
                nullable(closed(
                    &[("cursor", nullable(string())), ("limit", limit())],
                    &[],
                )),
                object(
                    &[("items", array(any())), ("nextCursor", nullable(string()))],
                    &["items"],
                ),
            ),
            row(
                "cancelTask",
                "Cancel a task.",
                task_only.clone(),
                any_object(),
            ),
            row(
                "retryTask",
                "Start a new run of an ended task.",
                task_only,
                any_object(),
            ),
            row(
                "respondAction",
                "The app's one answer to a pending action: reject.",
                closed(
                    &[
                        ("taskId", task_id()),
                        ("actionId", string()),
                        ("decision", json!({"enum": ["approve", "reject", "answer"]})),
                        ("remember", string()),
                        ("updatedInput", any_object()),
                    ],
                    &["taskId", "actionId", "decision"],
                ),
                object(&[("responded", boolean())], &["responded"]),
            ),
            row(
                "getTaskEvents",
                "A task's events after a sequence.",
                events_args,
                object(
                    &[
                        ("events", array(any())),
                        ("nextAfterSequence", nullable(integer(0, None))),
                    ],
                    &["events"],
                ),
            ),
            row(
                "watchTask",
                "Forward a task's events to this frame.",
                since,
                any_object(),
            ),
        ],
    }
}
