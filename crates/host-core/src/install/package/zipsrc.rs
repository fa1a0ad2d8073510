//! Zip sources: a `.zip` of a package folder, with the files at the root or under one
//! top-level folder. macOS `__MACOSX/` metadata is skipped.
//!
//! The central directory is first checked against the local headers (`zip_layout`: same names,
//! no overlapping entries). Then everything is decided from it before any data is inflated: names,
//! entry types (symlinks and special files are rejected), encryption, compression method,
//! declared sizes and compression ratios. While reading, the actual inflated size is bounded by
//! the declared size, so a zip that lies about sizes cannot expand past what was accepted.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use zip::result::ZipError;
use zip::{CompressionMethod, ZipArchive};

use super::{path, Budget, Entry, Listing, Loc};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::limits::Limits;

pub(super) struct ZipBackend {
    archive: ZipArchive<BufReader<File>>,
}

const S_IFMT: u32 = 0o170000;
const S_IFREG: u32 = 0o100000;
const S_IFDIR: u32 = 0o040000;
const S_IFLNK: u32 = 0o120000;

/// A zip crate error, classified by its type: I/O on the file is `source.io`, an encrypted
/// entry is `archive.encrypted`, an unsupported method `archive.unsupported_compression`,
/// anything else a malformed archive.
fn zip_error(path: &Path, e: ZipError) -> HostError {
    let (code, what) = match &e {
        ZipError::Io(_) => (ErrorCode::SourceIo, "cannot be read"),
        ZipError::UnsupportedArchive(m) if *m == ZipError::PASSWORD_REQUIRED => {
            (ErrorCode::ArchiveEncrypted, "is encrypted")
        }
        ZipError::InvalidPassword => (ErrorCode::ArchiveEncrypted, "is encrypted"),
        ZipError::CompressionMethodNotSupported(_) => (
            ErrorCode::ArchiveUnsupportedCompression,
            "uses an unsupported compression method",
        ),
        _ => (ErrorCode::ArchiveInvalid, "is not a readable zip archive"),
    };
    HostError::new(code, format!("{} {what}: {e}", path.display()))
        .with("path", path.display().to_string())
}

