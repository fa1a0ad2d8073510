//! The event log's bytes do not change when the code that builds the facts does: the turn
//! machine is driven through every path that records a fact (answers, tools, approvals,
//! retries, structured output, cancels, limits) and each event, stamped with fixed envelope
//! values, must equal the line recorded in `golden/turn_machine_facts.jsonl` (written from the
//! code before the facts were typed). `APPHOST_BLESS=1` rewrites the file after an intended
//! change.

use runtime_core::backend::*;
use runtime_core::event::*;
use runtime_core::ids::*;
use runtime_core::turn::*;
use serde_json::{json, Value};

const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/golden/turn_machine_facts.jsonl"
);

fn tools() -> Vec<ToolSpec> {
    let obj =
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
    vec![
        ToolSpec {
            name: "read".into(),
            description: "reads".into(),
            parameters: obj.clone(),
            risky: false,
        },
        ToolSpec {
            name: "write".into(),
            description: "writes".into(),
            parameters: obj,
            risky: true,
        },
    ]
}

fn spec(name: &str, schema: Option<Value>, limits: TurnLimits) -> TurnSpec {
    TurnSpec {
        thread_id: ThreadId::new("thread_1").unwrap(),
        turn_id: TurnId::new(format!("turn_{name}")).unwrap(),
        trace_id: Some(TraceId::new("trace_1").unwrap()),
        request_id: None,
        system_prompt: Some("be brief".into()),
        history: vec![],
        input: "hello".into(),
        output_schema: schema,
        tools: tools(),
        backend: BackendInfo {
            provider_name: "prov".into(),
            model_name: "mod".into(),
        },
        limits,
        session_allowed_tools: vec![],
    }
}

struct Run {
    m: TurnMachine,
    lines: Vec<String>,
    scenario: &'static str,
}

impl Run {
    fn new(
        scenario: &'static str,
        schema: Option<Value>,
        limits: TurnLimits,
        lines: Vec<String>,
    ) -> Run {
        Run {
            m: TurnMachine::new(spec(scenario, schema, limits)),
            lines,
            scenario,
        }
    }

    fn feed(&mut self, input: Input) -> Vec<Effect> {
        let step = self.m.handle(input);
        for d in step.events {
            let e = Event {
                schema_version: SCHEMA_VERSION.into(),
                runtime_id: RuntimeId::new("runtime_1").unwrap(),
                session_id: SessionId::new("sess_1").unwrap(),
                event_id: EventId::new("evt_1").unwrap(),
                timestamp: "2026-01-01T00:00:00.000Z".into(),
                sequence: self.lines.len() as u64 + 1,
                scope: d.scope,
                body: d.body,
            };
            self.lines
                .push(format!("{} {}", self.scenario, e.to_json_string()));
        }
        step.effects
    }

    fn model(&self) -> EffectId {
        match &self.m.checkpoint().phase {
            Phase::Model(id) => *id,
            other => panic!("{}: not streaming: {other:?}", self.scenario),
        }
    }

    fn text(&mut self, text: &str) -> Vec<Effect> {
        let id = self.model();
        self.feed(Input::Model(id, BackendEvent::ReasoningDelta("hm".into())));
        self.feed(Input::Model(id, BackendEvent::TextDelta(text.into())));
        self.feed(Input::Model(
            id,
            BackendEvent::Usage {
                input_tokens: 11,
                output_tokens: 7,
            },
        ));
        self.feed(Input::Model(
            id,
            BackendEvent::Finished {
                reason: "stop".into(),
            },
        ))
    }

    fn calls(&mut self, calls: &[(&str, &str)]) -> Vec<Effect> {
        let id = self.model();
        for (i, (name, args)) in calls.iter().enumerate() {
            self.feed(Input::Model(
                id,
                BackendEvent::ToolCallDelta {
                    index: i as u32,
                    id: Some(format!("prov_{i}")),
                    name: Some((*name).into()),
                    arguments_delta: (*args).into(),
                },
            ));
        }
        self.feed(Input::Model(
            id,
            BackendEvent::Finished {
                reason: "tool_calls".into(),
            },
        ))
    }

    fn tool_ok(&mut self, output: &str, artifacts: Vec<ArtifactRecord>) -> Vec<Effect> {
        let Phase::Tool(id, _) = self.m.checkpoint().phase.clone() else {
            panic!("{}: no tool running", self.scenario)
        };
        self.feed(Input::ToolDone(
            id,
            ToolOutcome::Ok {
                output: output.into(),
                output_ref: "output://sess_1/call".into(),
                artifacts,
            },
        ))
    }

    fn tool_err(&mut self) -> Vec<Effect> {
        let Phase::Tool(id, _) = self.m.checkpoint().phase.clone() else {
            panic!("{}: no tool running", self.scenario)
        };
        self.feed(Input::ToolDone(
            id,
            ToolOutcome::Err {
                code: "quota_exceeded".into(),
                message: "full".into(),
            },
        ))
    }

    fn action(&self) -> ActionId {
        match &self.m.checkpoint().phase {
            Phase::Action { action_id, .. } => action_id.clone(),
            other => panic!("{}: no action pending: {other:?}", self.scenario),
        }
    }

    fn fail(&mut self, code: &str, retryable: bool, status: Option<u16>) -> Vec<Effect> {
        let id = self.model();
        self.feed(Input::Model(
            id,
            BackendEvent::Failed(BackendError {
                code: code.into(),
                message: format!("{code} happened"),
                status,
                retryable,
            }),
        ))
    }

