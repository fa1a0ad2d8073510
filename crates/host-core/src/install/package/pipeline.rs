//! Reading a listed package exactly once.
//!
//! A pipeline of threads shares the work (see [`read_package`]): one reads or inflates each file
//! straight into a pooled buffer, the calling thread computes each file's SHA-256 (the content
//! address), another the reference packageHash over the same bytes, and when installing a
//! fourth appends them to the staging pack through a [`BlobSink`]. Inflating a zip therefore
//! overlaps with both hashes. Small files travel back to back in one buffer, so a batch of them
//! costs one message and one write. Buffers are recycled, so memory stays bounded by the pool
//! whatever the package size.

use std::collections::BTreeMap;
use std::sync::mpsc;

use super::PackageReader;
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::hashing::{
    FileHasher, FileRecord, PackageHasher, Sha256Bytes, LOCK_FILE, SIGNATURE_FILE,
};
use crate::foundation::limits::Limits;
use crate::install::manifest;

const CHUNK: usize = 256 * 1024;
const IN_FLIGHT: usize = 16;

/// Where file bytes go while they are read (the install staging pack), one file at a time.
pub trait BlobSink: Send {
    fn begin(&mut self, path: &str, size: u64) -> HostResult<()>;
    fn write(&mut self, data: &[u8]) -> HostResult<()>;
    /// The file is complete and its SHA-256 is known.
    fn end(&mut self, sha256: &Sha256Bytes) -> HostResult<()>;
    /// Whole files whose SHA-256 are already known (small files arrive this way), laid out
    /// back to back in `data`.
    fn batch(&mut self, data: &[u8], files: &[BatchFile]) -> HostResult<()> {
        for f in files {
            self.begin(&f.path, f.len as u64)?;
            self.write(&data[f.start..f.start + f.len])?;
            self.end(&f.sha256)?;
        }
        Ok(())
    }
}

/// One whole file inside a batch buffer.
#[derive(Debug)]
pub struct BatchFile {
    pub path: String,
    pub start: usize,
    pub len: usize,
    pub sha256: Sha256Bytes,
}

/// What reading a package produced.
#[derive(Debug)]
pub struct ReadPackage {
    /// Every file in the reference CLI's order.
    pub files: Vec<FileRecord>,
    /// The reference CLI's packageHash over exactly these files.
    pub package_hash: String,
    /// Small metadata files kept in memory for the manifest loader (see [`is_captured`]),
    /// bounded by [`Limits::metadata_budget`] in total.
    pub captured: BTreeMap<String, Vec<u8>>,
    pub skipped: Vec<String>,
    pub total_bytes: u64,
}

impl ReadPackage {
    /// The record of one file. `files` is in the reference CLI's order, which compares paths
    /// component by component: a binary search, not a scan.
    pub fn file(&self, path: &str) -> Option<&FileRecord> {
        self.files
            .binary_search_by(|f| super::path::cli_order(&f.path, path))
            .ok()
            .map(|i| &self.files[i])
    }
}

/// Files kept in memory for the manifest loader: `APP.md`, the lock and signature files, and
/// the layered and `evals/*.yaml` files it reads ([`crate::install::manifest::reads_file`]). Other root
/// `app.*` files are reported by name only, so their bytes are never held.
pub fn is_captured(path: &str) -> bool {
    path == "APP.md" || path == LOCK_FILE || path == SIGNATURE_FILE || manifest::reads_file(path)
}

/// Checks, from the listed sizes and before anything is read, that each captured file is within
/// `max_manifest_bytes` and all of them together within [`Limits::metadata_budget`].
fn check_captured_sizes(entries: &[(String, u64)], limits: &Limits) -> HostResult<()> {
    let per_file = limits.max_manifest_bytes;
    let budget = limits.metadata_budget();
    let mut total: u64 = 0;
    for (path, size) in entries.iter().filter(|(p, _)| is_captured(p)) {
        if *size > per_file {
            return Err(HostError::new(
                ErrorCode::ManifestTooLarge,
                format!("{path} is {size} bytes; the limit is {per_file} bytes"),
            )
            .with("path", path)
            .with("limit", per_file));
        }
        total = total.saturating_add(*size);
        if total > budget {
            return Err(HostError::new(
                ErrorCode::ManifestMetadataTooLarge,
                format!(
                    "APP.md and the layered, evals, lock and signature files hold more than \
                     {budget} bytes together (reached at {path})"
                ),
            )
            .with("path", path)
            .with("limit", budget));
        }
    }
    Ok(())
}

