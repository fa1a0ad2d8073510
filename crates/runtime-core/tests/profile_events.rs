//! Contract tests against the Lime profile event schema and fixtures
//! (`../shared/standards/agentruntime`).

mod support_schema;

use runtime_core::event::*;
use runtime_core::ids::*;
use serde_json::{json, Value};
use support_schema::*;

const EVENT_FIXTURES: &[&str] = &[
    "submit-turn-event.json",
    "tool-approval-action-required-event.json",
    "task-retry-attempt-failed-event.json",
    "routing-single-candidate-event.json",
    "evidence-export-event.json",
];

fn fixture(name: &str) -> Value {
    let p = standards_dir().join("fixtures").join(name);
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn the_schema_enum_is_exactly_our_event_types() {
    let p = standards_dir().join("schemas/agentruntime-lime-profile-event.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let names: Vec<&str> = schema["allOf"][1]["properties"]["type"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let ours: Vec<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
    assert_eq!(names, ours);
}

#[test]
fn profile_fixtures_validate_deserialize_and_round_trip() {
    let v = profile_event_validator();
    for name in EVENT_FIXTURES {
        let raw = fixture(name);
        assert_profile_valid(&v, &raw);
        let ev: Event =
            serde_json::from_value(raw.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            !matches!(ev.body, EventBody::Other(..)),
            "{name} decodes to a typed payload"
        );
        assert_eq!(ev.to_json(), raw, "{name} round-trips");
    }
}

#[test]
fn typed_fixture_payloads_carry_the_fields() {
    let ev: Event =
        serde_json::from_value(fixture("tool-approval-action-required-event.json")).unwrap();
    match &ev.body {
        EventBody::ActionRequired(_, p) => {
            assert_eq!(p.tool_name.as_deref(), Some("write_file"));
            assert_eq!(p.scope, Some(json!({"path": "README.md"})));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        ev.scope.action_id.as_ref().unwrap().as_str(),
        "action_write_001"
    );
    let ev: Event =
        serde_json::from_value(fixture("task-retry-attempt-failed-event.json")).unwrap();
    match &ev.body {
        EventBody::TaskAttempt(EventType::TaskAttemptFailed, p) => {
            assert_eq!(p.retryable, Some(true));
            assert_eq!(p.failure_category.as_deref(), Some("tool_failed"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn decoder_rejects_what_the_profile_rejects() {
    let v = profile_event_validator();
    let good = fixture("tool-approval-action-required-event.json");
    let mut cases: Vec<(&str, Value)> = Vec::new();
    let mut missing_action = good.clone();
    missing_action.as_object_mut().unwrap().remove("actionId");
    cases.push(("missing actionId", missing_action));
    let mut string_payload = good.clone();
    string_payload["payload"] = json!("text");
    cases.push(("string payload", string_payload));
    let mut bad_type = good.clone();
    bad_type["type"] = json!("turn.canceled");
    cases.push(("type outside the enum", bad_type));
    let mut bad_version = good.clone();
    bad_version["schemaVersion"] = json!("0.1");
    cases.push(("schemaVersion", bad_version));
    let mut bad_time = good.clone();
    bad_time["timestamp"] = json!("yesterday");
    cases.push(("timestamp", bad_time));
    let mut neg_seq = good.clone();
    neg_seq["sequence"] = json!(-1);
    cases.push(("negative sequence", neg_seq));
    let mut tool_ids_in_payload = fixture("submit-turn-event.json");
    tool_ids_in_payload["type"] = json!("tool.started");
    tool_ids_in_payload["payload"]["toolCallId"] = json!("call_1");
    cases.push(("tool ids only in payload", tool_ids_in_payload));
    for (what, case) in cases {
        assert!(
            !schema_errors(&v, &case).is_empty(),
            "schema accepts {what}"
        );
        assert!(
            serde_json::from_value::<Event>(case).is_err(),
            "decoder accepts {what}"
        );
    }
}

/// One draft per typed body RuntimeCore emits, stamped as the log stamps them.
fn one_of_each() -> Vec<Event> {
    let thread = ThreadId::new("thread_1").unwrap();
    let turn = TurnId::new("turn_1").unwrap();
    let t = Scope::turn(&thread, &turn);
    let tool = Scope {
        step_id: Some(StepId::new("step_1").unwrap()),
        tool_call_id: Some(ToolCallId::new("call_1").unwrap()),
        ..t.clone()
    };
    let task = Scope {
        task_id: Some(TaskId::new("task_1").unwrap()),
        run_id: Some(RunId::new("run_1").unwrap()),
        ..t.clone()
    };
    let drafts = vec![
        (
            Scope::default(),
            EventBody::Session(
                EventType::SessionCreated,
                SessionPayload {
                    app_id: Some("demo".into()),
                    ..Default::default()
                },
            ),
        ),
        (
            Scope::default(),
            EventBody::Session(
                EventType::SessionUpdated,
                SessionPayload {
                    title: Some("Renamed".into()),
                    archived: Some(true),
                    ..Default::default()
                },
            ),
        ),
        (
            Scope::thread(&thread),
            EventBody::Thread(
                EventType::ThreadStarted,
                ThreadPayload {
                    status: Some("idle".into()),
                    ..Default::default()
                },
            ),
        ),
        (
            t.clone(),
            EventBody::TurnSubmitted(
                EventType::TurnSubmitted,
                TurnSubmitted {
                    status: Some("accepted".into()),
                    ..Default::default()
                },
            ),
        ),
        (
            t.clone(),
            EventBody::TurnStarted(EventType::TurnStarted, Default::default()),
        ),
        (
            task.clone(),
            EventBody::Task(EventType::TaskCreated, Default::default()),
        ),
        (
            task.clone(),
            EventBody::TaskAttempt(EventType::TaskAttemptStarted, Default::default()),
        ),
        (
            t.clone(),
            EventBody::ModelRequested(EventType::ModelRequested, Default::default()),
        ),
        (
            t.clone(),
            EventBody::Delta(
                EventType::ModelDelta,
                TextDelta {
                    text: Some("hi".into()),
                    ..Default::default()
                },
            ),
        ),
        (
            tool.clone(),
            EventBody::ToolStarted(EventType::ToolStarted, Default::default()),
        ),
        (
            tool.clone(),
            EventBody::ToolArgs(
                EventType::ToolArgs,
                ToolArgs {
                    arguments: Some(json!({"a": 1})),
                    ..Default::default()
                },
            ),
        ),
        (
            tool.clone(),
            EventBody::OutputSpilled(EventType::OutputSpilled, Default::default()),
        ),
        (
            tool.clone(),
            EventBody::ToolResult(EventType::ToolResult, Default::default()),
        ),
        (
            Scope {
                action_id: Some(ActionId::new("action_1").unwrap()),
                ..t.clone()
            },
            EventBody::ActionRequired(EventType::ActionRequired, Default::default()),
        ),
        (
            t.clone(),
            EventBody::ModelCompleted(EventType::ModelCompleted, Default::default()),
        ),
        (
            t.clone(),
            EventBody::TurnCompleted(EventType::TurnCompleted, Default::default()),
        ),
        (
            Scope {
                evidence_id: Some(EvidenceId::new("evidence_1").unwrap()),
                ..t.clone()
            },
            EventBody::Evidence(EventType::EvidenceChanged, Default::default()),
        ),
    ];
    drafts
        .into_iter()
        .enumerate()
        .map(|(i, (scope, body))| Event {
            schema_version: SCHEMA_VERSION.into(),
            runtime_id: RuntimeId::new("runtime_test").unwrap(),
            session_id: SessionId::new("sess_1").unwrap(),
            event_id: EventId::random(),
            timestamp: format_timestamp(jiff::Timestamp::UNIX_EPOCH),
            sequence: i as u64 + 1,
            scope,
            body,
        })
        .collect()
}

#[test]
fn typed_events_validate_and_round_trip() {
    let v = profile_event_validator();
    for ev in one_of_each() {
        assert!(ev.body.is_consistent());
        let json = ev.to_json();
        assert_profile_valid(&v, &json);
        let back: Event = serde_json::from_value(json).unwrap();
        assert_eq!(back, ev);
    }
}

/// Found by the `event_decode` fuzz target: a timestamp whose byte 19 falls inside a multi-byte
/// character panicked (`s[19..]`) instead of being refused.
#[test]
fn a_timestamp_with_multibyte_characters_is_refused_not_a_panic() {
    for ts in [
        "2026-01-01T0\u{fffd}\u{fffd}\u{fffd}",
        "2026-01-01T00:00:0\u{e9}+01:00",
        "2026-01-01T00:00:00\u{fffd}",
    ] {
        let text = json!({
            "schemaVersion": "lime-profile-0.4.0", "runtimeId": "runtime_1",
            "sessionId": "sess_0", "eventId": "evt_2", "timestamp": ts,
            "sequence": 1, "type": "job.created", "payload": {}
        })
        .to_string();
        assert!(decode_event(&text).is_err(), "{ts} was accepted");
    }
}
