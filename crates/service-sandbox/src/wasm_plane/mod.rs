//! The `wasm` execution plane: an app's Wasm module run in-process by the `wasmi` interpreter
//! with no ambient authority. The module sees nothing but its own linear memory and ONE host
//! import, `lime.lime_call`, which sends a `lime.*` request to the same host handler a stdio
//! service's requests reach (the choke point). No filesystem, network, clock or environment:
//! WASI and every other import is refused before instantiation.
//!
//! ABI (docs/services.md "Wasm ABI"): exports `memory`, `alloc(len: i32) -> i32` and
//! `handle(ptr: i32, len: i32) -> i64` (`ptr << 32 | len` of a JSON-RPC response); the host writes
//! a JSON-RPC request into memory from `alloc` and calls `handle`. Every call gets a FRESH
//! instance (measured in docs/benchmarks.md: instantiation is cheap next to a call, and no state
//! leaks from one call into the next).
//!
//! Limits: module size cap, validation + import/export check before any instantiation, fuel per
//! call (`service.wasm_fuel_exhausted`), a wall-clock deadline and the caller's cancel checked
//! between fuel slices (`service.timeout`, `service.cancelled`), linear memory and table caps through a `ResourceLimiter`
//! (`service.wasm_memory_limit`), bounded messages both ways (`service.protocol`).

pub(crate) mod abi;
mod load;
mod run;

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::Value;

use crate::cancel::CancelToken;
use crate::channel::HostHandler;
use crate::error::SandboxError;
use crate::spec::ServiceSpec;

pub use load::{check_module, LoadedModule};

/// Per-service Wasm limits (defaults fit a JSON transform; the host may lower them).
#[derive(Debug, Clone, Copy)]
pub struct WasmLimits {
    /// Largest accepted module file, bytes.
    pub max_module_bytes: usize,
    /// Linear memory cap, bytes (declared minimum and every `memory.grow`).
    pub memory_bytes: usize,
    /// Table elements cap.
    pub table_elements: usize,
    /// Fuel (about one unit per Wasm instruction) one call may burn in total.
    pub fuel_per_call: u64,
    /// Fuel given per slice; the deadline and the caller's cancel are checked between slices
    /// (1 M: a cancel is seen within about 0.1 s even in a debug build).
    pub fuel_slice: u64,
    /// Fuel for instantiation (start function) and each `alloc`.
    pub fuel_setup: u64,
    /// `lime_call`s one `handle` may make.
    pub max_host_calls: usize,
    /// Largest message either way (request, response, `lime_call` request), bytes.
    pub max_message: usize,
}

impl Default for WasmLimits {
    fn default() -> Self {
        Self {
            max_module_bytes: 8 << 20,
            memory_bytes: 64 << 20,
            table_elements: 10_000,
            fuel_per_call: 2_000_000_000,
            fuel_slice: 1_000_000,
            fuel_setup: 10_000_000,
            max_host_calls: 64,
            max_message: crate::channel::MAX_LINE,
        }
    }
}

/// Bytes of refusal notes kept as the service's log.
const LOG_RING: usize = 16 * 1024;

/// A loaded Wasm service: the validated, compiled module and the host handler for `lime_call`.
pub struct WasmService {
    module: LoadedModule,
    limits: WasmLimits,
    handler: Option<HostHandler>,
    next_id: u64,
    log: VecDeque<u8>,
}

impl WasmService {
    /// Load the module `spec.program[0]` (a `/app/...` path inside the package).
    pub fn load(
        spec: &ServiceSpec,
        limits: WasmLimits,
        handler: HostHandler,
    ) -> Result<Self, SandboxError> {
        let bytes = load::read_module(spec, limits.max_module_bytes)?;
        Self::from_bytes(&bytes, limits, handler)
    }

    /// Validate and compile `bytes`; refuse before any instantiation.
    pub fn from_bytes(
        bytes: &[u8],
        limits: WasmLimits,
        handler: HostHandler,
    ) -> Result<Self, SandboxError> {
        let module = LoadedModule::compile(bytes, &limits)?;
        Ok(Self {
            module,
            limits,
            handler: Some(handler),
            next_id: 1,
            log: VecDeque::new(),
        })
    }

    /// Call `method` in a fresh instance under the fuel, memory and `timeout` limits.
    pub fn call(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, SandboxError> {
        self.call_cancellable(method, params, timeout, &CancelToken::default())
    }

    /// [`Self::call`] that `cancel` ends: looked at between fuel slices (and before each
    /// `lime_call` is served), so a cancelled call stops within one slice
    /// ([`WasmLimits::fuel_slice`]) and fails `service.cancelled`. The instance is dropped; the
    /// next call gets a fresh one as always.
    pub fn call_cancellable(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
        cancel: &CancelToken,
    ) -> Result<Value, SandboxError> {
        if cancel.is_cancelled() {
            return Err(SandboxError::Cancelled);
        }
        let id = self.next_id;
        self.next_id += 1;
        let handler = self
            .handler
            .take()
            .ok_or_else(|| SandboxError::Exited("handler lost".into()))?;
        let request =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (outcome, handler) = run::call(
            &self.module,
            &self.limits,
            handler,
            &request,
            timeout,
            cancel,
        );
        self.handler = Some(handler);
        let result = outcome.and_then(|reply| abi::parse_reply(&reply, id));
        if let Err(e) = &result {
            if !matches!(e, SandboxError::Remote { .. }) {
                self.note(&format!("{method}: {e}\n"));
            }
        }
        result
    }

    /// Create (and drop) one instance without calling it: the per-call instance cost
    /// (`wasm-bench`), also a dry run that the module instantiates under its limits.
    pub fn instantiate_once(&self) -> Result<(), SandboxError> {
        run::instantiate_once(&self.module, &self.limits)
    }

    fn note(&mut self, text: &str) {
        self.log.extend(text.as_bytes());
        let excess = self.log.len().saturating_sub(LOG_RING);
        self.log.drain(..excess);
    }

    /// The last refusals/traps of this service (a Wasm module has no stderr).
    pub fn logs(&self) -> String {
        String::from_utf8_lossy(&self.log.iter().copied().collect::<Vec<_>>()).into_owned()
    }
}
