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
            Value::Object(m) => m.get("tool").or_else(|| m.get("ref")).and_then(Value::as_str),
            _ => None,
        }
        .ok_or_else(|| {
            invalid(
                a,
                "each args.tools item is \"<server>/<tool>\" or {tool: \"<server>/<tool>\"}",
            )
        })?;
        let r = ToolRef::parse(text).map_err(|e| bridge_error(a, &e))?;
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
