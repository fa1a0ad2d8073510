//! Appending: stamping drafts, the durable path (one transaction, reservations moved ahead)
//! and the pending path (streamed text published at once, written by the group-commit
//! flusher), and live delivery to subscribers.

use std::time::Instant;

use rusqlite::{params, OptionalExtension};
use tokio::sync::mpsc;

use crate::ids::{EventId, SessionId};

use super::*;

pub(super) fn insert_events(
    tx: &rusqlite::Transaction<'_>,
    events: &[Event],
) -> Result<(), LogError> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO events(session_id, sequence, event_id, type, body) VALUES(?1, ?2, ?3, ?4, ?5)",
    )?;
    for e in events {
        stmt.execute(params![
            e.session_id.as_str(),
            e.sequence as i64,
            e.event_id.as_str(),
            e.kind().as_str(),
            e.to_json_string()
        ])?;
    }
    Ok(())
}

pub(super) fn put_reservation(
    tx: &rusqlite::Transaction<'_>,
    session: &SessionId,
    through: u64,
) -> Result<(), LogError> {
    tx.prepare_cached("INSERT OR REPLACE INTO reservations(session_id, through) VALUES(?1, ?2)")?
        .execute(params![session.as_str(), through as i64])?;
    Ok(())
}

impl EventLog {
    /// Appends `drafts` to `session` and delivers them to live subscribers. Either every draft
    /// is appended (and returned, stamped) or none is. A batch of streamed text only is
    /// published at once and made durable by group commit; any other batch is durable (with
    /// every delta published before it) when this returns.
    pub fn append(
        &self,
        session: &SessionId,
        drafts: Vec<EventDraft>,
    ) -> Result<Vec<Event>, LogError> {
        self.append_with(session, drafts, true)
    }

    /// [`EventLog::append`] without the fsync of its commit (WAL, `synchronous=NORMAL` for this
    /// one transaction): durable against a crash of the process as soon as it returns (the
    /// commit is in the WAL), and against a power loss at the log's next synced commit or
    /// checkpoint, which covers every frame before it. A power loss can lose only a suffix of
    /// such commits; the database stays a prefix of what was appended. For facts that are
    /// recorded again when lost (a workflow step re-issued with its idempotency key).
    pub fn append_unsynced(
        &self,
        session: &SessionId,
        drafts: Vec<EventDraft>,
    ) -> Result<Vec<Event>, LogError> {
        self.append_with(session, drafts, false)
    }

    fn append_with(
        &self,
        session: &SessionId,
        drafts: Vec<EventDraft>,
        synced: bool,
    ) -> Result<Vec<Event>, LogError> {
        if drafts.is_empty() {
            return Ok(Vec::new());
        }
        for d in &drafts {
            if !d.body.is_consistent() {
                return Err(LogError::InconsistentBody(d.kind()));
            }
            if let Some(f) = d.scope.missing_for(d.kind()) {
                return Err(LogError::MissingScope {
                    kind: d.kind(),
                    field: f.wire_name(),
                });
            }
        }
        if self.inner.group.enabled() && drafts.iter().all(|d| d.kind().is_group_committed()) {
            if let Some(events) = self.append_pending(session, &drafts)? {
                return Ok(events);
            }
        }
        // Large tool arguments go behind a reference, hashed before any lock is taken; their
        // blobs commit with the batch (never group-committed: deltas carry no arguments).
        let mut drafts = drafts;
        let mut blobs = Vec::new();
        for d in &mut drafts {
            args_ref::externalize(&mut d.body, &mut blobs);
        }
        self.append_durable(session, drafts, &blobs, synced)
    }

    pub(super) fn stamp(
        &self,
        session: &SessionId,
        first: u64,
        drafts: Vec<EventDraft>,
    ) -> Vec<Event> {
        let timestamp = format_timestamp(self.inner.clock.now());
        drafts
            .into_iter()
            .enumerate()
            .map(|(i, d)| Event {
                schema_version: SCHEMA_VERSION.to_owned(),
                runtime_id: self.inner.runtime_id.clone(),
                session_id: session.clone(),
                event_id: EventId::random(),
                timestamp: timestamp.clone(),
                sequence: first + i as u64,
                scope: d.scope,
                body: d.body,
            })
            .collect()
    }

    /// The group-commit path: `None` when the batch must go the durable way (too much pending).
    pub(super) fn append_pending(
        &self,
        session: &SessionId,
        drafts: &[EventDraft],
    ) -> Result<Option<Vec<Event>>, LogError> {
        let n = drafts.len() as u64;
        loop {
            let mut st = lock(&self.inner.shared.state);
            if st.pending.len() >= self.inner.group.max_events.saturating_mul(4) {
                return Ok(None);
            }
            self.ensure_session(&mut st, session)?;
            let s = st.sessions.get_mut(session).expect("loaded");
            let need = s.last_sequence + n;
            if need > s.reserved {
                // Reserve durably before publishing a sequence that is not in the database.
                drop(st);
                self.reserve(session, need + RESERVATION_BLOCK)?;
                continue;
            }
            s.ordering.admit_batch(drafts)?;
            let first = s.last_sequence + 1;
            s.last_sequence = need;
            let events = self.stamp(session, first, drafts.to_vec());
            st.pending.extend(events.iter().cloned());
            if st.pending_since.is_none() {
                st.pending_since = Some(Instant::now());
            }
            // Deliver under the state lock so live order is sequence order.
            self.deliver(session, &events);
            if st.pending.len() >= self.inner.group.max_events || st.pending.len() == events.len() {
                self.inner.shared.wake.notify_all();
            }
            return Ok(Some(events));
        }
    }

