//! The durable, append-only event log: its own SQLite database (WAL, `synchronous=FULL`),
//! separate from `host.db` and from app storage.
//!
//! * `sequence` is per session, starts at 1, increases by one and is never reused: one writer
//!   assigns it under a lock from the session's high-water mark.
//! * Every draft is checked before it is stamped: its scope ids (the Lime profile's rules) and
//!   the ordering rules ([`ordering`]). A rejected batch appends nothing.
//! * **Group commit.** A batch made only of streamed text (`model.delta`, `reasoning.delta`:
//!   [`EventType::is_group_committed`]) is published to subscribers at once from memory and
//!   written by a background flusher in one transaction per [`GroupCommit::max_delay`] or
//!   [`GroupCommit::max_events`]. Any other batch is durable before anyone sees it: its
//!   transaction also carries every pending delta, so the database is always a prefix of what
//!   was published, in sequence order.
//! * **Sequence reservations.** A pending delta's sequence is covered by a durable reservation
//!   (`reservations` table, written ahead in blocks of [`RESERVATION_BLOCK`] with each
//!   `model.requested` and by the flusher; a turn's terminal batch trims it back). After a crash, a session
//!   whose reservation is beyond its last event lost (at most) those deltas: on open the log
//!   appends a `snapshot.repaired` at `reservation + 1` whose payload names the skipped range
//!   (`lostSequenceFrom..=lostSequenceThrough`). So a sequence a client may have seen is never
//!   reused, and every gap in the log is declared by the event right after it.
//! * Readers ([`EventLog::read`], [`Subscription`]) see the durable rows followed by the
//!   pending ones. Subscribers resume from any sequence with no loss and no duplicate. Live
//!   delivery uses a bounded channel per subscriber filled with `try_send`: an append never
//!   waits for a subscriber, and a subscriber that falls behind is dropped from live delivery
//!   and catches up from the log page by page (bounded memory on both sides).

pub mod args_ref;
pub mod ordering;
mod subscription;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use rusqlite::{params, Connection, OptionalExtension};
use tokio::sync::mpsc;

use crate::clock::{Clock, SystemClock};
use crate::event::{
    format_timestamp, Event, EventBody, EventDraft, EventType, Scope, SnapshotPayload,
    SCHEMA_VERSION,
};
use crate::ids::{EventId, RuntimeId, SessionId};
pub use args_ref::{
    is_args_ref, ArgsRefError, ARGS_INLINE_LIMIT, ARGS_PREVIEW_CHARS, ARGS_REF_KEY,
};
pub use ordering::{OrderingState, OrderingViolation};
pub use subscription::Subscription;

/// Live-delivery buffer per subscriber (events).
pub const SUBSCRIBER_BUFFER: usize = 1024;
/// Events read per catch-up page.
pub const CATCH_UP_PAGE: usize = 512;
/// Sequences reserved ahead for pending deltas, per session.
pub const RESERVATION_BLOCK: u64 = 256;

/// When pending (group-committed) events become durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupCommit {
    /// The longest a published delta stays only in memory (the first pending event's age).
    pub max_delay: Duration,
    /// Flush as soon as this many events are pending. Past four times this many, deltas are
    /// appended durably like any other batch (bounded memory when the disk fails or lags).
    pub max_events: usize,
}

impl Default for GroupCommit {
    fn default() -> Self {
        GroupCommit {
            max_delay: Duration::from_millis(20),
            max_events: 256,
        }
    }
}

impl GroupCommit {
    /// Every batch durable before it is published (no group commit).
    pub const OFF: GroupCommit = GroupCommit {
        max_delay: Duration::ZERO,
        max_events: 0,
    };

