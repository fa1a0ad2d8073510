//! The sans-IO turn machine, driven by hand: no runtime, no clock, no network, no files.
//! Every event it yields is stamped and checked against the Lime profile schema and the
//! ordering rules.

mod support_schema;

use runtime_core::backend::*;
use runtime_core::event::*;
use runtime_core::ids::*;
use runtime_core::log::OrderingState;
use runtime_core::turn::*;
use serde_json::{json, Value};

struct Harness {
    m: TurnMachine,
    events: Vec<EventDraft>,
    ordering: OrderingState,
    validator: jsonschema::Validator,
}

fn spec(schema: Option<Value>) -> TurnSpec {
    TurnSpec {
        thread_id: ThreadId::new("thread_1").unwrap(),
        turn_id: TurnId::new("turn_1").unwrap(),
        trace_id: Some(TraceId::new("trace_turn_1").unwrap()),
        request_id: None,
        system_prompt: None,
        history: vec![],
        input: "hello".into(),
        output_schema: schema,
        tools: runtime_core::tools::HostTools::specs(),
        backend: BackendInfo {
            provider_name: "p".into(),
            model_name: "m".into(),
        },
        limits: TurnLimits::default(),
        session_allowed_tools: vec![],
    }
}

impl Harness {
    fn new(schema: Option<Value>) -> Self {
        let mut ordering = OrderingState::default();
        // turn.submitted is recorded by the runtime before the machine starts.
        let sub = EventDraft::new(
            Scope::turn(
                &ThreadId::new("thread_1").unwrap(),
                &TurnId::new("turn_1").unwrap(),
            ),
            EventBody::TurnSubmitted(EventType::TurnSubmitted, Default::default()),
        );
        ordering.admit(&sub).unwrap();
        Harness {
            m: TurnMachine::new(spec(schema)),
            events: vec![sub],
            ordering,
            validator: support_schema::profile_event_validator(),
        }
    }

    fn feed(&mut self, input: Input) -> Vec<Effect> {
        let step = self.m.handle(input);
        for d in step.events {
            self.ordering
                .admit(&d)
                .unwrap_or_else(|v| panic!("{v} at {:?}", d.kind()));
            let e = Event {
                schema_version: SCHEMA_VERSION.into(),
                runtime_id: RuntimeId::new("runtime_test").unwrap(),
                session_id: SessionId::new("sess_1").unwrap(),
                event_id: EventId::random(),
                timestamp: "2026-01-01T00:00:00.000Z".into(),
                sequence: self.events.len() as u64 + 1,
                scope: d.scope.clone(),
                body: d.body.clone(),
            };
            support_schema::assert_profile_valid(&self.validator, &e.to_json());
            self.events.push(d);
        }
        step.effects
    }

    /// The turn's terminal fact: `snapshot.updated` (the standard's order) and the thread's
    /// `thread.updated` back to idle follow it.
    fn terminal(&self) -> Option<&EventDraft> {
        let [.., terminal, snapshot, thread] = self.events.as_slice() else {
            return None;
        };
        (snapshot.kind().as_str() == "snapshot.updated"
            && thread.kind().as_str() == "thread.updated")
            .then_some(terminal)
    }

    fn terminal_kind(&self) -> Option<&'static str> {
        self.terminal().map(|e| e.kind().as_str())
    }

    fn kinds(&self) -> Vec<&'static str> {
        self.events.iter().map(|e| e.kind().as_str()).collect()
    }

    fn call_model(&mut self, input: Input) -> (EffectId, ModelRequest) {
        let fx = self.feed(input);
        match fx.as_slice() {
            [Effect::CallModel { id, request }] => (*id, request.clone()),
            other => panic!("expected one model call, got {other:?}"),
        }
    }

    fn text(&mut self, id: EffectId, text: &str) -> Vec<Effect> {
        self.feed(Input::Model(id, BackendEvent::TextDelta(text.into())));
        self.feed(Input::Model(
            id,
            BackendEvent::Finished {
                reason: "stop".into(),
            },
        ))
    }

    fn tool_call(&mut self, id: EffectId, name: &str, args: &str) -> Vec<Effect> {
        self.feed(Input::Model(
            id,
            BackendEvent::ToolCallDelta {
                index: 0,
                id: Some("prov_1".into()),
                name: Some(name.into()),
                arguments_delta: args.into(),
            },
        ));
        self.feed(Input::Model(
            id,
            BackendEvent::Finished {
                reason: "tool_calls".into(),
            },
        ))
    }

    fn last_failed_code(&self) -> Option<String> {
        match &self.terminal()?.body {
            EventBody::TurnFailed(_, f) => f.code.clone(),
            _ => None,
        }
    }
}

