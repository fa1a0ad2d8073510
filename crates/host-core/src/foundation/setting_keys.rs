//! Host settings (`host.db`'s `settings` table) that more than one half of the crate names:
//! the store checks every value it writes and the install half's readiness asks whether a model
//! is configured, while their owners on the hosting side (`hosting::agent_tool_policy`,
//! `hosting::model_settings`) read and write them. The `limits.*` family is in
//! [`limits`](super::limits).

use std::collections::BTreeMap;

/// Whether the agent's `artifact_write` needs the user's approval per call
/// (`apphost config agent.artifactWriteApproval allow|ask`).
pub const ARTIFACT_WRITE_APPROVAL: &str = "agent.artifactWriteApproval";
/// Its values: `ask` (the default) or `allow`.
pub const ASK: &str = "ask";
pub const ALLOW: &str = "allow";

/// The model endpoint's base URL, the model's name and the `<backend>:<name>` ref of its API key.
pub const MODEL_BASE_URL: &str = "model.baseUrl";
pub const MODEL_NAME: &str = "model.name";
pub const MODEL_API_KEY_REF: &str = "model.apiKeyRef";

/// Checks a value for [`ARTIFACT_WRITE_APPROVAL`].
pub fn check_artifact_write_approval(value: &str) -> Result<(), String> {
    match value.trim() {
        ASK | ALLOW => Ok(()),
        other => Err(format!(
            "{ARTIFACT_WRITE_APPROVAL} must be \"ask\" or \"allow\", not {other:?}"
        )),
    }
}

/// Whether `settings` configure a model (a base URL and a model name; the key is optional).
pub fn model_configured(settings: &BTreeMap<String, String>) -> bool {
    settings.contains_key(MODEL_BASE_URL) && settings.contains_key(MODEL_NAME)
}
