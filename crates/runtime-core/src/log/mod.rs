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
//!
//! Files: `append.rs` (stamping, the durable and pending paths, live delivery), `read.rs`
//! (events, turn inputs, stored arguments, sessions), `session_heads.rs` (what
//! `agentSession/list` reads), `group_commit.rs` (the flusher thread),
//! `recovery.rs` (lost ranges declared on open), `subscription.rs`, `ordering.rs`, `args_ref.rs`.

mod append;
pub mod args_ref;
mod group_commit;
pub mod ordering;
mod read;
mod recovery;
mod session_heads;
mod subscription;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension};
use tokio::sync::mpsc;

use crate::clock::{Clock, SystemClock};
use crate::event::{
    format_timestamp, Event, EventBody, EventDraft, EventType, Scope, SnapshotPayload,
    SCHEMA_VERSION,
};
use crate::ids::{RuntimeId, SessionId};
use crate::sqlite::SqliteOpen;
pub use args_ref::{
    is_args_ref, ArgsRefError, ARGS_INLINE_LIMIT, ARGS_PREVIEW_CHARS, ARGS_REF_KEY,
};
pub use ordering::{OrderingState, OrderingViolation};
pub use session_heads::SessionHead;
pub use subscription::Subscription;

use append::{insert_events, put_reservation};
use group_commit::{flush_pending, flusher};
use recovery::declare_lost_ranges;

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
    SqliteOpen::private_durable().configure(conn)
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
        let mut conn = SqliteOpen::private_durable().open(path)?;
        conn.execute_batch(SCHEMA)?;
        conn.execute_batch(args_ref::SCHEMA)?;
        conn.execute_batch(session_heads::SCHEMA)?;
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
        let reader = SqliteOpen::existing().open(path)?;
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

    /// The clock that stamps this log's events (the runtime's one source of "now").
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.inner.clock
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// A subscription to `session` delivering every event with `sequence > after`, in order.
    pub fn subscribe(&self, session: &SessionId, after: u64) -> Subscription {
        Subscription::new(self.clone(), session.clone(), after)
    }
}
