//! The App Server JSON-RPC handler (`appserver.v0`): transport-agnostic ([`Connection`] takes
//! one message and returns the response, notifications go to an outbound channel), plus the
//! stdio loop [`serve_stdio`] (one JSON message per line; stdout carries only protocol lines).
//!
//! Every method, param, result, error code and event is documented in `docs/app-server.md`.

pub mod paging;
pub mod protocol;
pub mod schema;
mod stdio;
pub mod validate;

use std::collections::HashSet;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::event::*;
use crate::ids::*;
use crate::read_model::{SessionReadModel, TurnView};
use crate::runtime::{Runtime, RuntimeError};
use crate::tools::HostTools;
use crate::turn::Decision;
use protocol::*;
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
    fn with(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
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

/// Business methods, in catalog order.
pub const METHODS: &[&str] = &[
    "initialize",
    "initialized",
    "capability/list",
    "artifact/read",
    "evidence/export",
    "agentSession/start",
    "agentSession/read",
    "agentSession/turn/start",
    "agentSession/turn/cancel",
    "agentSession/action/respond",
    "agentSession/thread/resume",
];

/// One client connection's protocol state.
pub struct Connection {
    rt: Runtime,
    state: InitState,
    client: Option<ClientInfo>,
    out: mpsc::Sender<Value>,
    subscribed: HashSet<SessionId>,
    forwarders: Vec<tokio::task::JoinHandle<()>>,
    max_subscriptions: usize,
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
        }
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
        let _g = span.enter();
        let result = self.dispatch(&method, p).await;
        Some(match result {
            Ok(v) => json!({"jsonrpc": "2.0", "id": id, "result": v}),
            Err(e) => error_response(id, &e),
        })
    }

    async fn dispatch(&mut self, method: &str, p: Option<Value>) -> Result<Value, RpcError> {
        if method == "initialize" {
            if self.state != InitState::New {
                return Err(RpcError::new(
                    codes::ALREADY_INITIALIZED,
                    "Already initialized",
                ));
            }
            let ip: InitializeParams = params(p)?;
            if ip.client_info.name.trim().is_empty() {
                return Err(RpcError::new(
                    codes::INVALID_PARAMS,
                    "invalid params: clientInfo.name must not be empty",
                ));
            }
            self.client = Some(ip.client_info);
            self.state = InitState::InitializeAccepted;
            let info = self.rt.backend_info();
            return ser(InitializeResult {
                server_info: ServerInfo {
                    name: "apphost-runtime".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    protocol_version: PROTOCOL_VERSION.into(),
                },
                platform: json!({"family": "desktop", "os": std::env::consts::OS}),
                capabilities: json!({"agentSession": true, "capabilityDiscovery": true, "artifact": true, "evidence": true, "workspace": false}),
                runtime: RuntimeInfo {
                    status: self.rt.status().into(),
                    runtime_id: self.rt.log().runtime_id().clone(),
                    provider_name: info.as_ref().map(|i| i.provider_name.clone()),
                    model_name: info.map(|i| i.model_name),
                },
            });
        }
        if !METHODS.contains(&method) {
            return Err(RpcError::new(
                codes::METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
            ));
        }
        if self.state != InitState::Ready {
            return Err(RpcError::new(
                codes::NOT_INITIALIZED,
                "Not initialized: initialize and initialized must complete before business methods",
            ));
        }
        match method {
            "agentSession/start" => {
                let sp: SessionStartParams = params(p)?;
                let app = AppId::new(&sp.app_id).map_err(|e| {
                    RpcError::new(codes::INVALID_PARAMS, format!("invalid params: {e}"))
                })?;
                validate::session_start(&sp)?;
                self.subscription_room(None)?;
                let model = self.rt.start_session(app, sp.session_id, sp.workspace_id)?;
                let sid = model.session.session_id.clone().expect("created");
                self.subscribe(&sid, 0);
                let (app, thread, model) = self.rt.read(&sid)?;
                ser(SessionStartResult {
                    session: agent_session(&sid, &app, &thread, &model),
                })
            }
            "agentSession/read" => {
                let r: SessionRef = params(p)?;
                self.subscription_room(Some(&r.session_id))?;
                let (app, thread, model) = self.rt.read(&r.session_id)?;
                self.subscribe(&r.session_id, model.session.recovery_cursor);
                ser(SessionReadResult {
                    session: agent_session(&r.session_id, &app, &thread, &model),
                    turns: turns(&r.session_id, &thread, &model),
                    detail: model,
                })
            }
            "agentSession/turn/start" => {
                let tp: TurnStartParams = params(p)?;
                self.subscription_room(Some(&tp.session_id))?;
                let (_, thread, model) = self.rt.read(&tp.session_id)?;
                self.subscribe(&tp.session_id, model.session.recovery_cursor);
                let opts = tp.runtime_options.unwrap_or_default();
                let started = self.rt.start_turn(
                    &tp.session_id,
                    tp.turn_id,
                    tp.input.text,
                    opts.output_schema,
                    tp.queue_if_busy,
                )?;
                ser(TurnStartResult {
                    turn: agent_turn(&tp.session_id, &thread, &started.turn),
                })
            }
            "agentSession/turn/cancel" => {
                let cp: TurnCancelParams = params(p)?;
                self.rt.cancel_turn(&cp.session_id, &cp.turn_id)?;
                Ok(json!({}))
            }
            "agentSession/action/respond" => {
                let ap: ActionRespondParams = params(p)?;
                let decision = match (ap.decision.as_deref(), ap.confirmed) {
                    (Some("allow_once"), _) => Decision::AllowOnce,
                    (Some("allow_for_session"), _) => Decision::AllowForSession,
                    (Some("decline"), _) => Decision::Decline,
                    (Some("cancel"), _) => Decision::Cancel,
                    (Some(other), _) => {
                        return Err(RpcError::new(
                            codes::INVALID_PARAMS,
                            format!("invalid params: unknown decision {other:?}"),
                        ))
                    }
                    (None, Some(true)) => Decision::AllowOnce,
                    (None, Some(false)) => Decision::Decline,
                    (None, None) => {
                        return Err(RpcError::new(
                            codes::INVALID_PARAMS,
                            "invalid params: decision or confirmed is required",
                        ))
                    }
                };
                self.rt
                    .respond_action(&ap.session_id, &ap.request_id, decision)?;
                Ok(json!({}))
            }
            "agentSession/thread/resume" => {
                let r: SessionRef = params(p)?;
                self.subscription_room(Some(&r.session_id))?;
                let (_, _, before) = self.rt.read(&r.session_id)?;
                self.subscribe(&r.session_id, before.session.recovery_cursor);
                let resumed = self.rt.resume_queue(&r.session_id)?;
                let (app, thread, model) = self.rt.read(&r.session_id)?;
                ser(ThreadResumeResult {
                    session: agent_session(&r.session_id, &app, &thread, &model),
                    turns: turns(&r.session_id, &thread, &model),
                    resumed,
                })
            }
            "capability/list" => {
                let cp: CapabilityListParams = params(p)?;
                if let Some(s) = &cp.session_id {
                    self.rt.read(s)?;
                }
                let mut caps = vec![Capability {
                    id: "agentSession".into(),
                    title: "Agent sessions".into(),
                    description:
                        "Start sessions and turns, cancel, answer actions, read and export.".into(),
                    methods: METHODS[2..].iter().map(|m| m.to_string()).collect(),
                    input_schema: None,
                    requires_approval: false,
                }];
                for t in HostTools::specs() {
                    caps.push(Capability {
                        id: format!("tool.{}", t.name),
                        title: t.name.clone(),
                        description: t.description,
                        methods: vec![],
                        input_schema: Some(t.parameters),
                        requires_approval: t.risky,
                    });
                }
                let start = paging::position(cp.cursor.as_deref())?;
                let n = paging::limit(cp.limit, paging::CAPABILITY_PAGE, paging::CAPABILITY_PAGE);
                let total = caps.len() as u64;
                let page: Vec<Capability> = caps
                    .into_iter()
                    .skip(start.min(total) as usize)
                    .take(n)
                    .collect();
                let end = start.min(total) + page.len() as u64;
                ser(CapabilityListResult {
                    capabilities: page,
                    next_cursor: (end < total).then(|| paging::cursor(end)),
                })
            }
            "artifact/read" => {
                let ap: ArtifactReadParams = params(p)?;
                let (app, _, _) = self.rt.read(&ap.session_id)?;
                let after = paging::position(ap.cursor.as_deref())?;
                let n = paging::limit(ap.limit, paging::ARTIFACT_PAGE, paging::MAX_ARTIFACT_PAGE);
                let mut arts: Vec<ArtifactSummary> = Vec::new();
                let mut content = 0u64;
                let rt = &self.rt;
                let (through, ended) = paging::walk(rt.log(), &ap.session_id, after, |e| {
                    let one = std::slice::from_ref(&e);
                    let turn = ap.turn_id.as_ref();
                    let matches = |a: &ArtifactSummary| {
                        ap.artifact_ref
                            .as_ref()
                            .is_none_or(|r| &a.artifact_ref == r)
                    };
                    if !artifacts(rt, &app, &ap.session_id, one, turn, false)
                        .iter()
                        .any(matches)
                    {
                        return true;
                    }
                    // A full page (count or inline bytes) stops before this event.
                    if arts.len() >= n {
                        return false;
                    }
                    let mut found =
                        artifacts(rt, &app, &ap.session_id, one, turn, ap.include_content);
                    found.retain(matches);
                    let bytes: u64 = found
                        .iter()
                        .map(|a| a.content.as_ref().map_or(0, |c| c.len() as u64))
                        .sum();
                    if !arts.is_empty() && content + bytes > paging::MAX_PAGE_CONTENT {
                        return false;
                    }
                    content += bytes;
                    arts.extend(found);
                    true
                })
                .map_err(RuntimeError::from)?;
                ser(ArtifactReadResult {
                    artifacts: arts,
                    next_cursor: (!ended).then(|| paging::cursor(through)),
                })
            }
            "evidence/export" => {
                let ep: EvidenceExportParams = params(p)?;
                self.export_evidence(ep)
            }
            _ => Err(RpcError::new(
                codes::METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
            )),
        }
    }

    fn export_evidence(&mut self, ep: EvidenceExportParams) -> Result<Value, RpcError> {
        let _span = tracing::info_span!("evidence.record", session = %ep.session_id).entered();
        let (app, thread, model) = self.rt.read(&ep.session_id)?;
        let turn = match &ep.turn_id {
            Some(t) => Some(
                model
                    .turn(t)
                    .cloned()
                    .ok_or_else(|| RuntimeError::TurnNotFound(t.to_string()))?,
            ),
            None => None,
        };
        let evidence_id = EvidenceId::random();
        let pack_ref = format!(
            "evidence://{}/{}",
            ep.session_id.as_str(),
            evidence_id.as_str()
        );
        let scope = Scope {
            evidence_id: Some(evidence_id.clone()),
            turn_id: turn.as_ref().map(|t| t.turn_id.clone()),
            task_id: turn.as_ref().and_then(|t| t.task_id.clone()),
            run_id: turn.as_ref().and_then(|t| t.run_id.clone()),
            ..Scope::thread(&thread)
        };
        self.rt.record(
            &ep.session_id,
            vec![facts::evidence_exported(scope, pack_ref.clone())],
        )?;
        let (_, _, model) = self.rt.read(&ep.session_id)?;
        let in_scope = |e: &Event| {
            turn.as_ref()
                .is_none_or(|t| e.scope.turn_id.as_ref() == Some(&t.turn_id))
        };
        // Counts and artifact summaries over the whole scope, a page of events at a time.
        let (mut event_count, mut artifact_count, mut arts) = (0u64, 0u64, Vec::new());
        let mut from = 1;
        loop {
            let page = self
                .rt
                .log()
                .read(&ep.session_id, from, crate::log::CATCH_UP_PAGE)
                .map_err(RuntimeError::from)?;
            let Some(last) = page.last().map(|e| e.sequence) else {
                break;
            };
            for e in page.iter().filter(|e| in_scope(e)) {
                event_count += 1;
                for a in artifacts(
                    &self.rt,
                    &app,
                    &ep.session_id,
                    std::slice::from_ref(e),
                    None,
                    false,
                ) {
                    artifact_count += 1;
                    if arts.len() < MAX_EXPORT_ARTIFACTS {
                        arts.push(a);
                    }
                }
            }
            if page.len() < crate::log::CATCH_UP_PAGE {
                break;
            }
            from = last + 1;
        }
        // The events themselves, one bounded page per export.
        let (events, next_events_cursor) = if ep.include_events {
            let after = paging::position(ep.events_cursor.as_deref())?;
            let n = paging::limit(ep.events_limit, paging::EVENT_PAGE, paging::EVENT_PAGE);
            let mut out = Vec::new();
            let (through, ended) = paging::walk(self.rt.log(), &ep.session_id, after, |e| {
                if !in_scope(&e) {
                    return true;
                }
                if out.len() >= n {
                    return false;
                }
                out.push(e);
                true
            })
            .map_err(RuntimeError::from)?;
            (Some(out), (!ended).then(|| paging::cursor(through)))
        } else {
            (None, None)
        };
        let th = model.thread(&thread).cloned().unwrap_or_default();
        let latest = th.turns.last().map(|t| t.status);
        let trace = turn
            .as_ref()
            .map(|t| TraceId::derived(t.turn_id.as_str(), 0));
        let mut missing = Vec::new();
        let task_id = turn.as_ref().and_then(|t| t.task_id.clone());
        let run_id = turn.as_ref().and_then(|t| t.run_id.clone());
        if turn.is_none() {
            missing.push("turnId".to_owned());
        }
        if task_id.is_none() {
            missing.push("taskId".to_owned());
        }
        if run_id.is_none() {
            missing.push("runId".to_owned());
        }
        if trace.is_none() {
            missing.push("traceId".to_owned());
        }
        let mut gaps = Vec::new();
        if artifact_count > arts.len() as u64 {
            gaps.push("artifacts_truncated".to_owned());
        }
        if th.pending_actions.iter().any(|_| true) {
            gaps.push("pending_actions_unresolved".to_owned());
        }
        ser(EvidenceExportResult {
            session: agent_session(&ep.session_id, &app, &thread, &model),
            turns: turns(&ep.session_id, &thread, &model),
            runtime_correlation: RuntimeCorrelation {
                runtime_id: self.rt.log().runtime_id().clone(),
                session_id: ep.session_id.clone(),
                thread_id: thread.clone(),
                turn_id: turn.as_ref().map(|t| t.turn_id.clone()),
                task_id,
                run_id,
                trace_id: trace,
                missing,
            },
            evidence_pack: EvidencePack {
                evidence_id,
                pack_ref,
                thread_status: th.status.clone(),
                latest_turn_status: latest,
                turn_count: model.session.turn_count,
                event_count,
                tool_call_count: th.tool_call_count,
                failed_tool_call_count: th.failed_tool_call_count,
                pending_request_count: th.pending_actions.len() as u64,
                queued_turn_count: th.queued_turns.len() as u64,
                artifact_count,
                known_gaps: gaps,
            },
            artifacts: arts,
            events,
            next_events_cursor,
            exported_at: format_timestamp(jiff::Timestamp::now()),
        })
    }

    /// Forwards the session's events after `after` to this connection as `agentSession/event`
    /// notifications (once per session).
    fn subscribe(&mut self, session: &SessionId, after: u64) {
        if !self.subscribed.insert(session.clone()) {
            return;
        }
        let mut sub = self.rt.log().subscribe(session, after);
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

pub(crate) fn error_response(id: Value, e: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": e.to_json()})
}

fn agent_session(
    id: &SessionId,
    app: &AppId,
    thread: &ThreadId,
    m: &SessionReadModel,
) -> AgentSession {
    AgentSession {
        session_id: id.clone(),
        thread_id: thread.clone(),
        app_id: app.to_string(),
        workspace_id: m.session.workspace_id.clone(),
        status: m.session.status.clone(),
        created_at: m.session.created_at.clone().unwrap_or_default(),
        updated_at: m.session.updated_at.clone().unwrap_or_default(),
        last_sequence: m.session.recovery_cursor,
    }
}

fn agent_turn(session: &SessionId, thread: &ThreadId, t: &TurnView) -> AgentTurn {
    AgentTurn {
        turn_id: t.turn_id.clone(),
        session_id: session.clone(),
        thread_id: thread.clone(),
        status: t.status,
        started_at: t.started_at.clone(),
        completed_at: t.completed_at.clone(),
        error_code: t.error_code.clone(),
    }
}

fn turns(session: &SessionId, thread: &ThreadId, m: &SessionReadModel) -> Vec<AgentTurn> {
    m.thread(thread)
        .map(|th| {
            th.turns
                .iter()
                .map(|t| agent_turn(session, thread, t))
                .collect()
        })
        .unwrap_or_default()
}

fn artifacts(
    rt: &Runtime,
    app: &AppId,
    session: &SessionId,
    events: &[Event],
    turn: Option<&TurnId>,
    include: bool,
) -> Vec<ArtifactSummary> {
    let mut out = Vec::new();
    for e in events {
        if turn.is_some() && e.scope.turn_id.as_ref() != turn {
            continue;
        }
        // How to get the content: a `lime.artifacts` artifact of the app (read through it,
        // rehashed) or a spilled tool output file.
        enum Source {
            Artifact,
            File(Option<std::path::PathBuf>),
        }
        let (r, kind, title, bytes, source) = match &e.body {
            EventBody::Artifact(_, a) => {
                let Some(r) = a.artifact_ref.clone() else {
                    continue;
                };
                (
                    r,
                    a.kind.clone().unwrap_or_else(|| "text".into()),
                    a.title.clone(),
                    a.bytes.unwrap_or(0),
                    Source::Artifact,
                )
            }
            EventBody::OutputSpilled(_, o) => {
                let Some(r) = o.output_ref.clone() else {
                    continue;
                };
                let path = e.scope.tool_call_id.as_ref().map(|c| {
                    rt.config()
                        .data_dir
                        .join("outputs")
                        .join(session.as_str())
                        .join(format!("{}.txt", c.as_str()))
                });
                (
                    r,
                    "tool_output".into(),
                    None,
                    o.bytes.unwrap_or(0),
                    Source::File(path),
                )
            }
            _ => continue,
        };
        let (content, status) = if !include {
            (None, "notRequested")
        } else if bytes > MAX_INLINE_CONTENT {
            (None, "tooLarge")
        } else {
            let read = match source {
                Source::Artifact => rt.tools().artifact_content(app, &r, MAX_INLINE_CONTENT),
                Source::File(path) => path.and_then(|p| std::fs::read(p).ok()),
            };
            match read {
                Some(b) => (Some(String::from_utf8_lossy(&b).into_owned()), "available"),
                None => (None, "unavailable"),
            }
        };
        out.push(ArtifactSummary {
            artifact_ref: r,
            event_id: e.event_id.clone(),
            sequence: e.sequence,
            turn_id: e.scope.turn_id.clone(),
            artifact_id: e.scope.artifact_id.clone(),
            title,
            kind,
            bytes,
            content,
            content_status: status.into(),
        });
    }
    out
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