#[test]
fn a_text_answer_completes_the_turn() {
    let mut h = Harness::new(None);
    let (id, req) = h.call_model(Input::Start);
    assert_eq!(
        req.messages.last(),
        Some(&ChatMessage::User {
            content: "hello".into()
        })
    );
    assert!(h.text(id, "hi there").is_empty());
    assert!(h.m.is_finished());
    assert_eq!(
        h.kinds(),
        [
            "turn.submitted",
            "turn.started",
            "thread.updated",
            "task.created",
            "task.started",
            "routing.single_candidate",
            "task.attempt.started",
            "run.status",
            "model.requested",
            "model.delta",
            "model.completed",
            "cost.recorded",
            "task.attempt.completed",
            "run.status",
            "task.completed",
            "turn.completed",
            "snapshot.updated",
            "thread.updated"
        ]
    );
    // Inputs after the end change nothing.
    assert_eq!(h.m.handle(Input::Cancel), Step::default());
}

#[test]
fn a_safe_tool_round_runs_the_tool_and_asks_the_model_again() {
    let mut h = Harness::new(None);
    let (id, _) = h.call_model(Input::Start);
    let fx = h.tool_call(id, "storage_list", "{}");
    let (tid, call) = match fx.as_slice() {
        [Effect::RunTool {
            id,
            tool_call_id,
            name,
            ..
        }] if name == "storage_list" => (*id, tool_call_id.clone()),
        other => panic!("{other:?}"),
    };
    // A stale response (wrong effect id) is ignored.
    assert!(h
        .feed(Input::ToolDone(
            tid.next(),
            ToolOutcome::Err {
                code: "x".into(),
                message: "x".into()
            }
        ))
        .is_empty());
    let (id2, req) = h.call_model(Input::ToolDone(
        tid,
        ToolOutcome::Ok {
            output: "a.txt\t5\n".into(),
            output_ref: "output://s/c".into(),
            artifacts: vec![],
        },
    ));
    assert!(
        matches!(req.messages.last(), Some(ChatMessage::Tool { tool_call_id, content }) if tool_call_id == "prov_1" && content == "a.txt\t5\n")
    );
    h.text(id2, "done");
    assert!(h.m.is_finished());
    let ks = h.kinds();
    let started = ks.iter().position(|k| *k == "tool.started").unwrap();
    assert_eq!(
        &ks[started..started + 4],
        [
            "tool.started",
            "tool.args",
            "permission.evaluated",
            "tool.result"
        ]
    );
    assert!(h
        .events
        .iter()
        .any(|e| e.scope.tool_call_id.as_ref() == Some(&call)));
}

