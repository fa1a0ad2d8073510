//! Property: replaying a run's recorded facts gives the same state as running it, and resuming
//! from a JSON checkpoint then applying the rest does too. Along the way: a refused (stale) fact
//! changes nothing, and no capability call key is issued for two different attempts.

use std::collections::BTreeSet;
use std::sync::Arc;

use proptest::prelude::*;
use runtime_core::workflow::machine::{Effect, Fact, Pending, RunMachine, RunState};
use runtime_core::workflow::{check, Definition};
use serde_json::{json, Value};

fn caps() -> BTreeSet<String> {
    [
        "lime.agent",
        "lime.workflow",
        "lime.storage",
        "lime.artifacts",
        "lime.tools",
        "lime.knowledge",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn fixture(name: &str) -> Value {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/workflows/valid")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// A generated workflow: a chain of `kinds` (0 storage, 1 tool, 2 review, 3 wait, 4 branch,
/// 5 agent) with forward branches only, and a workflow-level recovery.
fn generated(kinds: &[u8], recovery: u8) -> Value {
    let n = kinds.len();
    let key = |i: usize| {
        if i >= n {
            "done".to_string()
        } else {
            format!("s{i}")
        }
    };
    let mut states = vec![json!({"key": "start", "kind": "start", "next": key(0)})];
    for (i, k) in kinds.iter().enumerate() {
        let next = key(i + 1);
        let s = match k % 6 {
            0 => {
                json!({"key": key(i), "kind": "storage-write", "storageKey": format!("k{i}"), "value": "input.n", "output": format!("o{i}"), "next": next})
            }
            1 => {
                json!({"key": key(i), "kind": "tool-call", "uses": "crm", "arguments": {"n": "input.n + 1"}, "output": format!("o{i}"), "timeoutMs": 1000, "next": next})
            }
            2 => {
                json!({"key": key(i), "kind": "human-review", "prompt": "ok?", "show": "input", "output": format!("o{i}"), "next": next})
            }
            3 => json!({"key": key(i), "kind": "wait", "duration": "1s", "next": next}),
            4 => {
                json!({"key": key(i), "kind": "branch", "cases": [{"when": "input.n % 2 == 0", "next": key(i + 2)}], "default": next})
            }
            _ => {
                json!({"key": key(i), "kind": "agent-task", "taskKind": "t", "input": {"n": "input.n"}, "output": format!("o{i}"), "next": next})
            }
        };
        states.push(s);
    }
    states.push(json!({"key": "done", "kind": "end", "result": "input.n"}));
    states.push(json!({"key": "failed", "kind": "end", "result": "'failed'"}));
    let on_error =
        ["retry", "show_error_and_allow_retry", "goto:failed", "fail"][recovery as usize % 4];
    let mut wf = json!({"key": "gen", "recovery": {"onError": on_error, "onTimeout": "retry_with_longer_timeout", "maxRetries": 2}, "states": states});
    {
        // Keep `failed` reachable (a goto needs a step that can fail) so the workflow validates.
        wf["states"][0]["next"] = json!(key(0));
        let s0 = wf["states"][1].clone();
        wf["states"][1] = json!({"key": key(0), "kind": "branch", "cases": [{"when": "input.n < 0", "next": "failed"}], "default": format!("{}x", key(0))});
        let mut moved = s0;
        moved["key"] = json!(format!("{}x", key(0)));
        wf["states"].as_array_mut().unwrap().push(moved);
    }
    wf
}

fn definition(v: &Value) -> Arc<Definition> {
    let c = check(v, &caps());
    Arc::new(
        c.definition
            .unwrap_or_else(|| panic!("{v:#}\n{:#?}", c.findings)),
    )
}

/// The fact a scripted executor reports for `p`, chosen by `c`.
fn fact_for(p: &Pending, c: u8) -> Fact {
    let key = p.key().to_string();
    match p {
        Pending::Call(_) => match c % 5 {
            0 | 1 => Fact::Succeeded {
                key,
                output: json!({"v": c}),
            },
            2 => Fact::Failed {
                key,
                code: "E_RETRY".into(),
                message: "m".into(),
                retryable: true,
            },
            3 => Fact::Failed {
                key,
                code: "E_FATAL".into(),
                message: "m".into(),
                retryable: false,
            },
            _ => Fact::TimedOut { key },
        },
        Pending::Review { .. } => Fact::Reviewed {
            key,
            approved: c.is_multiple_of(2),
            data: c.is_multiple_of(3).then(|| json!(c)),
        },
        Pending::Input { .. } => Fact::InputGiven {
            key,
            data: json!({"c": c}),
        },
        Pending::Timer { .. } | Pending::Backoff { .. } => Fact::TimerFired { key },
        Pending::Decision { .. } => Fact::Decided {
            key,
            retry: !c.is_multiple_of(3),
        },
    }
}

struct Run {
    log: Vec<String>,
    state: RunState,
    checkpoint: Option<(usize, String)>,
}

fn run(def: &Arc<Definition>, input: &Value, choices: &[u8], checkpoint_at: usize) -> Run {
    let mut m = RunMachine::start(def.clone(), "run1", input.clone());
    let mut log = Vec::new();
    let mut checkpoint = None;
    let mut call_keys: Vec<String> = Vec::new();
    for (i, &c) in choices.iter().enumerate() {
        if i == checkpoint_at {
            checkpoint = Some((log.len(), serde_json::to_string(m.state()).unwrap()));
        }
        let Effect::Wait(p) = m.next_effect() else {
            break;
        };
        // The same pending effect asked twice is the same (re-issue after a restart).
        assert_eq!(m.next_effect(), Effect::Wait(p.clone()));
        if let Pending::Call(call) = &p {
            if call_keys.last() != Some(&call.idempotency_key) {
                assert!(
                    !call_keys.contains(&call.idempotency_key),
                    "key {} issued for two attempts",
                    call.idempotency_key
                );
                call_keys.push(call.idempotency_key.clone());
            }
        }
        if c == 250 {
            // A stale fact is refused and changes nothing.
            let before = m.state().clone();
            assert!(m
                .apply(Fact::TimerFired {
                    key: "wf:run1:nope:9:9".into()
                })
                .is_err());
            assert_eq!(m.state(), &before);
            continue;
        }
        let fact = if c == 251 {
            Fact::Cancelled
        } else {
            fact_for(&p, c)
        };
        m.apply(fact.clone()).unwrap();
        log.push(serde_json::to_string(&fact).unwrap());
    }
    Run {
        log,
        state: m.state().clone(),
        checkpoint,
    }
}

fn replay(def: &Arc<Definition>, input: &Value, log: &[String]) -> RunState {
    let mut m = RunMachine::start(def.clone(), "run1", input.clone());
    for line in log {
        m.apply(serde_json::from_str(line).unwrap()).unwrap();
    }
    m.state().clone()
}

fn check_replay(def: &Arc<Definition>, input: &Value, choices: &[u8], checkpoint_at: usize) {
    let r = run(def, input, choices, checkpoint_at);
    assert_eq!(replay(def, input, &r.log), r.state);
    if let Some((applied, json)) = r.checkpoint {
        let mut m = RunMachine::resume(def.clone(), serde_json::from_str(&json).unwrap());
        for line in &r.log[applied..] {
            m.apply(serde_json::from_str(line).unwrap()).unwrap();
        }
        assert_eq!(m.state(), &r.state);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn replaying_the_sample_gives_the_same_state(
        choices in proptest::collection::vec(any::<u8>(), 0..80),
        checkpoint_at in 0usize..80,
        topic in "[a-z]{0,8}",
    ) {
        let def = definition(&fixture("draft-review-publish.json"));
        check_replay(&def, &json!({"topic": topic}), &choices, checkpoint_at);
    }

    #[test]
    fn replaying_generated_workflows_gives_the_same_state(
        kinds in proptest::collection::vec(0u8..6, 1..12),
        recovery in 0u8..4,
        n in -3i64..20,
        choices in proptest::collection::vec(any::<u8>(), 0..120),
        checkpoint_at in 0usize..120,
    ) {
        let def = definition(&generated(&kinds, recovery));
        check_replay(&def, &json!({"n": n}), &choices, checkpoint_at);
    }
}

#[test]
fn replaying_the_research_sample_gives_the_same_state() {
    let def = definition(&fixture("research-with-input.json"));
    let input = json!({"notBefore": "2030-01-01T00:00:00Z"});
    for seed in 0u8..40 {
        let choices: Vec<u8> = (0..40u32)
            .map(|i| (i as u8).wrapping_mul(seed).wrapping_add(seed))
            .collect();
        check_replay(&def, &input, &choices, (seed % 10) as usize);
    }
}
