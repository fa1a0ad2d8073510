//! `lime.tools`: the tools the user granted the app, from its UI (and workflows), through the
//! broker (`hosting/tools/`). `list` answers the granted tools the app declares in `toolRefs[]`
//! (from the servers' last listings); `invoke({tool, arguments})` runs one through the broker's
//! checks. A destructive tool is never run on the app's word: the service answers with
//! [`Effect::AskToolApproval`], the bridge draws the host's prompt, and only the user's "allow"
//! runs the call ([`ToolsService::invoke_approved`]); a denial is `tools.denied`.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::{err, Effect, Reply};
use crate::foundation::error::{ErrorCode as HostCode, HostError};
use crate::foundation::paths::DataDir;
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{Allowed, CallError};
use crate::hosting::capability::method::ToolsMethod;
use crate::hosting::tools::{Approval, Broker, Caller, Invocation, ToolRef};
use crate::install::manifest::{ItemText, Key};
use crate::install::store::tool_rows::tool_ref_target;
use crate::install::store::Store;

pub(super) struct ToolsService {
    data: DataDir,
    /// The process's one broker (its MCP server sessions), shared by the session's services
    /// and the workflow driver's ([`ToolsService::sharing`]); made on first use.
    broker: Arc<Mutex<Option<Arc<Broker>>>>,
}

/// The `<server>/<tool>` the installed manifest declares in `toolRefs[]`.
fn declared(a: &Allowed) -> BTreeSet<String> {
    a.manifest()
        .view()
        .items(Key::ToolRefs)
        .filter_map(|i| tool_ref_target(i.key(), i.text(ItemText::Provider)))
        .collect()
}

/// A broker error as the bridge's: its code kept as `causeCode`.
pub(super) fn bridge_error(a: &Allowed, e: &HostError) -> CallError {
    let (code, retryable) = match e.code {
        HostCode::ToolsNotGranted | HostCode::ToolsDenied | HostCode::ToolsNotDeclared => {
            (ErrorCode::PermissionDenied, false)
        }
        HostCode::ToolsInvalid => (ErrorCode::InvalidArgument, false),
        HostCode::ToolsNotFound => (ErrorCode::NotFound, false),
        HostCode::ToolsServerUnavailable | HostCode::ToolsTimeout => {
            (ErrorCode::UnknownError, true)
        }
        _ => (ErrorCode::UnknownError, false),
    };
    let cause = if e.code.as_str().starts_with("tools.") {
        e.code.as_str()
    } else {
        "tools.host_failed"
    };
    // Host failures (store, secret store) may name host paths: not shown to the app.
    let message = if cause == "tools.host_failed" {
        "the host failed to run the tool call"
    } else {
        e.message.as_str()
    };
    let mut out = err(a, code, message, Some(cause));
    out.retryable = retryable;
    out
}

impl ToolsService {
    pub(super) fn new(apps_data: &Path) -> ToolsService {
        let root = apps_data.parent().unwrap_or(apps_data);
        ToolsService {
            data: DataDir::at(root),
            broker: Arc::default(),
        }
    }

    /// A service over the same broker (a workflow driver thread's).
    pub(super) fn sharing(&self) -> ToolsService {
        ToolsService {
            data: self.data.clone(),
            broker: self.broker.clone(),
        }
    }

