//! The App Server JSON-RPC handler (`appserver.v0`): transport-agnostic ([`Connection`] takes
//! one message and returns the response, notifications go to an outbound channel), plus the
//! stdio loop [`serve_stdio`] (one JSON message per line; stdout carries only protocol lines).
//!
//! Every method, param, result, error code and event is documented in `docs/app-server.md`.

pub mod calls;
pub mod door;
mod door_token;
mod evidence_export;
pub mod host_methods;
pub mod methods;
pub mod paging;
pub mod protocol;
pub mod schema;
mod stdio;
pub mod validate;
mod views;

use std::collections::HashSet;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::ids::*;
use crate::runtime::{Runtime, RuntimeError};
use methods::Phase;
pub use methods::METHODS;
use protocol::*;
pub(crate) use stdio::refusal_line;
pub use stdio::{serve_stdio, ServeConfig, DEFAULT_MAX_LINE_BYTES};

/// Artifact summaries an evidence export lists at most (then `knownGaps:
/// ["artifacts_truncated"]`; `artifact/read` pages through all of them).
pub const MAX_EXPORT_ARTIFACTS: usize = 1000;

/// Sessions one connection follows (`agentSession/event` forwarders) at most; naming one more
/// is `-32015` `appserver.subscription_limit`.
pub const MAX_SUBSCRIPTIONS: usize = 256;

/// Largest artifact content `artifact/read` inlines (bytes).
pub const MAX_INLINE_CONTENT: u64 = 1024 * 1024;

/// A JSON-RPC error.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }
    pub(crate) fn with(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
    /// The same error carrying `data` (a host method's structured refusal).
    pub fn with_data(self, data: Value) -> Self {
        self.with(data)
    }
    fn to_json(&self) -> Value {
        let mut e = json!({"code": self.code, "message": self.message});
        if let Some(d) = &self.data {
            e["data"] = d.clone();
        }
        e
    }
}

