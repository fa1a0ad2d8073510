//! Which execution plane runs a service, chosen from the manifest's `executionPlane` and
//! `protocol`, and the running service of each plane behind one face for the supervisor.

use std::time::Duration;

use serde_json::Value;

use crate::cancel::CancelToken;
use crate::channel::{HostHandler, ServiceProcess};
use crate::error::SandboxError;
use crate::http_plane::HttpService;
use crate::spec::ServiceSpec;
use crate::wasm_plane::{WasmLimits, WasmService};

#[derive(Debug, Clone, Default)]
pub enum Plane {
    /// `client-local` + `stdio-jsonrpc`: a sandboxed process, JSON-RPC over stdin/stdout.
    #[default]
    Stdio,
    /// `client-local` + `wasm`: `program[0]` is the module (`/app/...`), run in-process by wasmi.
    Wasm(WasmLimits),
    /// `client-local` + `local-http`: a sandboxed process serving HTTP on a host-provided socket.
    LocalHttp,
}

impl Plane {
    /// The plane for a manifest `services[]` entry; anything the host does not run is
    /// `service.runtime_unavailable` with the reason.
    pub fn for_manifest(execution_plane: &str, protocol: &str) -> Result<Self, SandboxError> {
        match (execution_plane, protocol) {
            ("client-local", "stdio-jsonrpc") => Ok(Self::Stdio),
            ("client-local", "wasm") => Ok(Self::Wasm(WasmLimits::default())),
            ("client-local", "local-http") => Ok(Self::LocalHttp),
            (plane, proto) => Err(SandboxError::RuntimeUnavailable(format!(
                "{plane} {proto} services are not run by this host"
            ))),
        }
    }

    /// A `wasm` plane whose linear memory cap follows `resourceLimits.memoryMb`.
    pub fn with_memory_mb(self, memory_mb: u64) -> Self {
        match self {
            Self::Wasm(mut l) => {
                l.memory_bytes = usize::try_from(memory_mb.saturating_mul(1 << 20))
                    .unwrap_or(usize::MAX)
                    .min(4 << 30);
                Self::Wasm(l)
            }
            other => other,
        }
    }
}

/// A started service of any plane.
pub enum Running {
    Stdio(ServiceProcess),
    Wasm(WasmService),
    Http(HttpService),
}

impl Running {
    pub fn start(
        plane: &Plane,
        spec: &ServiceSpec,
        handler: HostHandler,
    ) -> Result<Self, SandboxError> {
        Ok(match plane {
            Plane::Stdio => Self::Stdio(ServiceProcess::start(spec, handler)?),
            Plane::Wasm(limits) => Self::Wasm(WasmService::load(spec, *limits, handler)?),
            // its own lime.* requests come back on its stdout (http_plane/host_requests.rs)
            Plane::LocalHttp => Self::Http(HttpService::start_with_handler(spec, handler)?),
        })
    }

    /// The sandbox's pid; 0 for Wasm (it runs inside the host process).
    pub fn pid(&self) -> u32 {
        match self {
            Self::Stdio(s) => s.pid(),
            Self::Wasm(_) => 0,
            Self::Http(s) => s.pid(),
        }
    }

    pub fn call(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, SandboxError> {
        match self {
            Self::Stdio(s) => s.call(method, params, timeout),
            Self::Wasm(s) => s.call(method, params, timeout),
            Self::Http(s) => s.call(method, params, timeout),
        }
    }

    /// [`Self::call`] that `cancel` ends with `service.cancelled`, on every plane: a stdio
    /// service gets `$/cancelRequest` at once; a Wasm call stops between two fuel slices (its
    /// instance is dropped); a local-http call's connection is dropped (the service sees it
    /// closed). Cancelled before it starts, nothing is sent.
    pub fn call_cancellable(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
        cancel: &CancelToken,
    ) -> Result<Value, SandboxError> {
        match self {
            Self::Stdio(s) => s.call_cancellable(method, params, timeout, cancel),
            Self::Wasm(s) => s.call_cancellable(method, params, timeout, cancel),
            Self::Http(s) => s.call_cancellable(method, params, timeout, cancel),
        }
    }

    /// A local-http service's `lime.*` requests refused over the per-call cap in the call
    /// that just ended (the other planes answer their own floods on their wire).
    pub fn take_flood(&self) -> Option<crate::http_plane::host_requests::Flood> {
        match self {
            Self::Http(s) => s.take_flood(),
            _ => None,
        }
    }

    pub fn exit_status(&mut self) -> Option<String> {
        match self {
            Self::Stdio(s) => s.exit_status(),
            Self::Wasm(_) => None,
            Self::Http(s) => s.exit_status(),
        }
    }

    pub fn kill(&mut self) {
        match self {
            Self::Stdio(s) => s.kill(),
            Self::Wasm(_) => {}
            Self::Http(s) => s.kill(),
        }
    }

    pub fn logs(&self) -> String {
        match self {
            Self::Stdio(s) => s.logs(),
            Self::Wasm(s) => s.logs(),
            Self::Http(s) => s.logs(),
        }
    }
}
