//! Tools from outside RuntimeCore (the host's MCP servers): an agent task that declared tool
//! refs (`startTask({tools: ["<server>/<tool>", ...]})`) gets them in its session's turns,
//! described and run by the host through a [`ToolSource`] (host-core implements it with its MCP
//! broker; RuntimeCore knows no servers, grants or policy).
//!
//! - The model sees each tool under a namespaced name ([`model_names`]): `mcp__<server>__<tool>`
//!   when that fits the providers' function-name rules and no other ref of the task maps to the
//!   same name, else `mcp_<sha256(ref)[..16]>_<tool prefix>`; the mapping is a function of the
//!   task's ref set, so a tool of another server can never answer under a granted tool's name.
//! - The specs are asked of the source at each turn's start ([`ToolSource::describe`]): a tool
//!   revoked, denied or no longer listed is simply not offered; a destructive one is `risky`, so
//!   the turn pauses with `action.required` for the user's answer (apps cannot approve).
//! - Each call is re-checked by the source (grant, policy, audit) with whether the user
//!   approved it; a cancelled turn reaches the call through the [`CancelSignal`].

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::{ToolCall, ToolError, ToolOutput};
use crate::backend::{CancelSignal, ToolSpec};
use crate::ids::AppId;

/// Prefix of every external tool's model-facing name (no host tool starts with it).
pub const PREFIX: &str = "mcp_";
/// Longest tool name the providers accept.
const MAX_NAME: usize = 64;
/// Tool refs one task may name.
pub const MAX_TOOL_REFS: usize = 16;

/// One tool as the host describes it for a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalTool {
    /// `<server>/<tool>`.
    pub tool_ref: String,
    pub description: String,
    /// The input JSON Schema from the server's listing.
    pub parameters: Value,
    /// Destructive (by annotation or policy): each call waits for the user's approval.
    pub needs_approval: bool,
}

/// The host's external tools.
pub trait ToolSource: Send + Sync + std::fmt::Debug {
    /// The tools of `refs` that `app` may use now (granted, allowed, listed); others left out.
    /// Blocking (may start a server to list its tools).
    fn describe(&self, app: &AppId, refs: &[String]) -> Vec<ExternalTool>;

    /// Runs `tool_ref` for `call.app` with the host's checks and audit; `approved_by_user` is
    /// true only when the turn ran it after the user's approval. Blocking.
    fn call(
        &self,
        call: &ToolCall,
        tool_ref: &str,
        arguments: &Value,
        approved_by_user: bool,
        cancel: CancelSignal,
    ) -> Result<ToolOutput, ToolError>;
}

fn plain_name(tool_ref: &str) -> Option<String> {
    let (server, tool) = tool_ref.split_once('/')?;
    let name = format!("{PREFIX}_{server}__{tool}");
    let ok = name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    ok.then_some(name)
}

fn hashed_name(tool_ref: &str) -> String {
    let h = crate::knowledge::hex_sha256(tool_ref.as_bytes(), 8);
    let tool: String = tool_ref
        .rsplit('/')
        .next()
        .unwrap_or("")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_NAME - PREFIX.len() - 17)
        .collect();
    format!("{PREFIX}{h}_{tool}")
}

/// The model-facing name of each ref of one task (injective over the set: a plain name shared
/// by two refs, or one that does not fit, is replaced by the hashed form).
pub fn model_names(refs: &[String]) -> BTreeMap<String, String> {
    let mut count: HashMap<String, usize> = HashMap::new();
    for r in refs {
        if let Some(n) = plain_name(r) {
            *count.entry(n).or_default() += 1;
        }
    }
    refs.iter()
        .map(|r| {
            let name = plain_name(r)
                .filter(|n| count.get(n) == Some(&1))
                .unwrap_or_else(|| hashed_name(r));
            (r.clone(), name)
        })
        .collect()
}

/// The ref behind `name` among the task's `refs`.
pub fn ref_of(refs: &[String], name: &str) -> Option<String> {
    model_names(refs)
        .into_iter()
        .find(|(_, n)| n == name)
        .map(|(r, _)| r)
}

/// The specs of the tools the source offers for `refs`.
pub(super) fn specs(source: &dyn ToolSource, app: &AppId, refs: &[String]) -> Vec<ToolSpec> {
    let names = model_names(refs);
    source
        .describe(app, refs)
        .into_iter()
        .filter_map(|t| {
            let name = names.get(&t.tool_ref)?.clone();
            let parameters = if t.parameters.is_object() {
                t.parameters
            } else {
                serde_json::json!({"type": "object"})
            };
            let description: String = t.description.chars().take(1024).collect();
            Some(ToolSpec {
                name,
                description: format!("{description} (MCP tool {})", t.tool_ref),
                parameters,
                risky: t.needs_approval,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn names_are_namespaced_and_injective_over_a_task_s_refs() {
        let r = refs(&["notes/delete", "other/delete"]);
        let n = model_names(&r);
        assert_eq!(n["notes/delete"], "mcp__notes__delete");
        assert_eq!(n["other/delete"], "mcp__other__delete");
        // `a__b/c` and `a/b__c` would both be `mcp__a__b__c`: both get hashed names.
        let r = refs(&["a__b/c", "a/b__c"]);
        let n = model_names(&r);
        assert_ne!(n["a__b/c"], n["a/b__c"]);
        assert!(n
            .values()
            .all(|v| v.starts_with(PREFIX) && v.len() <= MAX_NAME));
        assert_eq!(ref_of(&r, &n["a/b__c"]).as_deref(), Some("a/b__c"));
        // A dot (allowed in MCP tool names, not in function names) and a long name.
        let long = format!("s/{}", "x".repeat(120));
        let r = refs(&["s/v1.read", &long]);
        let n = model_names(&r);
        assert!(n.values().all(|v| v.len() <= MAX_NAME
            && v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')));
        assert_eq!(ref_of(&r, "mcp__s__v1.read"), None);
    }
}
