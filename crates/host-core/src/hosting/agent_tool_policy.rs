//! The host's policy for the agent's host tools (RuntimeCore's `ToolPolicy`), read from the
//! store on every use, so an install, update or setting change applies to the next tool call
//! (quota, provenance) or the next turn (approval):
//!
//! - the storage quota `files/` shares with `lime.storage`: `storage.quota` of the app's active
//!   version (the same plan `lime.storage` opens with), else the default;
//! - whether `artifact_write` needs the user's approval: the host setting
//!   [`ARTIFACT_WRITE_APPROVAL`] (`apphost config agent.artifactWriteApproval allow|ask`); default `ask`
//!   (an artifact is a deliverable the user downloads and opens, and the model may be steered by
//!   untrusted content; see `runtime_core::tools::policy`). Anything unreadable means `ask`;
//! - the active version's package and manifest hashes for an artifact's provenance;
//! - the app's token budget per task: `model.budget.<app>` (`foundation::budget_keys`); none
//!   when unset or unreadable.

use runtime_core::app_artifacts::ArtifactLimits;
use runtime_core::app_storage::DEFAULT_QUOTA_BYTES;
use runtime_core::tools::{PackageFacts, ToolPolicy};
use runtime_core::AppId;

use crate::foundation::paths::DataDir;
use crate::foundation::setting_keys::{ALLOW, ARTIFACT_WRITE_APPROVAL};
use crate::install::store::Store;

/// The policy over one data directory's store (a fresh read-only connection per question:
/// tool calls run on the runtime's own threads).
#[derive(Debug, Clone)]
pub struct StoreToolPolicy {
    dir: DataDir,
}

impl StoreToolPolicy {
    pub fn new(dir: DataDir) -> Self {
        StoreToolPolicy { dir }
    }

    fn store(&self) -> Option<Store> {
        Store::open(&self.dir)
            .map_err(
                |e| tracing::warn!(error = %e.message, "agent tool policy: cannot read the store"),
            )
            .ok()
    }
}

impl ToolPolicy for StoreToolPolicy {
    fn storage_quota(&self, app: &AppId) -> u64 {
        let Some(store) = self.store() else {
            return DEFAULT_QUOTA_BYTES;
        };
        store
            .active_app(app.as_str())
            .and_then(|a| store.storage_plan(&a.name, &a.version))
            .map(|p| p.quota)
            .unwrap_or(DEFAULT_QUOTA_BYTES)
    }

    fn artifact_limits(&self, _app: &AppId) -> ArtifactLimits {
        // The limits `lime.artifacts` applies (capability/services/artifacts.rs).
        ArtifactLimits::default()
    }

    fn artifact_write_needs_approval(&self) -> bool {
        let Some(store) = self.store() else {
            return true;
        };
        match store.settings() {
            Ok(s) => s.get(ARTIFACT_WRITE_APPROVAL).map(String::as_str) != Some(ALLOW),
            Err(_) => true,
        }
    }

    fn token_budget(&self, app: &AppId) -> Option<u64> {
        let settings = self.store()?.settings().ok()?;
        crate::foundation::budget_keys::app_budget(&settings, app.as_str())
    }

    fn package(&self, app: &AppId) -> Option<PackageFacts> {
        let a = self.store()?.active_app(app.as_str()).ok()?;
        Some(PackageFacts {
            app_version: a.version,
            package_hash: a.package_hash,
            manifest_hash: a.manifest_hash,
        })
    }

    /// Declared by the active manifest and bound now (`knowledge_search`, every call).
    fn knowledge_bound(&self, app: &AppId, template: &str) -> bool {
        let Some(store) = self.store() else {
            return false;
        };
        let declared = store.active_app(app.as_str()).is_ok_and(|a| {
            crate::hosting::app_knowledge::declared_templates(&a.manifest)
                .iter()
                .any(|t| t == template)
        });
        declared
            && store
                .knowledge_bindings(app.as_str())
                .is_ok_and(|b| b.iter().any(|b| b.template == template))
    }
}
