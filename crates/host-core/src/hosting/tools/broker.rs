//! The one path of every tool call (the app's UI and workflows through `lime.tools`, its agent
//! tasks, `apphost tools call`): the arguments checked, the tool declared by the app (when the
//! caller is the app), granted to it, allowed by the admin policy, listed by its server, and if
//! destructive approved by the user — in that order, each refusal with its stable code and
//! nothing sent to the server — then the call under the server's timeout, its result bounded,
//! and one `tools.call` audit record with app, server, tool, the arguments' SHA-256, outcome
//! and duration, whatever happened.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::call_facts::CallFacts;
use super::connection::Connection;
use super::policy::AdminPolicy;
use super::registry;
use super::spec::{secret_store_name, ServerSpec, ToolInfo, ToolRef};
use super::supervisor::{ServerStatus, Supervisor};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;
use crate::install::secrets::SecretValue;
use crate::install::store::Store;

/// Largest call arguments (serialized JSON).
pub const MAX_ARGUMENT_BYTES: usize = 256 * 1024;
/// Largest call result handed back (serialized JSON).
pub const MAX_RESULT_BYTES: usize = 1024 * 1024;

/// Who is calling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// The app's UI (`lime.tools.invoke`).
    Ui,
    /// A workflow `tool-call` step.
    Workflow,
    /// The app's agent task.
    Agent,
    /// The host's own path (`apphost tools call`).
    Host,
}

impl Caller {
    pub fn as_str(self) -> &'static str {
        match self {
            Caller::Ui => "ui",
            Caller::Workflow => "workflow",
            Caller::Agent => "agent",
            Caller::Host => "host",
        }
    }
}

/// Whether the user approved this call (a destructive tool needs it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    NotAsked,
    /// The user said yes in a prompt the host drew (or `--yes` on the host's own CLI).
    ByUser,
}

/// One call.
pub struct Invocation<'a> {
    pub app: &'a str,
    pub version: Option<&'a str>,
    pub tool: &'a ToolRef,
    pub arguments: &'a Value,
    pub caller: Caller,
    pub approval: Approval,
    /// The `<server>/<tool>` the app's manifest declares in `toolRefs[]`; `None` on the host's
    /// own path.
    pub declared: Option<&'a BTreeSet<String>>,
}

/// A tool an app may call, as the app and its agent see it.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppTool {
    pub tool: String,
    pub server: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub input_schema: Value,
    pub needs_approval: bool,
}

pub struct Broker {
    dir: DataDir,
    supervisor: Supervisor,
    /// Settings rows and policy kept between calls until either may have changed.
    facts: CallFacts,
}

pub fn arguments_sha256(arguments: &Value) -> String {
    sha256_hex(&arguments.to_string())
}

fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

impl Broker {
    pub fn new(dir: &DataDir) -> HostResult<Broker> {
        Ok(Broker {
            dir: dir.clone(),
            supervisor: Supervisor::new()?,
            facts: CallFacts::default(),
        })
    }

    pub fn policy(&self) -> AdminPolicy {
        AdminPolicy::load(&self.dir)
    }

    fn secrets_of(&self, spec: &ServerSpec) -> HostResult<Vec<(String, SecretValue)>> {
        if spec.secrets.is_empty() {
            return Ok(Vec::new());
        }
        let store = crate::install::secrets::open_default(&self.dir)?;
        spec.secrets
            .iter()
            .map(|(var, secret)| {
                let value = store.get(&secret_store_name(secret))?.ok_or_else(|| {
                    HostError::new(
                        ErrorCode::ToolsServerUnavailable,
                        format!(
                            "the secret {secret:?} this server needs is not set (apphost tools secret set {secret})"
                        ),
                    )
                    .with("secret", secret)
                })?;
                Ok((var.clone(), value))
            })
            .collect()
    }

