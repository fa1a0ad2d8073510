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

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::app_area::{AppArea, Db, SubDir};
use crate::clock::{Clock, SystemClock};
use crate::ids::{random_hex, ArtifactId};

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

/// Package provenance stamped on everything a capability call creates. Field names are the
/// Host Bridge's (`appId`, `appVersion`, `entryKey`, `packageHash`, `manifestHash`, `traceId`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Provenance {
    pub app_id: String,
    pub app_version: String,
    pub package_hash: String,
    pub manifest_hash: String,
    pub entry_key: String,
    pub trace_id: String,
    /// Set on what the agent's host tools create: the session, the run (= turn) and the tool
    /// call that made it. Absent on what an app's own capability calls create.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentProvenance>,
}

/// Which agent run and tool call created a record (`provenance.agent`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentProvenance {
    pub session_id: String,
    /// The turn the tool ran in: a `lime.agent` task's run id.
    pub run_id: String,
    pub tool_call_id: String,
    pub tool: String,
}

/// Limits for one app's artifacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArtifactLimits {
    pub max_artifact_bytes: u64,
    pub quota_bytes: u64,
    pub max_artifacts: u64,
}

impl Default for ArtifactLimits {
    fn default() -> Self {
        ArtifactLimits {
            max_artifact_bytes: DEFAULT_MAX_ARTIFACT_BYTES,
            quota_bytes: DEFAULT_ARTIFACT_QUOTA_BYTES,
            max_artifacts: DEFAULT_MAX_ARTIFACTS,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    #[error("artifact quota exceeded: {used} + {adding} bytes > {quota} bytes")]
    QuotaExceeded { used: u64, adding: u64, quota: u64 },
    #[error("the app already keeps {max} artifacts")]
    TooMany { max: u64 },
    #[error("artifact too large: {size} bytes (at most {max})")]
    TooLarge { size: u64, max: u64 },
    #[error("invalid artifact name: {0}")]
    InvalidName(&'static str),
    #[error("invalid MIME type: must be type/subtype, at most 127 characters")]
    InvalidMimeType,
    #[error("invalid artifact id")]
    InvalidId,
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("no artifact with this id")]
    NotFound,
    #[error("the artifact's stored bytes do not match its SHA-256")]
    Corrupt,
    #[error("artifact database error: {0}")]
    Db(#[from] rusqlite::Error),
    #[error("artifact i/o error ({op}): {source}")]
    Io {
        op: &'static str,
        source: std::io::Error,
    },
}

impl ArtifactError {
    /// The Host Bridge code: `APP_E201` quota, `APP_E900` bad arguments, `APP_E904` unknown id,
    /// `APP_E999` host failure.
    pub fn app_code(&self) -> &'static str {
        match self {
            ArtifactError::QuotaExceeded { .. } | ArtifactError::TooMany { .. } => "APP_E201",
            ArtifactError::TooLarge { .. }
            | ArtifactError::InvalidName(_)
            | ArtifactError::InvalidMimeType
            | ArtifactError::InvalidId
            | ArtifactError::InvalidArgument(_) => "APP_E900",
            ArtifactError::NotFound => "APP_E904",
            ArtifactError::Corrupt | ArtifactError::Db(_) | ArtifactError::Io { .. } => "APP_E999",
        }
    }

    /// The `causeCode` (`artifacts.*`).
    pub fn cause_code(&self) -> &'static str {
        match self {
            ArtifactError::QuotaExceeded { .. } => "artifacts.quota_exceeded",
            ArtifactError::TooMany { .. } => "artifacts.too_many",
            ArtifactError::TooLarge { .. } => "artifacts.too_large",
            ArtifactError::InvalidName(_) => "artifacts.invalid_name",
            ArtifactError::InvalidMimeType => "artifacts.invalid_mime_type",
            ArtifactError::InvalidId => "artifacts.invalid_id",
            ArtifactError::InvalidArgument(_) => "artifacts.invalid_argument",
            ArtifactError::NotFound => "artifacts.not_found",
            ArtifactError::Corrupt => "artifacts.corrupt",
            ArtifactError::Db(_) => "artifacts.db",
            ArtifactError::Io { .. } => "artifacts.io",
        }
    }

    /// Whether the failure is the host's (worth retrying), not the caller's.
    pub fn is_host_failure(&self) -> bool {
        matches!(self, ArtifactError::Db(_) | ArtifactError::Io { .. })
    }
}

fn io(op: &'static str) -> impl FnOnce(std::io::Error) -> ArtifactError {
    move |source| ArtifactError::Io { op, source }
}

fn errno(op: &'static str) -> impl FnOnce(rustix::io::Errno) -> ArtifactError {
    move |e| ArtifactError::Io {
        op,
        source: e.into(),
    }
}

/// One artifact's metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactMeta {
    pub id: String,
    pub name: String,
    pub mime_type: String,
    pub size: u64,
    /// Lowercase hex SHA-256 of the bytes.
    pub sha256: String,
    pub created_at: String,
    pub provenance: Provenance,
}