    fn enabled(&self) -> bool {
        self.max_events > 0
    }
}

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
    /// A tool-arguments reference that does not resolve ([`args_ref`]).
    #[error(transparent)]
    ArgsRef(#[from] ArgsRefError),
    #[error("event log i/o error on {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

struct SessionState {
    /// Last sequence assigned (durable or pending).
    last_sequence: u64,
    /// Durable reservation: every pending sequence of the session is at most this.
    reserved: u64,
    ordering: OrderingState,
}

#[derive(Default)]
struct State {
    sessions: HashMap<SessionId, SessionState>,
    /// Published, not yet durable events (all sessions), in assignment order.
    pending: Vec<Event>,
    /// When the oldest pending event was published.
    pending_since: Option<Instant>,
    /// The flusher's last failure (kept for diagnostics; the flusher retries).
    flush_failures: u64,
    closing: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the flusher (pending events or closing).
    wake: Condvar,
}

struct Inner {
    runtime_id: RuntimeId,
    clock: Arc<dyn Clock>,
    group: GroupCommit,
    /// The writer connection. Lock order: `conn` before `shared.state`.
    conn: Mutex<Connection>,
    /// Shared with the flusher thread, which holds the rest only while it flushes.
    shared: Arc<Shared>,
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
CREATE TABLE IF NOT EXISTS reservations(
  session_id TEXT PRIMARY KEY,
  through INTEGER NOT NULL
) WITHOUT ROWID;
";

/// Applies the log's durability settings (also used by the benchmark's raw baseline).
pub fn configure_connection(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(())
}

fn insert_events(tx: &rusqlite::Transaction<'_>, events: &[Event]) -> Result<(), LogError> {
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

fn put_reservation(
    tx: &rusqlite::Transaction<'_>,
    session: &SessionId,
    through: u64,
) -> Result<(), LogError> {
    tx.prepare_cached("INSERT OR REPLACE INTO reservations(session_id, through) VALUES(?1, ?2)")?
        .execute(params![session.as_str(), through as i64])?;
    Ok(())
}

/// Test-only crash point (`APPHOST_LOG_CRASH_AT`, read once): `flush-mid-batch` aborts the
/// process inside the third group-commit batch, after half its rows are written and before it
/// commits (the first two batches commit, so the crash lands mid-stream).
#[cfg(not(feature = "failpoints"))]
fn crash_point(_: &str) {}

#[cfg(feature = "failpoints")]
fn crash_point(name: &str) {
    static AT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    static HITS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    if AT
        .get_or_init(|| std::env::var("APPHOST_LOG_CRASH_AT").ok())
        .as_deref()
        == Some(name)
        && HITS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 2
    {
        eprintln!("event log: crash point {name}");
        std::process::abort();
    }
}

impl EventLog {
    /// Opens (creating if needed) the log at `path` with the system clock and the default
    /// group commit. The runtime id is minted on first open and kept in the database.
    pub fn open(path: &Path) -> Result<EventLog, LogError> {
        EventLog::open_with(path, Arc::new(SystemClock), GroupCommit::default())
    }

    pub fn open_with_clock(path: &Path, clock: Arc<dyn Clock>) -> Result<EventLog, LogError> {
        EventLog::open_with(path, clock, GroupCommit::default())
    }

    /// Opens the log; declares (with a `snapshot.repaired`) any range of sequences a crash
    /// lost before they became durable.
    pub fn open_with(
        path: &Path,
        clock: Arc<dyn Clock>,
        group: GroupCommit,
    ) -> Result<EventLog, LogError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            crate::private_fs::create_private_dir(parent).map_err(|source| LogError::Io {
                path: parent.to_owned(),
                source,
            })?;
        }
        let mut conn = crate::private_fs::open_private_db(path)?;
        configure_connection(&conn)?;
        conn.execute_batch(SCHEMA)?;
        conn.execute_batch(args_ref::SCHEMA)?;
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
        declare_lost_ranges(&mut conn, &runtime_id, clock.as_ref())?;
        let reader = Connection::open(path)?;
        reader.busy_timeout(std::time::Duration::from_secs(5))?;
        let inner = Arc::new(Inner {
            runtime_id,
            clock,
            group,
            conn: Mutex::new(conn),
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                wake: Condvar::new(),
            }),
            reader: Mutex::new(reader),
            subscribers: Mutex::new(HashMap::new()),
            path: path.to_owned(),
        });
        if group.enabled() {
            let weak = Arc::downgrade(&inner);
            let shared = inner.shared.clone();
            std::thread::Builder::new()
                .name("event-log-flush".into())
                .spawn(move || flusher(shared, group, weak))
                .map_err(|source| LogError::Io {
                    path: path.to_owned(),
                    source,
                })?;
        }
        Ok(EventLog { inner })
    }

    pub fn runtime_id(&self) -> &RuntimeId {
        &self.inner.runtime_id
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Appends `drafts` to `session` and delivers them to live subscribers. Either every draft
    /// is appended (and returned, stamped) or none is. A batch of streamed text only is
    /// published at once and made durable by group commit; any other batch is durable (with
    /// every delta published before it) when this returns.
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
        self.append_durable(session, drafts, &blobs)
    }

    fn stamp(&self, session: &SessionId, first: u64, drafts: Vec<EventDraft>) -> Vec<Event> {
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
    fn append_pending(
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

    fn reserve(&self, session: &SessionId, through: u64) -> Result<(), LogError> {
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

    fn append_durable(
        &self,
        session: &SessionId,
        drafts: Vec<EventDraft>,
        blobs: &[args_ref::ArgsBlob],
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
        let written = (|| -> Result<(), LogError> {
            let tx = conn.transaction()?;
            insert_events(&tx, &st.pending)?;
            args_ref::store(&tx, session, blobs)?;
            insert_events(&tx, &events)?;
            put_reservation(&tx, session, through)?;
            tx.commit()?;
            Ok(())
        })();
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

    fn ensure_session(&self, st: &mut State, session: &SessionId) -> Result<(), LogError> {
        if !st.sessions.contains_key(session) {
            let loaded = self.load_session_state(session)?;
            st.sessions.insert(session.clone(), loaded);
        }
        Ok(())
    }

    fn load_session_state(&self, session: &SessionId) -> Result<SessionState, LogError> {
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

    fn deliver(&self, session: &SessionId, events: &[Event]) {
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

    fn read_durable(
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

    fn durable_sessions(&self) -> Result<Vec<(SessionId, u64)>, LogError> {
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

/// Writes every pending event in one transaction (with the reservations of their sessions
/// moved ahead), without holding the state lock while it commits: deltas keep being published
/// meanwhile. Serialized with durable appends by the `conn` lock.
fn flush_pending(inner: &Inner) -> Result<(), LogError> {
    let mut conn = lock(&inner.conn);
    let (batch, reservations) = {
        let st = lock(&inner.shared.state);
        if st.pending.is_empty() {
            return Ok(());
        }
        let mut res: Vec<(SessionId, u64)> = Vec::new();
        for e in &st.pending {
            if !res.iter().any(|(s, _)| s == &e.session_id) {
                let s = &st.sessions[&e.session_id];
                let through = if st.closing {
                    s.last_sequence
                } else {
                    s.reserved.max(s.last_sequence + RESERVATION_BLOCK)
                };
                res.push((e.session_id.clone(), through));
            }
        }
        (st.pending.clone(), res)
    };
    let tx = conn.transaction()?;
    insert_events(&tx, &batch[..batch.len() / 2])?;
    crash_point("flush-mid-batch");
    insert_events(&tx, &batch[batch.len() / 2..])?;
    for (s, through) in &reservations {
        put_reservation(&tx, s, *through)?;
    }
    tx.commit()?;
    let mut st = lock(&inner.shared.state);
    // Only flushes and durable appends (both under `conn`) remove pending events, and new ones
    // are pushed at the end: the batch is still the prefix.
    st.pending.drain(..batch.len());
    st.pending_since = if st.pending.is_empty() {
        None
    } else {
        Some(Instant::now())
    };
    for (s, through) in reservations {
        if let Some(state) = st.sessions.get_mut(&s) {
            // A reservation never drops below a pending sequence.
            state.reserved = if through >= state.last_sequence {
                through
            } else {
                state.reserved.max(through)
            };
        }
    }
    Ok(())
}

/// The group-commit thread: flushes when the oldest pending event is `max_delay` old or
/// `max_events` are pending; ends when the log is closed. It holds the log itself only while
/// flushing, so dropping the last handle closes the log at once.
fn flusher(shared: Arc<Shared>, group: GroupCommit, weak: Weak<Inner>) {
    loop {
        {
            let mut st = lock(&shared.state);
            loop {
                if st.closing {
                    return;
                }
                let now = Instant::now();
                match st.pending_since {
                    Some(t)
                        if st.pending.len() >= group.max_events || now >= t + group.max_delay =>
                    {
                        break
                    }
                    Some(t) => {
                        st = shared
                            .wake
                            .wait_timeout(st, t + group.max_delay - now)
                            .unwrap_or_else(|p| p.into_inner())
                            .0;
                    }
                    None => {
                        st = shared.wake.wait(st).unwrap_or_else(|p| p.into_inner());
                    }
                }
            }
        }
        let Some(inner) = weak.upgrade() else { return };
        if let Err(e) = flush_pending(&inner) {
            lock(&shared.state).flush_failures += 1;
            tracing::error!(error = %e, "event log: group commit failed; retrying");
            drop(inner);
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Inner {
    /// A clean close: pending events become durable and every reservation is trimmed to the
    /// session's last event, so the next open declares no loss.
    fn drop(&mut self) {
        lock(&self.shared.state).closing = true;
        self.shared.wake.notify_all();
        if let Err(e) = flush_pending(self) {
            tracing::error!(error = %e, "event log: final flush failed");
            return;
        }
        let conn = self.conn.get_mut().unwrap_or_else(|p| p.into_inner());
        let _ = conn.execute(
            "UPDATE reservations SET through = (SELECT COALESCE(MAX(sequence), 0) FROM events \
             WHERE events.session_id = reservations.session_id)",
            [],
        );
    }
}

/// On open: for every session whose reservation is beyond its last durable event, the events
/// published in between were lost by a crash. Appends one `snapshot.repaired` right after the
/// reserved range naming it, so those sequences are never reused and the gap is declared.
fn declare_lost_ranges(
    conn: &mut Connection,
    runtime_id: &RuntimeId,
    clock: &dyn Clock,
) -> Result<(), LogError> {
    let lost: Vec<(String, u64, u64)> = {
        let mut stmt = conn.prepare(
            "SELECT r.session_id, COALESCE((SELECT MAX(sequence) FROM events e WHERE e.session_id = r.session_id), 0), r.through \
             FROM reservations r",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)? as u64,
                r.get::<_, i64>(2)? as u64,
            ))
        })?;
        rows.collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .filter(|(_, last, through)| through > last)
            .collect()
    };
    if lost.is_empty() {
        return Ok(());
    }
    let timestamp = format_timestamp(clock.now());
    let tx = conn.transaction()?;
    for (sid, last, through) in lost {
        let Ok(session) = SessionId::new(sid) else {
            continue;
        };
        let e = Event {
            schema_version: SCHEMA_VERSION.to_owned(),
            runtime_id: runtime_id.clone(),
            session_id: session.clone(),
            event_id: EventId::random(),
            timestamp: timestamp.clone(),
            sequence: through + 1,
            scope: Scope::default(),
            body: EventBody::Snapshot(
                EventType::SnapshotRepaired,
                SnapshotPayload {
                    source: Some("event_log_recovery".into()),
                    reason: Some("unflushed_deltas_lost".into()),
                    status: Some("repaired".into()),
                    lost_sequence_from: Some(last + 1),
                    lost_sequence_through: Some(through),
                    ..Default::default()
                },
            ),
        };
        insert_events(&tx, std::slice::from_ref(&e))?;
        put_reservation(&tx, &session, through + 1)?;
        tracing::warn!(session = %session, from = last + 1, through, "event log: declared sequences lost by a crash");
    }
    tx.commit()?;
    Ok(())
}
