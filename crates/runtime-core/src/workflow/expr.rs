//! The workflow expression language: CEL (the `cel` crate) behind budgets.
//!
//! An expression is a guard (`branch` cases) or a value mapping (step inputs, `end` results). Its
//! only variables are `input` (the run's start input) and `outputs` (a map from each finished
//! step's `output` name to its result). It reads nothing else: no clock, no environment, no
//! files, no regex (the crate's `regex` and `chrono` features are off), and it builds no code or
//! query string: its result is plain JSON data handed to a capability as an argument.
//!
//! Budgets, each checked before the work it bounds:
//! - source length ([`MAX_EXPR_BYTES`]) and nesting ([`MAX_EXPR_NESTING`]: brackets, `?`
//!   conditionals and runs of prefix operators, counted on the raw text, string contents included)
//!   before the CEL parser sees the text, so deep input cannot overflow the stack;
//! - AST node count ([`MAX_EXPR_NODES`]) and depth ([`MAX_EXPR_DEPTH`]) after parsing, before
//!   evaluation; parsing and evaluation run on a thread with a stack of [`EXPR_STACK_BYTES`]
//!   (see `stack`), since the crate recurses with large frames;
//! - no comprehensions: the macros `all`, `exists`, `exists_one`, `map` and `filter` are refused
//!   (`workflow.expression_forbidden`). The crate has no evaluation step budget, and without
//!   loops an expression's work and every intermediate value are bounded by its node count times
//!   the size of the run's data (itself bounded, see `limits`). `has(x.f)` is allowed;
//! - only the functions in [`ALLOWED_FUNCTIONS`] may be called (`workflow.expression_forbidden`);
//! - result size ([`MAX_EXPR_RESULT_BYTES`]) while converting the result back to JSON.

mod convert;
mod precheck;
mod stack;

pub use stack::{on_expr_stack, spawn_expr_thread};

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use cel::common::ast::{EntryExpr, Expr as Ast};
use cel::{Context, Env, IdedExpr};
use serde_json::Value;

use super::finding::{clip, code};
use super::limits::*;

/// Functions and operators an expression may call. Everything else (including functions the
/// crate would provide) is refused at compile time.
pub const ALLOWED_FUNCTIONS: &[&str] = &[
    "_?_:_",
    "_&&_",
    "_||_",
    "!_",
    "_-_",
    "_+_",
    "_*_",
    "_/_",
    "_%_",
    "_==_",
    "_!=_",
    "_>=_",
    "_<=_",
    "_>_",
    "_<_",
    "-_",
    "_[_]",
    "@in",
    "@not_strictly_false",
    "size",
    "contains",
    "startsWith",
    "endsWith",
    "string",
    "int",
    "uint",
    "double",
    "bool",
    "type",
];

/// The two variables an expression may name.
pub const VARIABLES: &[&str] = &["input", "outputs"];

/// Why an expression was refused or failed; `code` is a stable finding/run-error code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprError {
    pub code: &'static str,
    pub message: String,
}

impl ExprError {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
        ExprError {
            code,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ExprError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// A compiled, budget-checked expression.
#[derive(Clone, Debug)]
pub struct Expr {
    source: String,
    ast: Arc<IdedExpr>,
    /// `outputs.<name>` names the expression reads (for validation).
    output_refs: BTreeSet<String>,
}

impl PartialEq for Expr {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

/// What an expression sees: the run's start input and the outputs so far.
pub struct Scope<'a> {
    pub input: &'a Value,
    pub outputs: &'a serde_json::Map<String, Value>,
}

fn env() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| Arc::new(Env::stdlib().with_optional_support(false)))
}

impl Expr {
    /// Checks the budgets, parses, and checks what the AST uses.
    pub fn compile(source: &str) -> Result<Expr, ExprError> {
        precheck::check(source)?;
        on_expr_stack(|| Self::compile_here(source))?
    }

