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
use crate::hashing::{
    FileHasher, FileRecord, PackageHasher, Sha256Bytes, LOCK_FILE, SIGNATURE_FILE,
};
use crate::limits::Limits;
use crate::manifest;

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
/// the layered and `evals/*.yaml` files it reads ([`crate::manifest::reads_file`]). Other root
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
    /// Small files, whole and hashed, back to back in one chunk.
    Batch(Chunk, Vec<BatchFile>),
    Begin(String, u64),
    Data(Chunk),
    End(Sha256Bytes),
}

/// What the reading thread produces: the file records and the captured metadata files.
type ReadSide = (Vec<FileRecord>, BTreeMap<String, Vec<u8>>);

/// Reads every listed file once. `progress` gets the running byte count. The captured metadata
/// files are checked against `limits` (`max_manifest_bytes` each, [`Limits::metadata_budget`]
/// together) before anything is read.
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::package::catalog::CatalogSelect;
    use crate::package::source::resolve;

    const APP_MD: &str = "---\nname: demo\ndescription: A demo.\nversion: 1.0.0\nstatus: ready\nappType: agent-app\nmanifestVersion: \"0.10.0\"\n---\n# Demo\n";

    fn folder(files: &[(&str, Vec<u8>)]) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        for (rel, data) in files {
            let p = tmp.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, data).unwrap();
        }
        tmp
    }

    fn read(root: &Path, limits: &Limits) -> HostResult<ReadPackage> {
        let source = resolve(root, &CatalogSelect::default())?;
        let mut reader = PackageReader::open(&source, limits)?;
        read_package(&mut reader, None, limits, &mut |_| {})
    }

    #[test]
    fn only_the_files_the_manifest_loader_reads_are_kept_in_memory() {
        let yaml = |n: usize| format!("# {}\nx: 1\n", "p".repeat(n)).into_bytes();
        let pkg = folder(&[
            ("APP.md", APP_MD.into()),
            ("app.permissions.yaml", b"permissions: []\n".to_vec()),
            ("app.extra.yaml", yaml(900_000)),
            ("app.other.yml", yaml(900_000)),
            ("app.manifest.json", b"{}".to_vec()),
            ("storage/schema.json", b"{}".to_vec()),
            ("evals/readiness.yaml", b"readiness: {}\n".to_vec()),
            ("evals/other.yaml", yaml(10)),
        ]);
        let read = read(pkg.path(), &Limits::default()).unwrap();
        let kept: Vec<&str> = read.captured.keys().map(String::as_str).collect();
        assert_eq!(
            kept,
            ["APP.md", "app.permissions.yaml", "evals/readiness.yaml"]
        );
        // The files not kept are still reported, from their names.
        let m = crate::manifest::load_with_files(
            &read.captured,
            read.files.iter().map(|f| f.path.as_str()),
            &Limits::default(),
        )
        .unwrap();
        let warned: Vec<(&str, &str)> = m
            .findings
            .iter()
            .map(|f| (f.code, f.path.as_str()))
            .collect();
        assert_eq!(
            warned,
            [
                ("manifest.unknown_layered_file", "app.extra.yaml"),
                ("manifest.machine_manifest_ignored", "app.manifest.json"),
                ("manifest.unknown_layered_file", "app.other.yml"),
            ]
        );
    }

    #[test]
    fn the_kept_files_are_capped_in_total_before_anything_is_read() {
        let limits = Limits {
            max_manifest_bytes: 5_000,
            max_metadata_bytes: 10_000,
            ..Limits::default()
        };
        let big = |n: usize| format!("# {}\n", "p".repeat(n)).into_bytes();
        // Three layered files of ~4,000 bytes: each within its limit, 12,000+ together.
        let mut files = vec![
            ("APP.md", APP_MD.as_bytes().to_vec()),
            ("app.entries.yaml", big(4_000)),
            ("app.errors.yaml", big(4_000)),
        ];
        // Unread files do not count.
        files.push(("app.unread.yaml", big(4_000)));
        let pkg = folder(&files);
        assert!(read(pkg.path(), &limits).is_ok());
        files.push(("evals/health.yaml", big(4_000)));
        let pkg = folder(&files);
        let err = read(pkg.path(), &limits).unwrap_err();
        assert_eq!(err.code, ErrorCode::ManifestMetadataTooLarge, "{err:?}");
        assert_eq!(err.details["limit"], 10_000);
        // One file over its own limit keeps its own code.
        files.push(("app.i18n.yaml", big(6_000)));
        let pkg = folder(&files);
        assert_eq!(
            read(pkg.path(), &limits).unwrap_err().code,
            ErrorCode::ManifestTooLarge
        );
        // A raised per-file limit raises the total with it: one such file always fits.
        let raised = Limits {
            max_manifest_bytes: 20_000,
            max_metadata_bytes: 10_000,
            ..Limits::default()
        };
        let pkg = folder(&[("APP.md", APP_MD.into()), ("app.entries.yaml", big(15_000))]);
        assert!(read(pkg.path(), &raised).is_ok());
    }

    #[test]
    fn files_are_found_by_path_in_the_listing_order() {
        let names = [
            "APP.md",
            "a/b.txt",
            "a-b.txt",
            "a/b/c.txt",
            "Z.txt",
            "é.txt",
            "dist/x/y/z.js",
        ];
        let pkg = folder(
            &names
                .iter()
                .map(|n| {
                    let data = if *n == "APP.md" {
                        APP_MD.into()
                    } else {
                        n.as_bytes().to_vec()
                    };
                    (*n, data)
                })
                .collect::<Vec<_>>(),
        );
        let read = read(pkg.path(), &Limits::default()).unwrap();
        for n in names {
            assert_eq!(read.file(n).map(|f| f.path.as_str()), Some(n));
        }
        for missing in ["a", "a/b", "b.txt", "dist/x", "app.md"] {
            assert!(read.file(missing).is_none(), "{missing}");
        }
    }
}
