//! Stable refusal codes of the service sandbox (documented in docs/services.md).

use thiserror::Error;

#[derive(Debug, Error)]
pub enum SandboxError {
    /// A required sandbox layer is missing on this host (bwrap, Landlock ABI >= 3, pids cgroup).
    #[error("service.sandbox_unavailable: {0}")]
    SandboxUnavailable(String),
    /// The declared interpreter/runtime does not exist on this host.
    #[error("service.runtime_unavailable: {0}")]
    RuntimeUnavailable(String),
    /// The spec names a path outside what the service may mount or run.
    #[error("service.invalid_spec: {0}")]
    InvalidSpec(String),
    /// Spawning the sandbox failed.
    #[error("service.start_failed: {0}")]
    StartFailed(String),
    /// The call did not get an answer in time; a cancel was sent to the process.
    #[error("service.timeout")]
    Timeout,
    /// The caller cancelled the call; a `$/cancelRequest` was sent to the process.
    #[error("service.cancelled")]
    Cancelled,
    /// The process exited or closed its channel.
    #[error("service.exited: {0}")]
    Exited(String),
    /// The service broke the protocol (oversized line, bad JSON, bad id).
    #[error("service.protocol: {0}")]
    Protocol(String),
    /// Inside the restart backoff after a crash.
    #[error("service.backoff")]
    Backoff,
    /// Crashed too often: blocked until a user action.
    #[error("service.crash_loop: {0}")]
    CrashLoop(String),
    /// The service answered with a JSON-RPC error.
    #[error("service.error: {code}: {message}")]
    Remote { code: i64, message: String },
    /// Wasm: the call used up its fuel (an endless or too long computation).
    #[error("service.wasm_fuel_exhausted: {0}")]
    WasmFuelExhausted(String),
    /// Wasm: the module asked for more linear memory (or table space) than its limit.
    #[error("service.wasm_memory_limit: {0}")]
    WasmMemoryLimit(String),
    /// Wasm: the module is larger than the size cap.
    #[error("service.wasm_module_too_large: {0}")]
    WasmModuleTooLarge(String),
    /// Wasm: the bytes are not a valid module (malformed, fails validation, over engine limits).
    #[error("service.wasm_invalid_module: {0}")]
    WasmInvalidModule(String),
    /// Wasm: the module imports something the host does not provide (WASI, `env.*`, ...).
    #[error("service.wasm_import_refused: {0}")]
    WasmImportRefused(String),
    /// Wasm: the module breaks the host ABI (missing/mistyped export, out-of-bounds pointer).
    #[error("service.wasm_abi: {0}")]
    WasmAbi(String),
    /// Wasm: the module trapped (unreachable, out-of-bounds access, stack overflow, ...).
    #[error("service.wasm_trap: {0}")]
    WasmTrap(String),
    /// local-http: the service answered with a non-2xx HTTP status.
    #[error("service.http_status: {0}")]
    HttpStatus(u16),
}

impl SandboxError {
    /// The stable code (the part before the colon).
    pub fn code(&self) -> &'static str {
        match self {
            Self::SandboxUnavailable(_) => "service.sandbox_unavailable",
            Self::RuntimeUnavailable(_) => "service.runtime_unavailable",
            Self::InvalidSpec(_) => "service.invalid_spec",
            Self::StartFailed(_) => "service.start_failed",
            Self::Timeout => "service.timeout",
            Self::Cancelled => "service.cancelled",
            Self::Exited(_) => "service.exited",
            Self::Protocol(_) => "service.protocol",
            Self::Backoff => "service.backoff",
            Self::CrashLoop(_) => "service.crash_loop",
            Self::Remote { .. } => "service.error",
            Self::WasmFuelExhausted(_) => "service.wasm_fuel_exhausted",
            Self::WasmMemoryLimit(_) => "service.wasm_memory_limit",
            Self::WasmModuleTooLarge(_) => "service.wasm_module_too_large",
            Self::WasmInvalidModule(_) => "service.wasm_invalid_module",
            Self::WasmImportRefused(_) => "service.wasm_import_refused",
            Self::WasmAbi(_) => "service.wasm_abi",
            Self::WasmTrap(_) => "service.wasm_trap",
            Self::HttpStatus(_) => "service.http_status",
        }
    }
}
