//! Session heads: what `agentSession/list` filters and sorts on, read without folding whole
//! sessions. A session's app, workspace, title and archive state change only through
//! `session.created` / `session.updated` facts, which a partial covering index
//! (`session_facts_body`, kept only for those two types) yields without reading the log; its
//! last event's time is one primary-key seek.

use rusqlite::params;

use super::*;
use crate::event::SessionPayload;

/// The partial index over session facts (created with the log's schema). It holds their type
/// and body too (a few small rows per session), so the heads are read from the index alone,
/// without a seek into the log per row. `session_facts`, its first form without them, is
/// dropped.
pub(super) const SCHEMA: &str = "
DROP INDEX IF EXISTS session_facts;
CREATE INDEX IF NOT EXISTS session_facts_body ON events(session_id, sequence, type, body)
  WHERE type IN ('session.created', 'session.updated');
";

/// The query the index serves (its `WHERE` repeats the index's, so SQLite uses it).
const SESSION_FACTS: &str = "SELECT session_id, body FROM events \
     WHERE type IN ('session.created', 'session.updated') ORDER BY session_id, sequence";

/// One session's head, folded from its session facts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionHead {
    pub session_id: Option<SessionId>,
    pub app_id: Option<String>,
    pub workspace_id: Option<String>,
    pub title: Option<String>,
    pub archived_at: Option<String>,
    pub created_at: Option<String>,
}

impl SessionHead {
    fn apply(&mut self, e: &Event, p: &SessionPayload) {
        if e.kind() == EventType::SessionCreated && self.created_at.is_none() {
            self.created_at = Some(e.timestamp.clone());
        }
        if p.app_id.is_some() {
            self.app_id = p.app_id.clone();
        }
        if p.workspace_id.is_some() {
            self.workspace_id = p.workspace_id.clone();
        }
        if let Some(t) = &p.title {
            self.title = (!t.is_empty()).then(|| t.clone());
        }
        match p.archived {
            Some(true) => self.archived_at = Some(e.timestamp.clone()),
            Some(false) => self.archived_at = None,
            None => {}
        }
    }
}

impl EventLog {
    /// Every durable session's head, in session id order. A row that does not decode is
    /// skipped (the session keeps what its other facts say).
    pub fn session_heads(&self) -> Result<Vec<SessionHead>, LogError> {
        let conn = lock(&self.inner.reader);
        let mut stmt = conn.prepare_cached(SESSION_FACTS)?;
        let mut rows = stmt.query([])?;
        let mut out: Vec<SessionHead> = Vec::new();
        while let Some(row) = rows.next()? {
            let sid: String = row.get(0)?;
            let Ok(sid) = SessionId::new(sid) else {
                continue;
            };
            let Ok(e) = serde_json::from_str::<Event>(row.get_ref(1)?.as_str().unwrap_or(""))
            else {
                continue;
            };
            let EventBody::Session(_, p) = &e.body else {
                continue;
            };
            if out.last().and_then(|h| h.session_id.as_ref()) != Some(&sid) {
                out.push(SessionHead {
                    session_id: Some(sid),
                    ..Default::default()
                });
            }
            if let Some(h) = out.last_mut() {
                h.apply(&e, p);
            }
        }
        Ok(out)
    }

    /// The time of `session`'s last durable event (when it was last updated): one
    /// primary-key seek, and only the `timestamp` field is decoded.
    pub fn last_event_time(&self, session: &SessionId) -> Result<Option<String>, LogError> {
        #[derive(serde::Deserialize)]
        struct Stamp {
            timestamp: String,
        }
        let conn = lock(&self.inner.reader);
        let mut stmt = conn.prepare_cached(
            "SELECT body FROM events WHERE session_id = ?1 ORDER BY sequence DESC LIMIT 1",
        )?;
        let body: Option<String> = stmt
            .query_row(params![session.as_str()], |r| r.get(0))
            .optional()?;
        Ok(body
            .and_then(|b| serde_json::from_str::<Stamp>(&b).ok())
            .map(|s| s.timestamp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_facts_query_uses_the_partial_index() {
        let dir = tempfile::tempdir().unwrap();
        let log = EventLog::open(&dir.path().join("events.db")).unwrap();
        let conn = lock(&log.inner.reader);
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {SESSION_FACTS}"))
            .unwrap()
            .query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(
            plan.iter()
                .any(|p| p.contains("COVERING INDEX session_facts_body")),
            "plan: {plan:?}"
        );
    }
}
