//! AppHost's Tauri-free core, in the product's two halves plus the front doors on top.
//!
//! - [`foundation`]: no product knowledge (errors, paths, limits, randomness, YAML, hashing,
//!   the host profile, TypeScript stripping).
//! - [`install`]: "install without executing". Pipeline (no app code runs at any step):
//!   [`install::package`] lists and reads a source → [`foundation::hashing`] /
//!   [`install::lockfile`] / [`install::signature`] verify it → [`install::manifest`] loads it
//!   → [`install::projection`] shows what it would add → [`install::readiness`] says whether it
//!   can run → [`install::store`] installs it (content-addressed blobs + `host.db`) after
//!   consent. [`install::inspect`] strings the first five together.
//! - [`hosting`]: "host a running app" (Host Bridge, capability choke point, app surfaces,
//!   secrets, model settings, agent tool policy).
//! - [`api`] and [`center`]: the front doors every transport calls.
//!
//! Allowed edges: foundation ← install ← hosting ← {api, center}; nothing points upward
//! (pinned by `tests/module_edges.rs`).
//!
//! Architecture invariant: no dependency on `tauri`; projection and readiness are pure
//! functions of their inputs (no clock, no randomness).

pub mod api;
pub mod center;
pub mod foundation;
pub mod hosting;
pub mod install;

pub use foundation::error::{ErrorCode, HostError, HostResult};
