//! Runs expression work (parse, evaluate) on a thread with a known, large stack.
//!
//! The CEL crate recurses while parsing and evaluating; the budgets bound how deep, and this
//! gives that depth a stack it fits in whatever thread the caller is on (a test thread has
//! 2 MiB, a tokio worker 2 MiB). Nested calls run inline on the same thread.

use std::cell::Cell;

use super::ExprError;
use crate::workflow::limits::EXPR_STACK_BYTES;

thread_local! {
    static ON_EXPR_STACK: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` on an expression thread (or inline when already on one). Refused with
/// `workflow.expression_failed` when no thread can be started.
pub fn on_expr_stack<T: Send>(f: impl FnOnce() -> T + Send) -> Result<T, ExprError> {
    if ON_EXPR_STACK.with(Cell::get) {
        return Ok(f());
    }
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("workflow-expr".into())
            .stack_size(EXPR_STACK_BYTES)
            .spawn_scoped(scope, || {
                ON_EXPR_STACK.with(|c| c.set(true));
                f()
            })
            .map_err(|e| ExprError {
                code: super::EVAL_FAILED,
                message: format!("no expression thread: {e}"),
            })?;
        // A panic is a bug: carry it to the caller as if it ran inline.
        Ok(handle
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })
}

/// Spawns a named thread with the expression stack on which expression work runs inline (no
/// thread per evaluation): for threads that evaluate many expressions (the host's workflow
/// driver threads).
pub fn spawn_expr_thread<T: Send + 'static>(
    name: String,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<T>> {
    std::thread::Builder::new()
        .name(name)
        .stack_size(EXPR_STACK_BYTES)
        .spawn(move || {
            ON_EXPR_STACK.with(|c| c.set(true));
            f()
        })
}
