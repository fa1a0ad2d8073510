//! `lime.knowledge`'s local index: one SQLite FTS5 database per app and knowledge template, in
//! the app's data area (`apps/<app>/knowledge/<template-id>.sqlite`, reserved name
//! `knowledge/`), built from a folder the user bound (host-core keeps the binding).
//!
//! - [`walk`]: the folder, walked from its descriptor with `openat(O_NOFOLLOW)`; links are
//!   skipped and reported, FIFOs and devices never opened, every count and size bounded by
//!   [`Limits`] before the work it bounds.
//! - [`chunk`]: Markdown, plain text and HTML into sections (heading title, byte span in the
//!   file); PDF is recognised and refused per file (`knowledge.unsupported_format`: no
//!   well-kept pure-Rust PDF text extractor is in the dependency tree).
//! - [`query`]: the app's query becomes quoted FTS5 terms, never FTS5 syntax.
//! - [`KnowledgeIndex::reindex`]: incremental: a file whose size and mtime match its row is not
//!   read; one whose content hash matches is not re-chunked; files gone from the folder leave
//!   the index. One transaction per run, so a search sees the previous run or this one.
//!
//! RuntimeCore knows nothing of manifests: the template is an opaque key here.

pub mod chunk;
mod index;
pub mod query;
#[cfg(test)]
mod tests;
pub mod walk;

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use rustix::fs::{FileType, Mode, OFlags};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::app_area::{AppArea, SubDir, FILE_MODE};
use crate::sqlite::SqliteOpen;
pub use index::SEARCH_SQL;
use walk::{Format, ReadError};

/// Most hits one search returns.
pub const MAX_TOP_K: usize = 50;
/// Longest template key (bytes).
pub const MAX_TEMPLATE_BYTES: usize = 128;

/// Bounds of one indexing run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Document files indexed (more are reported `knowledge.limit_reached`).
    pub max_files: usize,
    /// Largest file read (bytes); larger ones are `knowledge.too_large`, never read.
    pub max_file_bytes: u64,
    /// Bytes of all indexed files together.
    pub max_total_bytes: u64,
    /// Folder depth below the root.
    pub max_depth: usize,
    /// Directory entries looked at (all kinds), so a huge tree of non-documents is bounded too.
    pub max_entries: usize,
    /// Problems kept per run (the rest are counted).
    pub max_problems: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_files: 20_000,
            max_file_bytes: 8 * 1024 * 1024,
            max_total_bytes: 512 * 1024 * 1024,
            max_depth: 16,
            max_entries: 200_000,
            max_problems: 100,
        }
    }
}

/// Something in the folder that was not indexed, with a stable code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Problem {
    pub code: String,
    pub path: String,
    pub message: String,
}

/// What one indexing run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IndexReport {
    /// Files in the index after the run.
    pub files: usize,
    pub chunks: usize,
    /// Files read and (re-)chunked this run.
    pub indexed: usize,
    /// Files whose size and mtime, or content hash, matched.
    pub unchanged: usize,
    /// Files that left the index (gone from the folder, now too large, ...).
    pub removed: usize,
    pub problems: Vec<Problem>,
    pub problems_dropped: usize,
}

/// The index's state (`apphost knowledge status`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub files: usize,
    pub chunks: usize,
    pub last_indexed: Option<String>,
    pub problems: Vec<Problem>,
    pub problems_dropped: usize,
}

/// One search hit and its citation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// The document's path relative to the bound folder.
    pub document: String,
    /// The section's heading (`""` before the first heading).
    pub section: String,
    /// Byte span of the chunk in the document.
    pub start: u64,
    pub end: u64,
    /// A few words around the matches, matches in `[`…`]`.
    pub snippet: String,
    /// BM25 relevance (higher is better).
    pub score: f64,
}

