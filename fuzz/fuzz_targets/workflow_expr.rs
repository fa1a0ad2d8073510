//! `runtime_core::workflow::expr::Expr::compile` then `eval` over a fixed scope. Nothing may
//! panic or overflow the stack; a result is within `MAX_EXPR_RESULT_BYTES`.
//!
//! Input: the expression text (invalid UTF-8 replaced).
#![no_main]

use libfuzzer_sys::fuzz_target;
use runtime_core::workflow::expr::{Expr, Scope};
use runtime_core::workflow::limits::MAX_EXPR_RESULT_BYTES;
use serde_json::json;

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    let Ok(expr) = Expr::compile(&src) else { return };
    let input = json!({"a": "x".repeat(1000), "n": 7, "items": [1, 2, 3], "m": {"k": [true, null]}});
    let mut outputs = serde_json::Map::new();
    outputs.insert("a".into(), json!({"decision": "approved", "data": null}));
    if let Ok(v) = expr.eval(&Scope { input: &input, outputs: &outputs }) {
        assert!(serde_json::to_vec(&v).unwrap().len() <= MAX_EXPR_RESULT_BYTES + 64);
    }
});
