//! Zip sources: a `.zip` of a package folder, with the files at the root or under one
//! top-level folder. macOS `__MACOSX/` metadata is skipped.
//!
//! Everything is decided from the central directory before any data is inflated: names,
//! entry types (symlinks and special files are rejected), encryption, compression method,
//! declared sizes and compression ratios. While reading, the actual inflated size is bounded by
//! the declared size, so a zip that lies about sizes cannot expand past what was accepted.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use zip::{CompressionMethod, ZipArchive};

use super::{path, Budget, Entry, Listing, Loc};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::Limits;

pub(super) struct ZipBackend {
    archive: ZipArchive<BufReader<File>>,
}

const S_IFMT: u32 = 0o170000;
const S_IFREG: u32 = 0o100000;
const S_IFDIR: u32 = 0o040000;
const S_IFLNK: u32 = 0o120000;

fn invalid(path: &Path, e: impl std::fmt::Display) -> HostError {
    HostError::new(
        ErrorCode::ArchiveInvalid,
        format!("{} is not a readable zip archive: {e}", path.display()),
    )
    .with("path", path.display().to_string())
}

pub(super) fn open(zip_path: &Path, limits: &Limits) -> HostResult<(Listing, ZipBackend)> {
    let file = File::open(zip_path)
        .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot open", zip_path, e))?;
    let archive = ZipArchive::new(BufReader::new(file)).map_err(|e| invalid(zip_path, e))?;
    if archive.has_duplicate_names() {
        return Err(HostError::new(
            ErrorCode::ArchiveDuplicateEntry,
            "the zip lists the same file name more than once",
        ));
    }

    // First pass: raw names, to find the package root.
    let mut raw: Vec<(usize, String)> = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let entry = archive.by_index_data(i).map_err(|e| invalid(zip_path, e))?;
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
            .map_err(|e| invalid(zip_path, e))?;
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
    pub(super) fn open_entry(&mut self, index: usize, rel: &str) -> HostResult<Box<dyn Read + '_>> {
        let file = self.archive.by_index(index).map_err(|e| {
            HostError::new(
                ErrorCode::ArchiveInvalid,
                format!("cannot read {rel:?} from the zip: {e}"),
            )
            .with("path", rel)
        })?;
        Ok(Box::new(SizeErrors { inner: file }))
    }
}

/// The zip crate stops an entry that inflates past its declared size with an `InvalidData`
/// error of its own; report that as the size mismatch it is (AppHost's own byte count in
/// `read_entry` catches the same lie when the crate does not).
struct SizeErrors<R> {
    inner: R,
}

impl<R: Read> Read for SizeErrors<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            let msg = e.to_string();
            if e.kind() == std::io::ErrorKind::InvalidData && msg.contains("declared") {
                std::io::Error::new(std::io::ErrorKind::FileTooLarge, msg)
            } else {
                e
            }
        })
    }
}
