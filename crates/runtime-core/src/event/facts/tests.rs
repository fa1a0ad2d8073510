//! The constructors are the only way facts are built, and they write the wire strings the log
//! has always carried.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::*;
use crate::event::{EventBody, EventDraft, EventType, Scope};
use crate::ids::*;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Where a source builds an `EventDraft` itself instead of calling a constructor of `facts`.
fn draft_literals(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let code = l.split("//").next().unwrap_or("");
            code.contains("EventDraft::new(") || code.contains("EventDraft {")
        })
        .map(|(n, _)| n + 1)
        .collect()
}

#[test]
fn no_event_draft_is_built_outside_event() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let event_dir = src.join("event");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 20, "the scan must see the crate's sources");
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !f.starts_with(&event_dir)) {
        let text = std::fs::read_to_string(f).expect("readable source");
        for line in draft_literals(&text) {
            found.push(format!(
                "{}:{line}",
                f.strip_prefix(&src).unwrap().display()
            ));
        }
    }
    assert!(
        found.is_empty(),
        "build events with a constructor of event::facts, not EventDraft::new / a literal: {found:?}"
    );
}

#[test]
fn the_scan_sees_a_literal() {
    assert_eq!(
        draft_literals("let a = 1;\n    d.push(EventDraft::new(s, b));\n"),
        vec![2]
    );
    assert_eq!(
        draft_literals("if let Some(EventDraft { body, .. }) = x {}"),
        vec![1]
    );
    assert!(draft_literals("// EventDraft::new( in a comment\nfacts::turn_started(s)").is_empty());
}

fn turn_scope() -> Scope {
    Scope::turn(&ThreadId::new("th").unwrap(), &TurnId::new("tu").unwrap())
}

/// The `type` and `payload` of a draft, as the log writes them.
fn wire(d: &EventDraft) -> (String, Value) {
    let payload = match &d.body {
        EventBody::Other(_, m) => Value::Object(m.clone()),
        _ => {
            let ev = crate::event::Event {
                schema_version: crate::event::SCHEMA_VERSION.into(),
                runtime_id: RuntimeId::new("rt").unwrap(),
                session_id: SessionId::new("s").unwrap(),
                event_id: EventId::new("e").unwrap(),
                timestamp: "2026-01-01T00:00:00.000Z".into(),
                sequence: 1,
                scope: d.scope.clone(),
                body: d.body.clone(),
            };
            ev.to_json()["payload"].clone()
        }
    };
    assert!(d.body.is_consistent(), "{:?}", d.kind());
    (d.kind().as_str().to_owned(), payload)
}

#[test]
fn turn_lifecycle_facts_keep_their_wire_shape() {
    let s = turn_scope;
    let cases: Vec<(EventDraft, &str, Value)> = vec![
        (
            turn_started(s()),
            "turn.started",
            json!({"status": "running"}),
        ),
        (
            turn_completed(s(), 5, None),
            "turn.completed",
            json!({"status": "completed", "outcome": "assistant_message", "outputChars": 5}),
        ),
        (
            turn_completed(s(), 2, Some(json!({"a": 1}))),
            "turn.completed",
            json!({"status": "completed", "outcome": "structured_output", "outputChars": 2,
                   "structuredOutput": {"a": 1}}),
        ),
        (
            turn_failed(s(), TurnEnd::Cancelled, "cancelled", "m", false),
            "turn.failed",
            json!({"status": "cancelled", "code": "cancelled", "message": "m", "retryable": false}),
        ),
        (
            turn_cancelled_unstarted(s(), "cancelled while queued"),
            "turn.failed",
            json!({"status": "cancelled", "code": "cancelled", "message": "cancelled while queued",
                   "reason": "agentSession/turn/cancel"}),
        ),
        (
            task_created(s()),
            "task.created",
            json!({"status": "accepted", "title": "turn"}),
        ),
        (
            task_started(s()),
            "task.started",
            json!({"status": "running"}),
        ),
        (
            task_completed(s()),
            "task.completed",
            json!({"status": "completed"}),
        ),
        (
            task_ended(s(), TurnEnd::Failed, "c", "m"),
            "task.failed",
            json!({"status": "failed", "code": "c", "message": "m"}),
        ),
        (
            task_ended(s(), TurnEnd::Cancelled, "cancelled", "m"),
            "task.cancelled",
            json!({"status": "cancelled", "code": "cancelled", "message": "m"}),
        ),
        (
            task_cancel_requested(s()),
            "task.cancel_requested",
            json!({"status": "cancelling", "reason": "agentSession/turn/cancel"}),
        ),
        (
            task_retrying(s(), RunId::new("r1").unwrap(), 2, "rate_limited".into()),
            "task.retrying",
            json!({"status": "retrying", "reason": "rate_limited", "failedRunId": "r1",
                   "nextAttemptIndex": 2}),
        ),
        (
            attempt_started(s(), 1),
            "task.attempt.started",
            json!({"status": "running", "attemptIndex": 1}),
        ),
        (
            attempt_completed(s()),
            "task.attempt.completed",
            json!({"status": "completed"}),
        ),
        (
            attempt_failed(s(), false, "cancelled"),
            "task.attempt.failed",
            json!({"status": "failed", "retryable": false, "failureCategory": "cancelled"}),
        ),
        (
            attempt_failed_retrying(s(), "rate_limited"),
            "task.attempt.failed",
            json!({"status": "failed", "retryable": true, "failureCategory": "provider_error",
                   "message": "rate_limited", "nextAttemptPolicy": "automatic_retry"}),
        ),
        (
            routing_single_candidate(s(), "m1"),
            "routing.single_candidate",
            json!({"taskKind": "chat", "candidateCount": 1, "selectedModel": "m1",
                   "decisionSource": "settings", "capabilityGap": "none"}),
        ),
    ];
    check(cases);
}

