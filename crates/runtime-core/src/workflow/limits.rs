//! The bounds of the workflow language: a definition, an expression and a run's data. Each is
//! checked before the work it bounds (size before parse, nesting before the CEL parser, node
//! count before evaluation, result size while converting).

/// Serialized size of one workflow object (the `workflows[]` entry).
pub const MAX_DEFINITION_BYTES: usize = 256 * 1024;
/// Nesting depth of the workflow's JSON value (objects and arrays).
pub const MAX_DEFINITION_DEPTH: usize = 32;
/// States in one workflow.
pub const MAX_STATES: usize = 200;
/// Branch cases in one `branch` state.
pub const MAX_CASES: usize = 32;
/// Length of a state key, an output name, a tool key, an entry or task kind.
pub const MAX_KEY_LEN: usize = 64;
/// Length of a prompt or another free text setting.
pub const MAX_TEXT_LEN: usize = 4096;
/// Expressions in one template (e.g. an `arguments` object).
pub const MAX_TEMPLATE_EXPRESSIONS: usize = 64;

/// Source length of one expression, in bytes.
pub const MAX_EXPR_BYTES: usize = 1024;
/// Bracket nesting (`(`, `[`, `{`) plus runs of prefix operators, counted before the parser runs.
pub const MAX_EXPR_NESTING: usize = 16;
/// AST nodes after parsing (macros refused), checked before evaluation.
pub const MAX_EXPR_NODES: usize = 256;
/// AST depth (a chain `a + b + c ...` is as deep as it is long): evaluation recurses this deep.
pub const MAX_EXPR_DEPTH: usize = 64;
/// Stack of the thread that parses and evaluates expressions. The CEL crate's parser (ANTLR) and
/// evaluator recurse with large frames (measured in a debug build: about 300 KiB per bracket level
/// when parsing, 8 MiB to evaluate a 128-deep chain); this reservation is virtual memory, touched
/// only as deep as an expression goes, and the budgets above keep that well inside it.
pub const EXPR_STACK_BYTES: usize = 64 * 1024 * 1024;
/// Serialized size of one expression's result.
pub const MAX_EXPR_RESULT_BYTES: usize = 64 * 1024;

/// Serialized size of a run's start input.
pub const MAX_RUN_INPUT_BYTES: usize = 256 * 1024;
/// Serialized size of one step's output kept in the run's data.
pub const MAX_STEP_OUTPUT_BYTES: usize = 256 * 1024;
/// Serialized size of all outputs of a run together.
pub const MAX_RUN_DATA_BYTES: usize = 1024 * 1024;
/// State visits in one run (cycles through `wait`/`human-review` included).
pub const MAX_RUN_STEPS: u32 = 10_000;
/// Attempts of one step visit (the first one included), whatever the policy says.
pub const MAX_ATTEMPTS: u32 = 10;
/// Longest backoff between attempts.
pub const MAX_BACKOFF_MS: u64 = 60 * 60 * 1000;
/// Longest `wait` duration or step timeout (30 days).
pub const MAX_DURATION_MS: u64 = 30 * 24 * 60 * 60 * 1000;