    pub(super) fn reserve(&self, session: &SessionId, through: u64) -> Result<(), LogError> {
        let mut conn = lock(&self.inner.conn);
        let mut st = lock(&self.inner.shared.state);
        self.ensure_session(&mut st, session)?;
        if st.sessions[session].reserved >= through {
            return Ok(());
        }
        let tx = conn.transaction()?;
        put_reservation(&tx, session, through)?;
        tx.commit()?;
        st.sessions.get_mut(session).expect("loaded").reserved = through;
        Ok(())
    }

    pub(super) fn append_durable(
        &self,
        session: &SessionId,
        drafts: Vec<EventDraft>,
        blobs: &[args_ref::ArgsBlob],
        synced: bool,
    ) -> Result<Vec<Event>, LogError> {
        let mut conn = lock(&self.inner.conn);
        let mut st = lock(&self.inner.shared.state);
        self.ensure_session(&mut st, session)?;
        let s = st.sessions.get_mut(session).expect("loaded");
        // Admit on a copy: a batch that fails to commit leaves the rules state unchanged.
        let mut ordering = s.ordering.clone();
        ordering.admit_batch(&drafts)?;
        let first = s.last_sequence + 1;
        let ends_turn = drafts.last().is_some_and(|d| d.kind().is_turn_terminal());
        let streams = drafts.iter().any(|d| d.kind() == EventType::ModelRequested);
        let events = self.stamp(session, first, drafts);
        let last = first + events.len() as u64 - 1;
        // A model request reserves a block ahead for the deltas that follow (so the first one
        // needs no extra fsync); the turn's end trims the reservation back, so an idle session
        // has none and a crash while idle declares no loss.
        let through = if ends_turn {
            last
        } else if streams {
            s.reserved.max(last + RESERVATION_BLOCK)
        } else {
            s.reserved.max(last)
        };
        let flushed = st.pending.len();
        let relaxed = if synced {
            None
        } else {
            let level: i64 = conn.pragma_query_value(None, "synchronous", |r| r.get(0))?;
            conn.pragma_update(None, "synchronous", "NORMAL")?;
            Some(level)
        };
        let written = (|| -> Result<(), LogError> {
            let tx = conn.transaction()?;
            insert_events(&tx, &st.pending)?;
            args_ref::store(&tx, session, blobs)?;
            insert_events(&tx, &events)?;
            put_reservation(&tx, session, through)?;
            tx.commit()?;
            Ok(())
        })();
        if let Some(level) = relaxed {
            conn.pragma_update(None, "synchronous", level)?;
        }
        written?;
        st.pending.drain(..flushed);
        st.pending_since = None;
        let s = st.sessions.get_mut(session).expect("loaded");
        s.ordering = ordering;
        s.last_sequence = last;
        s.reserved = through;
        self.deliver(session, &events);
        Ok(events)
    }

    /// Makes every pending event durable now (the flusher does this on its own).
    pub fn flush(&self) -> Result<(), LogError> {
        flush_pending(&self.inner)
    }

    /// How many published events are not yet durable.
    pub fn pending_count(&self) -> usize {
        lock(&self.inner.shared.state).pending.len()
    }

    /// Forgets the session's in-memory sequencing state (reloaded from the database on its next
    /// append) unless it has events not yet durable; the runtime calls it when it drops an idle
    /// session from memory.
    pub(crate) fn release(&self, session: &SessionId) {
        let mut st = lock(&self.inner.shared.state);
        if !st.pending.iter().any(|e| &e.session_id == session) {
            st.sessions.remove(session);
        }
    }

    pub(super) fn ensure_session(
        &self,
        st: &mut State,
        session: &SessionId,
    ) -> Result<(), LogError> {
        if !st.sessions.contains_key(session) {
            let loaded = self.load_session_state(session)?;
            st.sessions.insert(session.clone(), loaded);
        }
        Ok(())
    }

    pub(super) fn load_session_state(&self, session: &SessionId) -> Result<SessionState, LogError> {
        let conn = lock(&self.inner.reader);
        let mut ordering = OrderingState::default();
        let mut last = 0u64;
        let mut stmt = conn.prepare_cached(
            "SELECT sequence, body FROM events WHERE session_id = ?1 ORDER BY sequence",
        )?;
        let mut rows = stmt.query([session.as_str()])?;
        while let Some(row) = rows.next()? {
            let seq: i64 = row.get(0)?;
            let body: String = row.get(1)?;
            let ev: Event = serde_json::from_str(&body)?;
            ordering.apply(&EventDraft::from(ev));
            last = seq as u64;
        }
        let reserved: Option<i64> = conn
            .query_row(
                "SELECT through FROM reservations WHERE session_id = ?1",
                [session.as_str()],
                |r| r.get(0),
            )
            .optional()?;
        Ok(SessionState {
            last_sequence: last,
            reserved: reserved.map_or(last, |r| (r as u64).max(last)),
            ordering,
        })
    }

    pub(super) fn deliver(&self, session: &SessionId, events: &[Event]) {
        let mut subs = lock(&self.inner.subscribers);
        if let Some(list) = subs.get_mut(session) {
            list.retain(|tx| {
                events.iter().all(|e| tx.try_send(e.clone()).is_ok())
                // A full or closed channel drops the subscriber from live delivery; it
                // catches up from the log.
            });
            if list.is_empty() {
                subs.remove(session);
            }
        }
    }

    pub(crate) fn register(&self, session: &SessionId) -> mpsc::Receiver<Event> {
        let (tx, rx) = mpsc::channel(SUBSCRIBER_BUFFER);
        lock(&self.inner.subscribers)
            .entry(session.clone())
            .or_default()
            .push(tx);
        rx
    }
}
