//! Applying an app's migrations: in order, only with the bytes the user reviewed, all pending
//! ones in one transaction, under the [`guard`](super::guard)'s app-SQL rules.
//!
//! The caller passes the plan of the app version being run: every migration of that version in
//! order, each with the SHA-256 the install review showed and the bytes read for it. This module
//! re-hashes the bytes right before running them, so what runs is what was reviewed.
//!
//! Rules, checked before anything runs:
//! - a migration already applied (by id) must have the same hash as in the plan
//!   ([`MigrationFailure::Changed`]); one applied but absent from the plan is fine (a rollback
//!   to an older version never runs downgrades);
//! - pending migrations must all come after every applied one in the plan's order
//!   ([`MigrationFailure::OutOfOrder`]);
//! - the bytes must hash to the plan's SHA-256 ([`MigrationFailure::HashMismatch`]), be UTF-8 and
//!   at most [`MAX_MIGRATION_BYTES`] ([`MigrationFailure::Invalid`]).
//!
//! Then one `BEGIN IMMEDIATE` transaction runs each pending migration and records it in
//! `lime_migrations (id, sha256, app_version, applied_at)`; any refusal by the authorizer
//! ([`MigrationFailure::Refused`]), SQL error ([`MigrationFailure::Failed`]), the deadline
//! ([`MigrationFailure::TimedOut`], [`MIGRATION_BUDGET`] for the batch) or the quota
//! ([`MigrationFailure::Quota`]) rolls the whole batch back.

use std::time::Duration;

use rusqlite::params;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::guard::Mode;
use super::{AppStorage, StorageError};

/// The largest migration file the host runs.
pub const MAX_MIGRATION_BYTES: usize = 1024 * 1024;
/// Time all pending migrations of one batch may take together.
pub const MIGRATION_BUDGET: Duration = Duration::from_secs(10);

/// One planned migration, as the review showed it, with the bytes to run.
#[derive(Debug, Clone)]
pub struct Migration {
    /// Stable id (the file name, e.g. `001_init.sql`).
    pub id: String,
    /// Lowercase hex SHA-256 the review showed.
    pub sha256: String,
    pub sql: Vec<u8>,
}

/// A migration recorded in the app's database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppliedMigration {
    pub id: String,
    pub sha256: String,
    pub app_version: String,
    pub applied_at: String,
}

/// Why a migration batch was not applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MigrationFailure {
    /// The bytes do not hash to what the review showed.
    HashMismatch,
    /// Already applied with another hash: the migration was edited after it ran.
    Changed,
    /// A new migration sorts before one already applied.
    OutOfOrder,
    /// Not UTF-8, or too large.
    Invalid,
    /// The SQL does something app SQL may not (ATTACH, pragmas, transaction control, `lime_*`,
    /// extensions, virtual tables).
    Refused,
    /// SQLite reported an error running it.
    Failed,
    /// It ran past the deadline.
    TimedOut,
    /// It would grow the database past the quota.
    Quota,
}

impl MigrationFailure {
    pub fn cause(self) -> &'static str {
        match self {
            MigrationFailure::HashMismatch => "storage.migration_hash_mismatch",
            MigrationFailure::Changed => "storage.migration_changed",
            MigrationFailure::OutOfOrder => "storage.migration_out_of_order",
            MigrationFailure::Invalid => "storage.migration_invalid",
            MigrationFailure::Refused => "storage.migration_refused",
            MigrationFailure::Failed => "storage.migration_failed",
            MigrationFailure::TimedOut => "storage.migration_timed_out",
            MigrationFailure::Quota => "storage.migration_quota",
        }
    }
}

impl std::fmt::Display for MigrationFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MigrationFailure::HashMismatch => "does not match the reviewed hash",
            MigrationFailure::Changed => "changed after it was applied",
            MigrationFailure::OutOfOrder => "comes before an applied migration",
            MigrationFailure::Invalid => "is not a valid migration file",
            MigrationFailure::Refused => "was refused",
            MigrationFailure::Failed => "failed",
            MigrationFailure::TimedOut => "took too long",
            MigrationFailure::Quota => "exceeds the storage quota",
        })
    }
}

fn fail(id: &str, failure: MigrationFailure, message: impl Into<String>) -> StorageError {
    StorageError::Migration {
        id: id.to_owned(),
        failure,
        message: message.into(),
    }
}

