//! A session's own metadata (`agentSession/update`: title, archived) and the session list
//! (`agentSession/list`). Metadata changes are `session.updated` facts, so they are durable,
//! ordered with the session's other events and streamed to its followers like them.

use super::{lock, Runtime, RuntimeError};
use crate::event::facts;
use crate::ids::*;
use crate::log::SessionHead;
use crate::read_model::SessionReadModel;

/// What `agentSession/update` asks to change (`None`: leave it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionChange {
    /// The new title; `""` clears it.
    pub title: Option<String>,
    pub archived: Option<bool>,
}

/// Which sessions a listing keeps, by archive state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ArchivedFilter {
    /// Only sessions that are not archived (the default).
    #[default]
    Exclude,
    Include,
    Only,
}

/// The filter of `agentSession/list`.
#[derive(Clone, Debug, Default)]
pub struct SessionFilter {
    pub workspace_id: Option<String>,
    pub app_id: Option<String>,
    pub archived: ArchivedFilter,
}

/// One listed session: its head and, for the page, its read model.
#[derive(Clone, Debug)]
pub struct ListedSession {
    pub session_id: SessionId,
    pub app_id: AppId,
    pub thread_id: ThreadId,
    pub updated_at: String,
    pub model: SessionReadModel,
}

/// A page of [`Runtime::list_sessions`].
#[derive(Clone, Debug, Default)]
pub struct SessionPage {
    pub sessions: Vec<ListedSession>,
    /// How many sessions matched the filter (all pages).
    pub total: usize,
}

impl SessionFilter {
    fn keeps(&self, h: &SessionHead) -> bool {
        let archived = h.archived_at.is_some();
        let by_archive = match self.archived {
            ArchivedFilter::Exclude => !archived,
            ArchivedFilter::Include => true,
            ArchivedFilter::Only => archived,
        };
        by_archive
            && self
                .workspace_id
                .as_ref()
                .is_none_or(|w| h.workspace_id.as_ref() == Some(w))
            && self
                .app_id
                .as_ref()
                .is_none_or(|a| h.app_id.as_ref() == Some(a))
    }
}

impl Runtime {
    /// Changes a session's title and/or archive state: one `session.updated` with what
    /// differs, none when nothing does (an update is idempotent). Answers the session's read
    /// models after it.
    pub fn update_session(
        &self,
        id: &SessionId,
        change: SessionChange,
    ) -> Result<(AppId, ThreadId, SessionReadModel), RuntimeError> {
        let h = self.session(id)?;
        let (title, archived) = {
            let st = lock(&h.state);
            let now = &st.model.session;
            let title = change
                .title
                .filter(|t| now.title.as_deref().unwrap_or("") != t.as_str());
            let archived = change.archived.filter(|a| now.archived_at.is_some() != *a);
            (title, archived)
        };
        if title.is_some() || archived.is_some() {
            self.append(&h, vec![facts::session_updated(title, archived)])?;
        }
        self.read(id)
    }

    /// The sessions `filter` keeps, most recently updated first (then by id), `limit` of them
    /// from position `after`. Heads come from the log's session facts; only the page's
    /// sessions are folded (a resident one is read from memory), and listing never loads a
    /// session into the resident set.
    pub fn list_sessions(
        &self,
        filter: &SessionFilter,
        after: usize,
        limit: usize,
    ) -> Result<SessionPage, RuntimeError> {
        let log = &self.inner.log;
        let mut kept: Vec<(String, SessionId)> = Vec::new();
        for h in log.session_heads()? {
            let Some(sid) = h.session_id.clone() else {
                continue;
            };
            if !filter.keeps(&h) {
                continue;
            }
            let updated = log
                .last_event_time(&sid)?
                .or(h.created_at.clone())
                .unwrap_or_default();
            kept.push((updated, sid));
        }
        kept.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let total = kept.len();
        let mut sessions = Vec::new();
        for (updated_at, sid) in kept.into_iter().skip(after).take(limit) {
            let resident = lock(&self.inner.sessions).peek(&sid);
            let model = match resident {
                Some(h) => lock(&h.state).model.clone(),
                None => SessionReadModel::rebuild(&log.read_all(&sid)?),
            };
            let Some((app, thread)) = model.app_and_thread() else {
                continue;
            };
            sessions.push(ListedSession {
                session_id: sid,
                app_id: app,
                thread_id: thread,
                updated_at: model.session.updated_at.clone().unwrap_or(updated_at),
                model,
            });
        }
        Ok(SessionPage { sessions, total })
    }
}
