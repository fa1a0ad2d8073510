//! A task's `runtimeCorrelation` (the Agent Runtime standard's evidence-export object:
//! `{runtimeId, sessionId, threadId, turnId, taskId, runId, traceId}`), for the app-facing
//! evidence pack (`lime.evidence.export {taskId}`). Ids come from the task's row and its latest
//! run's turn in the session's read model; an id the log does not have is `null` and named in
//! `missing` (never guessed, never joined by time).

use serde_json::{json, Value};

use super::*;

impl AgentTasks {
    /// The correlation of the app's task `task_id` (its latest run); another app's task is
    /// [`AgentTaskError::NotFound`].
    pub fn correlation(&self, app: &AppId, task_id: &str) -> Result<Value, AgentTaskError> {
        let row = self.row(app, task_id)?;
        let model = self.read_session(&sid(&row.session_id)?).ok();
        let last = row.runs.last();
        let (thread_id, run_id) = match (&model, last) {
            (Some(m), Some(turn)) => m
                .threads
                .iter()
                .find_map(|(key, th)| {
                    th.turns
                        .iter()
                        .find(|t| t.turn_id.as_str() == turn)
                        .map(|t| {
                            let thread = th
                                .thread_id
                                .as_ref()
                                .map_or_else(|| key.clone(), |id| id.as_str().to_owned());
                            (
                                Some(thread),
                                t.run_id.as_ref().map(|r| r.as_str().to_owned()),
                            )
                        })
                })
                .unwrap_or((None, None)),
            _ => (None, None),
        };
        let mut missing = Vec::new();
        if thread_id.is_none() {
            missing.push("threadId");
        }
        if last.is_none() {
            missing.push("turnId");
        }
        if run_id.is_none() {
            missing.push("runId");
        }
        Ok(json!({
            "runtimeId": self.runtime.log().runtime_id().as_str(),
            "sessionId": row.session_id,
            "threadId": thread_id,
            "turnId": last,
            "taskId": row.task_id,
            "runId": run_id,
            "traceId": row.trace_id,
            "missing": missing,
        }))
    }
}
