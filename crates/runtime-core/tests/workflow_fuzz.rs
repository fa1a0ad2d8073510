//! A stable-Rust randomized "fuzz" of the workflow parser and the expression evaluator (seeded,
//! so a failure reproduces): no panic, no stack overflow, results within their budgets, bounded
//! time. The cargo-fuzz targets (`fuzz/fuzz_targets/workflow_*.rs`) explore the same surfaces
//! with coverage guidance under nightly.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use runtime_core::workflow::check;
use runtime_core::workflow::expr::{Expr, Scope};
use runtime_core::workflow::finding::Findings;
use runtime_core::workflow::limits::MAX_EXPR_RESULT_BYTES;
use runtime_core::workflow::machine::{Effect, Fact, Pending, RunMachine};
use serde_json::{json, Value};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const TOKENS: &[&str] = &[
    "input",
    "outputs",
    ".",
    "a",
    "b",
    "topic",
    "items",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    "+",
    "-",
    "*",
    "/",
    "%",
    "==",
    "!=",
    "<",
    ">=",
    "&&",
    "||",
    "!",
    "?",
    " ",
    "1",
    "0",
    "-1",
    "9223372036854775807",
    "18446744073709551615u",
    "1.5e308",
    "'s'",
    "\"x\"",
    "'''",
    "b'\\xff'",
    "r'raw'",
    "true",
    "false",
    "null",
    "size",
    "contains",
    "startsWith",
    "string",
    "int",
    "double",
    "has",
    "map",
    "filter",
    "all",
    "exists",
    "x",
    "in",
    "'\\u00e9'",
    "é",
    "\u{0}",
    "\\",
    "dyn",
    "type",
    "matches",
    "timestamp",
    "duration",
    "now",
    ".?",
    "[?",
    "`",
    "#",
];

fn random_expr(r: &mut Rng) -> String {
    match r.below(10) {
        // Deep or long shapes aimed at the budgets.
        0 => {
            let d = r.below(3000);
            format!("{}input{}", "(".repeat(d), ")".repeat(d))
        }
        1 => vec!["input.a"; r.below(600)].join(" + "),
        2 => "!".repeat(r.below(5000)) + "true",
        3 => (0..r.below(200)).map(|_| "true ? 1 : ").collect::<String>() + "0",
        4..=6 => grammar(r, 0),
        7 => (0..r.below(1200))
            .map(|_| char::from_u32(r.below(0x3000) as u32).unwrap_or('x'))
            .collect(),
        _ => (0..r.below(40))
            .map(|_| r.pick(TOKENS))
            .collect::<Vec<_>>()
            .join(""),
    }
}

/// Mostly well-formed expressions, so evaluation gets exercised too.
fn grammar(r: &mut Rng, depth: usize) -> String {
    if depth > 6 {
        return r
            .pick(&[
                "input.a",
                "outputs.a",
                "1",
                "'s'",
                "true",
                "null",
                "input.items",
                "2.5",
            ])
            .to_string();
    }
    let g = |r: &mut Rng| grammar(r, depth + 1);
    match r.below(12) {
        0 => format!(
            "{} {} {}",
            g(r),
            r.pick(&["+", "-", "*", "/", "%", "==", "!=", "<", ">=", "&&", "||", "in"]),
            g(r)
        ),
        1 => format!("{} ? {} : {}", g(r), g(r), g(r)),
        2 => format!("[{}, {}]", g(r), g(r)),
        3 => format!("{{{}: {}}}", g(r), g(r)),
        4 => format!("size({})", g(r)),
        5 => format!("has(input.{})", r.pick(&["a", "b", "items"])),
        6 => format!("{}.{}", g(r), r.pick(&["a", "b", "topic", "decision"])),
        7 => format!("{}[{}]", g(r), g(r)),
        8 => format!(
            "{}({})",
            r.pick(&["string", "int", "double", "bool", "type"]),
            g(r)
        ),
        9 => format!("{}.contains({})", g(r), g(r)),
        10 => format!("!{}", g(r)),
        _ => format!("({})", g(r)),
    }
}

fn random_value(r: &mut Rng, depth: usize) -> Value {
    match r.below(if depth > 4 { 5 } else { 8 }) {
        0 => Value::Null,
        1 => json!(r.below(2) == 0),
        2 => json!(r.next() as i64),
        3 => json!(r.pick(&["", "x", "cats", "approved"])),
        4 => json!("y".repeat(r.below(40_000))),
        5 => Value::Array(
            (0..r.below(6))
                .map(|_| random_value(r, depth + 1))
                .collect(),
        ),
        _ => {
            let mut m = serde_json::Map::new();
            for _ in 0..r.below(6) {
                m.insert(
                    r.pick(&["a", "b", "topic", "items", "decision", "data"])
                        .into(),
                    random_value(r, depth + 1),
                );
            }
            Value::Object(m)
        }
    }
}