pub(super) fn open(zip_path: &Path, limits: &Limits) -> HostResult<(Listing, ZipBackend)> {
    let file = File::open(zip_path)
        .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot open", zip_path, e))?;
    let archive = ZipArchive::new(BufReader::new(file)).map_err(|e| zip_error(zip_path, e))?;
    if archive.has_duplicate_names() {
        return Err(HostError::new(
            ErrorCode::ArchiveDuplicateEntry,
            "the zip lists the same file name more than once",
        ));
    }
    // Each entry's local header names it as the central directory does, and no two entries
    // share bytes: the listing below is then the whole truth about the archive.
    super::zip_layout::check(zip_path, &archive)?;

    // First pass: raw names, to find the package root.
    let mut raw: Vec<(usize, String)> = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let entry = archive
            .by_index_data(i)
            .map_err(|e| zip_error(zip_path, e))?;
        let name = std::str::from_utf8(entry.name_raw())
            .map_err(|_| {
                HostError::new(
                    ErrorCode::ArchiveNonUtf8Name,
                    "a zip entry name is not valid UTF-8",
                )
                .with("name", String::from_utf8_lossy(entry.name_raw()))
            })?
            .to_owned();
        raw.push((i, name));
    }
    let prefix = find_root(&raw)?;

    let mut listing = Listing {
        entries: Vec::new(),
        skipped: Vec::new(),
        total_bytes: 0,
    };
    let mut budget = Budget::new(limits);
    for (i, name) in &raw {
        let is_dir_name = name.ends_with('/');
        let trimmed = name.trim_end_matches('/');
        // Validate every name first, skipped ones included: "../evil" must be a traversal
        // error even outside the root folder, and "__MACOSX/../x" is not metadata.
        path::validate(trimmed)?;
        if name.starts_with("__MACOSX/") {
            listing.skipped.push(name.clone());
            continue;
        }
        // The directory entry of the top-level folder itself (`zip -r` writes one).
        if is_dir_name && format!("{trimmed}/") == prefix {
            continue;
        }
        let Some(rel) = trimmed.strip_prefix(prefix.as_str()) else {
            return Err(HostError::new(
                ErrorCode::ArchiveNoRoot,
                format!("{name:?} is outside the package folder {prefix:?}"),
            )
            .with("path", name));
        };
        if rel.is_empty() {
            continue;
        }
        let entry = archive
            .by_index_data(*i)
            .map_err(|e| zip_error(zip_path, e))?;
        let kind = entry.unix_mode().map(|m| m & S_IFMT).filter(|&k| k != 0);
        match kind {
            Some(S_IFLNK) => {
                return Err(HostError::new(
                    ErrorCode::ArchiveSymlink,
                    format!("{rel:?} is a symbolic link; packages may not contain links"),
                )
                .with("path", rel))
            }
            Some(S_IFDIR) => continue,
            Some(S_IFREG) | None if is_dir_name || entry.is_dir() => continue,
            Some(S_IFREG) | None => {}
            Some(other) => {
                return Err(HostError::new(
                    ErrorCode::ArchiveSpecialFile,
                    format!("{rel:?} is not a regular file (mode {other:o})"),
                )
                .with("path", rel))
            }
        }
        if rel.split('/').any(path::is_excluded_dir_name) {
            listing.skipped.push(rel.to_owned());
            continue;
        }
        if entry.encrypted() {
            return Err(HostError::new(
                ErrorCode::ArchiveEncrypted,
                format!("{rel:?} is encrypted; AppHost does not install encrypted packages"),
            )
            .with("path", rel));
        }
        match entry.compression() {
            CompressionMethod::Stored | CompressionMethod::Deflated => {}
            other => {
                return Err(HostError::new(
                    ErrorCode::ArchiveUnsupportedCompression,
                    format!(
                        "{rel:?} uses compression {other:?}; only stored and deflate are accepted"
                    ),
                )
                .with("path", rel))
            }
        }
        let size = entry.size();
        let compressed = entry.compressed_size();
        if size > limits.ratio_floor_bytes
            && size / compressed.max(1) > limits.max_compression_ratio
        {
            return Err(HostError::new(
                ErrorCode::ArchiveCompressionRatio,
                format!(
                    "{rel:?} inflates {compressed} bytes to {size} bytes (ratio above {}): a zip bomb",
                    limits.max_compression_ratio
                ),
            )
            .with("path", rel)
            .with("size", size)
            .with("compressedSize", compressed));
        }
        budget.add(rel, size)?;
        listing.entries.push(Entry {
            path: rel.to_owned(),
            size,
            loc: Loc::Zip { index: *i },
        });
    }
    listing.total_bytes = budget.bytes;
    Ok((listing, ZipBackend { archive }))
}

/// `""` when `APP.md` is at the root, `"<dir>/"` when everything sits under one folder that
/// holds `APP.md`.
fn find_root(raw: &[(usize, String)]) -> HostResult<String> {
    let names = || {
        raw.iter()
            .map(|(_, n)| n.as_str())
            .filter(|n| !n.starts_with("__MACOSX/"))
    };
    if names().any(|n| n == "APP.md") {
        return Ok(String::new());
    }
    let mut tops = names().map(|n| n.split('/').next().unwrap_or(""));
    let first = tops.next().unwrap_or("");
    let single = !first.is_empty() && tops.all(|t| t == first);
    let prefix = format!("{first}/");
    if single && names().any(|n| n.strip_prefix(prefix.as_str()) == Some("APP.md")) {
        return Ok(prefix);
    }
    Err(HostError::new(
        ErrorCode::ManifestMissing,
        "the zip has no APP.md at its root or inside a single top-level folder",
    ))
}

impl ZipBackend {
    /// Reads an entry's content. The entry is read raw and inflated here (not by the zip
    /// crate), so that every way it can be wrong is known by type: more bytes than declared
    /// (`FileTooLarge`, from our own count), a checksum that does not match (`InvalidData`,
    /// from our own CRC-32), a corrupt deflate stream (flate2's error), or I/O on the file.
    pub(super) fn open_entry(&mut self, index: usize, rel: &str) -> HostResult<Box<dyn Read + '_>> {
        let file = self.archive.by_index_raw(index).map_err(|e| {
            let mut err = zip_error(Path::new(rel), e);
            err.message = format!("cannot read {rel:?} from the zip: {}", err.message);
            err.with("path", rel)
        })?;
        let (declared, crc, method) = (file.size(), file.crc32(), file.compression());
        let inner: Box<dyn Read + '_> = match method {
            CompressionMethod::Stored => Box::new(file),
            CompressionMethod::Deflated => Box::new(flate2::bufread::DeflateDecoder::new(
                BufReader::with_capacity(64 * 1024, file),
            )),
            other => {
                return Err(HostError::new(
                    ErrorCode::ArchiveUnsupportedCompression,
                    format!(
                        "{rel:?} uses compression {other:?}; only stored and deflate are accepted"
                    ),
                )
                .with("path", rel))
            }
        };
        Ok(Box::new(Checked {
            inner,
            declared,
            got: 0,
            crc,
            hasher: crc32fast::Hasher::new(),
        }))
    }
}

