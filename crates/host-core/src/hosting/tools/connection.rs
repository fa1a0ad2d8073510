//! One live MCP session with a server, through the official Rust SDK (`rmcp`): a stdio child
//! in its own process group (its pipes behind [`stdio_pipes`](super::stdio_pipes)), or a
//! streamable-HTTP endpoint. `initialize` and `tools/list` run on connect; a call runs under
//! its timeout, and dropping it (timeout, cancel) makes rmcp send `notifications/cancelled`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::ServiceExt;

use super::spec::{ServerSpec, ToolInfo, Transport};
use super::stdio_pipes::{self, SharedRing, Violation, MAX_MESSAGE_BYTES};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::install::secrets::SecretValue;

/// How long `initialize` + `tools/list` may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a timed-out call waits for its cancel notification to be written.
const CANCEL_GRACE: Duration = Duration::from_millis(100);

/// Waits [`CANCEL_GRACE`]: a dropped call's `notifications/cancelled` reaches the server.
pub async fn cancel_grace() {
    tokio::time::sleep(CANCEL_GRACE).await;
}
/// Most tools kept from one server.
pub const MAX_TOOLS: usize = 512;
/// Variables a stdio server inherits from the host (everything else is cleared).
const INHERITED_ENV: [&str; 10] = [
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "PYENV_ROOT",
    "XDG_RUNTIME_DIR",
];

pub struct Connection {
    service: RunningService<RoleClient, ()>,
    child: Mutex<Option<tokio::process::Child>>,
    pub pid: Option<u32>,
    pub tools: Vec<ToolInfo>,
    violation: Arc<Mutex<Option<Violation>>>,
}

pub fn unavailable(server: &str, why: impl std::fmt::Display) -> HostError {
    HostError::new(
        ErrorCode::ToolsServerUnavailable,
        format!("MCP server {server:?} is unavailable: {why}"),
    )
    .with("server", server)
}

fn bad_response(server: &str, why: impl std::fmt::Display) -> HostError {
    HostError::new(
        ErrorCode::ToolsBadResponse,
        format!("MCP server {server:?} answered something that is not a valid result: {why}"),
    )
    .with("server", server)
}