/// A pooled buffer (always `CHUNK` long) and how much of it is filled.
struct Chunk {
    buf: Vec<u8>,
    len: usize,
}

enum Msg {
    /// Small files, whole, back to back in one chunk (their SHA-256s are filled in by the
    /// file-hash stage).
    Batch(Chunk, Vec<BatchFile>),
    Begin(String, u64),
    Data(Chunk),
    /// End of a large file; its SHA-256 is filled in by the file-hash stage.
    End(Sha256Bytes),
}

/// Why a pipeline stage ended early: its own failure, or a neighbour that went away (whose own
/// error explains it).
enum Stop {
    Failed(HostError),
    Stopped(&'static str),
}

impl From<HostError> for Stop {
    fn from(e: HostError) -> Self {
        Stop::Failed(e)
    }
}

type StageResult<T> = Result<T, Stop>;

/// What the file-hash stage produces: the file records and the captured metadata files.
type HashSide = (Vec<FileRecord>, BTreeMap<String, Vec<u8>>);

/// Reads every listed file once. `progress` gets the running byte count. The captured metadata
/// files are checked against `limits` (`max_manifest_bytes` each, [`Limits::metadata_budget`]
/// together) before anything is read.
///
/// Four stages, each on its own thread, joined by bounded channels (so memory stays bounded by
/// the pooled buffers, whatever the package size):
///
/// 1. **read**: reads (folder) or inflates (zip) each entry into pooled buffers, enforcing the
///    listed sizes; small files are packed back to back into one buffer;
/// 2. **file hash** (the calling thread, which also reports progress): each file's SHA-256 (its
///    content address) and the captured metadata files;
/// 3. **package hash**: the reference packageHash, one SHA-256 over every file's
///    `path 0 content 0` in the CLI's order, which is inherently sequential;
/// 4. **write** (only with a sink): appends to the staging pack.
///
/// The packageHash stream is the one part that cannot be split: it needs one core's SHA-256
/// time over every byte. Every other stage costs at most that, so one thread per stage is all
/// the parallelism that helps; on two cores the scheduler shares the stages between them.
pub fn read_package(
    reader: &mut PackageReader,
    sink: Option<&mut dyn BlobSink>,
    limits: &Limits,
    progress: &mut dyn FnMut(u64),
) -> HostResult<ReadPackage> {
    let entries: Vec<(String, u64)> = reader
        .listing()
        .entries
        .iter()
        .map(|e| (e.path.clone(), e.size))
        .collect();
    check_captured_sizes(&entries, limits)?;
    let skipped = reader.listing().skipped.clone();
    let total_bytes = reader.listing().total_bytes;

    let (read_tx, read_rx) = mpsc::sync_channel::<Msg>(IN_FLIGHT);
    let (hash_tx, hash_rx) = mpsc::sync_channel::<Msg>(IN_FLIGHT);
    let (pool_tx, pool_rx) = mpsc::channel::<Vec<u8>>();
    for _ in 0..IN_FLIGHT + 2 {
        pool_tx
            .send(vec![0u8; CHUNK])
            .expect("pool receiver is alive");
    }

    std::thread::scope(|scope| {
        let entries = &entries;
        let read = scope.spawn(move || read_stage(reader, entries, read_tx, pool_rx));
        let (sink_tx, sink_rx) = mpsc::sync_channel::<Msg>(IN_FLIGHT);
        let sink_pool = pool_tx.clone();
        let writer = sink.map(|sink| scope.spawn(move || write_stage(sink, sink_rx, sink_pool)));
        let forward = writer.is_some().then_some(sink_tx);
        let hasher = scope.spawn(move || package_hash_stage(hash_rx, forward, pool_tx));
        let hashed = file_hash_stage(entries, read_rx, hash_tx, progress);

        let panicked = |what: &'static str| {
            Stop::Failed(HostError::new(
                ErrorCode::Internal,
                format!("the {what} thread panicked"),
            ))
        };
        let read_result = read.join().unwrap_or_else(|_| Err(panicked("reading")));
        let hash_result = hasher
            .join()
            .unwrap_or_else(|_| Err(panicked("package hash")));
        let write_result = writer.map_or(Ok(()), |w| {
            w.join().unwrap_or_else(|_| Err(panicked("writing")))
        });
        match (write_result, read_result, hashed, hash_result) {
            (Ok(()), Ok(()), Ok((files, captured)), Ok(package_hash)) => Ok(ReadPackage {
                files,
                package_hash,
                captured,
                skipped,
                total_bytes,
            }),
            (w, r, h, p) => Err(first_failure([w.err(), r.err(), h.err(), p.err()])),
        }
    })
}

