//! Reading tasks: one task's view (status, latest run, output), listings, recent tasks and
//! the stored input.

use serde_json::{json, Value};

use super::store::TaskRow;
use crate::ids::*;
use crate::read_model::TurnView;

use super::*;

impl AgentTasks {
    pub(super) fn row(&self, app: &AppId, task_id: &str) -> Result<TaskRow, AgentTaskError> {
        self.store
            .get(app.as_str(), task_id)?
            .ok_or(AgentTaskError::NotFound)
    }

    pub(super) fn latest_turn(&self, row: &TaskRow) -> Result<Option<TurnView>, AgentTaskError> {
        let Some(last) = row.runs.last() else {
            return Ok(None);
        };
        let Ok(model) = self.read_session(&sid(&row.session_id)?) else {
            return Ok(None);
        };
        let turn = TurnId::new(last.clone()).map_err(|e| AgentTaskError::Storage(e.to_string()))?;
        Ok(model.turn(&turn).cloned())
    }

    /// The task's state (`getTask`).
    pub fn get(&self, app: &AppId, task_id: &str) -> Result<Value, AgentTaskError> {
        let row = self.row(app, task_id)?;
        self.view(&row)
    }

    pub(super) fn view(&self, row: &TaskRow) -> Result<Value, AgentTaskError> {
        let session = sid(&row.session_id)?;
        let model = self.read_session(&session).ok();
        let mut runs = Vec::new();
        let mut pending = Vec::new();
        for (i, t) in row.runs.iter().enumerate() {
            let view = model.as_ref().and_then(|m| {
                TurnId::new(t.clone())
                    .ok()
                    .and_then(|id| m.turn(&id).cloned())
            });
            runs.push(json!({
                "run": i + 1,
                "turnId": t,
                "status": view.as_ref().map_or("submitting", |v| status_name(v.status)),
                "errorCode": view.as_ref().and_then(|v| v.error_code.clone()),
            }));
        }
        if let Some(m) = &model {
            for th in m.threads.values() {
                for a in &th.pending_actions {
                    if a.turn_id.as_ref().map(|t| t.as_str()) == row.runs.last().map(|s| s.as_str())
                    {
                        pending.push(json!({
                            "actionId": a.action_id,
                            "toolName": a.tool_name,
                            "toolCallId": a.tool_call_id,
                            "input": a.arguments,
                            "prompt": a.prompt,
                            "actionType": a.action_type,
                        }));
                    }
                }
            }
        }
        let latest = self.latest_turn(row)?;
        let status = latest
            .as_ref()
            .map_or("submitting", |v| status_name(v.status));
        let result = latest.as_ref().filter(|v| v.status.is_terminal()).map(|v| {
            json!({
                "status": status_name(v.status),
                "text": if v.structured_output.is_some() { Value::Null } else { json!(v.output_text) },
                "structuredOutput": v.structured_output,
                "errorCode": v.error_code,
                "errorMessage": v.error_message,
            })
        });
        // Tokens over the task's runs (their turns' model calls); the budget it was started with.
        let (mut input_tokens, mut output_tokens) = (0u64, 0u64);
        if let Some(m) = &model {
            for th in m.threads.values() {
                for t in th
                    .turns
                    .iter()
                    .filter(|t| row.runs.iter().any(|r| r == t.turn_id.as_str()))
                {
                    input_tokens += t.input_tokens;
                    output_tokens += t.output_tokens;
                }
            }
        }
        Ok(json!({
            "taskId": row.task_id,
            "traceId": row.trace_id,
            "sessionId": row.session_id,
            "usage": {
                "inputTokens": input_tokens,
                "outputTokens": output_tokens,
                "totalTokens": input_tokens + output_tokens,
            },
            "budget": { "maxTokens": row.max_tokens },
            "idempotencyKey": row.idempotency_key,
            "createdAt": row.created_at,
            "status": status,
            "runs": runs,
            "pendingActions": pending,
            "result": result,
        }))
    }

    /// The app's tasks, oldest first, after `cursor` (the `taskId` of the last one seen).
    pub fn list(
        &self,
        app: &AppId,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<Value>, Option<String>), AgentTaskError> {
        let limit = limit.clamp(1, MAX_LIST);
        let after = match cursor {
            Some(c) => Some(self.row(app, c)?),
            None => None,
        };
        let rows = self.store.list(
            app.as_str(),
            after
                .as_ref()
                .map(|r| (r.created_at.as_str(), r.task_id.as_str())),
            limit,
        )?;
        let next = (rows.len() == limit)
            .then(|| rows.last().map(|r| r.task_id.clone()))
            .flatten();
        let items = rows
            .iter()
            .map(|r| self.view(r))
            .collect::<Result<_, _>>()?;
        Ok((items, next))
    }

    /// The host's own listing (never an app's): up to `limit` tasks, newest first, of `app` or
    /// of every app, each as [`AgentTasks::get`] shows it plus `appId`, `updatedAt` (the latest
    /// run's last change) and `inputPreview` (the input's first [`INPUT_PREVIEW_CHARS`] chars).
    pub fn recent(&self, app: Option<&AppId>, limit: usize) -> Result<Vec<Value>, AgentTaskError> {
        let rows = self
            .store
            .recent(app.map(AppId::as_str), limit.clamp(1, MAX_LIST))?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let mut v = self.view(row)?;
            let latest = self.latest_turn(row)?;
            let updated = latest
                .as_ref()
                .and_then(|t| {
                    t.completed_at
                        .clone()
                        .or_else(|| t.started_at.clone())
                        .or_else(|| t.submitted_at.clone())
                })
                .unwrap_or_else(|| row.created_at.clone());
            v["appId"] = json!(row.app_id);
            v["updatedAt"] = json!(updated);
            v["inputPreview"] = json!(row
                .input
                .chars()
                .take(INPUT_PREVIEW_CHARS)
                .collect::<String>());
            out.push(v);
        }
        Ok(out)
    }

    /// The task's input as the app sent it (the host shows it beside the task's activity).
    pub fn input(&self, app: &AppId, task_id: &str) -> Result<String, AgentTaskError> {
        Ok(self.row(app, task_id)?.input)
    }
}
