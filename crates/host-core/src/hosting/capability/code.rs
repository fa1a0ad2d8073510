//! The `code` of a failed capability call: the standard's `APP_E…` codes AppHost uses and its
//! own bridge-level `HOST_E_…` codes. [`CallError`](super::dispatch::CallError) carries one, so
//! no service writes a raw code string. The Host Bridge publishes this enum as its wire type
//! (`bridge/wire.rs` re-exports it; the schema and the SDK's TypeScript are generated from it).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

macro_rules! error_codes {
    ($( $(#[$doc:meta])* $variant:ident = $text:literal, )*) => {
        /// Every `code` a `host:error` (or the SDK itself) can carry: the standard's `APP_E…`
        /// codes AppHost uses and its own bridge-level `HOST_E_…` codes (docs/bridge-protocol.md §6).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
        pub enum ErrorCode { $( $(#[$doc])* #[serde(rename = $text)] $variant, )* }
        impl ErrorCode {
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];
            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $text,)* }
            }
            pub fn parse(s: &str) -> Option<ErrorCode> {
                ErrorCode::ALL.iter().copied().find(|c| c.as_str() == s)
            }
        }
    };
}

error_codes! {
    /// CAPABILITY_NOT_AVAILABLE: not implemented here, or the entry is not ready.
    CapabilityNotAvailable = "APP_E001",
    /// PERMISSION_DENIED: not declared, not granted, denied by the user or by policy.
    PermissionDenied = "APP_E002",
    /// KNOWLEDGE_NOT_BOUND: the knowledge template is declared but the user has bound no
    /// folder to it (`knowledge.not_bound`).
    KnowledgeNotBound = "APP_E003",
    /// SECRET_NOT_BOUND: the secret slot is declared but the user has bound no value to it.
    SecretNotBound = "APP_E011",
    /// MODEL_NOT_CONFIGURED (AppHost extension in the standard's configuration range): no
    /// model is set up, so `lime.agent` cannot start or retry a task (`agent.needs_setup`).
    ModelNotConfigured = "APP_E012",
    /// STORAGE_QUOTA_EXCEEDED.
    StorageQuotaExceeded = "APP_E201",
    /// STORAGE_MIGRATION_REQUIRED: the version's reviewed migrations could not be applied; the
    /// app is blocked until an update or rollback (`causeCode` `storage.migration_*`).
    StorageMigrationRequired = "APP_E202",
    /// STORAGE_SCHEMA_MISMATCH: a declared table or a column is not in the app's database.
    StorageSchemaMismatch = "APP_E203",
    /// WORKFLOW_INVALID_STATE: the run cannot take this now (it has ended, or it waits for
    /// something else: `workflow.run_finished`, `workflow.not_waiting_for_answer`).
    WorkflowInvalidState = "APP_E301",
    /// Invalid arguments (`causeCode` says which).
    InvalidArgument = "APP_E900",
    /// NOT_FOUND (AppHost extension): no artifact or evidence record with this id in the app.
    NotFound = "APP_E904",
    /// The host failed (storage I/O, audit log unavailable); retryable.
    UnknownError = "APP_E999",
    /// Too many calls in flight on this frame, or too many prompts waiting; retryable.
    RateLimited = "HOST_E_RATE_LIMITED",
    /// A call with this `requestId` is already in flight.
    DuplicateRequest = "HOST_E_DUPLICATE_REQUEST",
    /// The call's deadline passed (SDK side); retryable.
    Timeout = "HOST_E_TIMEOUT",
    /// The app cancelled the call.
    Cancelled = "HOST_E_CANCELLED",
}

impl ErrorCode {
    /// The code of a RuntimeCore data error (`StorageError::app_code`, …: RuntimeCore knows no
    /// bridge types and names the standard's codes as text). A text that is not one of these
    /// codes is a host failure (`APP_E999`), never passed through.
    pub fn of_runtime(code: &str) -> ErrorCode {
        ErrorCode::parse(code).unwrap_or(ErrorCode::UnknownError)
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_unknown_runtime_codes_are_host_failures() {
        for c in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(c.as_str()), Some(*c));
            assert_eq!(
                serde_json::to_value(c).expect("serializes"),
                serde_json::Value::String(c.as_str().to_owned())
            );
        }
        assert_eq!(
            ErrorCode::of_runtime("APP_E201"),
            ErrorCode::StorageQuotaExceeded
        );
        assert_eq!(ErrorCode::of_runtime("app_e201"), ErrorCode::UnknownError);
        assert_eq!(ErrorCode::of_runtime(""), ErrorCode::UnknownError);
    }
}