/// One page of a listing (oldest first).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactPage {
    pub items: Vec<ArtifactMeta>,
    /// Pass as `cursor` to get the next page; `None` at the end.
    pub next_cursor: Option<String>,
}

/// What [`AppArtifacts::open`] cleaned up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlobCleanup {
    /// Unreferenced blobs and leftover temporary files removed.
    pub removed: u64,
}

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

/// Holds an exclusive `flock` on the blob directory: blob writes, unlinks and the clean-up on
/// open are serialised between every `AppArtifacts` of the app (the bridge's, the agent
/// tools', another process's), so a clean-up never removes a blob whose row is committing.
struct BlobLock<'a>(&'a OwnedFd);

impl<'a> BlobLock<'a> {
    fn take(fd: &'a OwnedFd) -> Result<BlobLock<'a>, ArtifactError> {
        rustix::fs::flock(fd, rustix::fs::FlockOperation::LockExclusive)
            .map_err(errno("lock the blob directory"))?;
        Ok(BlobLock(fd))
    }
}

impl Drop for BlobLock<'_> {
    fn drop(&mut self) {
        rustix::fs::flock(self.0, rustix::fs::FlockOperation::Unlock).ok();
    }
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

    /// Stores `bytes` as a new artifact. Fails, changing nothing, on a bad name or MIME type,
    /// over the size cap, the count cap or the quota.
    pub fn create(
        &mut self,
        name: &str,
        mime_type: Option<&str>,
        bytes: &[u8],
        provenance: &Provenance,
    ) -> Result<ArtifactMeta, ArtifactError> {
        check_name(name)?;
        let mime_type = mime_type.unwrap_or(DEFAULT_MIME_TYPE);
        check_mime(mime_type)?;
        let size = bytes.len() as u64;
        if size > self.limits.max_artifact_bytes {
            return Err(ArtifactError::TooLarge {
                size,
                max: self.limits.max_artifact_bytes,
            });
        }
        let sha = hex(&Sha256::digest(bytes));
        // Checked before any byte is written, and again inside the transaction.
        check_room(&self.conn, &self.limits, &sha, size)?;
        let blobs = rustix::io::dup(&self.blobs).map_err(errno("lock the blob directory"))?;
        let _lock = BlobLock::take(&blobs)?;
        let wrote = self.put_blob(&sha, bytes)?;
        let meta = ArtifactMeta {
            id: ArtifactId::random().into_string(),
            name: name.to_owned(),
            mime_type: mime_type.to_owned(),
            size,
            sha256: sha.clone(),
            created_at: rfc3339_ms(self.clock.now()),
            provenance: provenance.clone(),
        };
        let limits = self.limits;
        let result = (|| {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let adding = check_room(&tx, &limits, &sha, size)?;
            tx.execute(
                "INSERT INTO artifacts (id, name, mime_type, size, sha256, created_at, provenance)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    meta.id,
                    meta.name,
                    meta.mime_type,
                    size as i64,
                    sha,
                    meta.created_at,
                    serde_json::to_string(provenance).unwrap_or_default()
                ],
            )?;
            tx.execute(
                "UPDATE lime_meta SET value = value + ?1 WHERE name = 'blob_bytes'",
                [adding as i64],
            )?;
            tx.commit()?;
            Ok(())
        })();
        if let Err(e) = result {
            if wrote && !self.is_referenced(&sha).unwrap_or(true) {
                // Our own new blob, which no row references: leave no partial state.
                self.unlink_blob(&sha).ok();
            }
            return Err(e);
        }
        Ok(meta)
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

