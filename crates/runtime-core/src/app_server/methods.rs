//! The App Server's methods as one table ([`TABLE`]): each row is a method's wire name, when it
//! may be called ([`Phase`]), its params and result schemas (what `schema.rs` publishes and what
//! the handler decodes), and its handler. The dispatcher, `capability/list`'s advertised methods,
//! [`METHODS`] and the published schema all derive from it; a name not in it is `-32601`.

use schemars::SchemaGenerator;
use serde_json::{json, Value};

use super::protocol::*;
use super::schema::sub;
use super::views::{agent_session, artifacts, turns};
use super::{calls, paging, params, ser, Connection, InitState, RpcError};
use crate::runtime::RuntimeError;
use crate::tools::HostTools;

/// When a method may be called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// `initialize`: first, once.
    Handshake,
    /// `initialized`: only as a notification (as a request it is not a method).
    Notification,
    /// Every other method: after `initialize` and `initialized`; advertised by
    /// `capability/list`.
    Business,
}

/// A schema of a method's params or result.
pub type SchemaFn = fn(&mut SchemaGenerator) -> Value;
/// A method's handler: decodes and validates the params, answers the result.
pub type Handler = fn(&mut Connection, Option<Value>) -> Result<Value, RpcError>;

/// One App Server method.
pub struct MethodSpec {
    pub name: &'static str,
    pub phase: Phase,
    /// `None`: no params.
    pub params: Option<SchemaFn>,
    /// `None`: a notification (no result).
    pub result: Option<SchemaFn>,
    /// `None`: nothing answers it as a request.
    pub run: Option<Handler>,
}

const fn method(
    name: &'static str,
    params: SchemaFn,
    result: SchemaFn,
    run: Handler,
) -> MethodSpec {
    MethodSpec {
        name,
        phase: Phase::Business,
        params: Some(params),
        result: Some(result),
        run: Some(run),
    }
}

/// Every method, in catalog order.
pub const TABLE: &[MethodSpec] = &[
    MethodSpec {
        name: "initialize",
        phase: Phase::Handshake,
        params: Some(sub::<InitializeParams>),
        result: Some(sub::<InitializeResult>),
        run: Some(initialize),
    },
    MethodSpec {
        name: "initialized",
        phase: Phase::Notification,
        params: None,
        result: None,
        run: None,
    },
    method(
        "capability/list",
        sub::<CapabilityListParams>,
        sub::<CapabilityListResult>,
        capability_list,
    ),
    method(
        "artifact/read",
        sub::<ArtifactReadParams>,
        sub::<ArtifactReadResult>,
        artifact_read,
    ),
    method(
        "evidence/export",
        sub::<EvidenceExportParams>,
        sub::<EvidenceExportResult>,
        evidence_export,
    ),
    method(
        "agentSession/start",
        sub::<SessionStartParams>,
        sub::<SessionStartResult>,
        session_start,
    ),
    method(
        "agentSession/read",
        sub::<SessionRef>,
        sub::<SessionReadResult>,
        session_read,
    ),
    method(
        "agentSession/update",
        sub::<SessionUpdateParams>,
        sub::<SessionUpdateResult>,
        session_update,
    ),
    method(
        "agentSession/list",
        sub::<SessionListParams>,
        sub::<SessionListResult>,
        session_list,
    ),
    method(
        "agentSession/turn/start",
        sub::<TurnStartParams>,
        sub::<TurnStartResult>,
        turn_start,
    ),
    method(
        "agentSession/turn/cancel",
        sub::<TurnCancelParams>,
        empty_object,
        turn_cancel,
    ),
    method(
        "agentSession/action/respond",
        sub::<ActionRespondParams>,
        empty_object,
        action_respond,
    ),
    method(
        "agentSession/thread/resume",
        sub::<SessionRef>,
        sub::<ThreadResumeResult>,
        thread_resume,
    ),
];

const NAME_COUNT: usize = TABLE.len();

const NAMES: [&str; NAME_COUNT] = {
    let mut names = [""; NAME_COUNT];
    let mut i = 0;
    while i < NAME_COUNT {
        names[i] = TABLE[i].name;
        i += 1;
    }
    names
};

/// Every method's name, in catalog order (from [`TABLE`]).
pub const METHODS: &[&str] = &NAMES;

/// The method named `name`.
pub fn find(name: &str) -> Option<&'static MethodSpec> {
    TABLE.iter().find(|m| m.name == name)
}

/// The methods `capability/list` advertises (the business methods).
pub fn advertised() -> impl Iterator<Item = &'static str> {
    TABLE
        .iter()
        .filter(|m| m.phase == Phase::Business)
        .map(|m| m.name)
}

fn empty_object(_: &mut SchemaGenerator) -> Value {
    json!({"type": "object"})
}

