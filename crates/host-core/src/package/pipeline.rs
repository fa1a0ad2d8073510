//! Reading a listed package exactly once.
//!
//! Two threads share the work (the work is hash-bound and the machine has SHA-NI and at least
//! two cores): the calling thread reads each file straight into a pooled buffer and computes its
//! SHA-256 (the content address); a worker computes the reference packageHash over the same
//! bytes; when installing, a third thread appends them to the staging pack through a
//! [`BlobSink`] (writing is mostly a kernel copy, so the two hash streams keep a core each). Small
//! files travel back to back in one buffer, so a batch of them costs one message and one write.
//! Buffers are recycled, so memory stays bounded by the channel depth whatever the package size.

use std::collections::BTreeMap;
use std::sync::mpsc;

use super::PackageReader;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::hashing::{FileHasher, FileRecord, PackageHasher, Sha256Bytes};

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
    /// Small metadata files kept in memory for the manifest loader (see [`is_captured`]).
    pub captured: BTreeMap<String, Vec<u8>>,
    pub skipped: Vec<String>,
    pub total_bytes: u64,
}

impl ReadPackage {
    pub fn file(&self, path: &str) -> Option<&FileRecord> {
        self.files.iter().find(|f| f.path == path)
    }
}

/// Files the manifest loader needs: `APP.md`, the layered `app.*.yaml` files, the lock and
/// signature files, the machine manifest, and `evals/*.yaml`.
pub fn is_captured(path: &str) -> bool {
    if path == "APP.md" || path == "app.lock.json" || path == "app.manifest.json" {
        return true;
    }
    if !path.contains('/') && path.starts_with("app.") {
        return path.ends_with(".yaml") || path.ends_with(".yml");
    }
    matches!(
        path,
        "evals/readiness.yaml" | "evals/health.yaml" | "storage/schema.json"
    )
}

/// A pooled buffer (always `CHUNK` long) and how much of it is filled.
struct Chunk {
    buf: Vec<u8>,
    len: usize,
}

enum Msg {
    /// Small files, whole and hashed, back to back in one chunk.
    Batch(Chunk, Vec<BatchFile>),
    Begin(String, u64),
    Data(Chunk),
    End(Sha256Bytes),
}

/// What the reading thread produces: the file records and the captured metadata files.
type ReadSide = (Vec<FileRecord>, BTreeMap<String, Vec<u8>>);

