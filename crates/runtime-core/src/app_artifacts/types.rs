//! The artifact store's public types: provenance, limits, errors, metadata and pages.

use serde::{Deserialize, Serialize};

use super::*;

/// Package provenance stamped on everything a capability call creates. Field names are the
/// Host Bridge's (`appId`, `appVersion`, `entryKey`, `packageHash`, `manifestHash`, `traceId`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Provenance {
    pub app_id: String,
    pub app_version: String,
    pub package_hash: String,
    pub manifest_hash: String,
    pub entry_key: String,
    pub trace_id: String,
    /// Set on what the agent's host tools create: the session, the run (= turn) and the tool
    /// call that made it. Absent on what an app's own capability calls create.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentProvenance>,
}

/// Which agent run and tool call created a record (`provenance.agent`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentProvenance {
    pub session_id: String,
    /// The turn the tool ran in: a `lime.agent` task's run id.
    pub run_id: String,
    pub tool_call_id: String,
    pub tool: String,
}

/// Limits for one app's artifacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArtifactLimits {
    pub max_artifact_bytes: u64,
    pub quota_bytes: u64,
    pub max_artifacts: u64,
}

impl Default for ArtifactLimits {
    fn default() -> Self {
        ArtifactLimits {
            max_artifact_bytes: DEFAULT_MAX_ARTIFACT_BYTES,
            quota_bytes: DEFAULT_ARTIFACT_QUOTA_BYTES,
            max_artifacts: DEFAULT_MAX_ARTIFACTS,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    #[error("artifact quota exceeded: {used} + {adding} bytes > {quota} bytes")]
    QuotaExceeded { used: u64, adding: u64, quota: u64 },
    #[error("the app already keeps {max} artifacts")]
    TooMany { max: u64 },
    #[error("artifact too large: {size} bytes (at most {max})")]
    TooLarge { size: u64, max: u64 },
    #[error("invalid artifact name: {0}")]
    InvalidName(&'static str),
    #[error("invalid MIME type: must be type/subtype, at most 127 characters")]
    InvalidMimeType,
    #[error("invalid artifact id")]
    InvalidId,
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("no artifact with this id")]
    NotFound,
    #[error("this idempotency key was used for another artifact")]
    IdempotencyConflict,
    #[error("the artifact's stored bytes do not match its SHA-256")]
    Corrupt,
    #[error("artifact database error: {0}")]
    Db(#[from] rusqlite::Error),
    #[error("artifact i/o error ({op}): {source}")]
    Io {
        op: &'static str,
        source: std::io::Error,
    },
}

impl ArtifactError {
    /// The Host Bridge code: `APP_E201` quota, `APP_E900` bad arguments, `APP_E904` unknown id,
    /// `APP_E999` host failure.
    pub fn app_code(&self) -> &'static str {
        match self {
            ArtifactError::QuotaExceeded { .. } | ArtifactError::TooMany { .. } => "APP_E201",
            ArtifactError::TooLarge { .. }
            | ArtifactError::InvalidName(_)
            | ArtifactError::InvalidMimeType
            | ArtifactError::InvalidId
            | ArtifactError::InvalidArgument(_)
            | ArtifactError::IdempotencyConflict => "APP_E900",
            ArtifactError::NotFound => "APP_E904",
            ArtifactError::Corrupt | ArtifactError::Db(_) | ArtifactError::Io { .. } => "APP_E999",
        }
    }

    /// The `causeCode` (`artifacts.*`).
    pub fn cause_code(&self) -> &'static str {
        match self {
            ArtifactError::QuotaExceeded { .. } => "artifacts.quota_exceeded",
            ArtifactError::TooMany { .. } => "artifacts.too_many",
            ArtifactError::TooLarge { .. } => "artifacts.too_large",
            ArtifactError::InvalidName(_) => "artifacts.invalid_name",
            ArtifactError::InvalidMimeType => "artifacts.invalid_mime_type",
            ArtifactError::InvalidId => "artifacts.invalid_id",
            ArtifactError::InvalidArgument(_) => "artifacts.invalid_argument",
            ArtifactError::NotFound => "artifacts.not_found",
            ArtifactError::IdempotencyConflict => "artifacts.idempotency_conflict",
            ArtifactError::Corrupt => "artifacts.corrupt",
            ArtifactError::Db(_) => "artifacts.db",
            ArtifactError::Io { .. } => "artifacts.io",
        }
    }

    /// Whether the failure is the host's (worth retrying), not the caller's.
    pub fn is_host_failure(&self) -> bool {
        matches!(self, ArtifactError::Db(_) | ArtifactError::Io { .. })
    }
}

pub(super) fn io(op: &'static str) -> impl FnOnce(std::io::Error) -> ArtifactError {
    move |source| ArtifactError::Io { op, source }
}

pub(super) fn errno(op: &'static str) -> impl FnOnce(rustix::io::Errno) -> ArtifactError {
    move |e| ArtifactError::Io {
        op,
        source: e.into(),
    }
}

/// One artifact's metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactMeta {
    pub id: String,
    pub name: String,
    pub mime_type: String,
    pub size: u64,
    /// Lowercase hex SHA-256 of the bytes.
    pub sha256: String,
    pub created_at: String,
    pub provenance: Provenance,
}

/// One page of a listing (oldest first).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactPage {
    pub items: Vec<ArtifactMeta>,
    /// Pass as `cursor` to get the next page; `None` at the end.
    pub next_cursor: Option<String>,
}

/// What [`AppArtifacts::open`] cleaned up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlobCleanup {
    /// Unreferenced blobs and leftover temporary files removed.
    pub removed: u64,
}
