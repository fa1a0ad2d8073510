//! `lime.tools` rows of the `settings` table that are not the user's decisions: a server's
//! last tool listing (written by whichever process listed it, like the bridge's audit rows),
//! and the tool refs readiness counts as ready. The user's own rows (servers, grants) go through
//! [`Store::set_setting`] (checked, audited, under the store lock).

use std::collections::BTreeSet;

use rusqlite::params;

use super::Store;
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::setting_keys::{self, TOOLS_LISTED_PREFIX};
use crate::install::manifest::{ItemText, Key, Manifest};

impl Store {
    /// Records `server`'s last `tools/list` (a JSON object `{"tools": [...]}`), on any
    /// connection: a cache readiness reads, not a decision, so neither locked nor audited.
    pub fn record_tool_listing(&self, server: &str, listing: &serde_json::Value) -> HostResult<()> {
        let key = format!("{TOOLS_LISTED_PREFIX}{server}");
        let value = listing.to_string();
        setting_keys::check_tools_setting(&key, &value)
            .map_err(|m| HostError::new(ErrorCode::ToolsBadResponse, m))?;
        self.conn.execute(
            "INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )?;
        Ok(())
    }
}

/// The `<server>/<tool>` a `toolRefs[]` item names: its `key` when that has a `/`, else
/// `<provider>/<key>`; `None` when it names neither.
pub fn tool_ref_target(key: Option<&str>, provider: Option<&str>) -> Option<String> {
    let key = key?;
    if key.contains('/') {
        return Some(key.to_owned());
    }
    provider.map(|p| format!("{p}/{key}"))
}

/// The labels of the app's `toolRefs[]` that are ready: granted to it and listed by a
/// configured server (`HostState::available_tools`).
pub(super) fn ready_tool_refs(
    manifest: &Manifest,
    settings: &std::collections::BTreeMap<String, String>,
    app: &str,
) -> BTreeSet<String> {
    let ready = setting_keys::ready_tools(settings, app);
    manifest
        .view()
        .items(Key::ToolRefs)
        .filter(|item| {
            tool_ref_target(item.key(), item.text(ItemText::Provider))
                .is_some_and(|t| ready.contains(&t))
        })
        .map(|item| item.label("tool").to_owned())
        .collect()
}
