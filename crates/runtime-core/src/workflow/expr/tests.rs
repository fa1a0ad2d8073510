use serde_json::json;

use super::*;

fn eval(src: &str) -> Result<Value, ExprError> {
    let input = json!({"topic": "cats", "n": 3, "items": [1, 2, 3], "ok": true});
    let mut outputs = serde_json::Map::new();
    outputs.insert(
        "review".into(),
        json!({"decision": "approved", "data": null}),
    );
    Expr::compile(src)?.eval(&Scope {
        input: &input,
        outputs: &outputs,
    })
}

fn code_of(src: &str) -> &'static str {
    match Expr::compile(src) {
        Ok(e) => panic!("{src:?} compiled: {e:?}"),
        Err(e) => e.code,
    }
}

#[test]
fn guards_and_mappings_over_input_and_outputs() {
    assert_eq!(
        eval("outputs.review.decision == 'approved'").unwrap(),
        json!(true)
    );
    assert_eq!(
        eval("'Reply: ' + input.topic").unwrap(),
        json!("Reply: cats")
    );
    assert_eq!(eval("input.n * 2 + size(input.items)").unwrap(), json!(9));
    assert_eq!(
        eval("has(outputs.review) && !has(outputs.draft)").unwrap(),
        json!(true)
    );
    assert_eq!(
        eval("{'b': 1, 'a': [input.ok, null]}").unwrap(),
        json!({"a": [true, null], "b": 1})
    );
    assert_eq!(eval("input.n > 2 ? 'many' : 'few'").unwrap(), json!("many"));
    assert_eq!(eval("2 in input.items").unwrap(), json!(true));
    assert_eq!(eval("input.topic.startsWith('ca')").unwrap(), json!(true));
}

#[test]
fn run_time_errors_are_coded_never_panics() {
    for src in [
        "9223372036854775807 + 1",
        "-9223372036854775808 - 1",
        "1 / 0",
        "1 % 0",
        "input.missing.field",
        "input.items[10]",
        "input.topic + 1",
        "string(b'\\xff')",
    ] {
        match eval(src) {
            Err(e) => assert_eq!(e.code, EVAL_FAILED, "{src}"),
            Ok(v) => panic!("{src} gave {v}"),
        }
    }
}

#[test]
fn guards_must_be_booleans() {
    let e = Expr::compile("input.n").unwrap();
    let input = json!({"n": 1});
    let outputs = serde_json::Map::new();
    assert_eq!(
        e.eval_bool(&Scope {
            input: &input,
            outputs: &outputs
        })
        .unwrap_err()
        .code,
        EVAL_FAILED
    );
}

#[test]
fn budgets_are_checked_before_parsing() {
    assert_eq!(
        code_of(&"a".repeat(MAX_EXPR_BYTES + 1)),
        code::EXPRESSION_OVER_BUDGET
    );
    // Deep nesting never reaches the parser: 100k brackets would overflow a recursive descent.
    let deep = format!(
        "{}1{}",
        "(".repeat(MAX_EXPR_BYTES / 2 - 1),
        ")".repeat(MAX_EXPR_BYTES / 2 - 1)
    );
    assert_eq!(code_of(&deep), code::EXPRESSION_OVER_BUDGET);
    assert_eq!(
        code_of(&"[".repeat(MAX_EXPR_NESTING + 1)),
        code::EXPRESSION_OVER_BUDGET
    );
    assert_eq!(
        code_of(&format!("{}true", "!".repeat(MAX_EXPR_NESTING + 1))),
        code::EXPRESSION_OVER_BUDGET
    );
    let chain = (0..30).map(|_| "true ? 1 : ").collect::<String>() + "2";
    assert_eq!(code_of(&chain), code::EXPRESSION_OVER_BUDGET);
    // Nesting at the limit still compiles.
    let ok = format!(
        "{}1{}",
        "(".repeat(MAX_EXPR_NESTING),
        ")".repeat(MAX_EXPR_NESTING)
    );
    assert!(Expr::compile(&ok).is_ok());
}

#[test]
fn node_count_is_bounded() {
    let many = vec!["1"; MAX_EXPR_NODES].join("+");
    assert_eq!(code_of(&many), code::EXPRESSION_OVER_BUDGET);
    let fine = vec!["1"; 32].join("+");
    assert_eq!(
        Expr::compile(&fine)
            .unwrap()
            .eval(&Scope {
                input: &json!(null),
                outputs: &Default::default()
            })
            .unwrap(),
        json!(32)
    );
}

#[test]
fn loops_unknown_functions_and_variables_are_refused() {
    for src in [
        "input.items.map(x, x + x)",
        "input.items.filter(x, x > 1)",
        "input.items.all(x, x > 0)",
        "input.items.exists(x, x > 0)",
        "input.items.exists_one(x, x > 0)",
        "input.topic.matches('(a+)+$')",
        "timestamp('2026-01-01T00:00:00Z')",
        "now()",
        "input.topic.lowerAscii()",
        "google.protobuf.Value{null_value: 0}",
    ] {
        assert_eq!(code_of(src), code::EXPRESSION_FORBIDDEN, "{src}");
    }
    assert_eq!(code_of("env.HOME"), code::UNKNOWN_VARIABLE);
    assert_eq!(code_of("x"), code::UNKNOWN_VARIABLE);
    assert_eq!(code_of("input +"), code::EXPRESSION_INVALID);
    assert_eq!(code_of("   "), code::EXPRESSION_INVALID);
}

#[test]
fn results_are_bounded_while_converting() {
    let big = "x".repeat(MAX_EXPR_RESULT_BYTES / 4);
    let input = json!({"s": big});
    let outputs = serde_json::Map::new();
    let scope = Scope {
        input: &input,
        outputs: &outputs,
    };
    assert!(Expr::compile("input.s + input.s")
        .unwrap()
        .eval(&scope)
        .is_ok());
    let e = Expr::compile("[input.s, input.s, input.s, input.s, input.s]")
        .unwrap()
        .eval(&scope)
        .unwrap_err();
    assert_eq!(e.code, RESULT_TOO_LARGE);
    let e = Expr::compile("input.s + input.s + input.s + input.s + input.s")
        .unwrap()
        .eval(&scope)
        .unwrap_err();
    assert_eq!(e.code, RESULT_TOO_LARGE);
}

#[test]
fn output_references_are_collected() {
    let e = Expr::compile("outputs.a.x + outputs['b'] + (has(outputs.c) ? 1 : 0)").unwrap();
    let refs: Vec<&str> = e.output_refs().iter().map(String::as_str).collect();
    assert_eq!(refs, vec!["a", "b", "c"]);
}