#[derive(Debug, thiserror::Error)]
pub enum KnowledgeError {
    #[error("{0}")]
    QueryInvalid(String),
    #[error("the bound folder cannot be read: {0}")]
    FolderInvalid(String),
    #[error("the knowledge index failed: {0}")]
    Io(#[from] io::Error),
    #[error("the knowledge index failed: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

impl KnowledgeError {
    /// The stable code (`knowledge.*`).
    pub fn code(&self) -> &'static str {
        match self {
            KnowledgeError::QueryInvalid(_) => "knowledge.query_invalid",
            KnowledgeError::FolderInvalid(_) => "knowledge.folder_invalid",
            KnowledgeError::Io(_) | KnowledgeError::Sqlite(_) => "knowledge.index_failed",
        }
    }
}

/// The file name of `template`'s index: a hash of the key, so no key can name another file.
pub fn index_file_name(template: &str) -> String {
    format!("{}.sqlite", hex_sha256(template.as_bytes(), 16))
}

pub(crate) fn hex_sha256(bytes: &[u8], len: usize) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(2 * len.min(digest.len()));
    for b in digest.iter().take(len) {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
    out
}

/// One template's index, open.
#[derive(Debug)]
pub struct KnowledgeIndex {
    conn: Connection,
    path: PathBuf,
}

impl KnowledgeIndex {
    /// Opens (creating `knowledge/` 0700 and the file 0600, never through a link) the index
    /// of `template` in `area`.
    pub fn open(area: &AppArea, template: &str) -> Result<KnowledgeIndex, KnowledgeError> {
        let dir = area
            .subdir(SubDir::Knowledge, true)?
            .ok_or_else(|| io::Error::other("knowledge/ was not created"))?;
        let name = index_file_name(template);
        let fd = rustix::fs::openat(
            &dir,
            name.as_str(),
            OFlags::RDONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::from_raw_mode(FILE_MODE),
        )
        .map_err(io::Error::from)?;
        let st = rustix::fs::fstat(&fd).map_err(io::Error::from)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(io::Error::other(format!("{name} is not a regular file")).into());
        }
        let path = area.path().join(SubDir::Knowledge.name()).join(&name);
        let conn = SqliteOpen::app_records().open(&path)?;
        let layout: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if layout != index::LAYOUT {
            conn.execute_batch(index::DROP)?;
        }
        conn.execute_batch(index::SCHEMA)?;
        Ok(KnowledgeIndex { conn, path })
    }