/// A stage's own failure explains its neighbours' "stopped early", so the first real failure
/// is reported, the sink's first (a full disk stops everything upstream of it).
fn first_failure(stops: [Option<Stop>; 4]) -> HostError {
    let mut stopped = None;
    for stop in stops.into_iter().flatten() {
        match stop {
            Stop::Failed(e) => return e,
            Stop::Stopped(what) => {
                stopped.get_or_insert(what);
            }
        }
    }
    HostError::new(
        ErrorCode::Internal,
        format!(
            "the {} stage stopped early",
            stopped.unwrap_or("package reading")
        ),
    )
}

/// Stage 1: reads (or inflates) every entry in order into pooled buffers.
fn read_stage(
    reader: &mut PackageReader,
    entries: &[(String, u64)],
    tx: mpsc::SyncSender<Msg>,
    pool: mpsc::Receiver<Vec<u8>>,
) -> StageResult<()> {
    let send = |msg: Msg| tx.send(msg).map_err(|_| Stop::Stopped("file hash"));
    // A fresh buffer if the later stages have stopped returning them (they failed).
    let take = || pool.recv().unwrap_or_else(|_| vec![0u8; CHUNK]);
    // The batch being filled: a pooled buffer, its used length and the files in it.
    let mut batch: Option<(Vec<u8>, usize, Vec<BatchFile>)> = None;
    for (i, (path, size)) in entries.iter().enumerate() {
        let mut entry = reader.entry(i)?;
        let size = *size as usize;
        if size <= CHUNK {
            if batch
                .as_ref()
                .is_some_and(|(_, used, _)| used + size > CHUNK)
            {
                let (buf, len, files) = batch.take().expect("checked above");
                send(Msg::Batch(Chunk { buf, len }, files))?;
            }
            let (buf, used, files) = batch.get_or_insert_with(|| (take(), 0, Vec::new()));
            let start = *used;
            let len = entry.fill(&mut buf[start..start + size])?;
            entry.finish()?;
            *used += len;
            files.push(BatchFile {
                path: path.clone(),
                start,
                len,
                sha256: [0; 32],
            });
        } else {
            if let Some((buf, len, files)) = batch.take() {
                send(Msg::Batch(Chunk { buf, len }, files))?;
            }
            send(Msg::Begin(path.clone(), size as u64))?;
            let mut remaining = size;
            while remaining > 0 {
                let mut buf = take();
                let want = remaining.min(CHUNK);
                let len = entry.fill(&mut buf[..want])?;
                remaining -= len;
                send(Msg::Data(Chunk { buf, len }))?;
                if len < want {
                    break; // shorter than listed: finish() reports it
                }
            }
            entry.finish()?;
            send(Msg::End([0; 32]))?;
        }
    }
    if let Some((buf, len, files)) = batch.take() {
        send(Msg::Batch(Chunk { buf, len }, files))?;
    }
    Ok(())
}

