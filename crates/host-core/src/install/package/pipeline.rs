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
mod stage_tests {
    use std::io::Write;
    use std::path::Path;

    use super::*;
    use crate::foundation::hashing::sha256;
    use crate::foundation::limits::Limits;
    use crate::install::package::catalog::CatalogSelect;
    use crate::install::package::source::resolve;

    /// Deterministic bytes: random-looking (`text == false`) or compressible words.
    fn content(seed: u64, len: usize, text: bool) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if text {
                out.extend_from_slice([&b"let "[..], b"x = ", b"1;\n", b"fn "][(x % 4) as usize]);
            } else {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        out.truncate(len);
        out
    }

    /// A package whose sizes exercise every path: empty, tiny, batches that overflow, exactly
    /// one chunk, one byte more, several chunks, captured files small and large.
    fn sample_files() -> Vec<(String, Vec<u8>)> {
        let mut files = vec![
            ("APP.md".to_owned(), b"---\nname: x\n---\n".to_vec()),
            ("app.fr.yaml".to_owned(), content(1, 300, true)),
            (
                "evals/readiness.yaml".to_owned(),
                content(2, CHUNK + 7, true),
            ),
            ("empty".to_owned(), Vec::new()),
            ("exact".to_owned(), content(3, CHUNK, false)),
            ("plus-one".to_owned(), content(4, CHUNK + 1, false)),
            ("big.bin".to_owned(), content(5, 3 * CHUNK + 5, false)),
        ];
        for i in 0..60 {
            let len = (i * 7919) % 40_000;
            files.push((
                format!("small/f{i:02}"),
                content(100 + i as u64, len, i % 3 == 0),
            ));
        }
        files
    }