    /// Opens the index of `template` only if it exists (nothing is created).
    pub fn open_existing(
        area: &AppArea,
        template: &str,
    ) -> Result<Option<KnowledgeIndex>, KnowledgeError> {
        let Some(dir) = area.subdir(SubDir::Knowledge, false)? else {
            return Ok(None);
        };
        let name = index_file_name(template);
        match rustix::fs::statat(&dir, name.as_str(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(io::Error::from(e).into()),
            Ok(_) => {}
        }
        KnowledgeIndex::open(area, template).map(Some)
    }

    /// Removes `template`'s index (and its SQLite companions) from `area`, if present.
    pub fn remove(area: &AppArea, template: &str) -> io::Result<()> {
        let Some(dir) = area.subdir(SubDir::Knowledge, false)? else {
            return Ok(());
        };
        let name = index_file_name(template);
        for suffix in crate::app_area::DB_SUFFIXES {
            match rustix::fs::unlinkat(
                &dir,
                format!("{name}{suffix}").as_str(),
                rustix::fs::AtFlags::empty(),
            ) {
                Ok(()) | Err(rustix::io::Errno::NOENT) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// The database file (for messages and the bench's raw queries).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Brings the index up to date with `root` (see the module doc); `indexed_at` is recorded
    /// as the run's time.
    pub fn reindex(
        &mut self,
        root: &Path,
        limits: &Limits,
        indexed_at: &str,
    ) -> Result<IndexReport, KnowledgeError> {
        let root_fd = walk::open_root(root)
            .map_err(|e| KnowledgeError::FolderInvalid(format!("{}: {e}", root.display())))?;
        let tx = self.conn.transaction()?;
        // A fresh (empty) index: no file to look up, compare or remove afterwards.
        let fresh: bool =
            tx.query_row("SELECT NOT EXISTS (SELECT 1 FROM docs)", [], |r| r.get(0))?;
        let mut outcome = walk::WalkOutcome::default();
        let mut report = IndexReport::default();
        let mut seen: HashSet<String> = HashSet::new();
        let mut total: u64 = 0;
        let mut failed: Option<KnowledgeError> = None;
        let mut total_reported = false;
        walk::walk(
            &root_fd,
            limits,
            &mut outcome,
            &mut |found, dir, name, outcome| {
                if failed.is_some() {
                    return;
                }
                let r = index_one(
                    &tx,
                    fresh,
                    found,
                    dir,
                    name,
                    limits,
                    &mut total,
                    &mut total_reported,
                    outcome,
                    &mut report,
                );
                match r {
                    Ok(true) if !fresh => {
                        seen.insert(found.path.clone());
                    }
                    Ok(_) => {}
                    Err(e) => failed = Some(e),
                }
            },
        )
        .map_err(|e| KnowledgeError::FolderInvalid(format!("{}: {e}", root.display())))?;
        if let Some(e) = failed {
            return Err(e);
        }
        for path in if fresh {
            Vec::new()
        } else {
            index::all_paths(&tx)?
        } {
            if !seen.contains(&path) {
                index::remove(&tx, &path)?;
                report.removed += 1;
            }
        }
        report.problems = outcome.problems;
        report.problems_dropped = outcome.problems_dropped;
        let (files, chunks) = counts(&tx)?;
        report.files = files;
        report.chunks = chunks;
        index::set_meta(&tx, "lastIndexed", indexed_at)?;
        index::set_meta(
            &tx,
            "problems",
            &serde_json::json!({"problems": report.problems, "dropped": report.problems_dropped})
                .to_string(),
        )?;
        tx.commit()?;
        Ok(report)
    }

    /// The `top_k` best chunks for `query` (terms only, see [`query`]); `top_k` is clamped to
    /// `1..=`[`MAX_TOP_K`].
    pub fn search(&self, query: &str, top_k: usize) -> Result<Vec<Hit>, KnowledgeError> {
        let expr = query::fts_expression(query).map_err(|e| KnowledgeError::QueryInvalid(e.0))?;
        self.search_expression(&expr, top_k)
    }

    /// Runs an already-built FTS5 expression (the bench's raw baseline uses [`SEARCH_SQL`]).
    fn search_expression(&self, expr: &str, top_k: usize) -> Result<Vec<Hit>, KnowledgeError> {
        let k = top_k.clamp(1, MAX_TOP_K) as i64;
        let mut stmt = self.conn.prepare_cached(SEARCH_SQL)?;
        let rows = stmt.query_map(rusqlite::params![expr, k], |r| {
            Ok(Hit {
                document: r.get(0)?,
                section: r.get(1)?,
                start: r.get::<_, i64>(2)? as u64,
                end: r.get::<_, i64>(3)? as u64,
                snippet: r.get(4)?,
                score: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Files, chunks, the last run's time and problems.
    pub fn status(&self) -> Result<Status, KnowledgeError> {
        let (files, chunks) = counts(&self.conn)?;
        let mut status = Status {
            files,
            chunks,
            last_indexed: index::meta(&self.conn, "lastIndexed")?,
            ..Status::default()
        };
        if let Some(p) = index::meta(&self.conn, "problems")? {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&p) {
                status.problems = serde_json::from_value(v["problems"].clone()).unwrap_or_default();
                status.problems_dropped = v["dropped"].as_u64().unwrap_or(0) as usize;
            }
        }
        Ok(status)
    }
}

fn counts(conn: &Connection) -> Result<(usize, usize), KnowledgeError> {
    let files: i64 = conn.query_row("SELECT count(*) FROM docs", [], |r| r.get(0))?;
    let chunks: i64 = conn.query_row("SELECT coalesce(sum(chunks), 0) FROM docs", [], |r| {
        r.get(0)
    })?;
    Ok((files as usize, chunks as usize))
}

/// Indexes one file found by the walk; `Ok(true)` when it is (still) in the index.
#[allow(clippy::too_many_arguments)]
fn index_one(
    conn: &Connection,
    fresh: bool,
    found: &walk::Found,
    dir: &std::os::fd::OwnedFd,
    name: &std::ffi::CString,
    limits: &Limits,
    total: &mut u64,
    total_reported: &mut bool,
    out: &mut walk::WalkOutcome,
    report: &mut IndexReport,
) -> Result<bool, KnowledgeError> {
    let format = walk::format_of(&found.path).unwrap_or(Format::Text);
    if format == Format::Pdf {
        out.report(
            limits,
            "knowledge.unsupported_format",
            &found.path,
            "PDF is not indexed by this host (no PDF text extractor)".into(),
        );
        return Ok(false);
    }
    if found.size > limits.max_file_bytes {
        out.report(
            limits,
            "knowledge.too_large",
            &found.path,
            format!(
                "{} bytes (at most {}): never read",
                found.size, limits.max_file_bytes
            ),
        );
        return Ok(false);
    }
    if total.saturating_add(found.size) > limits.max_total_bytes {
        if !*total_reported {
            *total_reported = true;
            out.report(
                limits,
                "knowledge.limit_reached",
                &found.path,
                format!(
                    "the folder holds more than {} bytes of documents: the rest is not indexed",
                    limits.max_total_bytes
                ),
            );
        }
        return Ok(false);
    }
    *total += found.size;
    let existing = if fresh {
        None
    } else {
        index::doc(conn, &found.path)?
    };
    if let Some(d) = &existing {
        if d.size == found.size && d.mtime_ns == found.mtime_ns {
            report.unchanged += 1;
            return Ok(true);
        }
    }
    let bytes = match walk::read_file(dir, name, limits.max_file_bytes) {
        Ok(b) => b,
        Err(e) => {
            let (code, message) = match e {
                ReadError::TooLarge(n) => (
                    "knowledge.too_large",
                    format!("{n} bytes (at most {})", limits.max_file_bytes),
                ),
                ReadError::NotRegular => (
                    "knowledge.special_file_skipped",
                    "no longer a regular file".into(),
                ),
                ReadError::Io(e) => ("knowledge.read_failed", e.to_string()),
            };
            out.report(limits, code, &found.path, message);
            return Ok(false);
        }
    };
    let hash = hex_sha256(&bytes, 32);
    if existing.as_ref().is_some_and(|d| d.hash == hash) {
        index::touch(conn, &found.path, found.size, found.mtime_ns)?;
        report.unchanged += 1;
        return Ok(true);
    }
    let body = bytes
        .strip_prefix(b"\xEF\xBB\xBF".as_slice())
        .unwrap_or(&bytes);
    let bom = bytes.len() - body.len();
    let Ok(text) = std::str::from_utf8(body) else {
        out.report(
            limits,
            "knowledge.unsupported_format",
            &found.path,
            "not UTF-8 text".into(),
        );
        return Ok(false);
    };
    let blocks = match format {
        Format::Markdown => chunk::markdown_blocks(text),
        Format::Html => chunk::html_blocks(text),
        Format::Text | Format::Pdf => chunk::text_blocks(text),
    };
    let mut chunks = chunk::chunks(&blocks);
    for c in &mut chunks {
        c.start += bom;
        c.end += bom;
    }
    index::insert(
        conn,
        &found.path,
        found.size,
        found.mtime_ns,
        &hash,
        &chunks,
        existing.is_some(),
    )?;
    report.indexed += 1;
    Ok(true)
}
