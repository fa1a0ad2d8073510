//! The servers the user and the admin added, the grants, and the last tool listings, all in
//! `host.db`'s `settings` rows (`foundation/setting_keys.rs` `tools.*`). Writes go through
//! [`Store::set_setting`]: under the store lock, checked and audited.

use std::collections::BTreeMap;

use super::policy::AdminPolicy;
use super::spec::{ServerSpec, ToolInfo, ToolRef};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::setting_keys::{
    self, check_tool_server_name, TOOLS_GRANTS_PREFIX, TOOLS_LISTED_PREFIX, TOOLS_SERVER_PREFIX,
};
use crate::install::store::Store;

/// Who added a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    User,
    Admin,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::User => "user",
            Source::Admin => "admin",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Server {
    pub name: String,
    pub spec: ServerSpec,
    pub source: Source,
}

/// Every server: the admin's, then the user's (an admin server's name cannot be reused).
pub fn servers(
    settings: &BTreeMap<String, String>,
    policy: &AdminPolicy,
) -> BTreeMap<String, Server> {
    let mut out = BTreeMap::new();
    for (key, value) in settings.range(TOOLS_SERVER_PREFIX.to_owned()..) {
        let Some(name) = key.strip_prefix(TOOLS_SERVER_PREFIX) else {
            break;
        };
        if let Ok(spec) = serde_json::from_str::<ServerSpec>(value) {
            out.insert(
                name.to_owned(),
                Server {
                    name: name.to_owned(),
                    spec,
                    source: Source::User,
                },
            );
        }
    }
    for (name, spec) in &policy.servers {
        out.insert(
            name.clone(),
            Server {
                name: name.clone(),
                spec: spec.clone(),
                source: Source::Admin,
            },
        );
    }
    out
}

pub fn server(
    settings: &BTreeMap<String, String>,
    policy: &AdminPolicy,
    name: &str,
) -> HostResult<Server> {
    servers(settings, policy)
        .remove(name)
        .ok_or_else(|| not_found_server(name))
}

fn not_found_server(name: &str) -> HostError {
    HostError::new(
        ErrorCode::ToolsNotFound,
        format!("no MCP server named {name:?} (apphost tools list)"),
    )
    .with("server", name)
}

/// Adds a user server (the store must be locked).
pub fn add(store: &Store, policy: &AdminPolicy, name: &str, spec: &ServerSpec) -> HostResult<()> {
    check_tool_server_name(name).map_err(|m| HostError::new(ErrorCode::ToolsInvalid, m))?;
    spec.check(policy.allow_remote_urls)?;
    if servers(&store.settings()?, policy).contains_key(name) {
        return Err(HostError::new(
            ErrorCode::ToolsServerExists,
            format!("an MCP server named {name:?} exists already"),
        )
        .with("server", name));
    }
    let value = serde_json::to_string(spec)
        .map_err(|e| HostError::new(ErrorCode::ToolsInvalid, e.to_string()))?;
    store.set_setting(&format!("{TOOLS_SERVER_PREFIX}{name}"), Some(&value))
}

/// Removes a user server, its listing, and every app's grants of its tools (a server added
/// later under the same name starts with none).
pub fn remove(store: &Store, policy: &AdminPolicy, name: &str) -> HostResult<()> {
    let settings = store.settings()?;
    let server = server(&settings, policy, name)?;
    if server.source == Source::Admin {
        return Err(HostError::new(
            ErrorCode::ToolsDenied,
            format!("{name:?} is added by the admin policy; only the admin can remove it"),
        ));
    }
    store.set_setting(&format!("{TOOLS_SERVER_PREFIX}{name}"), None)?;
    if settings.contains_key(&format!("{TOOLS_LISTED_PREFIX}{name}")) {
        store.set_setting(&format!("{TOOLS_LISTED_PREFIX}{name}"), None)?;
    }
    for (key, _) in settings.range(TOOLS_GRANTS_PREFIX.to_owned()..) {
        let Some(app) = key.strip_prefix(TOOLS_GRANTS_PREFIX) else {
            break;
        };
        let kept: Vec<String> = setting_keys::granted_tools(&settings, app)
            .into_iter()
            .filter(|r| r.split_once('/').map(|(s, _)| s) != Some(name))
            .collect();
        write_grants(store, app, &kept)?;
    }
    Ok(())
}

fn write_grants(store: &Store, app: &str, grants: &[String]) -> HostResult<()> {
    let key = format!("{TOOLS_GRANTS_PREFIX}{app}");
    if grants.is_empty() {
        return store.set_setting(&key, None);
    }
    let value = serde_json::to_string(grants)
        .map_err(|e| HostError::new(ErrorCode::ToolsInvalid, e.to_string()))?;
    store.set_setting(&key, Some(&value))
}

/// The tools granted to `app`.
pub fn grants(settings: &BTreeMap<String, String>, app: &str) -> Vec<ToolRef> {
    setting_keys::granted_tools(settings, app)
        .iter()
        .filter_map(|r| ToolRef::parse(r).ok())
        .collect()
}

/// Grants `r` to an installed `app` (the store must be locked). The server must exist; the
/// tool need not be listed yet (readiness says when it is).
pub fn grant(store: &Store, policy: &AdminPolicy, app: &str, r: &ToolRef) -> HostResult<()> {
    store.grants(app)?; // app.not_found for an app that is not installed
    let settings = store.settings()?;
    server(&settings, policy, &r.server)?;
    let mut list = setting_keys::granted_tools(&settings, app);
    let text = r.to_string();
    if !list.contains(&text) {
        list.push(text);
        list.sort();
        write_grants(store, app, &list)?;
    }
    Ok(())
}

/// Revokes `r` from `app` (the store must be locked); revoking what is not granted is a no-op.
pub fn revoke(store: &Store, app: &str, r: &ToolRef) -> HostResult<()> {
    let settings = store.settings()?;
    let mut list = setting_keys::granted_tools(&settings, app);
    let text = r.to_string();
    if list.contains(&text) {
        list.retain(|g| *g != text);
        write_grants(store, app, &list)?;
    }
    Ok(())
}

/// The server's last tool listing (empty when never listed).
pub fn listing(settings: &BTreeMap<String, String>, server: &str) -> Vec<ToolInfo> {
    settings
        .get(&format!("{TOOLS_LISTED_PREFIX}{server}"))
        .and_then(|v| serde_json::from_str::<serde_json::Value>(v).ok())
        .and_then(|v| v.get("tools").cloned())
        .and_then(|t| serde_json::from_value::<Vec<ToolInfo>>(t).ok())
        .unwrap_or_default()
}