    fn write_folder(root: &Path, files: &[(String, Vec<u8>)]) {
        for (rel, data) in files {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, data).unwrap();
        }
    }

    fn write_zip(dest: &Path, files: &[(String, Vec<u8>)], method: zip::CompressionMethod) {
        let mut zip = zip::ZipWriter::new(std::fs::File::create(dest).unwrap());
        let opts = zip::write::SimpleFileOptions::default().compression_method(method);
        for (rel, data) in files {
            zip.start_file(rel.as_str(), opts).unwrap();
            zip.write_all(data).unwrap();
        }
        zip.finish().unwrap();
    }

    /// The one-thread definition: each file's SHA-256, and one SHA-256 over
    /// `path 0 content 0` for every file in listing order.
    fn sequential(files: &[(String, Vec<u8>)], order: &[String]) -> (Vec<FileRecord>, String) {
        let mut framed = Vec::new();
        let mut records = Vec::new();
        for path in order {
            let data = &files.iter().find(|(p, _)| p == path).unwrap().1;
            framed.extend_from_slice(path.as_bytes());
            framed.push(0);
            framed.extend_from_slice(data);
            framed.push(0);
            records.push(FileRecord {
                path: path.clone(),
                size: data.len() as u64,
                sha256: sha256(data),
            });
        }
        (
            records,
            crate::foundation::hashing::to_ref(&sha256(&framed)),
        )
    }

    /// Records every call, to check the sink sees each file whole, in order, with its hash.
    #[derive(Default)]
    struct Recorder {
        files: Vec<(String, Vec<u8>, Sha256Bytes)>,
        open: Option<(String, Vec<u8>)>,
    }

    impl BlobSink for Recorder {
        fn begin(&mut self, path: &str, _size: u64) -> HostResult<()> {
            assert!(self.open.is_none(), "begin inside a file");
            self.open = Some((path.to_owned(), Vec::new()));
            Ok(())
        }
        fn write(&mut self, data: &[u8]) -> HostResult<()> {
            self.open
                .as_mut()
                .expect("write outside a file")
                .1
                .extend_from_slice(data);
            Ok(())
        }
        fn end(&mut self, sha: &Sha256Bytes) -> HostResult<()> {
            let (path, data) = self.open.take().expect("end outside a file");
            self.files.push((path, data, *sha));
            Ok(())
        }
    }

    fn read(path: &Path, sink: Option<&mut dyn BlobSink>) -> HostResult<ReadPackage> {
        let limits = Limits::default();
        let source = resolve(path, &CatalogSelect::default())?;
        let mut reader = PackageReader::open(&source, &limits)?;
        let mut last = 0;
        let read = read_package(&mut reader, sink, &limits, &mut |done| {
            assert!(done >= last, "progress goes forward");
            last = done;
        })?;
        assert_eq!(last, read.total_bytes, "progress ends at the total");
        Ok(read)
    }

    #[test]
    fn the_pipeline_matches_the_sequential_definition_for_every_source() {
        let files = sample_files();
        let tmp = tempfile::tempdir().unwrap();
        let folder = tmp.path().join("pkg");
        write_folder(&folder, &files);
        let stored = tmp.path().join("stored.zip");
        write_zip(&stored, &files, zip::CompressionMethod::Stored);
        let deflated = tmp.path().join("deflated.zip");
        write_zip(&deflated, &files, zip::CompressionMethod::Deflated);

        let mut hashes = Vec::new();
        for src in [&folder, &stored, &deflated] {
            for with_sink in [false, true] {
                let mut rec = Recorder::default();
                let sink = with_sink.then_some(&mut rec as &mut dyn BlobSink);
                let got = read(src, sink).unwrap();
                let order: Vec<String> = got.files.iter().map(|f| f.path.clone()).collect();
                assert_eq!(order.len(), files.len());
                let (records, package_hash) = sequential(&files, &order);
                assert_eq!(got.files, records, "{}", src.display());
                assert_eq!(got.package_hash, package_hash, "{}", src.display());
                let mut want_captured: Vec<&str> = files
                    .iter()
                    .map(|(p, _)| p.as_str())
                    .filter(|p| is_captured(p))
                    .collect();
                want_captured.sort();
                assert_eq!(
                    got.captured.keys().map(String::as_str).collect::<Vec<_>>(),
                    want_captured
                );
                for (p, data) in &got.captured {
                    assert_eq!(data, &files.iter().find(|(q, _)| q == p).unwrap().1);
                }
                if with_sink {
                    assert!(rec.open.is_none());
                    let seen: Vec<(String, Vec<u8>, Sha256Bytes)> = records
                        .iter()
                        .map(|r| {
                            let data = files.iter().find(|(p, _)| *p == r.path).unwrap();
                            (r.path.clone(), data.1.clone(), r.sha256)
                        })
                        .collect();
                    assert_eq!(rec.files, seen, "the sink saw every file whole, in order");
                }
                hashes.push(got.package_hash);
            }
        }
        assert!(hashes.windows(2).all(|w| w[0] == w[1]));
    }

    /// Offset of the first entry's compressed data (its local header is at offset 0).
    fn first_data_offset(zip: &[u8]) -> usize {
        let le16 = |at: usize| u16::from_le_bytes([zip[at], zip[at + 1]]) as usize;
        30 + le16(26) + le16(28)
    }

    #[test]
    fn a_corrupt_deflate_stream_is_archive_invalid_and_the_sink_gets_no_whole_file_of_it() {
        let files = vec![
            ("aaa.js".to_owned(), content(9, 3 * CHUNK, true)),
            ("APP.md".to_owned(), b"---\nname: x\n---\n".to_vec()),
        ];
        let tmp = tempfile::tempdir().unwrap();
        let z = tmp.path().join("p.zip");
        write_zip(&z, &files, zip::CompressionMethod::Deflated);
        let mut bytes = std::fs::read(&z).unwrap();
        // Final block of the reserved type 3: an invalid deflate stream from its first byte.
        let at = first_data_offset(&bytes);
        bytes[at] = 0xff;
        std::fs::write(&z, &bytes).unwrap();

        for with_sink in [false, true] {
            let mut rec = Recorder::default();
            let sink = with_sink.then_some(&mut rec as &mut dyn BlobSink);
            let err = read(&z, sink).unwrap_err();
            assert_eq!(err.code, ErrorCode::ArchiveInvalid, "{err:?}");
            assert!(
                rec.files.iter().all(|(p, _, _)| p != "aaa.js"),
                "no whole file reached the sink"
            );
        }
    }

    #[test]
    fn a_crc_mismatch_deep_inside_a_large_entry_is_archive_invalid() {
        // Random bytes deflate to stored blocks: flipping one keeps the stream valid and the
        // length right, so only the CRC check at the end of the entry can catch it.
        let files = vec![
            ("aaa.bin".to_owned(), content(11, 4 * CHUNK, false)),
            ("APP.md".to_owned(), b"---\nname: x\n---\n".to_vec()),
        ];
        let tmp = tempfile::tempdir().unwrap();
        let z = tmp.path().join("p.zip");
        write_zip(&z, &files, zip::CompressionMethod::Deflated);
        let mut bytes = std::fs::read(&z).unwrap();
        let at = first_data_offset(&bytes) + 3 * CHUNK;
        bytes[at] ^= 0x55;
        std::fs::write(&z, &bytes).unwrap();
        let mut rec = Recorder::default();
        let err = read(&z, Some(&mut rec)).unwrap_err();
        assert_eq!(err.code, ErrorCode::ArchiveInvalid, "{err:?}");
        assert!(rec.files.iter().all(|(p, _, _)| p != "aaa.bin"));
    }

    /// A sink that fails on its second file, like a full disk.
    struct Failing(usize);

    impl BlobSink for Failing {
        fn begin(&mut self, _: &str, _: u64) -> HostResult<()> {
            Ok(())
        }
        fn write(&mut self, _: &[u8]) -> HostResult<()> {
            Ok(())
        }
        fn end(&mut self, _: &Sha256Bytes) -> HostResult<()> {
            self.0 += 1;
            if self.0 == 2 {
                return Err(HostError::new(ErrorCode::StoreIo, "disk full"));
            }
            Ok(())
        }
    }

    #[test]
    fn a_sink_failure_is_reported_as_itself_not_as_a_stopped_stage() {
        let tmp = tempfile::tempdir().unwrap();
        let folder = tmp.path().join("pkg");
        write_folder(&folder, &sample_files());
        let err = read(&folder, Some(&mut Failing(0))).unwrap_err();
        assert_eq!(err.code, ErrorCode::StoreIo, "{err:?}");
        assert_eq!(err.message, "disk full");
    }

    #[test]
    fn first_failure_prefers_a_real_error_over_a_stopped_stage() {
        let e = first_failure([
            None,
            Some(Stop::Stopped("file hash")),
            Some(Stop::Failed(HostError::new(
                ErrorCode::ArchiveInvalid,
                "bad",
            ))),
            Some(Stop::Stopped("writing")),
        ]);
        assert_eq!(e.code, ErrorCode::ArchiveInvalid);
        let e = first_failure([None, Some(Stop::Stopped("file hash")), None, None]);
        assert_eq!(e.code, ErrorCode::Internal);
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::install::package::catalog::CatalogSelect;
    use crate::install::package::source::resolve;

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
        let m = crate::install::manifest::load_with_files(
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
