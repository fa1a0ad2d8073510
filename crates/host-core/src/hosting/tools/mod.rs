//! `lime.tools`: a broker between apps and the MCP servers the user (or an admin policy file)
//! adds. `spec.rs` (what a server and a `<server>/<tool>` are), `policy.rs` (the admin's
//! `<data>/policy/tools.json`), `registry.rs` (servers, grants and listings in `host.db`
//! settings rows), `stdio_pipes.rs` (stderr ring, stdout guard), `connection.rs` (one rmcp
//! session), `supervisor.rs` (start on demand, restart with backoff, stop), `broker.rs` (the
//! one call path: checks, approval, call, audit). Documented in docs/cli.md ("apphost tools").

pub mod broker;
pub mod call_facts;
pub mod connection;
pub mod policy;
pub mod registry;
pub mod spec;
pub mod stdio_pipes;
pub mod supervisor;

pub use broker::{AppTool, Approval, Broker, Caller, Invocation};
pub use spec::{ServerSpec, ToolInfo, ToolRef, Transport};