    /// Removes `id`; returns whether it existed. Its blob goes when no row references it.
    pub fn delete(&mut self, id: &str) -> Result<bool, ArtifactError> {
        check_id(id)?;
        let blobs = rustix::io::dup(&self.blobs).map_err(errno("lock the blob directory"))?;
        let _lock = BlobLock::take(&blobs)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let row: Option<(String, i64)> = tx
            .query_row(
                "SELECT sha256, size FROM artifacts WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((sha, size)) = row else {
            return Ok(false);
        };
        tx.execute("DELETE FROM artifacts WHERE id = ?1", [id])?;
        let still: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = ?1)",
            [&sha],
            |r| r.get(0),
        )?;
        if !still {
            tx.execute(
                "UPDATE lime_meta SET value = max(value - ?1, 0) WHERE name = 'blob_bytes'",
                [size],
            )?;
        }
        tx.commit()?;
        if !still {
            // After the commit: a crash here leaves an unreferenced blob, removed on open.
            self.unlink_blob(&sha)?;
        }
        Ok(true)
    }

    fn is_referenced(&self, sha: &str) -> Result<bool, ArtifactError> {
        Ok(self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = ?1)",
            [sha],
            |r| r.get(0),
        )?)
    }

    /// Makes sure `artifact-blobs/<sha>` holds `bytes`; returns whether it wrote a new file.
    fn put_blob(&self, sha: &str, bytes: &[u8]) -> Result<bool, ArtifactError> {
        if self.read_blob(sha, bytes.len() as u64).is_ok() {
            return Ok(false);
        }
        let tmp = format!(".tmp-{}", random_hex());
        let fd = rustix::fs::openat(
            &self.blobs,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .map_err(errno("create a blob"))?;
        let mut file = File::from(fd);
        let written = file
            .write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(io("write a blob"));
        drop(file);
        let placed = written.and_then(|()| {
            match rustix::fs::renameat_with(
                &self.blobs,
                tmp.as_str(),
                &self.blobs,
                sha,
                RenameFlags::NOREPLACE,
            ) {
                Ok(()) => Ok(()),
                // Something else sits under the name (a damaged blob, a planted file): the
                // content was checked not to match, so replace it.
                Err(rustix::io::Errno::EXIST) => {
                    rustix::fs::renameat(&self.blobs, tmp.as_str(), &self.blobs, sha)
                        .map_err(errno("place a blob"))
                }
                Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {
                    rustix::fs::renameat(&self.blobs, tmp.as_str(), &self.blobs, sha)
                        .map_err(errno("place a blob"))
                }
                Err(e) => Err(errno("place a blob")(e)),
            }
        });
        if let Err(e) = placed {
            rustix::fs::unlinkat(&self.blobs, tmp.as_str(), AtFlags::empty()).ok();
            return Err(e);
        }
        rustix::fs::fsync(&self.blobs).map_err(errno("sync the blob directory"))?;
        Ok(true)
    }

    /// Reads and rehashes `artifact-blobs/<sha>`, which must be a regular file of `size` bytes.
    fn read_blob(&self, sha: &str, size: u64) -> Result<Vec<u8>, ArtifactError> {
        let fd = match rustix::fs::openat(
            &self.blobs,
            sha,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            // Missing, or a link (ELOOP): the bytes are not there.
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::LOOP) => {
                return Err(ArtifactError::Corrupt)
            }
            Err(e) => return Err(errno("open a blob")(e)),
        };
        let st = rustix::fs::fstat(&fd).map_err(errno("stat a blob"))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile || st.st_size as u64 != size
        {
            return Err(ArtifactError::Corrupt);
        }
        let mut buf = Vec::with_capacity(size as usize);
        File::from(fd)
            .take(size + 1)
            .read_to_end(&mut buf)
            .map_err(io("read a blob"))?;
        if buf.len() as u64 != size || hex(&Sha256::digest(&buf)) != sha {
            return Err(ArtifactError::Corrupt);
        }
        Ok(buf)
    }

    fn unlink_blob(&self, sha: &str) -> Result<(), ArtifactError> {
        match rustix::fs::unlinkat(&self.blobs, sha, AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => {}
            Err(e) => return Err(errno("remove a blob")(e)),
        }
        rustix::fs::fsync(&self.blobs).map_err(errno("sync the blob directory"))
    }

    /// Removes every entry of the blob directory that is not the blob of a row: leftovers of a
    /// crash (temporary files, blobs whose row never committed or was deleted). Directories and
    /// other non-files are left alone.
    fn collect_garbage(&self) -> Result<BlobCleanup, ArtifactError> {
        let _lock = BlobLock::take(&self.blobs)?;
        let mut names: Vec<CString> = Vec::new();
        let dir =
            rustix::fs::Dir::read_from(&self.blobs).map_err(errno("list the blob directory"))?;
        for entry in dir {
            let entry = entry.map_err(errno("list the blob directory"))?;
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            names.push(name.to_owned());
        }
        let mut out = BlobCleanup::default();
        let mut stmt = self
            .conn
            .prepare("SELECT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = ?1)")?;
        for name in names {
            let keep = match name.to_str() {
                Ok(s) if is_sha_hex(s) => stmt.query_row([s], |r| r.get::<_, bool>(0))?,
                _ => false,
            };
            if keep || !is_plain_file(&self.blobs, &name) {
                continue;
            }
            if rustix::fs::unlinkat(&self.blobs, name.as_c_str(), AtFlags::empty()).is_ok() {
                out.removed += 1;
            }
        }
        if out.removed > 0 {
            rustix::fs::fsync(&self.blobs).map_err(errno("sync the blob directory"))?;
        }
        Ok(out)
    }
}

