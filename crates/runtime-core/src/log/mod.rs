//! The durable, append-only event log: its own SQLite database (WAL, `synchronous=FULL`),
//! separate from `host.db` and from app storage.
//!
//! * `sequence` is per session, starts at 1, has no gaps and is never reused: one writer
//!   assigns it under a lock from the session's high-water mark, and a batch is one
//!   transaction, so after a crash the next sequence is `MAX(sequence) + 1` of what committed,
//!   and nothing uncommitted was ever delivered to anyone.
//! * Every draft is checked before it is stamped: its scope ids (the Lime profile's rules) and
//!   the ordering rules ([`ordering`]). A rejected batch appends nothing.
//! * Subscribers ([`Subscription`]) resume from any sequence with no loss and no duplicate. Live
//!   delivery uses a bounded channel per subscriber filled with `try_send`: an append never
//!   waits for a subscriber, and a subscriber that falls behind is dropped from live delivery
//!   and catches up from the database page by page (bounded memory on both sides).

pub mod ordering;
mod subscription;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{params, Connection, OptionalExtension};
use tokio::sync::mpsc;

use crate::clock::{Clock, SystemClock};
use crate::event::{format_timestamp, Event, EventDraft, EventType, SCHEMA_VERSION};
use crate::ids::{EventId, RuntimeId, SessionId};
pub use ordering::{OrderingState, OrderingViolation};
pub use subscription::Subscription;

