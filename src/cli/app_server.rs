//! `apphost app-server --stdio`: the App Server JSON-RPC (`appserver.v0`) over stdin/stdout,
//! one message per line. Stdout carries only protocol lines; logs go to stderr.
//!
//! Who owns the runtime: when a host (the desktop window, `apphost serve`) answers at its door
//! (`<data>/runtime/app-server.sock`), this process relays to it ([`super::app_server_relay`])
//! and shares its sessions; otherwise it opens the runtime itself (a stale socket file is then
//! removed).
//!
//! The runtime's event log lives in `<data>/runtime/`; host tools act inside each app's data area
//! (`<data>/apps/<app>/`). With a model configured (`apphost model set`) the real
//! OpenAI-compatible backend runs turns; without one the server starts, reports `needs-setup`,
//! and `agentSession/turn/start` fails with its documented error (never a canned answer).

use std::sync::Arc;

use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::foundation::paths::DataDir;
use host_core::hosting::model_settings;
use host_core::install::store::Store;
use runtime_core::app_server::{serve_stdio, ServeConfig};
use runtime_core::backend::ExecutionBackend;
use runtime_core::runtime::{Runtime, RuntimeConfig};

use super::app_server_relay as relay;

pub fn run(dir: &DataDir, stdio: bool) -> HostResult<i32> {
    if !stdio {
        return Err(HostError::new(
            ErrorCode::CliUsage,
            "app-server needs a transport: --stdio",
        ));
    }
    let runtime_dir = dir.root().join("runtime");
    let door = relay::knock(&runtime_dir).and_then(|door| match door {
        relay::Door::Open(stream, token) => {
            relay::relay(std::io::stdin(), std::io::stdout(), stream, &token).map(|_| true)
        }
        relay::Door::Closed => Ok(false),
    });
    match door {
        Ok(true) => return Ok(0),
        Ok(false) => {}
        Err(e) => {
            return Err(HostError::new(
                ErrorCode::Internal,
                format!("the App Server door failed: {e}"),
            ))
        }
    }
    let backend = backend(dir)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| {
            HostError::new(
                ErrorCode::Internal,
                format!("cannot start the runtime: {e}"),
            )
        })?;
    let mut config = RuntimeConfig::new(runtime_dir.clone());
    config.apps_dir = dir.apps_data();
    config.tool_policy = Arc::new(host_core::hosting::agent_tool_policy::StoreToolPolicy::new(
        dir.clone(),
    ));
    rt.block_on(async move {
        let runtime = Runtime::open(config, backend).map_err(|e| match e {
            runtime_core::runtime::RuntimeError::Busy(_) => {
                HostError::new(ErrorCode::RuntimeBusy, e.to_string())
            }
            e => HostError::new(ErrorCode::Internal, format!("cannot open the runtime: {e}")),
        })?;
        relay::remove_stale(&runtime_dir);
        let stdin = tokio::io::BufReader::new(tokio::io::stdin());
        serve_stdio(stdin, tokio::io::stdout(), ServeConfig::new(runtime))
            .await
            .map_err(|e| HostError::new(ErrorCode::Internal, format!("stdio failed: {e}")))
    })?;
    Ok(0)
}

/// The configured model as a backend, or `None` (the runtime then reports `needs-setup`).
fn backend(dir: &DataDir) -> HostResult<Option<Arc<dyn ExecutionBackend>>> {
    model_settings::backend(&Store::open(dir)?)
}
