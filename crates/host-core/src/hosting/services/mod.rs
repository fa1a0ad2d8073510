//! App-owned backend services under host supervision (issue 24; docs/services.md).
//!
//! One [`ServiceHost`] per data directory in a process ([`ServiceHost::for_data_dir`]), shared
//! by every session of that process (the window, `apphost serve`, the CLI): it starts an app's
//! declared `client-local` service (`stdio-jsonrpc` or `local-http` in the process sandbox,
//! `wasm` in-process) on its first call (or [`ServiceHost::start`]
//! when the app opens), stops it when idle (default 5 min, `APPHOST_SERVICE_IDLE_SECS`) and
//! when the app closes, is disabled or uninstalled; restarts after a crash with backoff; a
//! crash loop shows in readiness and `services list` in every process (durable in host.db:
//! `health.rs`); the service dir has a total-size quota (`install/service_disk.rs`). The sandbox, channel and
//! supervisor are `crates/service-sandbox`; what runs is `install::service_launch::plan`, the
//! same plan readiness checks. The service's own `lime.*` requests are answered by the
//! [`BackCalls`] the session gives (`capability/services/app_services.rs`: the choke point,
//! with the service as the caller), so this module knows nothing of capabilities.

pub mod admin_policy;
mod failure;
mod health;
mod host;
mod id;
mod log_file;
pub mod network_grant;
pub mod package;
pub mod remote;
pub mod reset;
mod slot;
mod status;

pub use failure::is_remote_call_failure;
pub use host::{
    reserved_method, BackCalls, PreparedCall, ServiceFailure, ServiceHost, ServiceId,
    NETWORK_REVOKED,
};
pub use log_file::read_log_file;
pub use status::ServiceStatus;