/// Live-delivery buffer per subscriber (events).
pub const SUBSCRIBER_BUFFER: usize = 1024;
/// Events read per catch-up page.
pub const CATCH_UP_PAGE: usize = 512;

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("event log database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("event log holds an undecodable event: {0}")]
    Decode(#[from] serde_json::Error),
    #[error("{kind} requires {field}")]
    MissingScope {
        kind: EventType,
        field: &'static str,
    },
    #[error("event body does not match its type {0}")]
    InconsistentBody(EventType),
    #[error(transparent)]
    Ordering(#[from] OrderingViolation),
    #[error("event log i/o error on {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

struct SessionState {
    last_sequence: u64,
    ordering: OrderingState,
}

struct Writer {
    conn: Connection,
    sessions: HashMap<SessionId, SessionState>,
}

struct Inner {
    runtime_id: RuntimeId,
    clock: Arc<dyn Clock>,
    writer: Mutex<Writer>,
    reader: Mutex<Connection>,
    subscribers: Mutex<HashMap<SessionId, Vec<mpsc::Sender<Event>>>>,
    path: PathBuf,
}

/// A handle to the log (cheap to clone).
#[derive(Clone)]
pub struct EventLog {
    inner: Arc<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves no partial transaction (rusqlite rolls back on
    // drop), so the data behind a poisoned lock is still consistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events(
  session_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  type TEXT NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY(session_id, sequence)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS turn_inputs(
  session_id TEXT NOT NULL,
  turn_id TEXT NOT NULL,
  input TEXT NOT NULL,
  output_schema TEXT,
  PRIMARY KEY(session_id, turn_id)
) WITHOUT ROWID;
";

/// Applies the log's durability settings (also used by the benchmark's raw baseline).
pub fn configure_connection(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(())
}

impl EventLog {
    /// Opens (creating if needed) the log at `path` with the system clock. The runtime id is
    /// minted on first open and kept in the database.
    pub fn open(path: &Path) -> Result<EventLog, LogError> {
        EventLog::open_with_clock(path, Arc::new(SystemClock))
    }

    pub fn open_with_clock(path: &Path, clock: Arc<dyn Clock>) -> Result<EventLog, LogError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| LogError::Io {
                path: parent.to_owned(),
                source,
            })?;
        }
        let conn = Connection::open(path)?;
        configure_connection(&conn)?;
        conn.execute_batch(SCHEMA)?;
        let existing: Option<String> = conn
            .query_row("SELECT value FROM meta WHERE key = 'runtime_id'", [], |r| {
                r.get(0)
            })
            .optional()?;
        let runtime_id = match existing.and_then(|s| RuntimeId::new(s).ok()) {
            Some(id) => id,
            None => {
                let id = RuntimeId::random();
                conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES('runtime_id', ?1)",
                    [id.as_str()],
                )?;
                id
            }
        };
        let reader = Connection::open(path)?;
        reader.busy_timeout(std::time::Duration::from_secs(5))?;
        Ok(EventLog {
            inner: Arc::new(Inner {
                runtime_id,
                clock,
                writer: Mutex::new(Writer {
                    conn,
                    sessions: HashMap::new(),
                }),
                reader: Mutex::new(reader),
                subscribers: Mutex::new(HashMap::new()),
                path: path.to_owned(),
            }),
        })
    }

    pub fn runtime_id(&self) -> &RuntimeId {
        &self.inner.runtime_id
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Appends `drafts` to `session` as one transaction and delivers them to live subscribers.
    /// Either every draft is appended (and returned, stamped) or none is.
    pub fn append(
        &self,
        session: &SessionId,
        drafts: Vec<EventDraft>,
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
        let mut w = lock(&self.inner.writer);
        let w = &mut *w;
        if !w.sessions.contains_key(session) {
            let st = self.load_session_state(&w.conn, session)?;
            w.sessions.insert(session.clone(), st);
        }
        let state = w.sessions.get_mut(session).expect("just inserted");
        // Admit the whole batch or none of it (a rejected batch changes nothing).
        state.ordering.admit_batch(&drafts)?;
        let timestamp = format_timestamp(self.inner.clock.now());
        let first = state.last_sequence + 1;
        let events: Vec<Event> = drafts
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
            .collect();
        let written = (|| -> Result<(), LogError> {
            let tx = w.conn.transaction()?;
            {
                let mut stmt = tx.prepare_cached(
                    "INSERT INTO events(session_id, sequence, event_id, type, body) VALUES(?1, ?2, ?3, ?4, ?5)",
                )?;
                for e in &events {
                    stmt.execute(params![
                        session.as_str(),
                        e.sequence as i64,
                        e.event_id.as_str(),
                        e.kind().as_str(),
                        e.to_json_string()
                    ])?;
                }
            }
            tx.commit()?;
            Ok(())
        })();
        let state = w.sessions.get_mut(session).expect("present");
        if let Err(e) = written {
            // The transaction rolled back; forget the session's rules state and reload it from
            // the database on the next append.
            w.sessions.remove(session);
            return Err(e);
        }
        state.last_sequence = first + events.len() as u64 - 1;
        // Deliver while still holding the writer lock so live order is sequence order;
        // `try_send` never waits.
        self.deliver(session, &events);
        Ok(events)
    }

    fn load_session_state(
        &self,
        conn: &Connection,
        session: &SessionId,
    ) -> Result<SessionState, LogError> {
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
            ordering.apply(&EventDraft::new(ev.scope, ev.body));
            last = seq as u64;
        }
        Ok(SessionState {
            last_sequence: last,
            ordering,
        })
    }

    fn deliver(&self, session: &SessionId, events: &[Event]) {
        let mut subs = lock(&self.inner.subscribers);
        if let Some(list) = subs.get_mut(session) {
            list.retain(|tx| {
                events.iter().all(|e| tx.try_send(e.clone()).is_ok())
                // A full or closed channel drops the subscriber from live delivery; it
                // catches up from the database.
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

    /// A subscription to `session` delivering every event with `sequence > after`, in order.
    pub fn subscribe(&self, session: &SessionId, after: u64) -> Subscription {
        Subscription::new(self.clone(), session.clone(), after)
    }

    /// Records a turn's input (the input snapshot; kept beside the log, never in an event).
    /// False when the session already has an input for this turn id.
    pub fn put_turn_input(
        &self,
        session: &SessionId,
        turn: &crate::ids::TurnId,
        input: &str,
        output_schema: Option<&serde_json::Value>,
    ) -> Result<bool, LogError> {
        let w = lock(&self.inner.writer);
        let n = w.conn.execute(
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

    /// The tool calls and actions of `turn` still open (per the ordering rules' state).
    pub fn open_in_turn(
        &self,
        session: &SessionId,
        turn: &crate::ids::TurnId,
    ) -> Result<(Vec<crate::ids::ToolCallId>, Vec<crate::ids::ActionId>), LogError> {
        let mut w = lock(&self.inner.writer);
        let w = &mut *w;
        if !w.sessions.contains_key(session) {
            let st = self.load_session_state(&w.conn, session)?;
            w.sessions.insert(session.clone(), st);
        }
        Ok(w.sessions[session].ordering.open_in_turn(turn))
    }

    /// Up to `limit` events of `session` with `sequence >= from`, in order.
    pub fn read(
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

    /// The session's high-water sequence (0 when it has no events).
    pub fn last_sequence(&self, session: &SessionId) -> Result<u64, LogError> {
        let conn = lock(&self.inner.reader);
        let max: Option<i64> = conn.query_row(
            "SELECT MAX(sequence) FROM events WHERE session_id = ?1",
            [session.as_str()],
            |r| r.get(0),
        )?;
        Ok(max.unwrap_or(0) as u64)
    }

    /// Every session with at least one event, with its high-water sequence.
    pub fn sessions(&self) -> Result<Vec<(SessionId, u64)>, LogError> {
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

    /// Streams every event of every session (session by session, in sequence order) into `f`,
    /// without holding them all in memory.
    pub fn for_each(&self, mut f: impl FnMut(Event)) -> Result<u64, LogError> {
        let conn = Connection::open(&self.inner.path)?;
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