/// How many bytes adding content `sha` of `size` bytes would add to the quota, or the
/// error if it does not fit.
fn check_room(
    conn: &Connection,
    limits: &ArtifactLimits,
    sha: &str,
    size: u64,
) -> Result<u64, ArtifactError> {
    let count: i64 = conn.query_row("SELECT count(*) FROM artifacts", [], |r| r.get(0))?;
    if count.max(0) as u64 >= limits.max_artifacts {
        return Err(ArtifactError::TooMany {
            max: limits.max_artifacts,
        });
    }
    let present: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = ?1)",
        [sha],
        |r| r.get(0),
    )?;
    let adding = if present { 0 } else { size };
    let used = meta(conn, "blob_bytes")?;
    if used.saturating_add(adding) > limits.quota_bytes {
        return Err(ArtifactError::QuotaExceeded {
            used,
            adding,
            quota: limits.quota_bytes,
        });
    }
    Ok(adding)
}

fn is_plain_file(dir: &OwnedFd, name: &CStr) -> bool {
    rustix::fs::statat(dir.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW)
        .map(|st| {
            matches!(
                FileType::from_raw_mode(st.st_mode),
                FileType::RegularFile | FileType::Symlink
            )
        })
        .unwrap_or(false)
}

fn row_meta(r: &rusqlite::Row<'_>) -> rusqlite::Result<ArtifactMeta> {
    let prov: String = r.get(6)?;
    Ok(ArtifactMeta {
        id: r.get(0)?,
        name: r.get(1)?,
        mime_type: r.get(2)?,
        size: r.get::<_, i64>(3)?.max(0) as u64,
        sha256: r.get(4)?,
        created_at: r.get(5)?,
        provenance: serde_json::from_str(&prov).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(6, rusqlite::types::Type::Text, Box::new(e))
        })?,
    })
}

fn meta(conn: &Connection, name: &str) -> Result<u64, rusqlite::Error> {
    Ok(conn
        .query_row("SELECT value FROM lime_meta WHERE name = ?1", [name], |r| {
            r.get::<_, i64>(0)
        })?
        .max(0) as u64)
}

/// Cursors are `c<seq>`, opaque to callers.
/// One keyset page from rows fetched with `LIMIT limit + 1` as `(item, seq)`: at most `limit`
/// items, and the cursor of the last one (`c<seq>`, read back by [`parse_cursor`]) when more follow.
pub(crate) fn seq_page<T>(
    rows: impl Iterator<Item = rusqlite::Result<(T, i64)>>,
    limit: u32,
) -> rusqlite::Result<(Vec<T>, Option<String>)> {
    let mut items = Vec::new();
    let mut last = None;
    for row in rows {
        let (item, seq) = row?;
        if items.len() == limit as usize {
            return Ok((items, last.map(|s| format!("c{s}"))));
        }
        items.push(item);
        last = Some(seq);
    }
    Ok((items, None))
}

