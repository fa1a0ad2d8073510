//! Templates: a step's data setting (`input`, `arguments`, `value`, `title`, `content`, `show`,
//! `result`) is JSON in which every string is an expression; numbers, booleans and null are
//! literals, object keys are literal. A literal string is a quoted CEL string: `"'draft'"`.

use serde_json::Value;

use super::expr::{Expr, ExprError, Scope};
use super::limits::{MAX_EXPR_RESULT_BYTES, MAX_TEMPLATE_EXPRESSIONS};

#[derive(Clone, Debug, PartialEq)]
pub enum Template {
    Literal(Value),
    Expr(Box<Expr>),
    List(Vec<Template>),
    Object(Vec<(String, Template)>),
}

/// Where a template failed to compile (a JSON pointer suffix) and why.
pub struct TemplateError {
    pub at: String,
    pub error: ExprError,
}

impl Template {
    /// Compiles every string of `v` as an expression. `v`'s depth is bounded by the definition's.
    pub fn compile(v: &Value) -> Result<Template, Vec<TemplateError>> {
        let mut errors = Vec::new();
        let mut count = 0usize;
        let t = compile_at(v, "", &mut count, &mut errors);
        if count > MAX_TEMPLATE_EXPRESSIONS {
            errors.push(TemplateError {
                at: String::new(),
                error: ExprError {
                    code: super::finding::code::EXPRESSION_OVER_BUDGET,
                    message: format!("{count} expressions; at most {MAX_TEMPLATE_EXPRESSIONS}"),
                },
            });
        }
        if errors.is_empty() {
            Ok(t)
        } else {
            Err(errors)
        }
    }

    /// Every expression in the template.
    pub fn exprs(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(t) = stack.pop() {
            match t {
                Template::Literal(_) => {}
                Template::Expr(e) => out.push(e.as_ref()),
                Template::List(items) => stack.extend(items.iter()),
                Template::Object(fields) => stack.extend(fields.iter().map(|(_, t)| t)),
            }
        }
        out
    }

    /// Evaluates every expression; the whole result stays within one expression's result budget.
    pub fn eval(&self, scope: &Scope<'_>) -> Result<Value, ExprError> {
        let v = super::expr::on_expr_stack(|| self.eval_inner(scope))??;
        let size = serde_json::to_vec(&v)
            .map(|b| b.len())
            .unwrap_or(usize::MAX);
        if size > MAX_EXPR_RESULT_BYTES {
            return Err(ExprError {
                code: super::expr::RESULT_TOO_LARGE,
                message: format!("{size} bytes; at most {MAX_EXPR_RESULT_BYTES}"),
            });
        }
        Ok(v)
    }

    fn eval_inner(&self, scope: &Scope<'_>) -> Result<Value, ExprError> {
        Ok(match self {
            Template::Literal(v) => v.clone(),
            Template::Expr(e) => e.eval(scope)?,
            Template::List(items) => Value::Array(
                items
                    .iter()
                    .map(|t| t.eval_inner(scope))
                    .collect::<Result<_, _>>()?,
            ),
            Template::Object(fields) => {
                let mut m = serde_json::Map::new();
                for (k, t) in fields {
                    m.insert(k.clone(), t.eval_inner(scope)?);
                }
                Value::Object(m)
            }
        })
    }
}

fn compile_at(v: &Value, at: &str, count: &mut usize, errors: &mut Vec<TemplateError>) -> Template {
    match v {
        Value::String(s) => {
            *count += 1;
            if *count > MAX_TEMPLATE_EXPRESSIONS {
                return Template::Literal(Value::Null);
            }
            match Expr::compile(s) {
                Ok(e) => Template::Expr(Box::new(e)),
                Err(error) => {
                    errors.push(TemplateError {
                        at: at.to_string(),
                        error,
                    });
                    Template::Literal(Value::Null)
                }
            }
        }
        Value::Array(items) => Template::List(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| compile_at(item, &format!("{at}/{i}"), count, errors))
                .collect(),
        ),
        Value::Object(fields) => Template::Object(
            fields
                .iter()
                .map(|(k, item)| {
                    let esc = k.replace('~', "~0").replace('/', "~1");
                    (
                        k.clone(),
                        compile_at(item, &format!("{at}/{esc}"), count, errors),
                    )
                })
                .collect(),
        ),
        other => Template::Literal(other.clone()),
    }
}