/// Stage 2 (the calling thread): each file's SHA-256, the captured files and progress.
fn file_hash_stage(
    entries: &[(String, u64)],
    rx: mpsc::Receiver<Msg>,
    tx: mpsc::SyncSender<Msg>,
    progress: &mut dyn FnMut(u64),
) -> StageResult<HashSide> {
    let mut files = Vec::with_capacity(entries.len());
    let mut captured = BTreeMap::new();
    let mut done: u64 = 0;
    // The large file being received: its path, listed size, hasher and captured bytes.
    let mut open: Option<(String, u64, FileHasher, Option<Vec<u8>>)> = None;
    for mut msg in rx {
        match &mut msg {
            Msg::Batch(chunk, batch) => {
                for f in batch.iter_mut() {
                    let bytes = &chunk.buf[f.start..f.start + f.len];
                    let mut h = FileHasher::default();
                    h.update(bytes);
                    f.sha256 = h.finish();
                    if is_captured(&f.path) {
                        captured.insert(f.path.clone(), bytes.to_vec());
                    }
                    files.push(FileRecord {
                        path: f.path.clone(),
                        size: f.len as u64,
                        sha256: f.sha256,
                    });
                    done += f.len as u64;
                }
                progress(done);
            }
            Msg::Begin(path, size) => {
                let kept = is_captured(path).then(Vec::new);
                open = Some((path.clone(), *size, FileHasher::default(), kept));
            }
            Msg::Data(chunk) => {
                let (_, _, h, kept) = open.as_mut().ok_or(Stop::Stopped("reading"))?;
                let bytes = &chunk.buf[..chunk.len];
                h.update(bytes);
                if let Some(k) = kept {
                    k.extend_from_slice(bytes);
                }
                done += chunk.len as u64;
                progress(done);
            }
            Msg::End(sha) => {
                let (path, size, h, kept) = open.take().ok_or(Stop::Stopped("reading"))?;
                *sha = h.finish();
                if let Some(k) = kept {
                    captured.insert(path.clone(), k);
                }
                files.push(FileRecord {
                    path,
                    size,
                    sha256: *sha,
                });
            }
        }
        tx.send(msg).map_err(|_| Stop::Stopped("package hash"))?;
    }
    // The reader ended early (its own error says why) unless every file arrived whole.
    if open.is_some() || files.len() != entries.len() {
        return Err(Stop::Stopped("reading"));
    }
    Ok((files, captured))
}

/// Stage 3: the reference packageHash over the ordered stream; passes buffers on to the
/// writer, or back to the pool.
fn package_hash_stage(
    rx: mpsc::Receiver<Msg>,
    forward: Option<mpsc::SyncSender<Msg>>,
    pool: mpsc::Sender<Vec<u8>>,
) -> StageResult<String> {
    let mut pkg = PackageHasher::default();
    for msg in rx {
        match &msg {
            Msg::Batch(chunk, files) => {
                for f in files {
                    pkg.begin_file(&f.path);
                    pkg.update(&chunk.buf[f.start..f.start + f.len]);
                    pkg.end_file();
                }
            }
            Msg::Begin(path, _) => pkg.begin_file(path),
            Msg::Data(chunk) => pkg.update(&chunk.buf[..chunk.len]),
            Msg::End(_) => pkg.end_file(),
        }
        match &forward {
            Some(tx) => tx.send(msg).map_err(|_| Stop::Stopped("writing"))?,
            None => {
                if let Msg::Batch(chunk, _) | Msg::Data(chunk) = msg {
                    let _ = pool.send(chunk.buf);
                }
            }
        }
    }
    Ok(pkg.finish())
}

/// Stage 4 (installing only): hands every file to the sink, then returns the buffers.
fn write_stage(
    sink: &mut dyn BlobSink,
    rx: mpsc::Receiver<Msg>,
    pool: mpsc::Sender<Vec<u8>>,
) -> StageResult<()> {
    for msg in rx {
        match msg {
            Msg::Batch(chunk, files) => {
                sink.batch(&chunk.buf[..chunk.len], &files)?;
                let _ = pool.send(chunk.buf);
            }
            Msg::Begin(path, size) => sink.begin(&path, size)?,
            Msg::Data(chunk) => {
                sink.write(&chunk.buf[..chunk.len])?;
                let _ = pool.send(chunk.buf);
            }
            Msg::End(sha) => sink.end(&sha)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod stage_tests;
#[cfg(test)]
mod tests;