    fn broker(&mut self, a: &Allowed) -> Result<Arc<Broker>, CallError> {
        let mut slot = self.broker.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(Arc::new(
                Broker::new(&self.data).map_err(|e| bridge_error(a, &e))?,
            ));
        }
        Ok(slot.as_ref().expect("set").clone())
    }

    fn tool_arg(a: &Allowed, args: &Value) -> Result<(ToolRef, Value), CallError> {
        let tool = args.get("tool").and_then(Value::as_str).ok_or_else(|| {
            err(
                a,
                ErrorCode::InvalidArgument,
                "args.tool must be \"<server>/<tool>\"",
                Some("tools.invalid"),
            )
        })?;
        let r = ToolRef::parse(tool).map_err(|e| bridge_error(a, &e))?;
        let arguments = args.get("arguments").cloned().unwrap_or_else(|| json!({}));
        Ok((r, arguments))
    }

    pub(super) fn call(
        &mut self,
        store: &Store,
        a: &Allowed,
        method: ToolsMethod,
        args: &Value,
        can_ask: bool,
    ) -> Result<Reply, CallError> {
        let caller = if can_ask {
            Caller::Ui
        } else {
            Caller::Workflow
        };
        match method {
            ToolsMethod::List => {
                let declared = declared(a);
                let tools = self
                    .broker(a)?
                    .tools_for_app(store, a.app(), Some(&declared))
                    .map_err(|e| bridge_error(a, &e))?;
                Ok(Reply::value(json!({ "tools": tools })))
            }
            ToolsMethod::Invoke => {
                let (r, arguments) = Self::tool_arg(a, args)?;
                let declared = declared(a);
                let inv = Invocation {
                    app: a.app(),
                    version: Some(a.version()),
                    tool: &r,
                    arguments: &arguments,
                    caller,
                    approval: Approval::NotAsked,
                    declared: Some(&declared),
                };
                let broker = self.broker(a)?;
                // Refusals before the call are audited by `invoke` too, so only the approval
                // question returns early.
                if let Ok((_, _, true)) = broker.prepare(store, &inv) {
                    if !can_ask {
                        // `invoke` refuses it (no user answer) and audits the refusal.
                        return broker
                            .invoke(store, &inv)
                            .map(Reply::value)
                            .map_err(|e| bridge_error(a, &e));
                    }
                    return Ok(Reply {
                        value: Value::Null,
                        effect: Some(Effect::AskToolApproval {
                            tool: r.to_string(),
                            arguments_sha256: crate::hosting::tools::broker::arguments_sha256(
                                &arguments,
                            ),
                        }),
                    });
                }
                broker
                    .invoke(store, &inv)
                    .map(Reply::value)
                    .map_err(|e| bridge_error(a, &e))
            }
        }
    }

    /// `invoke` after the user allowed a destructive call in the host's prompt (`a` is a fresh
    /// proof: the bridge dispatched the call again).
    pub(super) fn invoke_approved(
        &mut self,
        store: &Store,
        a: &Allowed,
        args: &Value,
    ) -> Result<Value, CallError> {
        let (r, arguments) = Self::tool_arg(a, args)?;
        let declared = declared(a);
        self.broker(a)?
            .invoke(
                store,
                &Invocation {
                    app: a.app(),
                    version: Some(a.version()),
                    tool: &r,
                    arguments: &arguments,
                    caller: Caller::Ui,
                    approval: Approval::ByUser,
                    declared: Some(&declared),
                },
            )
            .map_err(|e| bridge_error(a, &e))
    }

    /// The user refused (or dismissed) a destructive call: audited, nothing sent.
    pub(super) fn refused(&mut self, store: &Store, a: &Allowed, args: &Value) -> CallError {
        let tool = args.get("tool").and_then(Value::as_str).unwrap_or("");
        let (server, tool) = tool.split_once('/').unwrap_or(("", tool));
        let _ = store.record_audit(
            "tools.call",
            Some(a.app()),
            Some(a.version()),
            &json!({
                "server": server,
                "tool": tool,
                "argumentsSha256": crate::hosting::tools::broker::arguments_sha256(
                    args.get("arguments").unwrap_or(&Value::Null)
                ),
                "caller": "ui", "approval": "refused", "outcome": "error", "code": "tools.denied",
            }),
        );
        err(
            a,
            ErrorCode::PermissionDenied,
            "the user did not approve this destructive tool call",
            Some("tools.denied"),
        )
    }

    pub(super) fn close(&mut self) {
        let broker = self
            .broker
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(b) = broker {
            b.shutdown();
        }
    }
}
