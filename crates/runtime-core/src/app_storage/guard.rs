//! The fence around SQL an app ships (its migrations) and SQL its schema makes run (triggers,
//! views): an SQLite authorizer and a progress-handler deadline, installed on every storage
//! connection for its whole life.
//!
//! Always (any SQL on the connection):
//! - `ATTACH` / `DETACH` are denied (and the attached-database limit is 0 as well), so no SQL can
//!   reach the host's database or another app's file;
//! - `load_extension()` is denied (and extension loading is off);
//! - a trigger or view can never touch a reserved `lime_*` table (the host's key-value data and
//!   its record of applied migrations), so an app trigger cannot forge either;
//! - every statement runs under the current deadline ([`Guard::set_deadline`]); past it the
//!   statement is interrupted (`SQLITE_INTERRUPT`), which rolls the transaction back.
//!
//! While app SQL runs ([`Mode::AppSql`], migrations) also:
//! - every `PRAGMA` is denied except read-only introspection and `user_version`
//!   ([`APP_PRAGMAS`]): no `journal_mode`, `synchronous`, `writable_schema`, `max_page_count`
//!   (the quota), `trusted_schema`, `foreign_keys`, ...;
//! - `BEGIN` / `COMMIT` / `ROLLBACK` / `SAVEPOINT` / `RELEASE` are denied: the host owns the one
//!   transaction all pending migrations share;
//! - creating, reading, writing, altering or dropping any `lime_*` table, index, trigger or view
//!   is denied (the namespace is the host's);
//! - virtual tables are denied (no module is vetted).
//!
//! Everything else in SQLite's language is allowed: tables, indexes, views, triggers (on the
//! app's own tables), `INSERT`/`UPDATE`/`DELETE`/`SELECT`, `ALTER TABLE`, recursive CTEs (bounded
//! by the deadline), temp objects, `ANALYZE`, `REINDEX`.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::Connection;

/// Pragmas app SQL may use: read-only schema introspection, plus `user_version` (the app's own
/// counter; the host records migrations in `lime_migrations`, not there).
pub const APP_PRAGMAS: &[&str] = &[
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "foreign_key_check",
    "quick_check",
    "integrity_check",
    "user_version",
];

/// SQLite virtual-machine steps between two deadline checks.
const PROGRESS_STEPS: i32 = 1000;

/// Whose SQL is being prepared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Mode {
    /// The host's own statements (key-value and table methods, quota pragmas).
    Host = 0,
    /// SQL from the app's package (migrations).
    AppSql = 1,
}

/// Shared state between the connection's hooks and the storage that owns it.
#[derive(Clone)]
pub struct Guard {
    mode: Arc<AtomicU8>,
    /// Nanoseconds after `base` at which statements are interrupted; 0 = no deadline.
    deadline: Arc<AtomicU64>,
    base: Instant,
    /// Set by the authorizer when it denied something (to tell "refused" from "failed").
    denied: Arc<AtomicU8>,
}

impl Guard {
    /// Installs the authorizer and the progress handler on `conn`.
    pub fn install(conn: &mut Connection) -> rusqlite::Result<Guard> {
        let guard = Guard {
            mode: Arc::new(AtomicU8::new(Mode::Host as u8)),
            deadline: Arc::new(AtomicU64::new(0)),
            base: Instant::now(),
            denied: Arc::new(AtomicU8::new(0)),
        };
        let (mode, denied) = (guard.mode.clone(), guard.denied.clone());
        conn.authorizer(Some(move |ctx: AuthContext<'_>| {
            let app_sql = mode.load(Ordering::Relaxed) == Mode::AppSql as u8;
            let verdict = authorize(&ctx, app_sql);
            if verdict == Authorization::Deny {
                denied.store(1, Ordering::Relaxed);
            }
            verdict
        }))?;
        let (deadline, base) = (guard.deadline.clone(), guard.base);
        conn.progress_handler(
            PROGRESS_STEPS,
            Some(move || {
                let d = deadline.load(Ordering::Relaxed);
                d != 0 && base.elapsed().as_nanos() as u64 > d
            }),
        )?;
        Ok(guard)
    }

    pub fn set_mode(&self, mode: Mode) {
        self.mode.store(mode as u8, Ordering::Relaxed);
    }

    /// Statements started from now on are interrupted after `budget`.
    pub fn set_deadline(&self, budget: Duration) {
        let at = self.base.elapsed() + budget;
        self.deadline
            .store((at.as_nanos() as u64).max(1), Ordering::Relaxed);
    }

    /// Clears the "something was denied" flag.
    pub fn reset_denied(&self) {
        self.denied.store(0, Ordering::Relaxed);
    }

    /// Whether the authorizer denied something since [`reset_denied`](Self::reset_denied).
    pub fn was_denied(&self) -> bool {
        self.denied.load(Ordering::Relaxed) != 0
    }
}

/// Whether `name` is in the host's reserved namespace (`lime_*`, any case).
pub fn is_reserved(name: &str) -> bool {
    name.len() >= 5 && name.as_bytes()[..5].eq_ignore_ascii_case(b"lime_")
}

fn authorize(ctx: &AuthContext<'_>, app_sql: bool) -> Authorization {
    use AuthAction as A;
    use Authorization::{Allow, Deny};
    let reserved = |t: &str| is_reserved(t);
    match ctx.action {
        A::Attach { .. } | A::Detach { .. } => return Deny,
        A::Function { function_name } if function_name.eq_ignore_ascii_case("load_extension") => {
            return Deny
        }
        _ => {}
    }
    // The objects an action touches, for the reserved-namespace rule.
    let touched: [Option<&str>; 2] = match ctx.action {
        A::Read { table_name, .. }
        | A::Insert { table_name }
        | A::Update { table_name, .. }
        | A::Delete { table_name }
        | A::CreateTable { table_name }
        | A::CreateTempTable { table_name }
        | A::DropTable { table_name }
        | A::DropTempTable { table_name }
        | A::AlterTable { table_name, .. }
        | A::Analyze { table_name } => [Some(table_name), None],
        A::CreateIndex {
            index_name,
            table_name,
        }
        | A::CreateTempIndex {
            index_name,
            table_name,
        }
        | A::DropIndex {
            index_name,
            table_name,
        }
        | A::DropTempIndex {
            index_name,
            table_name,
        } => [Some(index_name), Some(table_name)],
        A::CreateTrigger {
            trigger_name,
            table_name,
        }
        | A::CreateTempTrigger {
            trigger_name,
            table_name,
        }
        | A::DropTrigger {
            trigger_name,
            table_name,
        }
        | A::DropTempTrigger {
            trigger_name,
            table_name,
        } => [Some(trigger_name), Some(table_name)],
        A::CreateView { view_name }
        | A::CreateTempView { view_name }
        | A::DropView { view_name }
        | A::DropTempView { view_name } => [Some(view_name), None],
        A::Reindex { index_name } => [Some(index_name), None],
        _ => [None, None],
    };
    let touches_reserved = touched.iter().flatten().any(|t| reserved(t));
    if touches_reserved && (app_sql || ctx.accessor.is_some()) {
        return Deny;
    }
    if !app_sql {
        return Allow;
    }
    match ctx.action {
        A::Pragma { pragma_name, .. } => {
            if APP_PRAGMAS
                .iter()
                .any(|p| p.eq_ignore_ascii_case(pragma_name))
            {
                Allow
            } else {
                Deny
            }
        }
        A::Transaction { .. } | A::Savepoint { .. } => Deny,
        A::CreateVtable { .. } | A::DropVtable { .. } => Deny,
        _ => Allow,
    }
}
