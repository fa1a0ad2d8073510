//! Starting a task: idempotency, the session policy (new, or resume by task or business ref),
//! the caps, and the first run's turn.

use super::store::TaskRow;
use crate::app_server::protocol::{
    AgentInput, RuntimeOptions, SessionStartParams, TurnStartParams,
};
use crate::event::format_timestamp;
use crate::ids::*;
use crate::runtime::RuntimeError;
use crate::runtime::TurnTrace;

use super::*;

impl AgentTasks {
    /// Starts a task (or returns the app's task with the same idempotency key). Never waits
    /// for the model: the run is submitted to the runtime's own executor.
    pub fn start(&self, app: &AppId, req: StartTask) -> Result<TaskStarted, AgentTaskError> {
        self.start_with_knowledge(app, req, &[])
    }

    /// [`Self::start`] for a task that declared knowledge templates: its session's turns get the
    /// `knowledge_search` tool for them (granted before the run is submitted). The host has
    /// checked that each is declared and bound.
    pub fn start_with_knowledge(
        &self,
        app: &AppId,
        req: StartTask,
        knowledge: &[String],
    ) -> Result<TaskStarted, AgentTaskError> {
        self.start_with_bindings(app, req, knowledge, &[])
    }

    /// [`Self::start_with_knowledge`] for a task that also declared external tool refs
    /// (`<server>/<tool>`, checked by the host: declared and granted): its session's turns are
    /// offered them through the runtime's `ToolSource`. Both lists are recorded with the task
    /// (`bindings.rs`) before its run is submitted, so a restarted host grants them again.
    pub fn start_with_bindings(
        &self,
        app: &AppId,
        req: StartTask,
        knowledge: &[String],
        tools: &[String],
    ) -> Result<TaskStarted, AgentTaskError> {
        if tools.len() > crate::tools::external::MAX_TOOL_REFS {
            return Err(AgentTaskError::Invalid(format!(
                "a task names at most {} tools",
                crate::tools::external::MAX_TOOL_REFS
            )));
        }
        if req.input.len() > MAX_INPUT_BYTES {
            return Err(AgentTaskError::Invalid(format!(
                "input is over {MAX_INPUT_BYTES} bytes"
            )));
        }
        if let Some(k) = &req.idempotency_key {
            if k.is_empty()
                || k.len() > MAX_IDEMPOTENCY_KEY_BYTES
                || k.chars().any(char::is_control)
            {
                return Err(AgentTaskError::Invalid(format!(
                    "idempotencyKey must be 1..={MAX_IDEMPOTENCY_KEY_BYTES} bytes without control characters"
                )));
            }
        }
        if let Some(s) = &req.output_schema {
            if s.to_string().len() > MAX_SCHEMA_BYTES {
                return Err(AgentTaskError::Invalid(format!(
                    "the output schema is over {MAX_SCHEMA_BYTES} bytes"
                )));
            }
            jsonschema::validator_for(s).map_err(|e| {
                AgentTaskError::Invalid(format!(
                    "the output schema is not a valid JSON Schema: {e}"
                ))
            })?;
        }
        match &req.session {
            SessionPolicy::New => {}
            SessionPolicy::ResumeTask(id) => {
                if id.is_empty() || id.len() > 128 {
                    return Err(AgentTaskError::NotFound);
                }
            }
            SessionPolicy::ResumeRef(r) => {
                if r.is_empty()
                    || r.len() > MAX_BUSINESS_REF_BYTES
                    || r.chars().any(char::is_control)
                {
                    return Err(AgentTaskError::Invalid(format!(
                        "businessObjectRef must be 1..={MAX_BUSINESS_REF_BYTES} bytes without control characters"
                    )));
                }
            }
        }
        if self.runtime.status() != "ready" {
            return Err(AgentTaskError::NeedsSetup);
        }
        let req_id = req.request_id.clone();
        let _guard = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        // The same key names the same task, whatever its session is doing now.
        if let Some(k) = &req.idempotency_key {
            if let Some(row) = self.store.get_by_key(app.as_str(), k)? {
                self.grant(&row, knowledge, tools)?;
                self.ensure_started(app, &row, req_id.as_deref())?;
                return Ok(TaskStarted {
                    task_id: row.task_id,
                    trace_id: row.trace_id,
                    session_id: row.session_id,
                    created: false,
                });
            }
        }
        let (session_id, joined, new_ref) = match &req.session {
            SessionPolicy::New => (SessionId::random().into_string(), false, None),
            SessionPolicy::ResumeTask(id) => (self.row(app, id)?.session_id, true, None),
            SessionPolicy::ResumeRef(r) => match self.store.session_for_ref(app.as_str(), r)? {
                Some(s) => (s, true, None),
                None => (SessionId::random().into_string(), false, Some(r.as_str())),
            },
        };
        if joined {
            self.check_session_idle(&session_id)?;
        }
        self.check_room(app, !joined)?;
        let row = TaskRow {
            task_id: TaskId::random().into_string(),
            app_id: app.as_str().to_owned(),
            idempotency_key: req.idempotency_key.clone(),
            session_id,
            trace_id: TraceId::random().into_string(),
            input: req.input,
            output_schema: req.output_schema,
            created_at: format_timestamp(self.runtime.log().clock().now()),
            runs: vec![TurnId::random().into_string()],
            joined,
            max_tokens: req.max_tokens,
        };
        let (row, created) = self.store.insert_or_get_with_ref(&row, new_ref)?;
        self.grant(&row, knowledge, tools)?;
        self.ensure_started(app, &row, req_id.as_deref())?;
        Ok(TaskStarted {
            task_id: row.task_id,
            trace_id: row.trace_id,
            session_id: row.session_id,
            created,
        })
    }

