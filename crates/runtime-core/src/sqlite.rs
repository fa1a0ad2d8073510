//! The one way the host and the runtime open a SQLite file: [`SqliteOpen`] says how the file
//! comes to exist (created 0600 through [`crate::private_fs`], prepared by the caller, or
//! required to exist), and which settings the connection gets (WAL, `synchronous`,
//! `busy_timeout`, `foreign_keys`, the guards for databases that run an app's own SQL,
//! `query_only`). Each database's settings are one preset below, named after its use.
//!
//! [`is_busy`] classifies SQLite's "busy" refusals by their result code (`SQLITE_BUSY`,
//! `SQLITE_LOCKED`), never by message text.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

/// How long a connection waits for another connection's lock before `SQLITE_BUSY` (the default).
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How the database file comes to exist before SQLite opens it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Create {
    /// Created empty with mode 0600 (or an existing one tightened) by
    /// [`crate::private_fs::prepare_private_db`]; a symbolic link there is refused.
    Private,
    /// The caller made the file private itself (an app's data area, relative to its
    /// descriptor); SQLite may still create it.
    Prepared,
    /// It must exist already: nothing is created.
    Never,
}

/// SQLite's `synchronous` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synchronous {
    Normal,
    Full,
}

impl Synchronous {
    fn pragma(self) -> &'static str {
        match self {
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        }
    }
}

/// How to open one SQLite file, and the connection's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqliteOpen {
    pub create: Create,
    /// `SQLITE_OPEN_READ_ONLY` (with [`Create::Never`]).
    pub read_only: bool,
    /// `SQLITE_OPEN_NOFOLLOW`: the database file itself may not be a symbolic link.
    pub nofollow: bool,
    pub busy_timeout: Duration,
    /// `journal_mode=WAL` (kept in the file once set).
    pub wal: bool,
    pub synchronous: Option<Synchronous>,
    pub foreign_keys: bool,
    /// No `ATTACH` (limit 0).
    pub no_attach: bool,
    /// No untrusted schema functions, defensive mode (databases that run an app's SQL or hold
    /// records written while apps run).
    pub defensive: bool,
    /// `query_only`: the connection refuses every write.
    pub query_only: bool,
}

impl SqliteOpen {
    /// A runtime database in the data directory (`events.db`, `agent-tasks.sqlite`): created
    /// private, WAL, `synchronous=FULL`, 5 s busy timeout.
    pub const fn private_durable() -> SqliteOpen {
        SqliteOpen {
            create: Create::Private,
            read_only: false,
            nofollow: false,
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
            wal: true,
            synchronous: Some(Synchronous::Full),
            foreign_keys: false,
            no_attach: false,
            defensive: false,
            query_only: false,
        }
    }

    /// The host's `host.db`: [`SqliteOpen::private_durable`] with foreign keys and a 10 s busy
    /// timeout.
    pub const fn host_store() -> SqliteOpen {
        SqliteOpen {
            busy_timeout: Duration::from_secs(10),
            foreign_keys: true,
            ..SqliteOpen::private_durable()
        }
    }

    /// A per-app database the caller prepared in the app's data area (artifacts, evidence,
    /// storage): never through a link, no `ATTACH`, defensive, WAL, `synchronous=FULL`.
    pub const fn app_records() -> SqliteOpen {
        SqliteOpen {
            create: Create::Prepared,
            nofollow: true,
            no_attach: true,
            defensive: true,
            ..SqliteOpen::private_durable()
        }
    }

    /// A reader of a per-app database that must exist: read-only, `query_only`, no `ATTACH`.
    pub const fn app_reader() -> SqliteOpen {
        SqliteOpen {
            create: Create::Never,
            read_only: true,
            nofollow: true,
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
            wal: false,
            synchronous: None,
            foreign_keys: false,
            no_attach: true,
            defensive: false,
            query_only: true,
        }
    }

    /// A second connection to a database that exists (a reader beside the writer, a purge):
    /// read-write, nothing created, settings the file already keeps.
    pub const fn existing() -> SqliteOpen {
        SqliteOpen {
            create: Create::Never,
            read_only: false,
            nofollow: false,
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
            wal: false,
            synchronous: None,
            foreign_keys: false,
            no_attach: false,
            defensive: false,
            query_only: false,
        }
    }

    /// This preset with another `synchronous` setting.
    pub const fn synchronous(self, s: Synchronous) -> SqliteOpen {
        SqliteOpen {
            synchronous: Some(s),
            ..self
        }
    }

    /// Opens `path` as described, then applies the settings ([`SqliteOpen::configure`]).
    pub fn open(&self, path: &Path) -> rusqlite::Result<Connection> {
        if self.create == Create::Private {
            crate::private_fs::prepare_private_db(path)
                .map_err(|e| crate::private_fs::io_to_sqlite(path, e))?;
        }
        let conn = Connection::open_with_flags(path, self.flags())?;
        self.configure(&conn)?;
        Ok(conn)
    }

    /// Applies the settings to an open connection: guards first, then the busy timeout (so the
    /// pragmas below wait for a lock), then the pragmas.
    pub fn configure(&self, conn: &Connection) -> rusqlite::Result<()> {
        if self.no_attach {
            conn.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_ATTACHED, 0)?;
        }
        if self.defensive {
            conn.set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA,
                false,
            )?;
            conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
        }
        conn.busy_timeout(self.busy_timeout)?;
        if self.wal {
            conn.pragma_update(None, "journal_mode", "WAL")?;
        }
        if let Some(s) = self.synchronous {
            conn.pragma_update(None, "synchronous", s.pragma())?;
        }
        if self.foreign_keys {
            conn.pragma_update(None, "foreign_keys", "ON")?;
        }
        if self.query_only {
            conn.pragma_update(None, "query_only", true)?;
        }
        Ok(())
    }

    fn flags(&self) -> OpenFlags {
        let mut f = OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if self.read_only {
            f |= OpenFlags::SQLITE_OPEN_READ_ONLY;
        } else {
            f |= OpenFlags::SQLITE_OPEN_READ_WRITE;
        }
        if !self.read_only && self.create != Create::Never {
            f |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        if self.nofollow {
            f |= OpenFlags::SQLITE_OPEN_NOFOLLOW;
        }
        f
    }
}

/// Whether `e` is SQLite refusing because another connection holds a lock (`SQLITE_BUSY` or
/// `SQLITE_LOCKED`, extended codes included): worth trying again later.
pub fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(f.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

#[cfg(test)]
mod tests;