    fn done(self) -> Vec<String> {
        assert!(self.m.is_finished(), "{} did not finish", self.scenario);
        self.lines
    }
}

fn scenarios() -> Vec<String> {
    let lines = Vec::new();
    let d = TurnLimits::default;

    let mut r = Run::new("text", None, d(), lines);
    r.feed(Input::Start);
    r.text("hi there");
    let lines = r.done();

    let tight = TurnLimits {
        output_budget: OutputBudget { bytes: 8, lines: 2 },
        ..d()
    };
    let mut r = Run::new("tools", None, tight, lines);
    r.feed(Input::Start);
    r.calls(&[
        ("read", r#"{"path":"a"}"#),
        ("nope", r#"{}"#),
        ("read", "not json"),
        ("read", r#"{"path":1}"#),
    ]);
    r.tool_ok(
        "line one\nline two\nline three\n",
        vec![ArtifactRecord {
            artifact_id: ArtifactId::new("art_1").unwrap(),
            artifact_ref: "artifact://a/1".into(),
            kind: "file".into(),
            title: "A".into(),
            bytes: 3,
        }],
    );
    r.calls(&[("read", r#"{"path":"b"}"#)]);
    r.tool_err();
    r.text("done");
    let lines = r.done();

    let mut r = Run::new("approve", None, d(), lines);
    r.feed(Input::Start);
    r.calls(&[("write", r#"{"path":"a"}"#), ("write", r#"{"path":"b"}"#)]);
    let a = r.action();
    r.feed(Input::Action {
        action_id: a,
        decision: Decision::AllowForSession,
    });
    r.tool_ok("ok", vec![]);
    r.tool_ok("ok", vec![]);
    // A stale answer (no action pending) records nothing.
    r.feed(Input::Action {
        action_id: ActionId::new("action_other").unwrap(),
        decision: Decision::AllowOnce,
    });
    // The session grant covers the turn's later calls of the tool.
    r.calls(&[("write", r#"{"path":"c"}"#)]);
    r.tool_ok("ok", vec![]);
    r.text("written");
    let lines = r.done();

    let mut r = Run::new("decline", None, d(), lines);
    r.feed(Input::Start);
    r.calls(&[("write", r#"{"path":"a"}"#)]);
    let a = r.action();
    r.feed(Input::Action {
        action_id: a,
        decision: Decision::Decline,
    });
    r.calls(&[("write", r#"{"path":"a"}"#)]);
    let a = r.action();
    r.feed(Input::ActionWithInput {
        action_id: a,
        arguments: json!({"path": "z"}),
    });
    r.tool_ok("ok", vec![]);
    r.text("ok");
    let lines = r.done();

    let schema = json!({"type": "object", "required": ["n"]});
    let mut r = Run::new(
        "structured_ok",
        Some(schema.clone()),
        TurnLimits {
            max_structured_output_retries: 1,
            ..d()
        },
        lines,
    );
    r.feed(Input::Start);
    r.text("not json");
    r.text(r#"{"n": 1}"#);
    let lines = r.done();

    let mut r = Run::new(
        "structured_fail",
        Some(schema),
        TurnLimits {
            max_structured_output_retries: 1,
            ..d()
        },
        lines,
    );
    r.feed(Input::Start);
    r.text("{}");
    r.text("[]");
    let lines = r.done();

    let mut r = Run::new("retry", None, d(), lines);
    r.feed(Input::Start);
    r.fail("rate_limited", true, Some(429));
    r.fail("auth_failed", false, Some(401));
    let lines = r.done();

    let mut r = Run::new("dropped", None, d(), lines);
    r.feed(Input::Start);
    let id = r.model();
    r.feed(Input::ModelStreamEnded(id));
    let lines = r.done();

    let mut r = Run::new(
        "rounds",
        None,
        TurnLimits {
            max_model_rounds: 1,
            ..d()
        },
        lines,
    );
    r.feed(Input::Start);
    r.calls(&[("read", r#"{"path":"a"}"#)]);
    r.tool_ok("ok", vec![]);
    let lines = r.done();

    let mut r = Run::new("cancel_model", None, d(), lines);
    r.feed(Input::Start);
    r.feed(Input::Cancel);
    let lines = r.done();

    let mut r = Run::new("cancel_action", None, d(), lines);
    r.feed(Input::Start);
    r.calls(&[("write", r#"{"path":"a"}"#)]);
    r.feed(Input::Cancel);
    let lines = r.done();

    let mut r = Run::new("cancel_tool", None, d(), lines);
    r.feed(Input::Start);
    r.calls(&[("read", r#"{"path":"a"}"#)]);
    r.feed(Input::Cancel);
    let lines = r.done();

    let mut r = Run::new("cancel_unstarted", None, d(), lines);
    r.feed(Input::Cancel);
    r.done()
}

#[test]
fn the_turn_machine_records_the_same_bytes() {
    let lines = scenarios();
    let text = lines.join("\n") + "\n";
    if std::env::var_os("APPHOST_BLESS").is_some() {
        std::fs::write(GOLDEN, &text).unwrap();
    }
    let golden = std::fs::read_to_string(GOLDEN).expect("golden file (APPHOST_BLESS=1 writes it)");
    let want: Vec<&str> = golden.lines().collect();
    assert!(want.len() > 150, "the golden file covers every path");
    for (n, (got, want)) in lines.iter().zip(&want).enumerate() {
        assert_eq!(got, want, "line {}", n + 1);
    }
    assert_eq!(lines.len(), want.len());
}
