//! `startTask({tools: [...]})`: the MCP tools (`"<server>/<tool>"`, or `{tool}` / `{ref}`)
//! the task's model may call. Each must be declared in the installed manifest's `toolRefs[]`
//! (the [`Allowed`] proof's), granted to the app now and allowed by the admin policy: else the
//! start is refused with the broker's stable code (`tools.not_declared`, `tools.not_granted`,
//! `tools.denied`, `tools.invalid`) before anything is recorded. The grant is checked again on
//! every call (`hosting/agent_tool_source.rs`): a revoke mid-task wins.

use serde_json::Value;

use super::args::invalid;
use super::tools::bridge_error;
use crate::foundation::error::{ErrorCode, HostError};
use crate::hosting::agent_tool_source::declared_tool_refs;
use crate::hosting::capability::dispatch::{Allowed, CallError};
use crate::hosting::tools::policy::AdminPolicy;
use crate::hosting::tools::{registry, ToolRef};
use crate::install::manifest::{ItemText, Key};
use crate::install::store::tool_rows::tool_ref_target;
use crate::install::store::Store;
use runtime_core::tools::external::MAX_TOOL_REFS;

/// The task's tool refs, checked (empty when none).
pub(super) fn task_tool_refs(
    store: &Store,
    a: &Allowed,
    v: Option<&Value>,
) -> Result<Vec<String>, CallError> {
    let items = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(invalid(
                a,
                "args.tools must be an array of \"<server>/<tool>\" refs",
            ))
        }
    };
    if items.len() > MAX_TOOL_REFS {
        return Err(invalid(
            a,
            &format!("args.tools names more than {MAX_TOOL_REFS} tools"),
        ));
    }
    let declared = declared_tool_refs(a.manifest());
    let settings = store.settings().map_err(|e| bridge_error(a, &e))?;
    let granted = registry::grants(&settings, a.app());
    let policy = AdminPolicy::load(store.data_dir());
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let text = match item {
            Value::String(s) => Some(s.as_str()),
            Value::Object(m) => m
                .get("tool")
                .or_else(|| m.get("ref"))
                .or_else(|| m.get("key"))
                .and_then(Value::as_str),
            _ => None,
        }
        .filter(|t| !t.is_empty() && t.len() <= 256)
        .ok_or_else(|| {
            invalid(
                a,
                "each args.tools item is \"<server>/<tool>\", a toolRefs[] key, or {tool | key}",
            )
        })?;
        // A toolRefs[] key (the standard's binding shape) names its `<server>/<tool>`.
        let target = match text.contains('/') {
            true => text.to_owned(),
            false => by_key(a, text).ok_or_else(|| {
                let e = HostError::new(
                    ErrorCode::ToolsNotDeclared,
                    "the app declares no toolRefs[] item with that key",
                );
                bridge_error(a, &e)
            })?,
        };
        let r = ToolRef::parse(&target).map_err(|e| bridge_error(a, &e))?;
        let name = r.to_string();
        if !declared.contains(&name) {
            let e = HostError::new(
                ErrorCode::ToolsNotDeclared,
                format!("the app declares no toolRefs[] item for {name}"),
            );
            return Err(bridge_error(a, &e));
        }
        if !granted.contains(&r) {
            let e = HostError::new(
                ErrorCode::ToolsNotGranted,
                format!("{name} is not granted to this app"),
            );
            return Err(bridge_error(a, &e));
        }
        policy.check_allowed(&r).map_err(|e| bridge_error(a, &e))?;
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// The `<server>/<tool>` of the installed manifest's `toolRefs[]` item with key `key`.
fn by_key(a: &Allowed, key: &str) -> Option<String> {
    a.manifest()
        .view()
        .items(Key::ToolRefs)
        .find(|i| i.key() == Some(key))
        .and_then(|i| tool_ref_target(i.key(), i.text(ItemText::Provider)))
}
