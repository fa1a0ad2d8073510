//! What the host decides for the agent's host tools, per app: the storage quota `files/`
//! shares with `lime.storage`, whether `artifact_write` needs the user's approval, and the
//! installed package's facts stamped in an artifact's provenance. RuntimeCore knows no
//! manifests: the host supplies these (host-core's `agent_tool_policy`), read where they are
//! enforced (on every tool call and at every turn's start).

use crate::app_artifacts::ArtifactLimits;
use crate::app_storage::DEFAULT_QUOTA_BYTES;
use crate::ids::AppId;

/// The installed version of an app, for provenance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackageFacts {
    pub app_version: String,
    pub package_hash: String,
    pub manifest_hash: String,
}

/// The host's decisions for the agent's tools.
pub trait ToolPolicy: Send + Sync + std::fmt::Debug {
    /// The app's storage quota in bytes (`storage.quota` of its manifest): `storage.sqlite`
    /// and `files/` together stay under it.
    fn storage_quota(&self, _app: &AppId) -> u64 {
        DEFAULT_QUOTA_BYTES
    }

    /// The app's artifact limits: the ones `lime.artifacts` applies (the quota is shared with
    /// the app's own artifacts).
    fn artifact_limits(&self, _app: &AppId) -> ArtifactLimits {
        ArtifactLimits::default()
    }

    /// Whether `artifact_write` needs the user's approval on every call (the default: yes,
    /// see [`DEFAULT_ARTIFACT_WRITE_NEEDS_APPROVAL`]).
    fn artifact_write_needs_approval(&self) -> bool {
        DEFAULT_ARTIFACT_WRITE_NEEDS_APPROVAL
    }

    /// Whether a folder is bound to the app's knowledge template `template` now (asked on every
    /// `knowledge_search` call; no host: never).
    fn knowledge_bound(&self, _app: &AppId, _template: &str) -> bool {
        false
    }

    /// The installed version's facts, when the app is installed.
    fn package(&self, _app: &AppId) -> Option<PackageFacts> {
        None
    }

    /// The app's token budget per task (the host's `model budget` setting): a turn of the
    /// app's sessions ends `error_max_budget` once its model calls used more. It can only
    /// lower `RuntimeConfig::limits.max_tokens`, never raise it. `None`: no app budget.
    fn token_budget(&self, _app: &AppId) -> Option<u64> {
        None
    }
}

/// Safe default: an artifact is a deliverable the user sees, downloads and opens, and it
/// spends the app's artifact quota, while the model's instructions may come from untrusted
/// content (a prompt injection in a document it reads). So each one is approved by the user
/// unless the host setting says otherwise.
pub const DEFAULT_ARTIFACT_WRITE_NEEDS_APPROVAL: bool = true;

/// The defaults, for runtimes without a host (tests, the bench).
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultToolPolicy;

impl ToolPolicy for DefaultToolPolicy {}
