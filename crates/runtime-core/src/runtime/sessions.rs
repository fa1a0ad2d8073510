//! Sessions: create, rebuild from the log, keep the resident ones bounded, read.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::{lock, Runtime, RuntimeError, SessionHandle, SessionState};
use crate::backend::ChatMessage;
use crate::event::{facts, Scope};
use crate::ids::*;
use crate::log::{is_args_ref, LogError};
use crate::read_model::{SessionReadModel, TurnStatus};
use crate::session_cache::Resident;

impl Runtime {
    /// Rebuilds a session's in-memory state from the log (`None`: no such session, or one
    /// without app or thread).
    pub(super) fn load(&self, sid: &SessionId) -> Result<Option<Arc<SessionHandle>>, RuntimeError> {
        let events = self.inner.log.read_all(sid)?;
        if events.is_empty() {
            return Ok(None);
        }
        let model = SessionReadModel::rebuild(&events);
        drop(events);
        let Some((app, thread)) = model.app_and_thread() else {
            return Ok(None);
        };
        let mut history = Vec::new();
        let inputs = self.inner.log.turn_inputs(sid)?;
        if let Some(th) = model.thread(&thread) {
            for t in &th.turns {
                if t.status == TurnStatus::Completed {
                    if let Some((text, _)) = inputs.get(t.turn_id.as_str()) {
                        history.push(ChatMessage::User {
                            content: text.clone(),
                        });
                        history.push(ChatMessage::Assistant {
                            content: t.output_text.clone(),
                            tool_calls: Vec::new(),
                        });
                    }
                }
            }
        }
        Ok(Some(Arc::new(SessionHandle {
            id: sid.clone(),
            app_id: app,
            thread_id: thread,
            state: Mutex::new(SessionState {
                model,
                active: None,
                queue: VecDeque::new(),
                queue_paused: false,
                history,
            }),
        })))
    }

    /// Drops idle sessions beyond the LRU bound (and the log's per-session state of each).
    pub(super) fn evict(&self, sessions: &mut Resident<SessionHandle>) {
        let bound = self.inner.config.sessions.resident;
        for id in sessions.evict(bound, |h| match h.state.try_lock() {
            Ok(st) => st.active.is_none() && st.queue.is_empty() && !st.queue_paused,
            Err(_) => false,
        }) {
            self.inner.log.release(&id);
        }
    }

    /// How many sessions are held in memory now (idle ones are bounded by
    /// `RuntimeConfig::sessions.resident`).
    pub fn resident_sessions(&self) -> usize {
        lock(&self.inner.sessions).len()
    }

    /// `Ok` when `app` may start one more session under the session caps.
    pub fn session_room(&self, app: &AppId) -> Result<(), RuntimeError> {
        lock(&self.inner.sessions)
            .room(app, &self.inner.config.sessions)
            .map_err(|(scope, limit)| RuntimeError::SessionLimit { scope, limit })
    }

    /// The session's handle: the resident one, or rebuilt from the log (under the cache's lock,
    /// so one session never has two handles).
    pub(super) fn session(&self, id: &SessionId) -> Result<Arc<SessionHandle>, RuntimeError> {
        let mut sessions = lock(&self.inner.sessions);
        if let Some(h) = sessions.get(id) {
            return Ok(h);
        }
        let h = self
            .load(id)?
            .ok_or_else(|| RuntimeError::SessionNotFound(id.to_string()))?;
        sessions.insert(id.clone(), h.clone());
        self.evict(&mut sessions);
        Ok(h)
    }

    /// Creates a session (one thread) for `app`.
    pub fn start_session(
        &self,
        app: AppId,
        session_id: Option<SessionId>,
        workspace_id: Option<String>,
    ) -> Result<SessionReadModel, RuntimeError> {
        self.start_session_about(app, session_id, workspace_id, None)
    }

    /// [`Runtime::start_session`] about a business object (`businessObjectRef`, kept as given).
    pub fn start_session_about(
        &self,
        app: AppId,
        session_id: Option<SessionId>,
        workspace_id: Option<String>,
        business_object_ref: Option<Value>,
    ) -> Result<SessionReadModel, RuntimeError> {
        let id = session_id.unwrap_or_else(SessionId::random);
        let mut sessions = lock(&self.inner.sessions);
        if sessions.contains(&id) || self.inner.log.last_sequence(&id)? > 0 {
            return Err(RuntimeError::SessionAlreadyExists(id.to_string()));
        }
        sessions
            .room(&app, &self.inner.config.sessions)
            .map_err(|(scope, limit)| RuntimeError::SessionLimit { scope, limit })?;
        let thread = ThreadId::random();
        let h = Arc::new(SessionHandle {
            id: id.clone(),
            app_id: app.clone(),
            thread_id: thread.clone(),
            state: Mutex::new(SessionState {
                model: SessionReadModel::default(),
                active: None,
                queue: VecDeque::new(),
                queue_paused: false,
                history: Vec::new(),
            }),
        });
        self.append(
            &h,
            vec![
                facts::session_created(app.as_str(), workspace_id, business_object_ref),
                facts::thread_started(Scope::thread(&thread)),
            ],
        )?;
        let model = lock(&h.state).model.clone();
        sessions.count(&app);
        sessions.insert(id, h);
        self.evict(&mut sessions);
        Ok(model)
    }

    /// The session's read models. A pending action's `arguments` are resolved when the log
    /// keeps them behind a reference (`log::args_ref`: whoever answers sees the whole input);
    /// one that does not resolve keeps the reference with `"error": "<args_ref.* code>"`.
    pub fn read(
        &self,
        id: &SessionId,
    ) -> Result<(AppId, ThreadId, SessionReadModel), RuntimeError> {
        let h = self.session(id)?;
        let mut model = lock(&h.state).model.clone();
        for th in model.threads.values_mut() {
            for a in &mut th.pending_actions {
                let Some(args) = a.arguments.as_mut().filter(|v| is_args_ref(v)) else {
                    continue;
                };
                match self.inner.log.resolve_arguments(id, args) {
                    Ok(v) => *args = v,
                    Err(LogError::ArgsRef(e)) => args["error"] = Value::from(e.code()),
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Ok((h.app_id.clone(), h.thread_id.clone(), model))
    }
}
