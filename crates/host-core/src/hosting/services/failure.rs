//! [`ServiceFailure`]: a service refusal or failure with its stable `service.*` code, and how
//! the CLI and the host API report it; the method names only the host may send.

use service_sandbox::SandboxError;

use crate::foundation::error::{ErrorCode, HostError};

/// A refusal or failure with its stable `service.*` code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceFailure {
    pub code: &'static str,
    pub message: String,
    /// Worth trying again (a timeout, the restart backoff, an exit).
    pub retryable: bool,
}

impl ServiceFailure {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        ServiceFailure {
            code,
            message: message.into(),
            retryable: false,
        }
    }
}

impl ServiceFailure {
    /// The CLI's and host API's error: `service.not_declared`, `service.call_failed` (the call
    /// reached the service) or `service.cannot_run`, with the `service.*` cause.
    pub fn host_error(&self) -> HostError {
        let code = match self.code {
            "service.not_declared" => ErrorCode::ServiceNotDeclared,
            "service.timeout"
            | "service.cancelled"
            | "service.exited"
            | "service.protocol"
            | "service.error"
            | "service.start_failed" => ErrorCode::ServiceCallFailed,
            c if is_remote_call_failure(c) => ErrorCode::ServiceCallFailed,
            _ => ErrorCode::ServiceCannotRun,
        };
        HostError::new(code, self.message.clone())
            .with("cause", self.code)
            .with("retryable", if self.retryable { "true" } else { "false" })
    }
}

/// Method names nobody but the host may send to a service: its lifecycle and notifications,
/// and the `lime.*` names that flow the other way.
pub fn reserved_method(method: &str) -> bool {
    matches!(method, "initialize" | "shutdown" | "exit")
        || method.starts_with("$/")
        || method.starts_with("lime.")
}

impl From<SandboxError> for ServiceFailure {
    fn from(e: SandboxError) -> Self {
        let retryable = matches!(
            e,
            SandboxError::Timeout | SandboxError::Backoff | SandboxError::Exited(_)
        );
        ServiceFailure {
            code: e.code(),
            message: e.to_string().chars().take(1024).collect(),
            retryable,
        }
    }
}

/// The failure codes of a remote call that reached (or tried to reach) the service, beside
/// the ones a local call shares (`service.timeout`, `service.protocol`, `service.error`).
pub fn is_remote_call_failure(code: &str) -> bool {
    matches!(
        code,
        "service.http_status"
            | "service.remote_redirect"
            | "service.remote_too_large"
            | "service.remote_content_type"
            | "service.remote_unreachable"
    )
}
