//! Reading: events (durable rows, then pending ones), turn inputs, stored tool arguments,
//! sessions and the whole-log walk.

use std::collections::HashMap;

use rusqlite::params;

use crate::ids::SessionId;

use super::*;

impl EventLog {
    /// Records a turn's input (the input snapshot; kept beside the log, never in an event).
    /// False when the session already has an input for this turn id.
    pub fn put_turn_input(
        &self,
        session: &SessionId,
        turn: &crate::ids::TurnId,
        input: &str,
        output_schema: Option<&serde_json::Value>,
    ) -> Result<bool, LogError> {
        let conn = lock(&self.inner.conn);
        let n = conn.execute(
            "INSERT OR IGNORE INTO turn_inputs(session_id, turn_id, input, output_schema) VALUES(?1, ?2, ?3, ?4)",
            params![session.as_str(), turn.as_str(), input, output_schema.map(|v| v.to_string())],
        )?;
        Ok(n == 1)
    }

    /// Every recorded turn input of `session`: turn id -> (input, output schema).
    pub fn turn_inputs(
        &self,
        session: &SessionId,
    ) -> Result<HashMap<String, (String, Option<serde_json::Value>)>, LogError> {
        let conn = lock(&self.inner.reader);
        let mut stmt = conn.prepare_cached(
            "SELECT turn_id, input, output_schema FROM turn_inputs WHERE session_id = ?1",
        )?;
        let rows = stmt.query_map([session.as_str()], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })?;
        let mut out = HashMap::new();
        for row in rows {
            let (t, i, s) = row?;
            out.insert(t, (i, s.and_then(|s| serde_json::from_str(&s).ok())));
        }
        Ok(out)
    }

    /// `arguments` as recorded in an event of `session`, with a reference ([`args_ref`])
    /// replaced by the stored value; a value that is no reference is returned as is. A
    /// malformed, unknown (for this session) or corrupt reference is [`LogError::ArgsRef`].
    pub fn resolve_arguments(
        &self,
        session: &SessionId,
        arguments: &serde_json::Value,
    ) -> Result<serde_json::Value, LogError> {
        if !is_args_ref(arguments) {
            return Ok(arguments.clone());
        }
        let conn = lock(&self.inner.reader);
        Ok(args_ref::resolve(&conn, session, arguments)??)
    }

    /// The tool calls and actions of `turn` still open (per the ordering rules' state).
    pub fn open_in_turn(
        &self,
        session: &SessionId,
        turn: &crate::ids::TurnId,
    ) -> Result<(Vec<crate::ids::ToolCallId>, Vec<crate::ids::ActionId>), LogError> {
        let mut st = lock(&self.inner.shared.state);
        self.ensure_session(&mut st, session)?;
        Ok(st.sessions[session].ordering.open_in_turn(turn))
    }

    /// Up to `limit` events of `session` with `sequence >= from`, in order: the durable rows,
    /// then the published ones still pending. Consecutive except across a gap a crash left,
    /// which the event right after it declares (`snapshot.repaired`, `lostSequenceFrom`).
    pub fn read(
        &self,
        session: &SessionId,
        from: u64,
        limit: usize,
    ) -> Result<Vec<Event>, LogError> {
        // Pending first, then the database: an event leaves `pending` only after it
        // committed, so the union has no hole (see the module doc).
        let pending: Vec<Event> = {
            let st = lock(&self.inner.shared.state);
            st.pending
                .iter()
                .filter(|e| &e.session_id == session && e.sequence >= from)
                .take(limit)
                .cloned()
                .collect()
        };
        let mut out = self.read_durable(session, from, limit)?;
        let after = out.last().map_or(0, |e: &Event| e.sequence);
        let room = limit - out.len();
        out.extend(
            pending
                .into_iter()
                .filter(|e| e.sequence > after)
                .take(room),
        );
        Ok(out)
    }

    pub(super) fn read_durable(
        &self,
        session: &SessionId,
        from: u64,
        limit: usize,
    ) -> Result<Vec<Event>, LogError> {
        let conn = lock(&self.inner.reader);
        let mut stmt = conn.prepare_cached(
            "SELECT body FROM events WHERE session_id = ?1 AND sequence >= ?2 ORDER BY sequence LIMIT ?3",
        )?;
        let rows = stmt.query_map(
            params![
                session.as_str(),
                from.min(i64::MAX as u64) as i64,
                limit.min(i64::MAX as usize) as i64
            ],
            |r| r.get::<_, String>(0),
        )?;
        let mut out = Vec::new();
        for body in rows {
            out.push(serde_json::from_str(&body?)?);
        }
        Ok(out)
    }

    /// Every event of `session`, in order.
    pub fn read_all(&self, session: &SessionId) -> Result<Vec<Event>, LogError> {
        self.read(session, 1, usize::MAX)
    }

    /// The session's high-water sequence, pending events included (0 when it has none).
    pub fn last_sequence(&self, session: &SessionId) -> Result<u64, LogError> {
        if let Some(s) = lock(&self.inner.shared.state).sessions.get(session) {
            return Ok(s.last_sequence);
        }
        let conn = lock(&self.inner.reader);
        let max: Option<i64> = conn.query_row(
            "SELECT MAX(sequence) FROM events WHERE session_id = ?1",
            [session.as_str()],
            |r| r.get(0),
        )?;
        Ok(max.unwrap_or(0) as u64)
    }

    /// Every session with at least one event, with its high-water sequence (pending events
    /// included).
    pub fn sessions(&self) -> Result<Vec<(SessionId, u64)>, LogError> {
        let mut out: std::collections::BTreeMap<SessionId, u64> =
            self.durable_sessions()?.into_iter().collect();
        let st = lock(&self.inner.shared.state);
        for (id, s) in &st.sessions {
            if s.last_sequence > 0 {
                let e = out.entry(id.clone()).or_default();
                *e = (*e).max(s.last_sequence);
            }
        }
        Ok(out.into_iter().collect())
    }

    pub(super) fn durable_sessions(&self) -> Result<Vec<(SessionId, u64)>, LogError> {
        let conn = lock(&self.inner.reader);
        let mut stmt = conn.prepare(
            "SELECT session_id, MAX(sequence) FROM events GROUP BY session_id ORDER BY session_id",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (s, n) = row?;
            if let Ok(id) = SessionId::new(s) {
                out.push((id, n as u64));
            }
        }
        Ok(out)
    }

    /// Streams every durable event of every session (session by session, in sequence order)
    /// into `f`, without holding them all in memory.
    pub fn for_each(&self, mut f: impl FnMut(Event)) -> Result<u64, LogError> {
        let conn = SqliteOpen::existing().open(&self.inner.path)?;
        let mut stmt = conn.prepare("SELECT body FROM events ORDER BY session_id, sequence")?;
        let mut rows = stmt.query([])?;
        let mut n = 0;
        while let Some(row) = rows.next()? {
            let body = row.get_ref(0)?.as_str().map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(
                    0,
                    rusqlite::types::Type::Text,
                    Box::new(e),
                )
            })?;
            f(serde_json::from_str(body)?);
            n += 1;
        }
        Ok(n)
    }
}