#[test]
fn a_risky_tool_waits_for_an_explicit_decision() {
    let mut h = Harness::new(None);
    let (id, _) = h.call_model(Input::Start);
    let fx = h.tool_call(id, "storage_write", r#"{"path":"a.txt","content":"x"}"#);
    assert!(fx.is_empty(), "no tool runs before the decision: {fx:?}");
    let action = h.events.last().unwrap().scope.action_id.clone().unwrap();
    assert_eq!(h.kinds().last(), Some(&"action.required"));
    // A decision for another action resolves nothing.
    assert!(h
        .feed(Input::Action {
            action_id: ActionId::new("action_other").unwrap(),
            decision: Decision::AllowOnce
        })
        .is_empty());
    let (_, req) = h.call_model(Input::Action {
        action_id: action,
        decision: Decision::Decline,
    });
    assert!(
        matches!(req.messages.last(), Some(ChatMessage::Tool { content, .. }) if content.contains("permission_denied"))
    );
    let ks = h.kinds();
    let n = ks.len();
    assert_eq!(
        &ks[n - 3..],
        ["action.resolved", "tool.failed", "model.requested"]
    );
}

#[test]
fn approval_runs_the_tool() {
    let mut h = Harness::new(None);
    let (id, _) = h.call_model(Input::Start);
    h.tool_call(id, "storage_write", r#"{"path":"a.txt","content":"x"}"#);
    let action = h.events.last().unwrap().scope.action_id.clone().unwrap();
    let fx = h.feed(Input::Action {
        action_id: action,
        decision: Decision::AllowOnce,
    });
    assert!(matches!(fx.as_slice(), [Effect::RunTool { name, .. }] if name == "storage_write"));
}

/// The `permission.evaluated` of the latest tool call.
fn last_permission(h: &Harness) -> PermissionEvaluated {
    h.events
        .iter()
        .rev()
        .find_map(|e| match &e.body {
            EventBody::Permission(EventType::PermissionEvaluated, p) => Some(p.clone()),
            _ => None,
        })
        .unwrap()
}

fn write_then_finish(h: &mut Harness, model: EffectId) -> Vec<Effect> {
    h.tool_call(model, "storage_write", r#"{"path":"a.txt","content":"x"}"#)
}

fn tool_ok() -> ToolOutcome {
    ToolOutcome::Ok {
        output: "ok".into(),
        output_ref: "output://s/c".into(),
        artifacts: vec![],
    }
}

#[test]
fn allow_for_session_is_remembered_for_later_calls_and_allow_once_is_not() {
    for (decision, asks_again) in [
        (Decision::AllowForSession, false),
        (Decision::AllowOnce, true),
    ] {
        let mut h = Harness::new(None);
        let (id, _) = h.call_model(Input::Start);
        write_then_finish(&mut h, id);
        let action = h.events.last().unwrap().scope.action_id.clone().unwrap();
        let fx = h.feed(Input::Action {
            action_id: action,
            decision,
        });
        let [Effect::RunTool { id: tool, .. }] = fx.as_slice() else {
            panic!("{fx:?}")
        };
        let EventBody::ActionResolved(_, r) = &h
            .events
            .iter()
            .rev()
            .find(|e| e.kind() == EventType::ActionResolved)
            .unwrap()
            .body
        else {
            unreachable!()
        };
        assert_eq!(r.tool_name.as_deref(), Some("storage_write"));
        assert_eq!(
            r.scope.as_deref(),
            Some(if asks_again { "call" } else { "session" })
        );
        let (id, _) = h.call_model(Input::ToolDone(*tool, tool_ok()));
        let fx = write_then_finish(&mut h, id);
        if asks_again {
            assert!(fx.is_empty(), "{fx:?}");
            assert_eq!(h.kinds().last(), Some(&"action.required"));
            assert_eq!(last_permission(&h).result.as_deref(), Some("ask"));
        } else {
            assert!(
                matches!(fx.as_slice(), [Effect::RunTool { name, .. }] if name == "storage_write"),
                "{fx:?}"
            );
            assert_eq!(
                h.kinds()
                    .iter()
                    .filter(|k| **k == "action.required")
                    .count(),
                1
            );
            let p = last_permission(&h);
            assert_eq!(p.result.as_deref(), Some("allow"));
            assert_eq!(p.decision_source.as_deref(), Some("session_grant"));
        }
    }
}

#[test]
fn a_tool_the_session_allowed_runs_without_asking() {
    let mut s = spec(None);
    s.session_allowed_tools = vec!["storage_write".into()];
    let mut h = Harness::new(None);
    h.m = TurnMachine::new(s);
    let (id, _) = h.call_model(Input::Start);
    let fx = write_then_finish(&mut h, id);
    assert!(
        matches!(fx.as_slice(), [Effect::RunTool { name, .. }] if name == "storage_write"),
        "{fx:?}"
    );
    assert!(!h.kinds().contains(&"action.required"));
    // A grant for another tool does not cover this one.
    let mut s = spec(None);
    s.session_allowed_tools = vec!["artifact_write".into()];
    let mut h = Harness::new(None);
    h.m = TurnMachine::new(s);
    let (id, _) = h.call_model(Input::Start);
    assert!(write_then_finish(&mut h, id).is_empty());
    assert_eq!(h.kinds().last(), Some(&"action.required"));
}

#[test]
fn bad_tool_calls_fail_the_call_not_the_turn() {
    let mut h = Harness::new(None);
    let (id, _) = h.call_model(Input::Start);
    let fx = h.tool_call(id, "no_such_tool", "{}");
    assert!(matches!(fx.as_slice(), [Effect::CallModel { .. }]));
    let (id, _) = match fx.as_slice() {
        [Effect::CallModel { id, request }] => (*id, request.clone()),
        _ => unreachable!(),
    };
    let fx = h.tool_call(id, "storage_read", r#"{"path": 5}"#);
    assert!(matches!(fx.as_slice(), [Effect::CallModel { .. }]));
    let codes: Vec<_> = h
        .events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Failure(EventType::ToolFailed, f) => f.code.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(codes, ["unknown_tool", "invalid_arguments"]);
}

#[test]
fn structured_output_retries_once_then_succeeds() {
    let schema =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    let mut h = Harness::new(Some(schema.clone()));
    let (id, req) = h.call_model(Input::Start);
    assert_eq!(req.response_format, Some(schema));
    let (id2, req2) = match h.text(id, r#"{"n": "not a number"}"#).as_slice() {
        [Effect::CallModel { id, request }] => (*id, request.clone()),
        other => panic!("{other:?}"),
    };
    assert!(
        matches!(req2.messages.last(), Some(ChatMessage::User { content }) if content.contains("not valid"))
    );
    h.text(id2, r#"{"n": 3}"#);
    match &h.terminal().unwrap().body {
        EventBody::TurnCompleted(_, c) => assert_eq!(c.structured_output, Some(json!({"n": 3}))),
        other => panic!("{other:?}"),
    }
}

#[test]
fn structured_output_gives_up_after_bounded_retries_and_never_takes_prose() {
    let schema = json!({"type": "object"});
    let mut h = Harness::new(Some(schema));
    let (mut id, _) = h.call_model(Input::Start);
    for _ in 0..=TurnLimits::default().max_structured_output_retries {
        // Prose around valid JSON is still prose.
        match h.text(id, "Sure! Here it is: {\"a\": 1}").as_slice() {
            [Effect::CallModel { id: next, .. }] => id = *next,
            [] => break,
            other => panic!("{other:?}"),
        }
    }
    assert!(h.m.is_finished());
    assert_eq!(h.last_failed_code().as_deref(), Some(ERROR_MAX_STRUCTURED));
}

#[test]
fn a_retryable_failure_starts_a_new_run() {
    let mut h = Harness::new(None);
    let (id, _) = h.call_model(Input::Start);
    h.feed(Input::Model(id, BackendEvent::TextDelta("partial".into())));
    let err = BackendError {
        code: "provider_unavailable".into(),
        message: "503".into(),
        status: Some(503),
        retryable: true,
    };
    let (id2, req) = h.call_model(Input::Model(id, BackendEvent::Failed(err.clone())));
    assert_eq!(
        req.messages.len(),
        1,
        "the new run starts from the turn's input"
    );
    let runs: Vec<_> = h
        .events
        .iter()
        .filter(|e| e.kind() == EventType::TaskAttemptStarted)
        .map(|e| e.scope.run_id.clone().unwrap())
        .collect();
    assert_eq!(runs.len(), 2);
    assert_ne!(runs[0], runs[1]);
    // The second failure is final (max_attempts = 2).
    assert!(h
        .feed(Input::Model(id2, BackendEvent::Failed(err)))
        .is_empty());
    assert_eq!(
        h.last_failed_code().as_deref(),
        Some("provider_unavailable")
    );
    let ks = h.kinds();
    assert!(ks.contains(&"task.retrying"));
}

#[test]
fn a_dropped_stream_fails_the_turn() {
    let mut h = Harness::new(None);
    let (id, _) = h.call_model(Input::Start);
    h.feed(Input::ModelStreamEnded(id));
    assert_eq!(
        h.last_failed_code().as_deref(),
        Some("provider_stream_dropped")
    );
}

#[test]
fn cancel_records_intent_aborts_the_stream_and_ends_the_turn() {
    let mut h = Harness::new(None);
    let (id, _) = h.call_model(Input::Start);
    let fx = h.feed(Input::Cancel);
    assert_eq!(fx, vec![Effect::Abort { id }]);
    let ks = h.kinds();
    let i = ks
        .iter()
        .position(|k| *k == "task.cancel_requested")
        .unwrap();
    assert_eq!(
        &ks[i..],
        [
            "task.cancel_requested",
            "model.failed",
            "task.attempt.failed",
            "run.status",
            "task.cancelled",
            "turn.failed",
            "snapshot.updated",
            "thread.updated"
        ]
    );
    match &h.terminal().unwrap().body {
        EventBody::TurnFailed(_, f) => assert_eq!(f.status.as_deref(), Some("cancelled")),
        other => panic!("{other:?}"),
    }
    // A late delta from the aborted stream is dropped.
    assert!(h
        .m
        .handle(Input::Model(id, BackendEvent::TextDelta("late".into())))
        .events
        .is_empty());
}

#[test]
fn cancel_while_waiting_for_an_action_resolves_it_first() {
    let mut h = Harness::new(None);
    let (id, _) = h.call_model(Input::Start);
    h.tool_call(id, "storage_write", r#"{"path":"a.txt","content":"x"}"#);
    h.feed(Input::Cancel);
    assert!(h.m.is_finished());
}

#[test]
fn large_output_is_spilled_and_the_model_sees_the_budget() {
    let mut h = Harness::new(None);
    let (id, _) = h.call_model(Input::Start);
    let fx = h.tool_call(id, "storage_read", r#"{"path":"big.txt"}"#);
    let tid = match fx.as_slice() {
        [Effect::RunTool { id, .. }] => *id,
        other => panic!("{other:?}"),
    };
    let big: String = (0..5000).map(|i| format!("line {i}\n")).collect();
    let (_, req) = h.call_model(Input::ToolDone(
        tid,
        ToolOutcome::Ok {
            output: big.clone(),
            output_ref: "output://s/c".into(),
            artifacts: vec![],
        },
    ));
    let ChatMessage::Tool { content, .. } = req.messages.last().unwrap() else {
        panic!()
    };
    assert!(content.lines().count() <= 401 && content.len() <= 16 * 1024 + 200);
    assert!(content.contains("output://s/c"));
    let spilled = h
        .events
        .iter()
        .find(|e| e.kind() == EventType::OutputSpilled)
        .expect("output.spilled");
    match &spilled.body {
        EventBody::OutputSpilled(_, o) => {
            assert_eq!(o.bytes, Some(big.len() as u64));
            assert_eq!(o.output_ref.as_deref(), Some("output://s/c"));
        }
        _ => unreachable!(),
    }
}

#[test]
fn the_checkpoint_is_plain_data_and_resumes() {
    let mut h = Harness::new(None);
    let (id, _) = h.call_model(Input::Start);
    h.feed(Input::Model(id, BackendEvent::TextDelta("par".into())));
    let json = serde_json::to_string(h.m.checkpoint()).unwrap();
    let cp: TurnCheckpoint = serde_json::from_str(&json).unwrap();
    let mut resumed = TurnMachine::resume(cp);
    let a =
        h.m.handle(Input::Model(id, BackendEvent::TextDelta("tial".into())));
    let b = resumed.handle(Input::Model(id, BackendEvent::TextDelta("tial".into())));
    assert_eq!(a, b);
    assert_eq!(h.m.checkpoint(), resumed.checkpoint());
}

#[test]
fn the_model_request_limit_ends_the_turn() {
    let mut h = Harness::new(None);
    let (mut id, _) = h.call_model(Input::Start);
    for _ in 0..20 {
        match h.tool_call(id, "no_such_tool", "{}").as_slice() {
            [Effect::CallModel { id: next, .. }] => id = *next,
            [] => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(h.last_failed_code().as_deref(), Some("error_max_turns"));
}

fn usage(h: &mut Harness, id: EffectId, input_tokens: u64, output_tokens: u64) {
    h.feed(Input::Model(
        id,
        BackendEvent::Usage {
            input_tokens,
            output_tokens,
        },
    ));
}

fn budgeted(max_tokens: Option<u64>) -> Harness {
    let mut h = Harness::new(None);
    let mut s = h.m.checkpoint().spec.clone();
    s.limits.max_tokens = max_tokens;
    h.m = TurnMachine::new(s);
    h
}

fn cost_facts(h: &Harness) -> Vec<Limit> {
    h.events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Limit(EventType::CostRecorded, l) => Some(l.clone()),
            _ => None,
        })
        .collect()
}

/// Every model call records its usage (`cost.recorded`), with the turn's running total.
#[test]
fn each_model_call_records_its_usage() {
    let mut h = budgeted(None);
    let (id, _) = h.call_model(Input::Start);
    usage(&mut h, id, 10, 2);
    let fx = h.tool_call(id, "no_such_tool", "{}");
    let [Effect::CallModel { id: id2, .. }] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    usage(&mut h, *id2, 20, 3);
    h.text(*id2, "done");
    assert!(h.m.is_finished());
    let facts = cost_facts(&h);
    assert_eq!(facts.len(), 2);
    assert_eq!(
        (
            facts[0].input_tokens,
            facts[0].output_tokens,
            facts[0].used_tokens
        ),
        (Some(10), Some(2), Some(12))
    );
    assert_eq!(
        (
            facts[1].input_tokens,
            facts[1].output_tokens,
            facts[1].used_tokens
        ),
        (Some(20), Some(3), Some(35))
    );
    assert_eq!(facts[1].status.as_deref(), Some("unbudgeted"));
    assert_eq!(h.terminal_kind(), Some("turn.completed"));
}

/// A call that takes the turn past its token budget ends it with `error_max_budget`; the
/// tool calls that response asked for never run.
#[test]
fn a_turn_over_its_token_budget_ends_with_error_max_budget() {
    let mut h = budgeted(Some(30));
    let (id, _) = h.call_model(Input::Start);
    usage(&mut h, id, 10, 2);
    let fx = h.tool_call(id, "no_such_tool", "{}");
    let [Effect::CallModel { id: id2, .. }] = fx.as_slice() else {
        panic!("within budget the turn goes on: {fx:?}")
    };
    usage(&mut h, *id2, 20, 3);
    let fx = h.tool_call(*id2, "read_file", r#"{"path":"a"}"#);
    assert!(
        fx.is_empty(),
        "no tool runs after the budget is passed: {fx:?}"
    );
    assert!(h.m.is_finished());
    assert_eq!(h.last_failed_code().as_deref(), Some("error_max_budget"));
    let facts = cost_facts(&h);
    assert_eq!(facts[0].status.as_deref(), Some("within_budget"));
    assert_eq!(facts[1].status.as_deref(), Some("over_budget"));
    assert_eq!(
        (facts[1].used_tokens, facts[1].max_tokens),
        (Some(35), Some(30))
    );
    // Only the first response's (unknown) tool call started; the over-budget one never did.
    assert_eq!(
        h.kinds().iter().filter(|k| **k == "tool.started").count(),
        1
    );
    // The budget holds across a resume from the checkpoint.
    let cp = h.m.checkpoint().clone();
    assert_eq!(cp.tokens_used, 35);
    assert_eq!(
        TurnMachine::resume(cp).handle(Input::Cancel),
        Step::default()
    );
}

/// Exactly at the budget is within it; a usage-less provider never trips it.
#[test]
fn a_turn_exactly_at_its_budget_completes() {
    let mut h = budgeted(Some(12));
    let (id, _) = h.call_model(Input::Start);
    usage(&mut h, id, 10, 2);
    h.text(id, "ok");
    assert_eq!(h.terminal_kind(), Some("turn.completed"));
    let mut h = budgeted(Some(0));
    let (id, _) = h.call_model(Input::Start);
    h.text(id, "ok");
    assert_eq!(h.terminal_kind(), Some("turn.completed"));
}

/// The clippy.toml rule (no clock, no file system) applies to every part of the turn machine:
/// each file of `turn/machine/` turns it on.
#[test]
fn every_turn_machine_module_denies_clock_and_file_system_calls() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/turn/machine");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        seen += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        let attr = text
            .lines()
            .find(|l| !l.starts_with("//!") && !l.trim().is_empty());
        assert_eq!(
            attr,
            Some("#![deny(clippy::disallowed_methods)]"),
            "{} must start with the deny attribute (after its doc comment)",
            path.display()
        );
    }
    assert!(
        seen >= 5,
        "the turn machine's modules are under {}",
        dir.display()
    );
}