    /// Starts `server` if needed, lists its tools and records the listing for readiness.
    pub fn list_server(&self, store: &Store, server: &str) -> HostResult<Vec<ToolInfo>> {
        let spec = registry::server(&store.settings()?, &self.policy(), server)?.spec;
        let tools = self
            .supervisor
            .tools(server, &spec, || self.secrets_of(&spec))?;
        store.record_tool_listing(server, &json!({ "tools": tools }))?;
        Ok(tools)
    }

    pub fn status(&self, server: &str) -> ServerStatus {
        self.supervisor.status(server)
    }

    pub fn stop(&self, server: &str) {
        self.supervisor.stop(server);
    }

    /// Stops every server (host exit).
    pub fn shutdown(&self) {
        self.supervisor.shutdown();
    }

    /// The tools granted to `app` that the policy allows, from the servers' last listings (no
    /// server is started). `declared` limits them to the app's `toolRefs[]`.
    pub fn tools_for_app(
        &self,
        store: &Store,
        app: &str,
        declared: Option<&BTreeSet<String>>,
    ) -> HostResult<Vec<AppTool>> {
        let settings = store.settings()?;
        let policy = self.policy();
        let servers = registry::servers(&settings, &policy);
        let mut out = Vec::new();
        for r in registry::grants(&settings, app) {
            if declared.is_some_and(|d| !d.contains(&r.to_string()))
                || policy.check_allowed(&r).is_err()
                || !servers.contains_key(&r.server)
            {
                continue;
            }
            let Some(info) = registry::listing(&settings, &r.server)
                .into_iter()
                .find(|t| t.name == r.tool)
            else {
                continue;
            };
            out.push(AppTool {
                tool: r.to_string(),
                server: r.server.clone(),
                name: r.tool.clone(),
                description: info.description.clone(),
                input_schema: info.input_schema.clone(),
                needs_approval: policy.needs_approval(&r, &info),
            });
        }
        Ok(out)
    }

    /// Everything before the call: `Ok` with the tool's listing and whether it needs the
    /// user's approval. Starts the server if needed (to know its tools).
    pub fn prepare(
        &self,
        store: &Store,
        inv: &Invocation,
    ) -> HostResult<(ServerSpec, ToolInfo, bool)> {
        let size = inv.arguments.to_string().len();
        self.prepare_sized(store, inv, size)
            .map(|(spec, info, needs, _)| (spec, info, needs))
    }

    /// [`Self::prepare`] with the arguments' serialized size known, also answering the session.
    fn prepare_sized(
        &self,
        store: &Store,
        inv: &Invocation,
        size: usize,
    ) -> HostResult<(ServerSpec, ToolInfo, bool, Arc<Connection>)> {
        let r = inv.tool;
        if !inv.arguments.is_object() || size > MAX_ARGUMENT_BYTES {
            return Err(HostError::new(
                ErrorCode::ToolsInvalid,
                format!(
                    "the arguments must be a JSON object of at most {MAX_ARGUMENT_BYTES} bytes"
                ),
            ));
        }
        if let Some(declared) = inv.declared {
            if !declared.contains(&r.to_string()) {
                return Err(HostError::new(
                    ErrorCode::ToolsNotDeclared,
                    format!("the app declares no toolRefs[] item for {r}"),
                )
                .with("tool", r.to_string()));
            }
        }
        let facts = self.facts.get(store, &self.dir)?;
        if !facts.grants(inv.app).contains(r) {
            return Err(HostError::new(
                ErrorCode::ToolsNotGranted,
                format!(
                    "{r} is not granted to {} (apphost tools grant {} {r})",
                    inv.app, inv.app
                ),
            )
            .with("tool", r.to_string()));
        }
        facts.policy.check_allowed(r)?;
        let spec = facts
            .servers
            .get(&r.server)
            .map(|s| s.spec.clone())
            .ok_or_else(|| {
                HostError::new(
                    ErrorCode::ToolsNotFound,
                    format!("no MCP server named {:?} (apphost tools list)", r.server),
                )
                .with("server", r.server.as_str())
            })?;
        let conn = self
            .supervisor
            .session(&r.server, &spec, || self.secrets_of(&spec))?;
        let info = conn
            .tools
            .iter()
            .find(|t| t.name == r.tool)
            .cloned()
            .ok_or_else(|| {
                HostError::new(
                    ErrorCode::ToolsNotFound,
                    format!("MCP server {:?} lists no tool {:?}", r.server, r.tool),
                )
                .with("tool", r.to_string())
            })?;
        let needs = facts.policy.needs_approval(r, &info);
        Ok((spec, info, needs, conn))
    }

