//! AppHost's Tauri-free core: everything between "here is a package" and "it is installed".
//!
//! Pipeline (no app code runs at any step): [`package`] lists and reads a source →
//! [`hashing`] / [`lockfile`] / [`signature`] verify it → [`manifest`] loads it → [`projection`]
//! shows what it would add → [`readiness`] says whether it can run → [`store`] installs it
//! (content-addressed blobs + `host.db`) after consent. [`inspect`] strings the first five
//! together.
//!
//! Architecture invariant: no dependency on `tauri`; projection and readiness are pure
//! functions of their inputs (no clock, no randomness).

pub mod agent_tool_policy;
pub mod api;
pub mod app_secrets;
pub mod bridge;
pub mod capability;
pub mod center;
pub mod compat;
pub mod downloads;
pub mod error;
pub mod hashing;
pub mod inspect;
pub mod limits;
pub mod lockfile;
pub mod manifest;
pub mod model_settings;
pub mod package;
pub mod paths;
pub mod profile;
pub mod projection;
pub mod random;
pub mod readiness;
pub mod secrets;
pub mod signature;
pub mod store;
pub mod surface;
pub mod typescript;
pub mod yaml;

pub use error::{ErrorCode, HostError, HostResult};
