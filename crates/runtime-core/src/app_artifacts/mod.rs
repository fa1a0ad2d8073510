//! `lime.artifacts` data: an app's durable deliverables, in the app's own data area.
//!
//! Layout, inside `apps/<app>/`:
//! - `artifact-blobs/<sha256>`: the bytes, content-addressed (one file per distinct content,
//!   shared by every artifact row with that content), written to a temporary file, fsynced,
//!   moved into place without replacing anything, and the directory fsynced;
//! - `artifacts.sqlite` (WAL, `synchronous=FULL`): one metadata row per artifact (random opaque
//!   id, name, MIME type, size, SHA-256, creation time, provenance).
//!
//! Ids are scoped to the app: each app has its own database, so an id minted for one app means
//! nothing in another app's area.
//!
//! Order of writes: blob first, then the row. A crash in between leaves an unreferenced blob,
//! which [`AppArtifacts::open`] removes; a delete commits the row's removal, then unlinks the
//! blob if no row references it any more (a crash in between: same clean-up on open). One writer
//! per app at a time (the host serialises capability calls).
//!
//! Running apps (and RuntimeCore's file tools) write in the data area, so nothing on disk is
//! trusted: the app directory and the blob directory are opened with `O_NOFOLLOW`, blobs only
//! relative to the blob directory's descriptor with `O_NOFOLLOW | O_NONBLOCK`, checked to be
//! regular files of the recorded size, and rehashed on every read (a blob whose bytes changed is
//! refused as corrupt, never returned). Sizes are bounded before anything is read.
//!
//! Files: `types.rs` (provenance, limits, errors, metadata), `write.rs` (create, delete, the
//! quota check), `blobs.rs` (the blob directory: lock, write, rehashing read, clean-up),
//! `rows.rs` (row mapping, keyset pages), `checks.rs` (ids, names, MIME types).

mod blobs;
mod checks;
mod rows;
mod types;
mod write;

use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::Arc;

use rusqlite::{params, Connection, OptionalExtension};

use crate::app_area::{AppArea, Db, SubDir};
use crate::clock::{Clock, SystemClock};

/// The metadata database inside an app's data directory.
pub const ARTIFACTS_FILE: &str = "artifacts.sqlite";
/// The blob directory inside an app's data directory.
pub const BLOBS_DIR: &str = "artifact-blobs";
/// Default largest artifact: 32 MiB.
pub const DEFAULT_MAX_ARTIFACT_BYTES: u64 = 32 * 1024 * 1024;
/// Default quota for an app's artifact bytes (distinct contents counted once): 256 MiB.
pub const DEFAULT_ARTIFACT_QUOTA_BYTES: u64 = 256 * 1024 * 1024;
/// Default most artifacts an app may keep.
pub const DEFAULT_MAX_ARTIFACTS: u64 = 100_000;
pub const MAX_NAME_BYTES: usize = 255;
pub const MAX_MIME_BYTES: usize = 127;
pub const MAX_LIST_LIMIT: u32 = 1000;
pub const DEFAULT_MIME_TYPE: &str = "application/octet-stream";

pub use blobs::blobs_dir;
pub use checks::{check_id, check_mime, check_name, hex};
pub(crate) use rows::{parse_cursor, seq_page};
pub use types::*;

use blobs::BlobLock;
use checks::is_sha_hex;
use rows::{meta, row_meta};