#[test]
fn model_tool_and_action_facts_keep_their_wire_shape() {
    let s = turn_scope;
    let out = ToolOutputFacts {
        preview: "abc".into(),
        bytes: 10,
        lines: 2,
        output_ref: "output://s/c",
        spilled: true,
    };
    let cases: Vec<(EventDraft, &str, Value)> = vec![
        (
            model_requested(
                s(),
                ModelRequestFacts {
                    provider_name: "p",
                    model_name: "m",
                    message_count: 3,
                    tool_count: 0,
                    structured_output_attempt: None,
                },
            ),
            "model.requested",
            json!({"providerName": "p", "modelName": "m", "status": "started",
                   "messageCount": 3, "toolCount": 0}),
        ),
        (
            model_delta(s(), "t".into()),
            "model.delta",
            json!({"text": "t"}),
        ),
        (
            reasoning_delta(s(), "r".into()),
            "reasoning.delta",
            json!({"text": "r"}),
        ),
        (
            model_completed(
                s(),
                ModelCompletion {
                    finish_reason: "stop".into(),
                    output_chars: 4,
                    tool_call_count: 0,
                    input_tokens: 7,
                    output_tokens: 8,
                },
            ),
            "model.completed",
            json!({"status": "completed", "finishReason": "stop", "outputChars": 4,
                   "toolCallCount": 0, "inputTokens": 7, "outputTokens": 8}),
        ),
        (
            model_failed(s(), "c", "m", true, Some(429)),
            "model.failed",
            json!({"status": "failed", "code": "c", "message": "m", "retryable": true,
                   "httpStatus": 429}),
        ),
        (
            model_cancelled(s(), "cancelled", "m"),
            "model.failed",
            json!({"status": "cancelled", "code": "cancelled", "message": "m"}),
        ),
        (
            runtime_warning(s(), "structured_output_invalid", "p".into()),
            "runtime.warning",
            json!({"code": "structured_output_invalid", "message": "p"}),
        ),
        (
            tool_started(s(), "t", Some(Risk::High)),
            "tool.started",
            json!({"toolName": "t", "status": "started", "risk": "high"}),
        ),
        (
            tool_started(s(), "t", None),
            "tool.started",
            json!({"toolName": "t", "status": "started"}),
        ),
        (
            tool_args(s(), json!({"x": 1})),
            "tool.args",
            json!({"arguments": {"x": 1}}),
        ),
        (
            tool_args_updated(s(), json!({})),
            "tool.args",
            json!({"arguments": {}, "source": "updated_input"}),
        ),
        (
            permission_evaluated(s(), "t", PermissionResult::Allow, Risk::High, true),
            "permission.evaluated",
            json!({"toolName": "t", "result": "allow", "risk": "high",
                   "owner": "runtime_tool_policy", "mode": "ask_for_risky",
                   "decisionSource": "session_grant"}),
        ),
        (
            tool_failed(s(), "c", "m"),
            "tool.failed",
            json!({"status": "failed", "code": "c", "message": "m"}),
        ),
        (
            tool_result(s(), &out),
            "tool.result",
            json!({"status": "completed", "outputPreview": "abc", "outputBytes": 10,
                   "outputLines": 2, "outputRef": "output://s/c", "truncated": true}),
        ),
        (
            output_spilled(s(), &out, 8, 1, 3),
            "output.spilled",
            json!({"outputRef": "output://s/c", "bytes": 10, "lines": 2, "budgetBytes": 8,
                   "budgetLines": 1, "previewBytes": 3}),
        ),
        (
            artifact_created(s(), "a://x".into(), "file".into(), "T".into(), 9),
            "artifact.changed",
            json!({"artifactRef": "a://x", "kind": "file", "title": "T", "bytes": 9,
                   "status": "created"}),
        ),
        (
            tool_confirmation_required(s(), "t", json!({})),
            "action.required",
            json!({"actionType": "tool_confirmation", "toolName": "t",
                   "decisionKind": "allow_or_deny", "prompt": "Allow t to run?",
                   "arguments": {},
                   "availableDecisions": ["allow_once", "allow_for_session", "decline", "cancel"],
                   "status": "pending"}),
        ),
        (
            action_answered(s(), Decision::AllowForSession, "t".into()),
            "action.resolved",
            json!({"decision": "allow_for_session", "confirmed": true, "status": "resolved",
                   "source": "agentSession/action/respond", "toolName": "t", "scope": "session"}),
        ),
        (
            action_answered(s(), Decision::Decline, "t".into()),
            "action.resolved",
            json!({"decision": "decline", "confirmed": false, "status": "resolved",
                   "source": "agentSession/action/respond", "toolName": "t", "scope": "call"}),
        ),
        (
            action_answered_with_input(s(), "t".into()),
            "action.resolved",
            json!({"decision": "allow_once", "confirmed": true, "status": "resolved",
                   "source": "agentSession/action/respond", "toolName": "t", "scope": "call",
                   "updatedInput": true}),
        ),
        (
            action_closed_by_runtime(s(), ActionStatus::Cancelled),
            "action.resolved",
            json!({"decision": "cancel", "confirmed": false, "status": "cancelled",
                   "source": "runtime"}),
        ),
        (
            action_closed_by_runtime(s(), ActionStatus::Expired),
            "action.resolved",
            json!({"decision": "cancel", "confirmed": false, "status": "expired",
                   "source": "runtime_recovery"}),
        ),
    ];
    check(cases);
}

