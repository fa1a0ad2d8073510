//! `runtime_core::workflow::check` on a workflow object (JSON text; non-JSON inputs skipped),
//! then, when it validates, a run driven by the remaining bytes. Nothing may panic or overflow
//! the stack; the run stays within its step and data bounds.
//!
//! Input: JSON text, optionally followed by NUL and bytes that choose the facts of the run.
#![no_main]

use std::collections::BTreeSet;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use runtime_core::workflow::check;
use runtime_core::workflow::machine::{Effect, Fact, Pending, RunMachine};
use serde_json::json;

fuzz_target!(|data: &[u8]| {
    let (text, choices) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(text) else { return };
    let declared: BTreeSet<String> = ["lime.agent", "lime.workflow", "lime.storage", "lime.artifacts", "lime.tools"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let checked = check(&value, &declared);
    assert_eq!(checked.blocked(), checked.findings.iter().any(|f| f.is_error()));
    let Some(def) = checked.definition else { return };
    let mut m = RunMachine::start(Arc::new(def), "fuzz", json!({"n": choices.len(), "topic": "t"}));
    for &c in choices.iter().take(256) {
        let Effect::Wait(p) = m.next_effect() else { break };
        let key = p.key().to_string();
        let fact = match p {
            Pending::Call(_) if c % 4 == 0 => Fact::Failed { key, code: "E".into(), message: "m".into(), retryable: c % 8 == 0 },
            Pending::Call(_) if c % 4 == 1 => Fact::TimedOut { key },
            Pending::Call(_) => Fact::Succeeded { key, output: json!({"c": c}) },
            Pending::Review { .. } => Fact::Reviewed { key, approved: c % 2 == 0, data: None },
            Pending::Input { .. } => Fact::InputGiven { key, data: json!(c) },
            Pending::Timer { .. } | Pending::Backoff { .. } => Fact::TimerFired { key },
            Pending::Decision { .. } => Fact::Decided { key, retry: c % 2 == 0 },
        };
        m.apply(fact).unwrap();
    }
});