pub(crate) fn parse_cursor(cursor: Option<&str>) -> Result<i64, ArtifactError> {
    match cursor {
        None => Ok(0),
        Some(c) => c
            .strip_prefix('c')
            .filter(|d| !d.is_empty() && d.len() <= 19 && d.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|d| d.parse::<i64>().ok())
            .ok_or_else(|| ArtifactError::InvalidArgument("unknown cursor".into())),
    }
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

fn is_sha_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// An artifact id as callers pass it: the runtime id charset, and our `artifact_` prefix.
pub fn check_id(id: &str) -> Result<(), ArtifactError> {
    if ArtifactId::new(id).is_ok() && id.starts_with("artifact_") {
        Ok(())
    } else {
        Err(ArtifactError::InvalidId)
    }
}

/// A display and file name, never a path: 1..=255 bytes, no `/`, `\`, control or format
/// characters, not `.` or `..`, no leading or trailing space.
pub fn check_name(name: &str) -> Result<(), ArtifactError> {
    if name.is_empty() {
        return Err(ArtifactError::InvalidName("empty"));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(ArtifactError::InvalidName("longer than 255 bytes"));
    }
    if name == "." || name == ".." {
        return Err(ArtifactError::InvalidName("not a file name"));
    }
    if name.contains(['/', '\\']) {
        return Err(ArtifactError::InvalidName(
            "contains a path separator ('/' or '\\')",
        ));
    }
    if name.chars().any(|c| {
        c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
    }) {
        return Err(ArtifactError::InvalidName(
            "contains a control or invisible formatting character",
        ));
    }
    if name.starts_with(' ') || name.ends_with(' ') {
        return Err(ArtifactError::InvalidName("starts or ends with a space"));
    }
    Ok(())
}

/// `type/subtype` with RFC 6838 name characters, optional `; param=value` parameters of token
/// characters, at most 127 bytes.
pub fn check_mime(m: &str) -> Result<(), ArtifactError> {
    let tok = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    let mut parts = m.split(';');
    let essence = parts.next().unwrap_or("");
    let ok = m.len() <= MAX_MIME_BYTES
        && essence
            .split_once('/')
            .is_some_and(|(t, s)| tok(t) && tok(s))
        && parts.all(|p| {
            p.trim_start()
                .split_once('=')
                .is_some_and(|(k, v)| tok(k) && tok(v.trim_matches('"')))
        });
    if ok {
        Ok(())
    } else {
        Err(ArtifactError::InvalidMimeType)
    }
}

/// The blob directory path of an app (for tests and diagnostics; never shown to apps).
pub fn blobs_dir(app_dir: &Path) -> PathBuf {
    app_dir.join(BLOBS_DIR)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn prov(trace: &str) -> Provenance {
        Provenance {
            app_id: "notes".into(),
            app_version: "1.0.0".into(),
            package_hash: "sha256:aa".into(),
            manifest_hash: "sha256:bb".into(),
            entry_key: "main".into(),
            trace_id: trace.into(),
            agent: None,
        }
    }

    fn open(limits: ArtifactLimits) -> (tempfile::TempDir, PathBuf, AppArtifacts) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("notes");
        let a = AppArtifacts::open(&dir, limits).unwrap();
        (tmp, dir, a)
    }

    fn blob_names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(blobs_dir(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn round_trip_with_provenance_survives_reopening() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("notes");
        let meta = {
            let mut a = AppArtifacts::open(&dir, ArtifactLimits::default()).unwrap();
            a.create(
                "report.md",
                Some("text/markdown; charset=utf-8"),
                b"# Hi",
                &prov("t1"),
            )
            .unwrap()
        };
        assert!(meta.id.starts_with("artifact_") && meta.id.len() == 41);
        assert_eq!(meta.size, 4);
        assert_eq!(meta.sha256, hex(&Sha256::digest(b"# Hi")));
        assert_eq!(meta.provenance, prov("t1"));
        let a = AppArtifacts::open(&dir, ArtifactLimits::default()).unwrap();
        let (m, bytes) = a.read(&meta.id, u64::MAX).unwrap();
        assert_eq!((m, bytes.as_slice()), (meta.clone(), &b"# Hi"[..]));
        assert_eq!(blob_names(&dir), std::slice::from_ref(&meta.sha256));
        assert_eq!(a.used().unwrap(), 4);
        assert!(dir.join(ARTIFACTS_FILE).is_file());
    }

    #[test]
    fn same_content_is_stored_once_and_its_blob_goes_with_the_last_row() {
        let (_t, dir, mut a) = open(ArtifactLimits::default());
        let one = a.create("a.txt", None, b"same", &prov("t1")).unwrap();
        let two = a.create("b.txt", None, b"same", &prov("t2")).unwrap();
        let other = a.create("c.txt", None, b"other", &prov("t3")).unwrap();
        assert_ne!(one.id, two.id);
        assert_eq!(one.sha256, two.sha256);
        assert_eq!(blob_names(&dir).len(), 2);
        assert_eq!(a.used().unwrap(), 4 + 5);
        assert!(a.delete(&one.id).unwrap());
        assert!(!a.delete(&one.id).unwrap());
        // Still referenced by `two`.
        assert_eq!(blob_names(&dir).len(), 2);
        assert_eq!(a.read(&two.id, 100).unwrap().1, b"same");
        assert!(a.delete(&two.id).unwrap());
        assert_eq!(blob_names(&dir), std::slice::from_ref(&other.sha256));
        assert_eq!(a.used().unwrap(), 5);
        assert!(matches!(a.get(&one.id), Err(ArtifactError::NotFound)));
    }

    #[test]
    fn quota_counts_distinct_content_and_a_refused_create_leaves_nothing() {
        let limits = ArtifactLimits {
            max_artifact_bytes: 8,
            quota_bytes: 10,
            max_artifacts: 3,
        };
        let (_t, dir, mut a) = open(limits);
        a.create("a", None, b"123456", &prov("t")).unwrap();
        // Duplicate content costs nothing.
        a.create("b", None, b"123456", &prov("t")).unwrap();
        let e = a.create("c", None, b"12345", &prov("t")).unwrap_err();
        assert!(
            matches!(
                e,
                ArtifactError::QuotaExceeded {
                    used: 6,
                    adding: 5,
                    quota: 10
                }
            ),
            "{e}"
        );
        assert_eq!(e.app_code(), "APP_E201");
        let e = a.create("c", None, b"123456789", &prov("t")).unwrap_err();
        assert!(
            matches!(e, ArtifactError::TooLarge { size: 9, max: 8 }),
            "{e}"
        );
        assert_eq!(e.app_code(), "APP_E900");
        assert_eq!(blob_names(&dir).len(), 1);
        assert_eq!(a.count().unwrap(), 2);
        a.create("c", None, b"1234", &prov("t")).unwrap();
        let e = a.create("d", None, b"", &prov("t")).unwrap_err();
        assert!(matches!(e, ArtifactError::TooMany { max: 3 }), "{e}");
        assert_eq!(a.used().unwrap(), 10);
    }

    #[test]
    fn listing_pages_in_creation_order() {
        let (_t, _d, mut a) = open(ArtifactLimits::default());
        let ids: Vec<String> = (0..5)
            .map(|i| {
                a.create(
                    &format!("n{i}"),
                    None,
                    format!("{i}").as_bytes(),
                    &prov("t"),
                )
                .unwrap()
                .id
            })
            .collect();
        let p1 = a.list(None, 2).unwrap();
        let p2 = a.list(p1.next_cursor.as_deref(), 2).unwrap();
        let p3 = a.list(p2.next_cursor.as_deref(), 2).unwrap();
        let got: Vec<String> = [p1.items, p2.items, p3.items.clone()]
            .concat()
            .into_iter()
            .map(|m| m.id)
            .collect();
        assert_eq!(got, ids);
        assert_eq!(p3.items.len(), 1);
        assert_eq!(p3.next_cursor, None);
        assert!(a.list(None, 0).is_err());
        assert!(a.list(None, 1001).is_err());
        for bad in ["x", "c", "c-1", "c1x", "../1"] {
            assert!(
                matches!(
                    a.list(Some(bad), 10),
                    Err(ArtifactError::InvalidArgument(_))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn names_ids_and_mime_types_are_validated() {
        let (_t, dir, mut a) = open(ArtifactLimits::default());
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "a/b",
            "a\\b",
            "a\nb",
            " x",
            "x ",
            "a\u{202e}b",
        ] {
            assert!(
                matches!(
                    a.create(bad, None, b"x", &prov("t")),
                    Err(ArtifactError::InvalidName(_))
                ),
                "{bad:?}"
            );
        }
        assert!(a.create(&"n".repeat(256), None, b"x", &prov("t")).is_err());
        for bad in [
            "text",
            "/x",
            "text/",
            "te xt/plain",
            "text/plain; x",
            &format!("a/{}", "b".repeat(130)),
        ] {
            assert!(
                matches!(
                    a.create("n", Some(bad), b"x", &prov("t")),
                    Err(ArtifactError::InvalidMimeType)
                ),
                "{bad:?}"
            );
        }
        for bad in [
            "",
            "../x",
            "artifact_../x",
            "x",
            "evidence_1",
            &format!("artifact_{}", "a".repeat(200)),
        ] {
            assert!(
                matches!(a.get(bad), Err(ArtifactError::InvalidId)),
                "{bad:?}"
            );
            assert!(
                matches!(a.delete(bad), Err(ArtifactError::InvalidId)),
                "{bad:?}"
            );
        }
        assert!(matches!(a.get("artifact_0"), Err(ArtifactError::NotFound)));
        assert!(blob_names(&dir).is_empty());
        assert_eq!(a.count().unwrap(), 0);
        a.create(
            "été — résumé.pdf",
            Some("application/pdf"),
            b"%PDF",
            &prov("t"),
        )
        .unwrap();
    }

    #[test]
    fn a_changed_blob_is_refused_and_a_new_create_repairs_it() {
        let (_t, dir, mut a) = open(ArtifactLimits::default());
        let m = a.create("a", None, b"hello", &prov("t")).unwrap();
        let path = blobs_dir(&dir).join(&m.sha256);
        std::fs::write(&path, b"HELLO").unwrap();
        assert!(matches!(a.read(&m.id, 100), Err(ArtifactError::Corrupt)));
        // A link in its place is not followed either.
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(dir.join(ARTIFACTS_FILE), &path).unwrap();
        assert!(matches!(a.read(&m.id, 100), Err(ArtifactError::Corrupt)));
        // Creating the same content again puts the right bytes back.
        a.create("b", None, b"hello", &prov("t")).unwrap();
        assert_eq!(a.read(&m.id, 100).unwrap().1, b"hello");
        assert!(!std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_symlink());
        // Reading is bounded before any byte is read.
        assert!(matches!(
            a.read(&m.id, 4),
            Err(ArtifactError::TooLarge { .. })
        ));
    }

    #[test]
    fn a_read_only_open_neither_cleans_up_nor_writes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("notes");
        let mut a = AppArtifacts::open(&dir, ArtifactLimits::default()).unwrap();
        let m = a.create("a", None, b"kept", &prov("t")).unwrap();
        // A host writing a blob whose row is not committed yet.
        let pending = blobs_dir(&dir).join(".tmp-inflight");
        std::fs::write(&pending, b"in flight").unwrap();
        let ro = AppArtifacts::open_read_only(&dir).unwrap().unwrap();
        assert!(pending.exists());
        assert_eq!(ro.list(None, 10).unwrap().items, std::slice::from_ref(&m));
        assert_eq!(ro.read(&m.id, 100).unwrap().1, b"kept");
        assert!(ro.conn.execute("DELETE FROM artifacts", []).is_err());
        assert_eq!(a.count().unwrap(), 1);
    }

    #[test]
    fn opening_removes_unreferenced_blobs_and_temporary_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("notes");
        let kept = {
            let mut a = AppArtifacts::open(&dir, ArtifactLimits::default()).unwrap();
            a.create("a", None, b"kept", &prov("t")).unwrap()
        };
        let blobs = blobs_dir(&dir);
        std::fs::write(blobs.join(".tmp-0123"), b"partial").unwrap();
        std::fs::write(blobs.join(hex(&Sha256::digest(b"orphan"))), b"orphan").unwrap();
        std::fs::create_dir(blobs.join("subdir")).unwrap();
        let a = AppArtifacts::open(&dir, ArtifactLimits::default()).unwrap();
        assert_eq!(a.cleanup().removed, 2);
        assert_eq!(blob_names(&dir), [kept.sha256.clone(), "subdir".to_owned()]);
        assert_eq!(a.read(&kept.id, 100).unwrap().1, b"kept");
    }

    #[test]
    fn a_linked_app_directory_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let dir = tmp.path().join("notes");
        std::os::unix::fs::symlink(&elsewhere, &dir).unwrap();
        assert!(matches!(
            AppArtifacts::open(&dir, ArtifactLimits::default()),
            Err(ArtifactError::Io { .. })
        ));
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        // A link as the blob directory is refused too.
        let dir2 = tmp.path().join("other");
        std::fs::create_dir(&dir2).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir2.join(BLOBS_DIR)).unwrap();
        assert!(AppArtifacts::open(&dir2, ArtifactLimits::default()).is_err());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        assert!(AppArtifacts::open_read_only(&tmp.path().join("none"))
            .unwrap()
            .is_none());
        assert!(!tmp.path().join("none").exists());
    }
}