#[test]
fn session_queue_and_recovery_facts_keep_their_wire_shape() {
    let s = turn_scope;
    let turn = TurnId::new("tu").unwrap();
    let cases: Vec<(EventDraft, &str, Value)> = vec![
        (
            session_created("app.x", Some("w".into()), None),
            "session.created",
            json!({"appId": "app.x", "status": "idle", "workspaceId": "w"}),
        ),
        (
            thread_started(Scope::thread(&ThreadId::new("th").unwrap())),
            "thread.started",
            json!({"status": "idle"}),
        ),
        (
            turn_submitted(
                s(),
                &turn,
                SubmitStatus::Queued,
                5,
                false,
                &Default::default(),
            ),
            "turn.submitted",
            json!({"inputRef": "input://tu/user", "source": "agentSession/turn/start",
                   "status": "queued", "inputChars": 5, "structuredOutput": false}),
        ),
        (
            queue_changed(s(), QueueChange::Added, &turn, 1),
            "queue.changed",
            json!({"change": "added", "queuedTurnId": "tu", "queueLength": 1}),
        ),
        (
            queue_restored(s(), Some(&turn), 2),
            "queue.changed",
            json!({"change": "restored", "queuedTurnId": "tu", "queueLength": 2,
                   "status": "paused", "reason": "awaiting_resume"}),
        ),
        (
            queue_resumed(s(), &turn, 0),
            "queue.changed",
            json!({"change": "resumed", "queuedTurnId": "tu", "queueLength": 0,
                   "reason": "agentSession/thread/resume"}),
        ),
        (
            snapshot_repaired(s(), &turn),
            "snapshot.repaired",
            json!({"source": "runtime_recovery", "reason": "interrupted_by_restart",
                   "status": "repaired", "repairedTurnIds": ["tu"]}),
        ),
        (
            tool_interrupted(s()),
            "tool.failed",
            json!({"status": "failed", "code": "interrupted_by_restart",
                   "message": "the runtime stopped while the tool ran"}),
        ),
        (
            attempt_interrupted(s()),
            "task.attempt.failed",
            json!({"status": "failed", "retryable": true,
                   "failureCategory": "interrupted_by_restart"}),
        ),
        (
            task_interrupted(s()),
            "task.failed",
            json!({"status": "failed", "code": "interrupted_by_restart"}),
        ),
        (
            turn_interrupted(s()),
            "turn.failed",
            json!({"status": "failed", "code": "interrupted_by_restart",
                   "message": "the runtime stopped before the turn finished", "retryable": true,
                   "reason": "runtime_recovery"}),
        ),
        (
            queued_input_unavailable(s()),
            "turn.failed",
            json!({"status": "failed", "code": "input_unavailable",
                   "message": "the queued turn's input was not recorded",
                   "reason": "runtime_recovery"}),
        ),
        (
            evidence_exported(s(), "evidence://s/e".into()),
            "evidence.changed",
            json!({"packRef": "evidence://s/e"}),
        ),
    ];
    check(cases);
}

fn check(cases: Vec<(EventDraft, &str, Value)>) {
    for (d, kind, payload) in cases {
        let (k, p) = wire(&d);
        assert_eq!(k, kind);
        assert_eq!(p, payload, "{kind}");
    }
}

#[test]
fn an_event_converts_back_to_its_draft() {
    let d = turn_started(turn_scope());
    let ev = crate::event::Event {
        schema_version: crate::event::SCHEMA_VERSION.into(),
        runtime_id: RuntimeId::new("rt").unwrap(),
        session_id: SessionId::new("s").unwrap(),
        event_id: EventId::new("e").unwrap(),
        timestamp: "2026-01-01T00:00:00.000Z".into(),
        sequence: 1,
        scope: d.scope.clone(),
        body: d.body.clone(),
    };
    assert_eq!(EventDraft::from(ev), d);
    assert_eq!(d.kind(), EventType::TurnStarted);
}