#[test]
fn random_expressions_never_panic_and_stay_in_budget() {
    let mut r = Rng(0x5eed_1234_abcd_0001);
    let mut compiled = 0;
    let mut slowest = Duration::ZERO;
    for _ in 0..3000 {
        let src = random_expr(&mut r);
        let input = random_value(&mut r, 0);
        let mut outputs = serde_json::Map::new();
        outputs.insert("a".into(), random_value(&mut r, 0));
        let t = Instant::now();
        if let Ok(e) = Expr::compile(&src) {
            compiled += 1;
            match e.eval(&Scope {
                input: &input,
                outputs: &outputs,
            }) {
                Ok(v) => {
                    assert!(serde_json::to_vec(&v).unwrap().len() <= MAX_EXPR_RESULT_BYTES + 64)
                }
                Err(err) => assert!(err.code.starts_with("workflow.expression_"), "{err}"),
            }
        }
        slowest = slowest.max(t.elapsed());
    }
    assert!(
        compiled > 500,
        "the generator compiles some expressions ({compiled})"
    );
    assert!(
        slowest < Duration::from_secs(2),
        "slowest expression took {slowest:?}"
    );
}

fn mutate(r: &mut Rng, v: &mut Value) {
    match v {
        Value::Object(m) if !m.is_empty() && r.below(4) != 0 => {
            let keys: Vec<String> = m.keys().cloned().collect();
            let k = keys[r.below(keys.len())].clone();
            match r.below(6) {
                0 => {
                    m.remove(&k);
                }
                1 => {
                    m.insert(format!("x{}", r.below(3)), random_value(r, 0));
                }
                _ => mutate(r, m.get_mut(&k).unwrap()),
            }
        }
        Value::Array(a) if !a.is_empty() && r.below(4) != 0 => {
            let i = r.below(a.len());
            match r.below(5) {
                0 => {
                    a.remove(i);
                }
                1 => {
                    let dup = a[i].clone();
                    a.push(dup);
                }
                _ => mutate(r, &mut a[i]),
            }
        }
        _ => {
            *v = match r.below(6) {
                0 => random_value(r, 0),
                1 => json!(random_expr(r)),
                2 => {
                    let mut deep = json!("input");
                    for _ in 0..r.below(400) {
                        deep = json!([deep]);
                    }
                    deep
                }
                3 => json!(r.pick(&[
                    "start",
                    "end",
                    "branch",
                    "wait",
                    "agent-task",
                    "tool-call",
                    "human-review",
                    "user-input",
                    "storage-write",
                    "artifact-create",
                    "shell"
                ])),
                4 => json!(r.pick(&[
                    "start",
                    "draft",
                    "review",
                    "decide",
                    "save",
                    "publish",
                    "done",
                    "discarded",
                    "cool-down"
                ])),
                _ => json!(r.next() % 100_000),
            }
        }
    }
}

#[test]
fn mutated_workflows_never_panic_and_runs_stay_bounded() {
    let dir =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/workflows/valid");
    let seeds: Vec<Value> = [
        "draft-review-publish.json",
        "research-with-input.json",
        "minimal.json",
    ]
    .iter()
    .map(|n| serde_json::from_str(&std::fs::read_to_string(dir.join(n)).unwrap()).unwrap())
    .collect();
    let declared: BTreeSet<String> = [
        "lime.agent",
        "lime.workflow",
        "lime.storage",
        "lime.artifacts",
        "lime.tools",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut r = Rng(0x0bad_cafe_f00d_0002);
    let (mut runnable, mut blocked) = (0, 0);
    for _ in 0..600 {
        let mut wf = seeds[r.below(seeds.len())].clone();
        for _ in 0..1 + r.below(4) {
            mutate(&mut r, &mut wf);
        }
        let checked = check(&wf, &declared);
        assert!(checked.findings.len() <= Findings::MAX);
        assert_eq!(
            checked.blocked(),
            checked.findings.iter().any(|f| f.is_error())
        );
        let Some(def) = checked.definition else {
            blocked += 1;
            continue;
        };
        runnable += 1;
        let mut m = RunMachine::start(std::sync::Arc::new(def), "fz", random_value(&mut r, 0));
        for _ in 0..50 {
            let Effect::Wait(p) = m.next_effect() else {
                break;
            };
            let key = p.key().to_string();
            let c = r.below(4);
            let fact = match p {
                Pending::Call(_) if c == 0 => Fact::Failed {
                    key,
                    code: "E".into(),
                    message: "m".into(),
                    retryable: true,
                },
                Pending::Call(_) => Fact::Succeeded {
                    key,
                    output: random_value(&mut r, 0),
                },
                Pending::Review { .. } => Fact::Reviewed {
                    key,
                    approved: c.is_multiple_of(2),
                    data: Some(random_value(&mut r, 0)),
                },
                Pending::Input { .. } => Fact::InputGiven {
                    key,
                    data: random_value(&mut r, 0),
                },
                Pending::Timer { .. } | Pending::Backoff { .. } => Fact::TimerFired { key },
                Pending::Decision { .. } => Fact::Decided { key, retry: c != 0 },
            };
            m.apply(fact).unwrap();
        }
    }
    assert!(
        runnable > 20 && blocked > 100,
        "runnable {runnable}, blocked {blocked}"
    );
}
