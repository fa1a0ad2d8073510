//! Reading a listed package exactly once.
//!
//! Two threads share the work (the machine has SHA-NI and at least two cores, and the work is
//! hash-bound): the calling thread reads each file and computes its own SHA-256 (the content
//! address); a worker computes the reference packageHash over the same bytes and, when
//! installing, writes them into staging through a [`BlobSink`]. Buffers are recycled, so memory
//! stays bounded by the channel depth whatever the package size.

use std::collections::BTreeMap;
use std::sync::mpsc;

use super::PackageReader;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::hashing::{FileHasher, FileRecord, PackageHasher, Sha256Bytes};

const CHUNK: usize = 256 * 1024;
const IN_FLIGHT: usize = 16;

/// Where file bytes go while they are read (the install staging area), one file at a time.
pub trait BlobSink: Send {
    fn begin(&mut self, path: &str, size: u64) -> HostResult<()>;
    fn write(&mut self, data: &[u8]) -> HostResult<()>;
    /// The file is complete and its SHA-256 is known.
    fn end(&mut self, sha256: &Sha256Bytes) -> HostResult<()>;
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

/// What the reading thread produces: the file records and the captured metadata files.
type ReadSide = (Vec<FileRecord>, BTreeMap<String, Vec<u8>>);

enum Msg {
    Begin(String, u64),
    Data(Vec<u8>),
    End(Sha256Bytes),
}

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
            .send(Vec::with_capacity(CHUNK))
            .expect("pool receiver is alive");
    }

    std::thread::scope(|scope| {
        let worker = scope.spawn(move || -> HostResult<String> {
            let mut pkg = PackageHasher::default();
            let mut sink = sink;
            for msg in rx {
                match msg {
                    Msg::Begin(path, size) => {
                        pkg.begin_file(&path);
                        if let Some(s) = sink.as_deref_mut() {
                            s.begin(&path, size)?;
                        }
                    }
                    Msg::Data(buf) => {
                        pkg.update(&buf);
                        if let Some(s) = sink.as_deref_mut() {
                            s.write(&buf)?;
                        }
                        let _ = pool_tx.send(buf);
                    }
                    Msg::End(sha) => {
                        pkg.end_file();
                        if let Some(s) = sink.as_deref_mut() {
                            s.end(&sha)?;
                        }
                    }
                }
            }
            Ok(pkg.finish())
        });

        let read_result = (|| -> HostResult<ReadSide> {
            let mut files = Vec::with_capacity(entries.len());
            let mut captured = BTreeMap::new();
            let mut done: u64 = 0;
            let mut scratch = vec![0u8; CHUNK];
            let worker_gone =
                || HostError::new(ErrorCode::Internal, "the hashing worker stopped early");
            for (i, (path, size)) in entries.iter().enumerate() {
                tx.send(Msg::Begin(path.clone(), *size))
                    .map_err(|_| worker_gone())?;
                let mut hasher = FileHasher::default();
                let capture = is_captured(path);
                let mut kept = Vec::new();
                reader.read_entry(i, &mut scratch, |chunk| {
                    hasher.update(chunk);
                    if capture {
                        kept.extend_from_slice(chunk);
                    }
                    let mut buf = pool_rx.recv().unwrap_or_default();
                    buf.clear();
                    buf.extend_from_slice(chunk);
                    tx.send(Msg::Data(buf)).map_err(|_| worker_gone())?;
                    done += chunk.len() as u64;
                    progress(done);
                    Ok(())
                })?;
                let sha = hasher.finish();
                tx.send(Msg::End(sha)).map_err(|_| worker_gone())?;
                if capture {
                    captured.insert(path.clone(), kept);
                }
                files.push(FileRecord {
                    path: path.clone(),
                    size: *size,
                    sha256: sha,
                });
            }
            Ok((files, captured))
        })();
        drop(tx);
        let worker_result = worker.join().unwrap_or_else(|_| {
            Err(HostError::new(
                ErrorCode::Internal,
                "the hashing worker panicked",
            ))
        });
        // A sink error explains a read-side "worker stopped" error, so report it first.
        let package_hash = worker_result?;
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