fn initialize(c: &mut Connection, p: Option<Value>) -> Result<Value, RpcError> {
    if c.state != InitState::New {
        return Err(RpcError::new(
            codes::ALREADY_INITIALIZED,
            "Already initialized",
        ));
    }
    let ip: InitializeParams = params(p)?;
    if let Some(expected) = &c.token {
        let given = ip.auth_token.as_deref().unwrap_or("");
        if !super::door_token::matches(expected, given) {
            c.close = true;
            return Err(
                RpcError::new(codes::UNAUTHORIZED, "Unauthorized: wrong authToken")
                    .with(json!({"code": "appserver.bad_token"})),
            );
        }
    }
    if ip.client_info.name.trim().is_empty() {
        return Err(RpcError::new(
            codes::INVALID_PARAMS,
            "invalid params: clientInfo.name must not be empty",
        ));
    }
    c.client = Some(ip.client_info);
    c.state = InitState::InitializeAccepted;
    let info = c.rt.backend_info();
    ser(InitializeResult {
        server_info: ServerInfo {
            name: "apphost-runtime".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            protocol_version: PROTOCOL_VERSION.into(),
        },
        platform: json!({"family": "desktop", "os": std::env::consts::OS}),
        capabilities: json!({"agentSession": true, "capabilityDiscovery": true, "artifact": true, "evidence": true, "workspace": false}),
        runtime: RuntimeInfo {
            status: c.rt.status().into(),
            runtime_id: c.rt.log().runtime_id().clone(),
            provider_name: info.as_ref().map(|i| i.provider_name.clone()),
            model_name: info.map(|i| i.model_name),
        },
    })
}

/// `capability/list`: Lists what this server offers: its agent-session methods, then the runtime tools.
fn capability_list(c: &mut Connection, p: Option<Value>) -> Result<Value, RpcError> {
    let cp: CapabilityListParams = params(p)?;
    if let Some(s) = &cp.session_id {
        c.rt.read(s)?;
    }
    let mut caps = vec![Capability {
        id: "agentSession".into(),
        title: "Agent sessions".into(),
        description: "Start sessions and turns, cancel, answer actions, read and export.".into(),
        methods: advertised().map(str::to_owned).collect(),
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

/// `artifact/read`: A page of a session's artifacts (optionally with content).
fn artifact_read(c: &mut Connection, p: Option<Value>) -> Result<Value, RpcError> {
    let ap: ArtifactReadParams = params(p)?;
    let (app, _, _) = c.rt.read(&ap.session_id)?;
    let after = paging::position(ap.cursor.as_deref())?;
    let n = paging::limit(ap.limit, paging::ARTIFACT_PAGE, paging::MAX_ARTIFACT_PAGE);
    let mut arts: Vec<ArtifactSummary> = Vec::new();
    let mut content = 0u64;
    let rt = &c.rt;
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
        let mut found = artifacts(rt, &app, &ap.session_id, one, turn, ap.include_content);
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

/// `evidence/export`: Records an evidence export and answers the pack.
fn evidence_export(c: &mut Connection, p: Option<Value>) -> Result<Value, RpcError> {
    let ep: EvidenceExportParams = params(p)?;
    c.export_evidence(ep)
}

/// `agentSession/start`: Starts a session for an app and follows it.
fn session_start(c: &mut Connection, p: Option<Value>) -> Result<Value, RpcError> {
    let sp: SessionStartParams = params(p)?;
    c.subscription_room(None)?;
    let started = calls::start_session(&c.rt, sp)?;
    c.subscribe(&started.session.session_id, 0);
    ser(started)
}

/// `agentSession/read`: Reads a session (and follows it).
fn session_read(c: &mut Connection, p: Option<Value>) -> Result<Value, RpcError> {
    let r: SessionRef = params(p)?;
    c.subscription_room(Some(&r.session_id))?;
    let read = calls::read_session(&c.rt, &r)?;
    c.subscribe(&r.session_id, read.detail.session.recovery_cursor);
    ser(read)
}

/// `agentSession/update`: Changes a session's title or archive state.
fn session_update(c: &mut Connection, p: Option<Value>) -> Result<Value, RpcError> {
    let up: SessionUpdateParams = params(p)?;
    ser(calls::update_session(&c.rt, up)?)
}

/// `agentSession/list`: Lists sessions, most recently updated first.
fn session_list(c: &mut Connection, p: Option<Value>) -> Result<Value, RpcError> {
    let lp: SessionListParams = params(p.or_else(|| Some(json!({}))))?;
    ser(calls::list_sessions(&c.rt, &lp)?)
}

/// `agentSession/turn/start`: Starts (or queues) a turn.
fn turn_start(c: &mut Connection, p: Option<Value>) -> Result<Value, RpcError> {
    let tp: TurnStartParams = params(p)?;
    c.subscription_room(Some(&tp.session_id))?;
    let session = tp.session_id.clone();
    let started = calls::start_turn(&c.rt, tp, Default::default())?;
    c.subscribe(&session, started.follow_after);
    ser(started.result)
}

/// `agentSession/turn/cancel`: Cancels a turn.
fn turn_cancel(c: &mut Connection, p: Option<Value>) -> Result<Value, RpcError> {
    let cp: TurnCancelParams = params(p)?;
    calls::cancel_turn(&c.rt, &cp)?;
    Ok(json!({}))
}

/// `agentSession/action/respond`: Answers a pending action.
fn action_respond(c: &mut Connection, p: Option<Value>) -> Result<Value, RpcError> {
    let ap: ActionRespondParams = params(p)?;
    calls::respond_action(&c.rt, ap)?;
    Ok(json!({}))
}

/// `agentSession/thread/resume`: Resumes a paused queue of turns.
fn thread_resume(c: &mut Connection, p: Option<Value>) -> Result<Value, RpcError> {
    let r: SessionRef = params(p)?;
    c.subscription_room(Some(&r.session_id))?;
    let (_, _, before) = c.rt.read(&r.session_id)?;
    c.subscribe(&r.session_id, before.session.recovery_cursor);
    let resumed = c.rt.resume_queue(&r.session_id)?;
    let (app, thread, model) = c.rt.read(&r.session_id)?;
    ser(ThreadResumeResult {
        session: agent_session(&r.session_id, &app, &thread, &model),
        turns: turns(&r.session_id, &thread, &model),
        resumed,
    })
}