    /// Records the task's bindings, then grants them to its session.
    fn grant(
        &self,
        row: &TaskRow,
        knowledge: &[String],
        tools: &[String],
    ) -> Result<(), AgentTaskError> {
        self.store
            .add_bindings(&row.task_id, super::bindings::KNOWLEDGE, knowledge)?;
        self.store
            .add_bindings(&row.task_id, super::bindings::TOOL, tools)?;
        let t = self.runtime.tools();
        t.knowledge_grants().grant(&row.session_id, knowledge);
        t.tool_grants().grant(&row.session_id, tools);
        Ok(())
    }

    /// Makes sure the task's session exists and its latest run was submitted (both idempotent;
    /// repairs a crash between recording a run and submitting it).
    pub(super) fn ensure_started(
        &self,
        app: &AppId,
        row: &TaskRow,
        request_id: Option<&str>,
    ) -> Result<(), AgentTaskError> {
        let session = sid(&row.session_id)?;
        if self.read_session(&session).is_err() {
            let start = SessionStartParams {
                session_id: Some(session.clone()),
                app_id: app.as_str().to_owned(),
                workspace_id: None,
                business_object_ref: None,
                locale: None,
            };
            match calls::start_session(&self.runtime, start) {
                Ok(_) | Err(MethodError::Runtime(RuntimeError::SessionAlreadyExists(_))) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let Some(last) = row.runs.last() else {
            return Ok(());
        };
        let turn = TurnId::new(last.clone()).map_err(|e| AgentTaskError::Storage(e.to_string()))?;
        let submit = TurnStartParams {
            session_id: session,
            turn_id: Some(turn),
            input: AgentInput {
                text: row.input.clone(),
                attachments: Vec::new(),
            },
            runtime_options: Some(RuntimeOptions {
                output_schema: row.output_schema.clone(),
                capability_id: None,
                metadata: None,
                max_tokens: row.max_tokens,
            }),
            queue_if_busy: true,
        };
        // One trace: the run's events carry the task's traceId and the request that caused it.
        let trace = TurnTrace {
            trace_id: TraceId::new(row.trace_id.clone()).ok(),
            request_id: request_id.and_then(|r| RequestId::new(r.to_owned()).ok()),
        };
        calls::start_turn(&self.runtime, submit, trace)?;
        Ok(())
    }

    /// `SessionBusy` unless every turn of the session has ended (a session that is not loaded
    /// has no running turn).
    pub(super) fn check_session_idle(&self, session: &str) -> Result<(), AgentTaskError> {
        let Ok(model) = self.read_session(&sid(session)?) else {
            return Ok(());
        };
        let busy = model
            .threads
            .values()
            .any(|th| th.turns.iter().any(|t| !t.status.is_terminal()));
        if busy {
            return Err(AgentTaskError::SessionBusy);
        }
        Ok(())
    }
}
