//! The admin's policy file `<data>/policy/tools.json` (optional): servers the admin adds, tools
//! denied or marked destructive, whether HTTP servers may be other than loopback, and what a
//! tool that says it is not read-only (`readOnlyHint: false`) needs. Read bounded on every use;
//! a file that does not parse denies every tool (fail closed) rather than being ignored.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::PathBuf;

use serde::Deserialize;

use super::spec::{ServerSpec, ToolInfo, ToolRef};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;

/// Largest policy file read.
pub const MAX_POLICY_BYTES: u64 = 256 * 1024;

/// What a tool with `readOnlyHint: false` (and no `destructiveHint`) needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NotReadOnly {
    /// Runs like a read-only tool (the default: only `destructiveHint: true` asks).
    #[default]
    Allow,
    /// Asks the user like a destructive tool.
    Ask,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdminPolicy {
    #[serde(default)]
    pub servers: BTreeMap<String, ServerSpec>,
    /// `<server>/<tool>` or `<server>/*`: never called.
    #[serde(default)]
    pub deny: BTreeSet<String>,
    /// `<server>/<tool>` or `<server>/*`: treated as destructive whatever the server says.
    #[serde(default)]
    pub destructive: BTreeSet<String>,
    #[serde(default)]
    pub allow_remote_urls: bool,
    #[serde(default)]
    pub read_only_false: NotReadOnly,
    /// Set when the file exists but could not be read or parsed: every call is denied.
    #[serde(skip)]
    pub broken: Option<String>,
}

pub fn policy_path(dir: &DataDir) -> PathBuf {
    dir.root().join("policy").join("tools.json")
}

fn matches(set: &BTreeSet<String>, r: &ToolRef) -> bool {
    set.contains(&r.to_string()) || set.contains(&format!("{}/*", r.server))
}

impl AdminPolicy {
    /// Reads the policy file (none: the empty policy).
    pub fn load(dir: &DataDir) -> AdminPolicy {
        match read(dir) {
            Ok(p) => p,
            Err(e) => AdminPolicy {
                broken: Some(e.message),
                ..AdminPolicy::default()
            },
        }
    }

    /// `Err(tools.denied)` when the policy denies `r` (or cannot be read).
    pub fn check_allowed(&self, r: &ToolRef) -> HostResult<()> {
        if let Some(why) = &self.broken {
            return Err(HostError::new(
                ErrorCode::ToolsDenied,
                format!("the tools policy file cannot be used, so every tool is denied: {why}"),
            ));
        }
        if matches(&self.deny, r) {
            return Err(HostError::new(
                ErrorCode::ToolsDenied,
                format!("the admin policy denies {r}"),
            )
            .with("tool", r.to_string()));
        }
        Ok(())
    }

    /// Whether a call of `r` needs the user's approval: the server marks it destructive, the
    /// admin does, or it is not read-only and the policy says ask.
    pub fn needs_approval(&self, r: &ToolRef, info: &ToolInfo) -> bool {
        info.destructive_hint == Some(true)
            || matches(&self.destructive, r)
            || (self.read_only_false == NotReadOnly::Ask && info.read_only_hint != Some(true))
    }
}

fn read(dir: &DataDir) -> HostResult<AdminPolicy> {
    let path = policy_path(dir);
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(AdminPolicy::default()),
        Err(e) => return Err(HostError::new(ErrorCode::ToolsInvalid, e.to_string())),
    };
    let mut text = String::new();
    file.take(MAX_POLICY_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| HostError::new(ErrorCode::ToolsInvalid, e.to_string()))?;
    if text.len() as u64 > MAX_POLICY_BYTES {
        return Err(HostError::new(
            ErrorCode::ToolsInvalid,
            format!("{} is over {MAX_POLICY_BYTES} bytes", path.display()),
        ));
    }
    let policy: AdminPolicy = serde_json::from_str(&text)
        .map_err(|e| HostError::new(ErrorCode::ToolsInvalid, format!("{}: {e}", path.display())))?;
    for (name, spec) in &policy.servers {
        crate::foundation::setting_keys::check_tool_server_name(name)
            .map_err(|m| HostError::new(ErrorCode::ToolsInvalid, m))?;
        spec.check(policy.allow_remote_urls)?;
    }
    Ok(policy)
}