/// An app's artifacts, open.
pub struct AppArtifacts {
    conn: Connection,
    blobs: OwnedFd,
    limits: ArtifactLimits,
    cleanup: BlobCleanup,
    /// Stamps `created_at` (the system clock unless [`AppArtifacts::with_clock`]).
    clock: Arc<dyn Clock>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS artifacts (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    name       TEXT NOT NULL,
    mime_type  TEXT NOT NULL,
    size       INTEGER NOT NULL,
    sha256     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    provenance TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS artifacts_by_sha256 ON artifacts (sha256);
CREATE TABLE IF NOT EXISTS lime_meta (
    name  TEXT PRIMARY KEY NOT NULL,
    value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT OR IGNORE INTO lime_meta (name, value) VALUES ('blob_bytes', 0);
";

/// Opens `app_dir` (creating it 0700 if missing) without following a link (the app data area).
pub(crate) fn open_app_dir(app_dir: &Path) -> std::io::Result<AppArea> {
    AppArea::open(app_dir)
}

/// Connection settings shared by the per-app record databases: WAL, `synchronous=FULL`, no
/// `ATTACH`, no untrusted schema, defensive mode.
pub(crate) fn open_db(path: &Path) -> Result<Connection, rusqlite::Error> {
    crate::sqlite::SqliteOpen::app_records().open(path)
}

/// A read-only connection (`query_only`, no `ATTACH`) for readers.
pub(crate) fn open_db_read_only(path: &Path) -> Result<Connection, rusqlite::Error> {
    crate::sqlite::SqliteOpen::app_reader().open(path)
}

/// "Now" by the system clock, as the records store it (UTC, milliseconds).
pub fn now_rfc3339() -> String {
    rfc3339_ms(SystemClock.now())
}

/// `at` as the records store it (UTC, milliseconds).
pub fn rfc3339_ms(at: jiff::Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

impl AppArtifacts {
    /// Opens (creating if needed) the artifacts of the app whose data directory is `app_dir`,
    /// and removes blobs no row references (left by a crash) and temporary files.
    pub fn open(app_dir: &Path, limits: ArtifactLimits) -> Result<AppArtifacts, ArtifactError> {
        let area = open_app_dir(app_dir).map_err(io("open the app's data directory"))?;
        Self::open_in(&area, limits)
    }

    /// [`AppArtifacts::open`] on an open app data area.
    pub fn open_in(area: &AppArea, limits: ArtifactLimits) -> Result<AppArtifacts, ArtifactError> {
        let blobs = area
            .subdir(SubDir::ArtifactBlobs, true)
            .map_err(io("open the blob directory"))?
            .expect("created");
        let conn = open_db(
            &area
                .prepare_db(Db::Artifacts)
                .map_err(io("open the artifact database"))?,
        )?;
        conn.execute_batch(SCHEMA)?;
        conn.execute_batch(crate::idempotency::SCHEMA)?;
        let mut a = AppArtifacts {
            conn,
            blobs,
            limits,
            cleanup: BlobCleanup::default(),
            clock: Arc::new(SystemClock),
        };
        a.cleanup = a.collect_garbage()?;
        Ok(a)
    }

    /// Opens the artifacts read-only, only if the app has some: never creates, cleans up or
    /// writes anything (for readers such as the CLI, while a host may be writing).
    pub fn open_read_only(app_dir: &Path) -> Result<Option<AppArtifacts>, ArtifactError> {
        let Some(area) =
            AppArea::open_existing(app_dir).map_err(io("open the app's data directory"))?
        else {
            return Ok(None);
        };
        if !area
            .db_exists(Db::Artifacts)
            .map_err(io("open the artifact database"))?
        {
            return Ok(None);
        }
        let blobs = area
            .subdir(SubDir::ArtifactBlobs, false)
            .map_err(io("open the blob directory"))?
            .ok_or_else(|| ArtifactError::Io {
                op: "open the blob directory",
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            })?;
        let conn = open_db_read_only(&area.db_path(Db::Artifacts))?;
        Ok(Some(AppArtifacts {
            conn,
            blobs,
            limits: ArtifactLimits::default(),
            cleanup: BlobCleanup::default(),
            clock: Arc::new(SystemClock),
        }))
    }

    /// Stamps new artifacts' `created_at` with `clock` instead of the system clock.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> AppArtifacts {
        self.clock = clock;
        self
    }

    pub fn limits(&self) -> ArtifactLimits {
        self.limits
    }

    /// What opening cleaned up.
    pub fn cleanup(&self) -> BlobCleanup {
        self.cleanup
    }

    /// Bytes of distinct contents stored (what the quota counts).
    pub fn used(&self) -> Result<u64, ArtifactError> {
        Ok(meta(&self.conn, "blob_bytes")?)
    }

    /// Number of artifacts.
    pub fn count(&self) -> Result<u64, ArtifactError> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM artifacts", [], |r| r.get(0))?;
        Ok(n.max(0) as u64)
    }

    /// The metadata of `id`.
    pub fn get(&self, id: &str) -> Result<ArtifactMeta, ArtifactError> {
        check_id(id)?;
        self.conn
            .query_row(
                "SELECT id, name, mime_type, size, sha256, created_at, provenance
                 FROM artifacts WHERE id = ?1",
                [id],
                row_meta,
            )
            .optional()?
            .ok_or(ArtifactError::NotFound)
    }

    /// The metadata and bytes of `id`, rehashed. Artifacts larger than `max_bytes` are refused
    /// before reading (`TooLarge`).
    pub fn read(&self, id: &str, max_bytes: u64) -> Result<(ArtifactMeta, Vec<u8>), ArtifactError> {
        let meta = self.get(id)?;
        if meta.size > max_bytes {
            return Err(ArtifactError::TooLarge {
                size: meta.size,
                max: max_bytes,
            });
        }
        let bytes = self.read_blob(&meta.sha256, meta.size)?;
        Ok((meta, bytes))
    }

    /// Artifacts in creation order, after `cursor` (exclusive), at most `limit`.
    pub fn list(&self, cursor: Option<&str>, limit: u32) -> Result<ArtifactPage, ArtifactError> {
        if limit == 0 || limit > MAX_LIST_LIMIT {
            return Err(ArtifactError::InvalidArgument(format!(
                "limit must be 1..={MAX_LIST_LIMIT}"
            )));
        }
        let after = parse_cursor(cursor)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, name, mime_type, size, sha256, created_at, provenance, seq
             FROM artifacts WHERE seq > ?1 ORDER BY seq LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![after, i64::from(limit) + 1], |r| {
            Ok((row_meta(r)?, r.get::<_, i64>(7)?))
        })?;
        let (items, next_cursor) = seq_page(rows, limit)?;
        Ok(ArtifactPage { items, next_cursor })
    }
}

#[cfg(test)]
mod tests;
