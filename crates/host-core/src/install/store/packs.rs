//! Content-addressed pack files: every installed file is a blob, identified by its SHA-256 and
//! stored at an offset inside an immutable pack file `packs/<id>.pack`. `host.db` indexes them
//! (`blobs(sha256 → pack, offset, size)`, `packs(id, size)`).
//!
//! Why packs rather than one file per blob: an install of a few thousand files then creates one
//! file, written sequentially, instead of thousands of inodes (which dominated install time on
//! ext4, see `docs/benchmarks.md`); uninstall deletes a handful of files. Blobs are
//! deduplicated across packs: a file the store already holds is not written again.
//!
//! Writing: [`PackSink`] appends staged files to `staging/<op>/pack`, dropping duplicates, and
//! starts write-back in the background so the final flush is short. Installing renames the pack
//! into `packs/` and records it in the same transaction as the app. Garbage collection deletes
//! unreferenced rows, then pack files without rows; packs that are mostly garbage are compacted.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use rusqlite::{params, Connection};

use super::{failpoint, io};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::hashing::{FileHasher, Sha256Bytes};
use crate::install::package::pipeline::{BatchFile, BlobSink};

/// Start background write-back after this many new bytes.
const FLUSH_EVERY: u64 = 8 * 1024 * 1024;

pub fn pack_path(packs_dir: &Path, id: &str) -> PathBuf {
    packs_dir.join(format!("{id}.pack"))
}

/// One blob written into a pack.
#[derive(Debug, Clone)]
pub struct PackEntry {
    pub sha256: String,
    pub offset: u64,
    pub size: u64,
}

/// A [`BlobSink`] appending new content to one pack file.
pub struct PackSink {
    path: PathBuf,
    file: File,
    len: u64,
    start: u64,
    since_flush: u64,
    known: HashSet<Sha256Bytes>,
    entries: Vec<PackEntry>,
    flusher: Option<(mpsc::SyncSender<()>, std::thread::JoinHandle<()>)>,
}

impl PackSink {
    /// `known`: blobs the store already has (they are not written again).
    pub fn new(path: PathBuf, known: HashSet<Sha256Bytes>) -> HostResult<Self> {
        let file = runtime_core::private_fs::create_private_file(&path)
            .map_err(|e| io("cannot create", &path, e))?;
        // Write-back in the background: `sync_data` on a duplicate descriptor, at most one
        // request pending (requests coalesce while a flush runs).
        let dup = file
            .try_clone()
            .map_err(|e| io("cannot duplicate", &path, e))?;
        let (tx, rx) = mpsc::sync_channel::<()>(1);
        let handle = std::thread::spawn(move || {
            while rx.recv().is_ok() {
                let _ = dup.sync_data();
            }
        });
        Ok(PackSink {
            path,
            file,
            len: 0,
            start: 0,
            since_flush: 0,
            known,
            entries: Vec::new(),
            flusher: Some((tx, handle)),
        })
    }

    /// New blobs written so far.
    pub fn entries(&self) -> &[PackEntry] {
        &self.entries
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes the pack durable and returns its size (0 when it holds nothing new).
    pub fn finish(&mut self) -> HostResult<u64> {
        if let Some((tx, handle)) = self.flusher.take() {
            drop(tx);
            let _ = handle.join();
        }
        if self.len > 0 {
            self.file
                .sync_data()
                .map_err(|e| io("cannot sync", &self.path, e))?;
        }
        Ok(self.len)
    }
}

impl Drop for PackSink {
    fn drop(&mut self) {
        if let Some((tx, handle)) = self.flusher.take() {
            drop(tx);
            let _ = handle.join();
        }
    }
}

impl BlobSink for PackSink {
    fn begin(&mut self, _path: &str, _size: u64) -> HostResult<()> {
        self.start = self.len;
        Ok(())
    }