impl From<RuntimeError> for RpcError {
    fn from(e: RuntimeError) -> Self {
        let msg = e.to_string();
        match e {
            RuntimeError::SessionNotFound(id) => RpcError::new(codes::SESSION_NOT_FOUND, "Session not found").with(json!({"sessionId": id})),
            RuntimeError::SessionAlreadyExists(id) => RpcError::new(codes::SESSION_ALREADY_EXISTS, "Session already exists").with(json!({"sessionId": id})),
            RuntimeError::TurnNotFound(id) => RpcError::new(codes::TURN_NOT_FOUND, "Turn not found").with(json!({"turnId": id})),
            RuntimeError::TurnAlreadyActive(id) => RpcError::new(codes::TURN_ALREADY_ACTIVE, "Turn already active").with(json!({"activeTurnId": id})),
            RuntimeError::QueuePaused(ids) => RpcError::new(codes::TURN_ALREADY_ACTIVE, "Queued turns wait for agentSession/thread/resume").with(json!({"code": "runtime.queue_paused", "queuedTurnIds": ids.split(',').collect::<Vec<_>>()})),
            RuntimeError::ActionNotFound(id) => RpcError::new(codes::ACTION_NOT_FOUND, "Action not found").with(json!({"requestId": id})),
            RuntimeError::NeedsSetup => RpcError::new(codes::NEEDS_SETUP, "Model provider not configured").with(json!({"code": "runtime.needs_setup", "status": "needs-setup", "hint": "apphost model set --base-url <url> --model <name>"})),
            RuntimeError::InvalidParams(m) => RpcError::new(codes::INVALID_PARAMS, format!("invalid params: {m}")),
            RuntimeError::NoAsyncRuntime => RpcError::new(codes::INTERNAL_ERROR, "Internal error").with(json!({"detail": msg})),
            RuntimeError::Log(_) => RpcError::new(codes::RUNTIME_ERROR, "Runtime error").with(json!({"code": "runtime.storage", "detail": msg})),
            RuntimeError::SessionLimit { scope, limit } => RpcError::new(codes::SESSION_LIMIT, "Session limit reached").with(json!({"code": format!("runtime.{}_session_limit", scope.as_str()), "limit": limit})),
            RuntimeError::Busy(_) => RpcError::new(codes::RUNTIME_ERROR, "Runtime busy").with(json!({"code": "runtime.busy", "detail": msg})),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InitState {
    New,
    InitializeAccepted,
    Ready,
}

/// One client connection's protocol state.
pub struct Connection {
    rt: Runtime,
    state: InitState,
    client: Option<ClientInfo>,
    out: mpsc::Sender<Value>,
    subscribed: HashSet<SessionId>,
    forwarders: Vec<tokio::task::JoinHandle<()>>,
    max_subscriptions: usize,
    /// The door's token `initialize` must carry (`None` on stdio).
    token: Option<std::sync::Arc<str>>,
    /// Set when the transport must close after sending the current answer (a wrong token).
    close: bool,
    /// The host's extension methods (`host_methods`), tried after the standard table.
    host_methods: Option<std::sync::Arc<host_methods::HostMethods>>,
    /// The client, as the host methods see it (whether it hung up).
    caller: host_methods::Caller,
}

impl Drop for Connection {
    fn drop(&mut self) {
        for f in &self.forwarders {
            f.abort();
        }
    }
}

fn params<T: DeserializeOwned>(p: Option<Value>) -> Result<T, RpcError> {
    serde_json::from_value(p.unwrap_or_else(|| json!({})))
        .map_err(|e| RpcError::new(codes::INVALID_PARAMS, format!("invalid params: {e}")))
}

fn ser<T: serde::Serialize>(v: T) -> Result<Value, RpcError> {
    serde_json::to_value(v).map_err(|e| RpcError::new(codes::INTERNAL_ERROR, e.to_string()))
}

impl Connection {
    /// A connection whose notifications (`agentSession/event`) go to `out`.
    pub fn new(rt: Runtime, out: mpsc::Sender<Value>) -> Self {
        Connection {
            rt,
            state: InitState::New,
            client: None,
            out,
            subscribed: HashSet::new(),
            forwarders: Vec::new(),
            max_subscriptions: MAX_SUBSCRIPTIONS,
            token: None,
            close: false,
            host_methods: None,
            caller: host_methods::Caller::default(),
        }
    }

    /// The same connection telling its host methods about `caller` (the door's socket).
    pub fn with_caller(mut self, caller: host_methods::Caller) -> Self {
        self.caller = caller;
        self
    }

    /// The same connection also answering the host's extension methods.
    pub fn with_host_methods(
        mut self,
        host: Option<std::sync::Arc<host_methods::HostMethods>>,
    ) -> Self {
        self.host_methods = host;
        self
    }

    /// The same connection requiring `token` as `initialize`'s `authToken` (the door).
    pub fn with_token(mut self, token: Option<std::sync::Arc<str>>) -> Self {
        self.token = token;
        self
    }

    /// The transport closes the connection once the last answer is sent.
    pub fn should_close(&self) -> bool {
        self.close
    }

    /// `initialize` and `initialized` are done.
    pub fn is_ready(&self) -> bool {
        self.state == InitState::Ready
    }

    /// The same connection following at most `n` sessions (tests use a small bound).
    pub fn with_max_subscriptions(mut self, n: usize) -> Self {
        self.max_subscriptions = n;
        self
    }

    /// How many sessions this connection follows.
    pub fn subscriptions(&self) -> usize {
        self.subscribed.len()
    }

    /// `-32015` `appserver.subscription_limit` unless this connection follows `session` already
    /// or may follow one more.
    fn subscription_room(&self, session: Option<&SessionId>) -> Result<(), RpcError> {
        if session.is_some_and(|s| self.subscribed.contains(s))
            || self.subscribed.len() < self.max_subscriptions
        {
            return Ok(());
        }
        Err(RpcError::new(
            codes::SESSION_LIMIT,
            "This connection follows too many sessions: open another connection",
        )
        .with(json!({"code": "appserver.subscription_limit", "limit": self.max_subscriptions})))
    }

    pub fn client(&self) -> Option<&ClientInfo> {
        self.client.as_ref()
    }

    /// Handles one incoming message (already parsed); returns the response, if any
    /// (notifications get none).
    pub async fn handle_message(&mut self, msg: Value) -> Option<Value> {
        let Value::Object(obj) = msg else {
            return Some(error_response(
                Value::Null,
                &RpcError::new(codes::INVALID_REQUEST, "Invalid request: not an object"),
            ));
        };
        let id = obj.get("id").cloned();
        let id_ok = matches!(id, None | Some(Value::Number(_)) | Some(Value::String(_)));
        let Some(Value::String(method)) = obj.get("method") else {
            return Some(error_response(
                if id_ok {
                    id.unwrap_or(Value::Null)
                } else {
                    Value::Null
                },
                &RpcError::new(
                    codes::INVALID_REQUEST,
                    "Invalid request: method must be a string",
                ),
            ));
        };
        if !id_ok {
            return Some(error_response(
                Value::Null,
                &RpcError::new(
                    codes::INVALID_REQUEST,
                    "Invalid request: id must be a number or a string",
                ),
            ));
        }
        let p = obj.get("params").cloned();
        if let Some(pv) = &p {
            if !pv.is_object() && !pv.is_array() && !pv.is_null() {
                return id.map(|id| {
                    error_response(
                        id,
                        &RpcError::new(
                            codes::INVALID_REQUEST,
                            "Invalid request: params must be an object",
                        ),
                    )
                });
            }
        }
        let p = p.filter(|v| !v.is_null());
        let Some(id) = id else {
            // A notification: never answered.
            if method == "initialized" && self.state == InitState::InitializeAccepted {
                self.state = InitState::Ready;
            }
            return None;
        };
        let method = method.clone();
        let span = tracing::debug_span!("app_server.request", method = %method);
        let result = match self.host_method(&method) {
            Some(Ok(handler)) => {
                let caller = self.caller.clone();
                let run = move || span.in_scope(|| handler(p, &caller));
                tokio::task::spawn_blocking(run).await.unwrap_or_else(|e| {
                    Err(RpcError::new(codes::INTERNAL_ERROR, "Internal error")
                        .with(json!({"detail": e.to_string()})))
                })
            }
            Some(Err(e)) => Err(e),
            None => span.in_scope(|| self.dispatch(&method, p)),
        };
        Some(match result {
            Ok(v) => json!({"jsonrpc": "2.0", "id": id, "result": v}),
            Err(e) => error_response(id, &e),
        })
    }

    /// The host's handler of `method` when it is a host method (not a standard one): refused
    /// before the handshake completes, like every business method.
    fn host_method(&self, method: &str) -> Option<Result<host_methods::HostHandler, RpcError>> {
        if methods::find(method).is_some() {
            return None;
        }
        let handler = self.host_methods.as_ref()?.get(method)?;
        if self.state != InitState::Ready {
            return Some(Err(not_initialized()));
        }
        Some(Ok(handler))
    }

    fn dispatch(&mut self, method: &str, p: Option<Value>) -> Result<Value, RpcError> {
        let Some(spec) = methods::find(method) else {
            return Err(not_found(method));
        };
        if spec.phase != Phase::Handshake && self.state != InitState::Ready {
            return Err(not_initialized());
        }
        match spec.run {
            Some(run) => run(self, p),
            None => Err(not_found(method)),
        }
    }

    /// Forwards the session's events after `after` to this connection as `agentSession/event`
    /// notifications (once per session).
    fn subscribe(&mut self, session: &SessionId, after: u64) {
        if !self.subscribed.insert(session.clone()) {
            return;
        }
        let mut sub = calls::follow(&self.rt, session, after);
        let out = self.out.clone();
        self.forwarders.push(tokio::spawn(async move {
            loop {
                match sub.next().await {
                    Ok(e) => {
                        let n = json!({"jsonrpc": "2.0", "method": "agentSession/event", "params": {"event": e.to_json()}});
                        // A bounded outbound queue: a slow client slows this forwarder, which
                        // then catches up from the log; appends never wait for it.
                        if out.send(n).await.is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "event subscription failed");
                        return;
                    }
                }
            }
        }));
    }
}

fn not_initialized() -> RpcError {
    RpcError::new(
        codes::NOT_INITIALIZED,
        "Not initialized: initialize and initialized must complete before business methods",
    )
}

/// `-32601` for a name the method table does not answer.
fn not_found(method: &str) -> RpcError {
    RpcError::new(
        codes::METHOD_NOT_FOUND,
        format!("Method not found: {method}"),
    )
}

pub(crate) fn error_response(id: Value, e: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": e.to_json()})
}

/// Decodes one line into a message, or the JSON-RPC error to answer (the fuzzed entry point).
pub fn decode_line(line: &str) -> Result<Value, Value> {
    serde_json::from_str::<Value>(line).map_err(|e| {
        error_response(
            Value::Null,
            &RpcError::new(codes::PARSE_ERROR, format!("Parse error: {e}")),
        )
    })
}