impl Connection {
    /// Starts (stdio) or reaches (HTTP) `server`, runs `initialize` and lists its tools.
    /// `secrets` are the resolved `spec.secrets` (variable or header name → value).
    pub async fn open(
        server: &str,
        spec: &ServerSpec,
        secrets: Vec<(String, SecretValue)>,
        stderr: SharedRing,
    ) -> HostResult<Connection> {
        let violation = Arc::new(Mutex::new(None));
        let (service, child) = match &spec.transport {
            Transport::Stdio { command, args, env } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args).env_clear();
                for k in INHERITED_ENV {
                    if let Some(v) = std::env::var_os(k) {
                        cmd.env(k, v);
                    }
                }
                cmd.envs(env);
                for (k, v) in &secrets {
                    cmd.env(k, v.expose());
                }
                cmd.stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .kill_on_drop(true)
                    .process_group(0);
                let mut child = cmd.spawn().map_err(|e| unavailable(server, e))?;
                let (Some(stdin), Some(stdout), Some(err)) =
                    (child.stdin.take(), child.stdout.take(), child.stderr.take())
                else {
                    return Err(unavailable(server, "no pipes"));
                };
                tokio::spawn(stdio_pipes::pump_stderr(err, stderr));
                let (to_rmcp, from_guard) = tokio::io::duplex(256 * 1024);
                tokio::spawn(stdio_pipes::guard_stdout(
                    stdout,
                    to_rmcp,
                    violation.clone(),
                ));
                let transport = AsyncRwTransport::new_client(from_guard, stdin)
                    .with_max_line_length(MAX_MESSAGE_BYTES);
                let service = tokio::time::timeout(CONNECT_TIMEOUT, ().serve(transport)).await;
                let service = match service {
                    Ok(Ok(s)) => s,
                    Ok(Err(e)) => {
                        kill_group(&mut child).await;
                        return Err(unavailable(server, e));
                    }
                    Err(_) => {
                        kill_group(&mut child).await;
                        return Err(unavailable(server, "initialize timed out"));
                    }
                };
                (service, Some(child))
            }
            Transport::Http { url, headers } => {
                let _ = rustls::crypto::ring::default_provider().install_default();
                let client = reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .connect_timeout(Duration::from_secs(10))
                    .build()
                    .map_err(|e| unavailable(server, e))?;
                let mut custom = HashMap::new();
                let pairs = headers
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .chain(secrets.iter().map(|(k, v)| (k.as_str(), v.expose())));
                for (k, v) in pairs {
                    let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|_| unavailable(server, format!("bad header name {k:?}")))?;
                    let mut value = reqwest::header::HeaderValue::from_str(v)
                        .map_err(|_| unavailable(server, format!("bad value for header {k}")))?;
                    value.set_sensitive(true);
                    custom.insert(name, value);
                }
                let mut config =
                    rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                        url.as_str(),
                    )
                    .custom_headers(custom);
                config.max_sse_event_size = MAX_MESSAGE_BYTES;
                let transport =
                    rmcp::transport::StreamableHttpClientTransport::with_client(client, config);
                let service = tokio::time::timeout(CONNECT_TIMEOUT, ().serve(transport))
                    .await
                    .map_err(|_| unavailable(server, "initialize timed out"))?
                    .map_err(|e| unavailable(server, e))?;
                (service, None)
            }
        };
        let pid = child.as_ref().and_then(|c| c.id());
        let conn = Connection {
            service,
            child: Mutex::new(child),
            pid,
            tools: Vec::new(),
            violation,
        };
        let listed =
            tokio::time::timeout(CONNECT_TIMEOUT, conn.service.peer().list_all_tools()).await;
        let listed = match listed {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => {
                let err = conn.classify(server, e);
                conn.close().await;
                return Err(err);
            }
            Err(_) => {
                conn.close().await;
                return Err(unavailable(server, "tools/list timed out"));
            }
        };
        let mut conn = conn;
        conn.tools = listed.into_iter().take(MAX_TOOLS).map(tool_info).collect();
        Ok(conn)
    }

    /// Calls `tool` with `arguments` under `timeout`. Dropping the returned future cancels
    /// the call (`notifications/cancelled`).
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        timeout: Duration,
    ) -> HostResult<CallToolResult> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        match tokio::time::timeout(timeout, self.service.peer().call_tool(params)).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(self.classify(server, e)),
            Err(_) => {
                // The dropped request future has queued `notifications/cancelled`: a moment
                // for it to reach the server before the supervisor ends a stuck session.
                tokio::time::sleep(CANCEL_GRACE).await;
                Err(HostError::new(
                    ErrorCode::ToolsTimeout,
                    format!(
                        "{server}/{tool} did not answer within {} ms; the call was cancelled",
                        timeout.as_millis()
                    ),
                )
                .with("server", server)
                .with("timeoutMs", timeout.as_millis() as u64))
            }
        }
    }

    /// An rmcp error as a host error: a guard violation is a bad response, a closed
    /// transport an unavailable server, an MCP error object a bad response with its message.
    fn classify(&self, server: &str, e: rmcp::service::ServiceError) -> HostError {
        if let Some(v) = self.violation() {
            return bad_response(
                server,
                match v {
                    Violation::TooLarge => format!("a message over {MAX_MESSAGE_BYTES} bytes"),
                    Violation::NotJson => "a line that is not JSON".to_owned(),
                },
            )
            .with("limit", MAX_MESSAGE_BYTES);
        }
        match e {
            rmcp::service::ServiceError::McpError(m) => bad_response(server, m.message),
            rmcp::service::ServiceError::UnexpectedResponse => bad_response(server, e),
            other => unavailable(server, other),
        }
    }

    pub fn violation(&self) -> Option<Violation> {
        self.violation.lock().ok().and_then(|g| g.clone())
    }

    /// Whether the session still runs (the child has not exited, the transport is open).
    pub fn is_alive(&self) -> bool {
        if self.service.is_closed() || self.violation().is_some() {
            return false;
        }
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        match child.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => true,
        }
    }

    /// Kills the child's whole process group now (a call still waiting on it fails at once);
    /// [`Connection::close`] reaps it.
    pub fn kill(&self) {
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = child.as_mut() {
            if let Some(pid) = c
                .id()
                .and_then(|p| rustix::process::Pid::from_raw(p as i32))
            {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
            let _ = c.start_kill();
        }
    }

    /// Ends the session: the child's whole process group is killed and reaped.
    pub async fn close(self) {
        let child = self.child.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(mut child) = child {
            kill_group(&mut child).await;
        }
        let _ = tokio::time::timeout(Duration::from_secs(2), self.service.cancel()).await;
    }
}

/// SIGKILL to the child's process group, then wait for the child (bounded).
async fn kill_group(child: &mut tokio::process::Child) {
    if let Some(pid) = child
        .id()
        .and_then(|p| rustix::process::Pid::from_raw(p as i32))
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.start_kill();
    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
}

fn tool_info(t: rmcp::model::Tool) -> ToolInfo {
    let annotations = t.annotations.as_ref();
    ToolInfo {
        name: t.name.to_string(),
        description: t.description.map(|d| d.chars().take(2000).collect()),
        input_schema: serde_json::Value::Object((*t.input_schema).clone()),
        read_only_hint: annotations.and_then(|a| a.read_only_hint),
        destructive_hint: annotations.and_then(|a| a.destructive_hint),
    }
}