    fn write(&mut self, data: &[u8]) -> HostResult<()> {
        self.file
            .write_all(data)
            .map_err(|e| io("cannot write", &self.path, e))?;
        self.len += data.len() as u64;
        self.since_flush += data.len() as u64;
        if self.since_flush >= FLUSH_EVERY {
            self.since_flush = 0;
            if let Some((tx, _)) = &self.flusher {
                let _ = tx.try_send(());
            }
        }
        Ok(())
    }

    fn batch(&mut self, data: &[u8], files: &[BatchFile]) -> HostResult<()> {
        // Hashes are known before writing: content the store (or this pack) already has is not
        // written at all, and a run of new files goes out in one write.
        let mut run: Option<(usize, usize)> = None; // byte range of `data` not yet written
        for f in files {
            if !self.known.insert(f.sha256) {
                if let Some((a, b)) = run.take() {
                    self.write(&data[a..b])?;
                }
                failpoint::hit("stage.file");
                continue;
            }
            self.entries.push(PackEntry {
                sha256: hex::encode(f.sha256),
                offset: self.len + run.map_or(0, |(a, b)| (b - a) as u64),
                size: f.len as u64,
            });
            run = Some(match run {
                Some((a, b)) if b == f.start => (a, f.start + f.len),
                Some((a, b)) => {
                    self.write(&data[a..b])?;
                    let offset = self.len;
                    if let Some(e) = self.entries.last_mut() {
                        e.offset = offset;
                    }
                    (f.start, f.start + f.len)
                }
                None => (f.start, f.start + f.len),
            });
            failpoint::hit("stage.file");
        }
        if let Some((a, b)) = run {
            self.write(&data[a..b])?;
        }
        Ok(())
    }

    fn end(&mut self, sha256: &Sha256Bytes) -> HostResult<()> {
        if !self.known.insert(*sha256) {
            // Already in the store, or earlier in this pack: take the bytes back.
            self.file
                .set_len(self.start)
                .map_err(|e| io("cannot truncate", &self.path, e))?;
            self.file
                .seek(SeekFrom::Start(self.start))
                .map_err(|e| io("cannot seek", &self.path, e))?;
            self.len = self.start;
        } else {
            self.entries.push(PackEntry {
                sha256: hex::encode(sha256),
                offset: self.start,
                size: self.len - self.start,
            });
        }
        failpoint::hit("stage.file");
        Ok(())
    }
}

/// A fresh pack id (random 128-bit): a new pack never has the name of another.
pub fn new_id() -> HostResult<String> {
    crate::foundation::random::random_id()
}

/// Seals the finished pack at `src` and moves it into `packs/` as `<id>.pack`, never replacing
/// an existing file (`renameat2(RENAME_NOREPLACE)`, or link then unlink), then makes the new
/// entry durable. Returns its path.
pub fn place(src: &Path, packs_dir: &Path, id: &str) -> HostResult<PathBuf> {
    if !packs_dir.is_dir() {
        runtime_core::private_fs::create_private_dir(packs_dir)
            .map_err(|e| io("cannot create", packs_dir, e))?;
        super::staging_fs::sync_parent(packs_dir)?;
    }
    let dest = pack_path(packs_dir, id);
    seal(src)?;
    runtime_core::durable::rename_noreplace(src, &dest).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            HostError::new(
                ErrorCode::StoreCorrupt,
                format!("pack {} already exists; not replacing it", dest.display()),
            )
            .with("path", dest.display().to_string())
        } else {
            io("cannot place pack", src, e)
        }
    })?;
    super::staging_fs::sync_dir(packs_dir)?;
    Ok(dest)
}

/// Makes a finished pack read-only before it enters the store.
pub fn seal(path: &Path) -> HostResult<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = fs::metadata(path)
        .map_err(|e| io("cannot stat", path, e))?
        .permissions();
    perms.set_mode(0o444);
    fs::set_permissions(path, perms).map_err(|e| io("cannot chmod", path, e))
}

/// Every blob the store holds, as raw digests (for deduplication while staging).
pub fn known_blobs(conn: &Connection) -> HostResult<HashSet<Sha256Bytes>> {
    let mut stmt = conn.prepare("SELECT sha256 FROM blobs")?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    let mut out = HashSet::new();
    for hex_id in rows {
        let mut d = [0u8; 32];
        if hex::decode_to_slice(hex_id?, &mut d).is_ok() {
            out.insert(d);
        }
    }
    Ok(out)
}

