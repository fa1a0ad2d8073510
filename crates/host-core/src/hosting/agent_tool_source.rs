//! RuntimeCore's [`ToolSource`] over the host's MCP broker (`hosting/tools/`): the external
//! tools an agent task declared (`startTask({tools})`) are described from the servers'
//! listings and called through [`Broker::invoke_until`] with the app as the caller
//! ([`Caller::Agent`]), so every call is re-checked where it is enforced — declared by the
//! active manifest's `toolRefs[]`, granted to the app now, allowed by the admin policy, listed
//! by its server, destructive ones only with the user's approval — and audited (`tools.call`,
//! the arguments' SHA-256). The turn's cancel reaches the server (`notifications/cancelled`).
//!
//! A disabled or uninstalled app has no tools. The broker (and so its server processes) is
//! this source's own, started on first use and stopped with the agent runtime.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use runtime_core::backend::CancelSignal;
use runtime_core::tools::external::{ExternalTool, ToolSource};
use runtime_core::tools::{ToolCall, ToolError, ToolOutput};
use runtime_core::AppId;
use serde_json::Value;

use crate::foundation::error::HostError;
use crate::foundation::paths::DataDir;
use crate::hosting::tools::{Approval, Broker, Caller, Invocation, ToolRef};
use crate::install::manifest::{ItemText, Key, Manifest};
use crate::install::store::tool_rows::tool_ref_target;
use crate::install::store::Store;

/// Longest text of an MCP error result handed to the model.
const MAX_ERROR_TEXT: usize = 2048;

pub struct BrokerToolSource {
    dir: DataDir,
    broker: Mutex<Option<Arc<Broker>>>,
}

impl std::fmt::Debug for BrokerToolSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrokerToolSource").finish_non_exhaustive()
    }
}

/// The `<server>/<tool>` a manifest declares in `toolRefs[]`.
pub fn declared_tool_refs(manifest: &Manifest) -> BTreeSet<String> {
    manifest
        .view()
        .items(Key::ToolRefs)
        .filter_map(|i| tool_ref_target(i.key(), i.text(ItemText::Provider)))
        .collect()
}

fn terr(code: &str, message: impl Into<String>) -> ToolError {
    ToolError {
        code: code.into(),
        message: message.into(),
    }
}

/// A broker error for the model: its `tools.*` code and message; a host failure (which may
/// name host paths) as `tools.host_failed` without them.
fn tool_error(e: &HostError) -> ToolError {
    if e.code.as_str().starts_with("tools.") {
        terr(e.code.as_str(), e.message.clone())
    } else {
        terr("tools.host_failed", "the host failed to run the tool call")
    }
}

impl BrokerToolSource {
    pub fn new(dir: DataDir) -> Self {
        BrokerToolSource {
            dir,
            broker: Mutex::new(None),
        }
    }

    fn broker(&self) -> Result<Arc<Broker>, HostError> {
        let mut b = self.broker.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(b) = &*b {
            return Ok(b.clone());
        }
        let new = Arc::new(Broker::new(&self.dir)?);
        *b = Some(new.clone());
        Ok(new)
    }

    /// The store and the app's declared refs, for an installed, enabled app.
    fn app(&self, app: &AppId) -> Result<(Store, String, BTreeSet<String>), ToolError> {
        let store = Store::open(&self.dir).map_err(|e| tool_error(&e))?;
        let active = store
            .active_app(app.as_str())
            .map_err(|_| terr("tools.not_declared", "the app is not installed"))?;
        if !active.enabled {
            return Err(terr("tools.denied", "the app is disabled"));
        }
        let declared = declared_tool_refs(&active.manifest);
        Ok((store, active.version, declared))
    }
}

impl Drop for BrokerToolSource {
    fn drop(&mut self) {
        if let Some(b) = self.broker.get_mut().ok().and_then(Option::take) {
            if tokio::runtime::Handle::try_current().is_ok() {
                // The last runtime handle can go on one of the agent's worker threads, where
                // blocking (the broker's reaping, dropping its own tokio runtime) would panic.
                let _ = std::thread::Builder::new()
                    .name("apphost-tools-stop".into())
                    .spawn(move || {
                        b.shutdown();
                        drop(b);
                    });
            } else {
                b.shutdown();
            }
        }
    }
}

impl ToolSource for BrokerToolSource {
    fn describe(&self, app: &AppId, refs: &[String]) -> Vec<ExternalTool> {
        let Ok((store, _, declared)) = self.app(app) else {
            return Vec::new();
        };
        let Ok(broker) = self.broker() else {
            return Vec::new();
        };
        let wanted = |t: &str| refs.iter().any(|r| r == t);
        let list = |broker: &Broker| {
            broker
                .tools_for_app(&store, app.as_str(), Some(&declared))
                .unwrap_or_default()
                .into_iter()
                .filter(|t| wanted(&t.tool))
                .collect::<Vec<_>>()
        };
        let mut tools = list(&broker);
        // A granted tool whose server was never listed: list it once (starts the server).
        let missing: BTreeSet<String> = refs
            .iter()
            .filter(|r| !tools.iter().any(|t| &t.tool == *r))
            .filter_map(|r| ToolRef::parse(r).ok().map(|r| r.server))
            .collect();
        if !missing.is_empty() {
            for server in &missing {
                if let Err(e) = broker.list_server(&store, server) {
                    tracing::warn!(server = %server, error = %e.message, "agent tools: cannot list");
                }
            }
            tools = list(&broker);
        }
        tools
            .into_iter()
            .map(|t| ExternalTool {
                tool_ref: t.tool,
                description: t.description.unwrap_or_default(),
                parameters: t.input_schema,
                needs_approval: t.needs_approval,
            })
            .collect()
    }

    fn call(
        &self,
        call: &ToolCall,
        tool_ref: &str,
        arguments: &Value,
        approved_by_user: bool,
        cancel: CancelSignal,
    ) -> Result<ToolOutput, ToolError> {
        let r = ToolRef::parse(tool_ref).map_err(|e| tool_error(&e))?;
        let (store, version, declared) = self.app(&call.app)?;
        let broker = self.broker().map_err(|e| tool_error(&e))?;
        let inv = Invocation {
            app: call.app.as_str(),
            version: Some(&version),
            tool: &r,
            arguments,
            caller: Caller::Agent,
            approval: if approved_by_user {
                Approval::ByUser
            } else {
                Approval::NotAsked
            },
            declared: Some(&declared),
        };
        let value = broker
            .invoke_until(&store, &inv, Some(cancel))
            .map_err(|e| tool_error(&e))?;
        if value.get("isError") == Some(&Value::Bool(true)) {
            let text: String = value
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|c| c.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
                .chars()
                .take(MAX_ERROR_TEXT)
                .collect();
            return Err(terr("tools.tool_error", text));
        }
        Ok((value.to_string(), Vec::new()))
    }
}