/// An entry's content, checked against its central-directory record as it is read: never
/// more bytes than declared, and the CRC-32 at the end.
struct Checked<R> {
    inner: R,
    declared: u64,
    got: u64,
    crc: u32,
    hasher: crc32fast::Hasher,
}

impl<R: Read> Read for Checked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.got += n as u64;
        if self.got > self.declared {
            return Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!("inflates past its declared {} bytes", self.declared),
            ));
        }
        self.hasher.update(&buf[..n]);
        if n == 0 && !buf.is_empty() && self.got == self.declared {
            let actual = self.hasher.clone().finalize();
            if actual != self.crc {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "CRC-32 {actual:08x} does not match the declared {:08x}",
                        self.crc
                    ),
                ));
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write_zip(path: &Path, files: &[(&str, &[u8])], method: CompressionMethod) {
        let mut zip = zip::ZipWriter::new(File::create(path).unwrap());
        let opts = zip::write::SimpleFileOptions::default().compression_method(method);
        for (name, data) in files {
            zip.start_file(*name, opts).unwrap();
            zip.write_all(data).unwrap();
        }
        zip.finish().unwrap();
    }

    fn read_entry(path: &Path, rel: &str) -> std::io::Result<Vec<u8>> {
        let (listing, mut backend) = open(path, &Limits::default()).unwrap();
        let e = listing.entries.iter().find(|e| e.path == rel).unwrap();
        let Loc::Zip { index } = e.loc else { panic!() };
        let mut out = Vec::new();
        backend
            .open_entry(index, rel)
            .unwrap()
            .read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn entries_read_back_stored_and_deflated() {
        let tmp = tempfile::tempdir().unwrap();
        let body: Vec<u8> = (0..100_000u32).map(|i| (i % 7) as u8).collect();
        for method in [CompressionMethod::Stored, CompressionMethod::Deflated] {
            let z = tmp.path().join("ok.zip");
            write_zip(
                &z,
                &[("APP.md", b"---\n---\n"), ("data.bin", &body)],
                method,
            );
            assert_eq!(read_entry(&z, "data.bin").unwrap(), body);
        }
    }

    #[test]
    fn a_checksum_mismatch_is_invalid_data_not_a_size_error() {
        let tmp = tempfile::tempdir().unwrap();
        let z = tmp.path().join("crc.zip");
        let marker = b"0123456789-unique-content-0123456789";
        write_zip(
            &z,
            &[("APP.md", b"---\n---\n"), ("f.txt", marker)],
            CompressionMethod::Stored,
        );
        let mut bytes = std::fs::read(&z).unwrap();
        let at = bytes
            .windows(marker.len())
            .position(|w| w == marker)
            .unwrap();
        bytes[at] ^= 1; // same size, different content: only the CRC-32 can tell
        std::fs::write(&z, &bytes).unwrap();
        let e = read_entry(&z, "f.txt").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{e}");
    }

    #[test]
    fn zip_errors_are_classified_by_type() {
        let p = Path::new("x.zip");
        let code = |e| zip_error(p, e).code;
        assert_eq!(
            code(ZipError::Io(std::io::Error::other("disk"))),
            ErrorCode::SourceIo
        );
        assert_eq!(
            code(ZipError::UnsupportedArchive(ZipError::PASSWORD_REQUIRED)),
            ErrorCode::ArchiveEncrypted
        );
        assert_eq!(
            code(ZipError::CompressionMethodNotSupported(99)),
            ErrorCode::ArchiveUnsupportedCompression
        );
        assert_eq!(
            code(ZipError::InvalidArchive("bad".into())),
            ErrorCode::ArchiveInvalid
        );
        assert_eq!(
            code(ZipError::UnsupportedArchive("multi-disk")),
            ErrorCode::ArchiveInvalid
        );
    }
}
