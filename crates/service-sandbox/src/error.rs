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
            Self::Exited(_) => "service.exited",
            Self::Protocol(_) => "service.protocol",
            Self::Backoff => "service.backoff",
            Self::CrashLoop(_) => "service.crash_loop",
            Self::Remote { .. } => "service.error",
        }
    }
}