fn is_environmental(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode as C;
    matches!(
        e.sqlite_error_code(),
        Some(
            C::DatabaseBusy
                | C::DatabaseLocked
                | C::SystemIoFailure
                | C::OutOfMemory
                | C::CannotOpen
                | C::DatabaseCorrupt
                | C::NotADatabase
                | C::ReadOnly
        )
    )
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl AppStorage {
    /// The migrations recorded as applied, in the order they ran.
    pub fn applied_migrations(&self) -> Result<Vec<AppliedMigration>, StorageError> {
        self.guard.set_mode(Mode::Host);
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, sha256, app_version, applied_at FROM lime_migrations ORDER BY seq",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(AppliedMigration {
                id: r.get(0)?,
                sha256: r.get(1)?,
                app_version: r.get(2)?,
                applied_at: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Applies the pending migrations of `plan` (the whole ordered plan of `app_version`) in
    /// one transaction; returns the ids applied now (empty when none was pending). On any error
    /// nothing of the batch is applied.
    pub fn migrate(
        &mut self,
        app_version: &str,
        plan: &[Migration],
        now: &str,
    ) -> Result<Vec<String>, StorageError> {
        self.migrate_within(app_version, plan, now, MIGRATION_BUDGET)
    }

    /// [`migrate`](Self::migrate) with another time budget for the batch.
    pub fn migrate_within(
        &mut self,
        app_version: &str,
        plan: &[Migration],
        now: &str,
        budget: Duration,
    ) -> Result<Vec<String>, StorageError> {
        let applied = self.applied_migrations()?;
        let mut pending: Vec<(&Migration, &str)> = Vec::new();
        for m in plan {
            match applied.iter().find(|a| a.id == m.id) {
                Some(a) if a.sha256 != m.sha256.to_ascii_lowercase() => {
                    return Err(fail(
                        &m.id,
                        MigrationFailure::Changed,
                        format!(
                            "applied by version {} with sha256 {}, planned now with {}",
                            a.app_version, a.sha256, m.sha256
                        ),
                    ));
                }
                Some(_) => {
                    if let Some((first, _)) = pending.first() {
                        return Err(fail(
                            &first.id,
                            MigrationFailure::OutOfOrder,
                            format!("it is new but {} was already applied after it", m.id),
                        ));
                    }
                }
                None => {
                    if m.sql.len() > MAX_MIGRATION_BYTES {
                        return Err(fail(
                            &m.id,
                            MigrationFailure::Invalid,
                            format!("{} bytes (at most {MAX_MIGRATION_BYTES})", m.sql.len()),
                        ));
                    }
                    let actual = sha256_hex(&m.sql);
                    if actual != m.sha256.to_ascii_lowercase() {
                        return Err(fail(
                            &m.id,
                            MigrationFailure::HashMismatch,
                            format!("reviewed sha256 {}, bytes hash to {actual}", m.sha256),
                        ));
                    }
                    let sql = std::str::from_utf8(&m.sql)
                        .map_err(|_| fail(&m.id, MigrationFailure::Invalid, "not UTF-8"))?;
                    pending.push((m, sql));
                }
            }
        }
        if pending.is_empty() {
            return Ok(Vec::new());
        }
        self.guard.set_mode(Mode::Host);
        self.guard.set_deadline(budget);
        let quota = self.quota;
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        for (m, sql) in &pending {
            self.guard.reset_denied();
            self.guard.set_mode(Mode::AppSql);
            let ran = tx.execute_batch(sql);
            self.guard.set_mode(Mode::Host);
            if let Err(e) = ran {
                let failure = if self.guard.was_denied()
                    || e.sqlite_error_code()
                        == Some(rusqlite::ErrorCode::AuthorizationForStatementDenied)
                {
                    MigrationFailure::Refused
                } else {
                    match StorageError::from_sql(&tx, quota, e) {
                        StorageError::QuotaExceeded { .. } => MigrationFailure::Quota,
                        StorageError::TimedOut => MigrationFailure::TimedOut,
                        // Busy, I/O, out of memory, corruption: not the migration's fault,
                        // so the version is not blocked for it (the caller may retry).
                        StorageError::Db(e) if is_environmental(&e) => {
                            return Err(StorageError::Db(e))
                        }
                        StorageError::Db(e) => {
                            return Err(fail(&m.id, MigrationFailure::Failed, e.to_string()))
                        }
                        other => return Err(other),
                    }
                };
                let message = match failure {
                    MigrationFailure::Refused => {
                        "it uses SQL migrations may not use (ATTACH, PRAGMA, BEGIN/COMMIT, lime_* tables, extensions or virtual tables)"
                    }
                    MigrationFailure::Quota => "the database would exceed the storage quota",
                    _ => "it ran past the time allowed for migrations",
                };
                return Err(fail(&m.id, failure, message));
            }
            tx.execute(
                "INSERT INTO lime_migrations (id, sha256, app_version, applied_at) VALUES (?1, ?2, ?3, ?4)",
                params![m.id, m.sha256.to_ascii_lowercase(), app_version, now],
            )
            .map_err(|e| StorageError::from_sql(&tx, quota, e))?;
        }
        tx.commit()
            .map_err(|e| StorageError::from_sql(&self.conn, quota, e))?;
        Ok(pending.iter().map(|(m, _)| m.id.clone()).collect())
    }
}
