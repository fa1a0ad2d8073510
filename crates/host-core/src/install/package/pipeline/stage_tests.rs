//! The staged pipeline against a sequential definition, and its failure paths.

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
