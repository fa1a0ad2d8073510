//! Sandboxed launcher for an Agent App's `client-local` `stdio-jsonrpc` backend service
//! (issue 24). Layers, outermost first (docs/services.md has the threat model):
//!
//! 1. a pids cgroup per launch (fork bombs; the final sweep that leaves no orphan),
//! 2. rlimits (AS, CPU, NOFILE, NPROC, FSIZE, CORE=0), `PR_SET_NO_NEW_PRIVS`, `PR_SET_PDEATHSIG`,
//!    its own process group, every descriptor closed but stdio (+ the seccomp program for bwrap),
//! 3. bubblewrap: new user/pid/mount/ipc/uts/cgroup (and net unless granted) namespaces, a
//!    minimal read-only `/usr`, the package read-only at `/app`, ONE writable `/service`, private
//!    `/tmp`, `/proc`, `/dev`; nested user namespaces disabled; an empty environment,
//! 4. a seccomp deny-list (installed by bwrap right before the exec),
//! 5. a Landlock ruleset (ABI >= 3) applied by the in-sandbox shim before it execs the program.
//!
//! The host talks JSON-RPC 2.0 over the child's stdin/stdout, one message per line
//! ([`channel::ServiceProcess`]). Two more planes ([`plane::Plane`]): `wasm` modules run in-process
//! by wasmi with no imports but `lime_call` ([`wasm_plane`]), and `local-http` services in the same
//! sandbox serving HTTP on a host-bound socket with a per-launch token ([`http_plane`]).

// The process-sandbox boundary: the pre-exec hook and raw syscalls (prctl, setrlimit, close_range,
// memfd, landlock_create_ruleset) need `unsafe`; the workspace's `unsafe_code = "deny"` is lifted
// for this crate only, each block says why it is sound.
#![allow(unsafe_code)]

pub mod cancel;
pub mod cgroup;
pub mod channel;
pub mod egress;
pub mod error;
pub mod http_plane;
pub mod launch;
pub mod layers;
pub mod plane;
pub mod seccomp;
pub mod spec;
pub mod supervisor;
pub mod wasm_plane;

pub use cancel::CancelToken;
pub use channel::ServiceProcess;
pub use egress::{EgressPolicy, EgressProxy};
pub use error::SandboxError;
pub use http_plane::HttpService;
pub use layers::{available_layers, Layers};
pub use plane::{Plane, Running};
pub use spec::{Limits, ServiceSpec};
pub use supervisor::{AuditEvent, Health, Policy, Supervisor};
pub use wasm_plane::{WasmLimits, WasmService};