/// Records a pack and its blobs (inside the caller's transaction).
pub fn record_pack(
    tx: &Connection,
    id: &str,
    size: u64,
    entries: &[PackEntry],
    now: &str,
) -> HostResult<()> {
    tx.execute(
        "INSERT INTO packs (id, size, created_at) VALUES (?1, ?2, ?3)",
        params![id, size as i64, now],
    )?;
    let mut stmt =
        tx.prepare("INSERT INTO blobs (sha256, pack, offset, size) VALUES (?1, ?2, ?3, ?4)")?;
    for e in entries {
        stmt.execute(params![e.sha256, id, e.offset as i64, e.size as i64])?;
    }
    Ok(())
}

/// Deletes blob rows no installed file references and pack rows left without blobs (inside the
/// caller's transaction). The pack files themselves go in [`sweep`], after the commit.
pub fn collect_rows(tx: &Connection) -> HostResult<()> {
    tx.execute("DELETE FROM blobs WHERE NOT EXISTS (SELECT 1 FROM version_files v WHERE v.blob = blobs.sha256)", [])?;
    tx.execute(
        "DELETE FROM packs WHERE NOT EXISTS (SELECT 1 FROM blobs b WHERE b.pack = packs.id)",
        [],
    )?;
    Ok(())
}

/// Pack ids recorded in `host.db`.
pub fn recorded_packs(conn: &Connection) -> HostResult<HashSet<String>> {
    let mut stmt = conn.prepare("SELECT id FROM packs")?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Files in `packs/`: (pack ids with a `.pack` file, anything else).
pub fn scan(packs_dir: &Path) -> HostResult<(Vec<String>, Vec<PathBuf>)> {
    let mut packs = Vec::new();
    let mut strays = Vec::new();
    let Ok(rd) = fs::read_dir(packs_dir) else {
        return Ok((packs, strays));
    };
    for e in rd {
        let e = e.map_err(|e| io("cannot read", packs_dir, e))?;
        let name = e.file_name().to_string_lossy().into_owned();
        match name.strip_suffix(".pack") {
            Some(id) if e.path().is_file() => packs.push(id.to_owned()),
            _ => strays.push(e.path()),
        }
    }
    packs.sort();
    Ok((packs, strays))
}

/// Deletes pack files (and stray files) that `host.db` does not record. Returns what it removed.
pub fn sweep(conn: &Connection, packs_dir: &Path) -> HostResult<Vec<String>> {
    let recorded = recorded_packs(conn)?;
    let (files, strays) = scan(packs_dir)?;
    let mut removed = Vec::new();
    for id in files.into_iter().filter(|id| !recorded.contains(id)) {
        let p = pack_path(packs_dir, &id);
        fs::remove_file(&p).map_err(|e| io("cannot remove", &p, e))?;
        failpoint::hit("gc.pack");
        removed.push(id);
    }
    for s in strays {
        let result = if s.is_dir() {
            fs::remove_dir_all(&s)
        } else {
            fs::remove_file(&s)
        };
        match result {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(io("cannot remove", &s, e))
            }
            _ => removed.push(s.display().to_string()),
        }
    }
    Ok(removed)
}