/// Reads every listed file once. `progress` gets the running byte count.
pub fn read_package(
    reader: &mut PackageReader,
    sink: Option<&mut dyn BlobSink>,
    max_captured_bytes: u64,
    progress: &mut dyn FnMut(u64),
) -> HostResult<ReadPackage> {
    let entries: Vec<(String, u64)> = reader
        .listing()
        .entries
        .iter()
        .map(|e| (e.path.clone(), e.size))
        .collect();
    for (path, size) in &entries {
        if is_captured(path) && *size > max_captured_bytes {
            return Err(HostError::new(
                ErrorCode::ManifestTooLarge,
                format!("{path} is {size} bytes; the limit is {max_captured_bytes} bytes"),
            )
            .with("path", path)
            .with("limit", max_captured_bytes));
        }
    }
    let skipped = reader.listing().skipped.clone();
    let total_bytes = reader.listing().total_bytes;

    let (tx, rx) = mpsc::sync_channel::<Msg>(IN_FLIGHT);
    let (pool_tx, pool_rx) = mpsc::channel::<Vec<u8>>();
    for _ in 0..IN_FLIGHT + 2 {
        pool_tx
            .send(vec![0u8; CHUNK])
            .expect("pool receiver is alive");
    }

    std::thread::scope(|scope| {
        // With a sink, a third thread writes, so the two hash streams keep a core each.
        let (sink_tx, sink_rx) = mpsc::sync_channel::<Msg>(IN_FLIGHT);
        let sink_pool = pool_tx.clone();
        let writer = sink.map(|sink| {
            scope.spawn(move || -> HostResult<()> {
                for msg in sink_rx {
                    match msg {
                        Msg::Batch(chunk, files) => {
                            sink.batch(&chunk.buf[..chunk.len], &files)?;
                            let _ = sink_pool.send(chunk.buf);
                        }
                        Msg::Begin(path, size) => sink.begin(&path, size)?,
                        Msg::Data(chunk) => {
                            sink.write(&chunk.buf[..chunk.len])?;
                            let _ = sink_pool.send(chunk.buf);
                        }
                        Msg::End(sha) => sink.end(&sha)?,
                    }
                }
                Ok(())
            })
        });
        let forward = writer.is_some();
        let hasher = scope.spawn(move || -> HostResult<String> {
            let mut pkg = PackageHasher::default();
            let stopped =
                || HostError::new(ErrorCode::Internal, "the writing thread stopped early");
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
                if forward {
                    sink_tx.send(msg).map_err(|_| stopped())?;
                } else if let Msg::Batch(chunk, _) | Msg::Data(chunk) = msg {
                    let _ = pool_tx.send(chunk.buf);
                }
            }
            Ok(pkg.finish())
        });

        let read_result = (|| -> HostResult<ReadSide> {
            let mut files = Vec::with_capacity(entries.len());
            let mut captured = BTreeMap::new();
            let mut done: u64 = 0;
            let worker_gone =
                || HostError::new(ErrorCode::Internal, "the hashing worker stopped early");
            // A fresh buffer if the worker has stopped returning them (it failed).
            let take = || pool_rx.recv().unwrap_or_else(|_| vec![0u8; CHUNK]);
            // The batch being filled: a pooled buffer and the files in it.
            let mut batch: Option<(Vec<u8>, usize, Vec<BatchFile>)> = None;
            let flush_batch =
                |batch: &mut Option<(Vec<u8>, usize, Vec<BatchFile>)>| -> HostResult<()> {
                    if let Some((buf, len, files)) = batch.take() {
                        tx.send(Msg::Batch(Chunk { buf, len }, files))
                            .map_err(|_| worker_gone())?;
                    }
                    Ok(())
                };
            for (i, (path, size)) in entries.iter().enumerate() {
                let mut entry = reader.entry(i)?;
                let capture = is_captured(path);
                let size_usize = *size as usize;
                let sha = if size_usize <= CHUNK {
                    if batch
                        .as_ref()
                        .is_some_and(|(_, used, _)| used + size_usize > CHUNK)
                    {
                        flush_batch(&mut batch)?;
                    }
                    let (buf, used, files) = batch.get_or_insert_with(|| (take(), 0, Vec::new()));
                    let start = *used;
                    let len = entry.fill(&mut buf[start..start + size_usize])?;
                    entry.finish()?;
                    let mut h = FileHasher::default();
                    h.update(&buf[start..start + len]);
                    let sha = h.finish();
                    if capture {
                        captured.insert(path.clone(), buf[start..start + len].to_vec());
                    }
                    *used += len;
                    files.push(BatchFile {
                        path: path.clone(),
                        start,
                        len,
                        sha256: sha,
                    });
                    done += len as u64;
                    sha
                } else {
                    flush_batch(&mut batch)?;
                    tx.send(Msg::Begin(path.clone(), *size))
                        .map_err(|_| worker_gone())?;
                    let mut h = FileHasher::default();
                    let mut kept = Vec::new();
                    let mut remaining = *size;
                    while remaining > 0 {
                        let mut buf = take();
                        let want = (remaining as usize).min(CHUNK);
                        let len = entry.fill(&mut buf[..want])?;
                        h.update(&buf[..len]);
                        if capture {
                            kept.extend_from_slice(&buf[..len]);
                        }
                        done += len as u64;
                        remaining -= len as u64;
                        tx.send(Msg::Data(Chunk { buf, len }))
                            .map_err(|_| worker_gone())?;
                        progress(done);
                        if len < want {
                            break; // shorter than listed: finish() reports it
                        }
                    }
                    entry.finish()?;
                    let sha = h.finish();
                    tx.send(Msg::End(sha)).map_err(|_| worker_gone())?;
                    if capture {
                        captured.insert(path.clone(), kept);
                    }
                    sha
                };
                progress(done);
                files.push(FileRecord {
                    path: path.clone(),
                    size: *size,
                    sha256: sha,
                });
            }
            flush_batch(&mut batch)?;
            Ok((files, captured))
        })();
        drop(tx);
        let hash_result = hasher.join().unwrap_or_else(|_| {
            Err(HostError::new(
                ErrorCode::Internal,
                "the hashing worker panicked",
            ))
        });
        let write_result = writer.map_or(Ok(()), |w| {
            w.join().unwrap_or_else(|_| {
                Err(HostError::new(
                    ErrorCode::Internal,
                    "the writing thread panicked",
                ))
            })
        });
        // A sink error explains the others' "stopped early" errors, so report it first.
        write_result?;
        let package_hash = hash_result?;
        let (files, captured) = read_result?;
        Ok(ReadPackage {
            files,
            package_hash,
            captured,
            skipped,
            total_bytes,
        })
    })
}