    /// Runs one call through every check, and audits it.
    pub fn invoke(&self, store: &Store, inv: &Invocation) -> HostResult<Value> {
        self.invoke_until(store, inv, None)
    }

    /// [`Self::invoke`] that `cancel` may end early (an agent turn cancelled: `tools.cancelled`,
    /// the server sent `notifications/cancelled`).
    pub fn invoke_until(
        &self,
        store: &Store,
        inv: &Invocation,
        cancel: Option<runtime_core::backend::CancelSignal>,
    ) -> HostResult<Value> {
        let started = Instant::now();
        let arguments_json = inv.arguments.to_string();
        let result = self.invoke_unaudited(store, inv, arguments_json.len(), cancel);
        let (outcome, code) = match &result {
            Ok(v) if v.get("isError") == Some(&Value::Bool(true)) => ("tool-error", None),
            Ok(_) => ("ok", None),
            Err(e) => ("error", Some(e.code.as_str())),
        };
        let details = json!({
            "server": inv.tool.server,
            "tool": inv.tool.tool,
            "argumentsSha256": sha256_hex(&arguments_json),
            "caller": inv.caller.as_str(),
            "approval": match inv.approval { Approval::NotAsked => "none", Approval::ByUser => "user" },
            "outcome": outcome,
            "code": code,
            "durationMs": started.elapsed().as_millis() as u64,
        });
        let before = self.facts.before_own_write(store);
        let audited = store.record_audit("tools.call", Some(inv.app), inv.version, &details);
        self.facts.after_own_write(store, before);
        match (result, audited) {
            (Ok(v), Ok(())) => Ok(v),
            (Err(e), _) => Err(e),
            (Ok(_), Err(e)) => Err(e),
        }
    }

    fn invoke_unaudited(
        &self,
        store: &Store,
        inv: &Invocation,
        size: usize,
        cancel: Option<runtime_core::backend::CancelSignal>,
    ) -> HostResult<Value> {
        let (spec, _info, needs_approval, conn) = self.prepare_sized(store, inv, size)?;
        if needs_approval && inv.approval != Approval::ByUser {
            return Err(HostError::new(
                ErrorCode::ToolsDenied,
                format!(
                    "{} is destructive and the user did not approve this call",
                    inv.tool
                ),
            )
            .with("tool", inv.tool.to_string())
            .with("needsApproval", true));
        }
        let arguments: Map<String, Value> = inv.arguments.as_object().cloned().unwrap_or_default();
        let result = self.supervisor.call_until(
            &inv.tool.server,
            conn,
            &inv.tool.tool,
            arguments,
            spec.timeout(),
            cancel,
        )?;
        let value = serde_json::to_value(&result)
            .map_err(|e| HostError::new(ErrorCode::ToolsBadResponse, e.to_string()))?;
        if value.to_string().len() > MAX_RESULT_BYTES {
            return Err(HostError::new(
                ErrorCode::ToolsBadResponse,
                format!(
                    "the result of {} is over {MAX_RESULT_BYTES} bytes",
                    inv.tool
                ),
            )
            .with("limit", MAX_RESULT_BYTES));
        }
        Ok(value)
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.supervisor.shutdown();
    }
}