/// Packs whose live blobs fill less than half of them: (id, pack size, live bytes).
pub fn sparse_packs(conn: &Connection) -> HostResult<Vec<(String, u64, u64)>> {
    let mut stmt = conn.prepare(
        "SELECT p.id, p.size, COALESCE(SUM(b.size), 0) AS live FROM packs p LEFT JOIN blobs b ON b.pack = p.id
         GROUP BY p.id HAVING live * 2 < p.size ORDER BY p.id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)? as u64,
            r.get::<_, i64>(2)? as u64,
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Copies the live blobs of `old` into `dest`, checking every blob's hash on the way.
/// Returns the new (sha256, offset, size) rows and the new pack size.
pub fn copy_live(
    conn: &Connection,
    packs_dir: &Path,
    old: &str,
    dest: &Path,
) -> HostResult<(Vec<PackEntry>, u64)> {
    let mut stmt =
        conn.prepare("SELECT sha256, offset, size FROM blobs WHERE pack = ?1 ORDER BY offset")?;
    let live: Vec<(String, i64, i64)> = stmt
        .query_map([old], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    let src_path = pack_path(packs_dir, old);
    let mut src = File::open(&src_path).map_err(|e| io("cannot open", &src_path, e))?;
    let mut out = runtime_core::private_fs::create_private_file(dest)
        .map_err(|e| io("cannot create", dest, e))?;
    let mut entries = Vec::with_capacity(live.len());
    let mut at = 0u64;
    let mut buf = Vec::new();
    for (sha, offset, size) in live {
        buf.resize(size as usize, 0);
        src.seek(SeekFrom::Start(offset as u64))
            .map_err(|e| io("cannot seek", &src_path, e))?;
        src.read_exact(&mut buf)
            .map_err(|e| io("cannot read", &src_path, e))?;
        let mut h = FileHasher::default();
        h.update(&buf);
        if hex::encode(h.finish()) != sha {
            return Err(HostError::new(
                ErrorCode::StoreCorrupt,
                format!("blob {sha} in pack {old} does not match its hash"),
            )
            .with("blob", &sha));
        }
        out.write_all(&buf)
            .map_err(|e| io("cannot write", dest, e))?;
        entries.push(PackEntry {
            sha256: sha,
            offset: at,
            size: size as u64,
        });
        at += size as u64;
    }
    out.sync_data().map_err(|e| io("cannot sync", dest, e))?;
    Ok((entries, at))
}

/// Reads one blob and checks it against its hash.
pub fn read_verified(
    packs_dir: &Path,
    pack: &str,
    offset: u64,
    size: u64,
    sha256: &str,
) -> HostResult<Vec<u8>> {
    let p = pack_path(packs_dir, pack);
    let mut f = File::open(&p).map_err(|e| io("cannot open", &p, e))?;
    f.seek(SeekFrom::Start(offset))
        .map_err(|e| io("cannot seek", &p, e))?;
    let mut buf = vec![0u8; size as usize];
    f.read_exact(&mut buf)
        .map_err(|e| io("cannot read", &p, e))?;
    let mut h = FileHasher::default();
    h.update(&buf);
    if hex::encode(h.finish()) != sha256 {
        return Err(HostError::new(
            ErrorCode::StoreCorrupt,
            format!("installed file content no longer matches its hash {sha256}"),
        )
        .with("blob", sha256));
    }
    Ok(buf)
}

/// Streams the range of one blob through `hasher` (for verify), returning the bytes read.
pub fn hash_range(
    file: &mut File,
    offset: u64,
    size: u64,
    buf: &mut [u8],
) -> std::io::Result<Sha256Bytes> {
    file.seek(SeekFrom::Start(offset))?;
    let mut h = FileHasher::default();
    let mut left = size;
    while left > 0 {
        let n = (left as usize).min(buf.len());
        file.read_exact(&mut buf[..n])?;
        h.update(&buf[..n]);
        left -= n as u64;
    }
    Ok(h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placing_a_pack_never_replaces_one_and_ids_differ() {
        let tmp = tempfile::tempdir().unwrap();
        let packs_dir = tmp.path().join("packs");
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        fs::write(&a, b"first").unwrap();
        fs::write(&b, b"second").unwrap();
        let id = new_id().unwrap();
        assert_ne!(id, new_id().unwrap());
        let placed = place(&a, &packs_dir, &id).unwrap();
        assert_eq!(placed, pack_path(&packs_dir, &id));
        let e = place(&b, &packs_dir, &id).unwrap_err();
        assert_eq!(e.code, ErrorCode::StoreCorrupt, "{e}");
        assert_eq!(fs::read(&placed).unwrap(), b"first");
        assert!(
            b.exists(),
            "the pack that was not placed is left where it was"
        );
    }
}
