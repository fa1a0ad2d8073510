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

// --- lime.tools (hosting/tools/): MCP servers, their last tool listing, per-app grants --------

/// `tools.server.<name>`: a server the user added (JSON, checked by `hosting::tools::spec`
/// before it is written; the store checks only its outer shape, [`check_tools_setting`]).
pub const TOOLS_SERVER_PREFIX: &str = "tools.server.";
/// `tools.listed.<name>`: the server's last `tools/list` (names and annotations), which
/// readiness reads: a granted tool ref is ready when its server lists the tool.
pub const TOOLS_LISTED_PREFIX: &str = "tools.listed.";
/// `tools.grants.<app>`: a JSON array of the `<server>/<tool>` the user granted the app.
pub const TOOLS_GRANTS_PREFIX: &str = "tools.grants.";
/// Largest value of a `tools.*` setting.
pub const MAX_TOOLS_SETTING_BYTES: usize = 256 * 1024;

/// Server names: 1..=64 of `a-z 0-9 - _`, starting with a letter or digit.
pub fn check_tool_server_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a valid MCP server name (1 to 64 of a-z, 0-9, '-', '_')"
        ))
    }
}

/// Checks a `tools.*` setting: a known family, a valid name after the prefix, a JSON value of
/// the family's type, at most [`MAX_TOOLS_SETTING_BYTES`]. `Ok(false)` for other keys.
pub fn check_tools_setting(key: &str, value: &str) -> Result<bool, String> {
    let (family, rest) = if let Some(r) = key.strip_prefix(TOOLS_SERVER_PREFIX) {
        ("server", r)
    } else if let Some(r) = key.strip_prefix(TOOLS_LISTED_PREFIX) {
        ("listed", r)
    } else if let Some(r) = key.strip_prefix(TOOLS_GRANTS_PREFIX) {
        ("grants", r)
    } else {
        return Ok(false);
    };
    if family == "grants" {
        if rest.is_empty() || rest.len() > 200 {
            return Err(format!("{key:?}: no app name"));
        }
    } else {
        check_tool_server_name(rest)?;
    }
    if value.len() > MAX_TOOLS_SETTING_BYTES {
        return Err(format!("{key} is over {MAX_TOOLS_SETTING_BYTES} bytes"));
    }
    let parsed: serde_json::Value =
        serde_json::from_str(value).map_err(|e| format!("{key} is not JSON: {e}"))?;
    let shape_ok = match family {
        "grants" => parsed.as_array().is_some_and(|a| {
            a.iter()
                .all(|v| v.as_str().is_some_and(|s| s.contains('/')))
        }),
        _ => parsed.is_object(),
    };
    if shape_ok {
        Ok(true)
    } else {
        Err(format!("{key} has the wrong shape"))
    }
}

/// The `<server>/<tool>` granted to `app` in `settings` (malformed rows grant nothing).
pub fn granted_tools(settings: &BTreeMap<String, String>, app: &str) -> Vec<String> {
    settings
        .get(&format!("{TOOLS_GRANTS_PREFIX}{app}"))
        .and_then(|v| serde_json::from_str::<Vec<String>>(v).ok())
        .unwrap_or_default()
}

/// The tool names `server` listed last (`tools.listed.<server>` `{"tools": [{"name"}]}`).
pub fn listed_tools(settings: &BTreeMap<String, String>, server: &str) -> Vec<String> {
    let Some(v) = settings
        .get(&format!("{TOOLS_LISTED_PREFIX}{server}"))
        .and_then(|v| serde_json::from_str::<serde_json::Value>(v).ok())
    else {
        return Vec::new();
    };
    v.get("tools")
        .and_then(|t| t.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|t| t.get("name").and_then(|n| n.as_str()).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The `<server>/<tool>` that are ready for `app`: granted, and listed by a configured server.
pub fn ready_tools(settings: &BTreeMap<String, String>, app: &str) -> Vec<String> {
    granted_tools(settings, app)
        .into_iter()
        .filter(|r| {
            r.split_once('/').is_some_and(|(server, tool)| {
                settings.contains_key(&format!("{TOOLS_SERVER_PREFIX}{server}"))
                    && listed_tools(settings, server).iter().any(|t| t == tool)
            })
        })
        .collect()
}
