//! A task's events: a page of its projected facts, and a live stream that follows new runs.

use std::sync::Arc;

use super::projection::{project, AgentTaskEvent, TaskIdentity};
use super::store::TaskStore;
use crate::ids::*;
use crate::runtime::RuntimeError;

use super::*;

impl AgentTasks {
    /// The task's identity, session and which of the session's facts are its own.
    pub(super) fn scope(
        &self,
        app: &AppId,
        task_id: &str,
    ) -> Result<(TaskIdentity, SessionId, TaskFacts), AgentTaskError> {
        let row = self.row(app, task_id)?;
        Ok((
            TaskIdentity {
                app_id: row.app_id.clone(),
                task_id: row.task_id.clone(),
                trace_id: row.trace_id.clone(),
            },
            sid(&row.session_id)?,
            TaskFacts {
                task_id: row.task_id.clone(),
                runs: row.runs.clone(),
                owns_session: !row.joined,
                store: self.store.clone(),
                app_id: row.app_id,
                foreign: Default::default(),
            },
        ))
    }

    /// Up to `limit` task events with `sequence > after`, and the position to resume from
    /// (the last fact read, projected or dropped).
    pub fn events(
        &self,
        app: &AppId,
        task_id: &str,
        after: u64,
        limit: usize,
    ) -> Result<(Vec<AgentTaskEvent>, u64), AgentTaskError> {
        let (ident, session, mut facts) = self.scope(app, task_id)?;
        let limit = limit.clamp(1, MAX_EVENTS_PAGE);
        let mut out = Vec::new();
        let mut pos = after;
        while out.len() < limit {
            let page = self
                .runtime
                .log()
                .read(&session, pos.saturating_add(1), limit)
                .map_err(RuntimeError::from)?;
            if page.is_empty() {
                break;
            }
            for e in page {
                pos = e.sequence;
                if !facts.belongs(&e) {
                    continue;
                }
                if let Some(te) = project(&ident, &e) {
                    out.push(te);
                    if out.len() == limit {
                        break;
                    }
                }
            }
        }
        Ok((out, pos))
    }

    /// A live, resumable stream of the task's events after `after`.
    pub fn subscribe(
        &self,
        app: &AppId,
        task_id: &str,
        after: u64,
    ) -> Result<TaskEventStream, AgentTaskError> {
        let (ident, session, facts) = self.scope(app, task_id)?;
        Ok(TaskEventStream {
            ident,
            facts,
            sub: calls::follow(&self.runtime, &session, after),
        })
    }
}

/// Which facts of a (possibly shared) session are one task's: those of its runs' turns, and the
/// session-level ones (no turn) when the task created the session. A turn the task does not know
/// yet (a retry recorded after the reader started) is looked up again, so a live stream follows
/// new runs.
pub(super) struct TaskFacts {
    app_id: String,
    task_id: String,
    runs: Vec<String>,
    owns_session: bool,
    store: Arc<TaskStore>,
    /// Turns seen to be another task's: a run's row is recorded before its turn is submitted,
    /// so a turn that is not this task's when its first fact is read never becomes it.
    foreign: std::collections::HashSet<String>,
}

impl TaskFacts {
    pub(super) fn belongs(&mut self, e: &crate::event::Event) -> bool {
        let Some(turn) = &e.scope.turn_id else {
            return self.owns_session;
        };
        if self.runs.iter().any(|r| r == turn.as_str()) {
            return true;
        }
        if self.foreign.contains(turn.as_str()) {
            return false;
        }
        // A run of this task recorded since (`retryTask`), or another task's turn.
        if let Ok(Some(row)) = self.store.get(&self.app_id, &self.task_id) {
            self.runs = row.runs;
        }
        let mine = self.runs.iter().any(|r| r == turn.as_str());
        if !mine {
            self.foreign.insert(turn.as_str().to_owned());
        }
        mine
    }
}

/// Live task events (see [`AgentTasks::subscribe`]).
pub struct TaskEventStream {
    ident: TaskIdentity,
    facts: TaskFacts,
    sub: crate::log::Subscription,
}

impl TaskEventStream {
    /// The next task event, waiting for it.
    pub async fn next(&mut self) -> Result<AgentTaskEvent, AgentTaskError> {
        loop {
            let e = self.sub.next().await.map_err(RuntimeError::from)?;
            if !self.facts.belongs(&e) {
                continue;
            }
            if let Some(te) = project(&self.ident, &e) {
                return Ok(te);
            }
        }
    }

    /// The next task event if one is ready.
    pub fn try_next(&mut self) -> Result<Option<AgentTaskEvent>, AgentTaskError> {
        while let Some(e) = self.sub.try_next().map_err(RuntimeError::from)? {
            if !self.facts.belongs(&e) {
                continue;
            }
            if let Some(te) = project(&self.ident, &e) {
                return Ok(Some(te));
            }
        }
        Ok(None)
    }

    /// The sequence of the last fact read.
    pub fn position(&self) -> u64 {
        self.sub.position()
    }
}