    fn compile_here(source: &str) -> Result<Expr, ExprError> {
        let ast = env()
            .parser()
            .max_recursion_depth(MAX_EXPR_NESTING as u16 * 2)
            .parse(source)
            .map_err(|e| ExprError::new(code::EXPRESSION_INVALID, clip(&e.to_string(), 300)))?;
        let output_refs = inspect(&ast)?;
        Ok(Expr {
            source: source.to_string(),
            ast: Arc::new(ast),
            output_refs,
        })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// The `outputs.<name>` names this expression reads.
    pub fn output_refs(&self) -> &BTreeSet<String> {
        &self.output_refs
    }

    /// Evaluates over `scope`; the result is JSON within [`MAX_EXPR_RESULT_BYTES`].
    pub fn eval(&self, scope: &Scope<'_>) -> Result<Value, ExprError> {
        on_expr_stack(|| self.eval_here(scope))?
    }

    fn eval_here(&self, scope: &Scope<'_>) -> Result<Value, ExprError> {
        let mut ctx = Context::with_env(Arc::clone(env()));
        ctx.add_variable_from_value("input", convert::to_cel(scope.input));
        ctx.add_variable_from_value("outputs", convert::map_to_cel(scope.outputs));
        let value = cel::Value::resolve(&self.ast, &ctx)
            .map_err(|e| ExprError::new(EVAL_FAILED, clip(&e.to_string(), 300)))?;
        convert::to_json(&value, MAX_EXPR_RESULT_BYTES)
    }

    /// Evaluates a guard: the result must be a boolean.
    pub fn eval_bool(&self, scope: &Scope<'_>) -> Result<bool, ExprError> {
        match self.eval(scope)? {
            Value::Bool(b) => Ok(b),
            other => Err(ExprError::new(
                EVAL_FAILED,
                format!("a guard must be a boolean, got {}", json_type(&other)),
            )),
        }
    }
}

/// Run-time failure of an expression (a run error code, not a validation finding).
pub const EVAL_FAILED: &str = "workflow.expression_failed";
/// An expression's result exceeded [`MAX_EXPR_RESULT_BYTES`] at run time.
pub const RESULT_TOO_LARGE: &str = "workflow.expression_over_budget";

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
    }
}

/// Walks the AST without recursion: counts nodes, refuses comprehensions, struct literals,
/// unknown functions and variables, and collects `outputs.<name>` references.
fn inspect(root: &IdedExpr) -> Result<BTreeSet<String>, ExprError> {
    let mut refs = BTreeSet::new();
    let mut stack: Vec<(&IdedExpr, usize)> = vec![(root, 1)];
    let mut nodes = 0usize;
    while let Some((node, depth)) = stack.pop() {
        nodes += 1;
        if nodes > MAX_EXPR_NODES {
            return Err(ExprError::new(
                code::EXPRESSION_OVER_BUDGET,
                format!("more than {MAX_EXPR_NODES} nodes"),
            ));
        }
        if depth > MAX_EXPR_DEPTH {
            return Err(ExprError::new(
                code::EXPRESSION_OVER_BUDGET,
                format!("deeper than {MAX_EXPR_DEPTH} (a long operator chain is deep)"),
            ));
        }
        let d = depth + 1;
        match &node.expr {
            Ast::Unspecified | Ast::Literal(_) => {}
            Ast::Ident(name) => {
                if !VARIABLES.contains(&name.as_str()) {
                    return Err(ExprError::new(
                        code::UNKNOWN_VARIABLE,
                        format!("unknown variable {name:?}: only input and outputs"),
                    ));
                }
            }
            Ast::Select(sel) => {
                if let Ast::Ident(root) = &sel.operand.expr {
                    if root == "outputs" {
                        refs.insert(sel.field.clone());
                    }
                }
                stack.push((&sel.operand, d));
            }
            Ast::Call(call) => {
                if !ALLOWED_FUNCTIONS.contains(&call.func_name.as_str()) {
                    return Err(ExprError::new(
                        code::EXPRESSION_FORBIDDEN,
                        format!("function {:?} is not allowed", call.func_name),
                    ));
                }
                if call.func_name == "_[_]" {
                    if let (Some(Ast::Ident(root)), Some(Ast::Literal(lit))) = (
                        call.args.first().map(|a| &a.expr),
                        call.args.get(1).map(|a| &a.expr),
                    ) {
                        if root == "outputs" {
                            if let cel::common::ast::LiteralValue::String(s) = lit {
                                refs.insert(s.to_string());
                            }
                        }
                    }
                }
                if let Some(t) = &call.target {
                    stack.push((t, d));
                }
                stack.extend(call.args.iter().map(|a| (a, d)));
            }
            Ast::List(list) => stack.extend(list.elements.iter().map(|e| (e, d))),
            Ast::Map(map) => {
                for entry in &map.entries {
                    match &entry.expr {
                        EntryExpr::MapEntry(e) => {
                            stack.push((&e.key, d));
                            stack.push((&e.value, d));
                        }
                        EntryExpr::StructField(_) => {
                            return Err(ExprError::new(
                                code::EXPRESSION_FORBIDDEN,
                                "message fields are not allowed",
                            ))
                        }
                    }
                }
            }
            Ast::Comprehension(_) => {
                return Err(ExprError::new(
                    code::EXPRESSION_FORBIDDEN,
                    "comprehensions (all, exists, exists_one, map, filter) are not allowed",
                ))
            }
            Ast::Struct(_) => {
                return Err(ExprError::new(
                    code::EXPRESSION_FORBIDDEN,
                    "message construction is not allowed",
                ))
            }
        }
    }
    Ok(refs)
}

#[cfg(test)]
mod tests;
