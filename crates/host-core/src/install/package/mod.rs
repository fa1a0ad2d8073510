//! Reading packages from every source through one interface.
//!
//! A source (a folder holding `APP.md`, or a `.zip` of one) is first *listed*: every entry is
//! validated (paths, types, limits) before a single content byte is read. Then
//! [`pipeline::read_package`] reads the listed files once, in the reference CLI's order, hashing
//! and (when installing) staging them.

pub mod catalog;
mod folder;
pub mod path;
pub mod pipeline;
pub mod source;
mod zip_layout;
mod zipsrc;

use std::io::Read;
use std::path::PathBuf;

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::limits::Limits;
pub use source::{ResolvedSource, SourceKind};

/// One file of a package, as listed (before reading).
#[derive(Debug, Clone)]
pub struct Entry {
    /// Package-relative path, `/`-separated, validated by [`path::validate`].
    pub path: String,
    pub size: u64,
    loc: Loc,
}

#[derive(Debug, Clone)]
enum Loc {
    File { abs: PathBuf, dev: u64, ino: u64 },
    Zip { index: usize },
}

/// The validated listing of a package: regular files only, in the reference CLI's order.
#[derive(Debug)]
pub struct Listing {
    pub entries: Vec<Entry>,
    /// Paths skipped on purpose (`node_modules`, `.git`, zip `__MACOSX/` metadata).
    pub skipped: Vec<String>,
    pub total_bytes: u64,
}

/// An opened package source that can read the files it listed.
pub struct PackageReader {
    listing: Listing,
    backend: Backend,
}

enum Backend {
    Folder(folder::Root),
    Zip(zipsrc::ZipBackend),
}

impl PackageReader {
    pub fn open(source: &ResolvedSource, limits: &Limits) -> HostResult<Self> {
        let (mut listing, backend) = match source.kind {
            SourceKind::Folder => {
                let (listing, root) = folder::list(&source.path, limits)?;
                (listing, Backend::Folder(root))
            }
            SourceKind::Zip => {
                let (listing, zip) = zipsrc::open(&source.path, limits)?;
                (listing, Backend::Zip(zip))
            }
        };
        finish_listing(&mut listing, limits)?;
        Ok(PackageReader { listing, backend })
    }

    pub fn listing(&self) -> &Listing {
        &self.listing
    }

    /// Opens entry `i` for reading. The reader checks that exactly the listed number of bytes
    /// arrives (a file that changed since listing, or a zip that lies about sizes, is an error).
    pub fn entry(&mut self, i: usize) -> HostResult<EntryReader<'_>> {
        let entry = &self.listing.entries[i];
        let inner: Box<dyn Read + '_> = match (&entry.loc, &mut self.backend) {
            (Loc::File { abs, dev, ino }, Backend::Folder(root)) => {
                Box::new(folder::open_checked(root, &entry.path, abs, *dev, *ino)?)
            }
            (Loc::Zip { index }, Backend::Zip(zip)) => zip.open_entry(*index, &entry.path)?,
            (Loc::Zip { .. }, Backend::Folder(_)) | (Loc::File { .. }, Backend::Zip(_)) => {
                return Err(HostError::new(
                    ErrorCode::Internal,
                    "entry from another kind of source",
                ))
            }
        };
        Ok(EntryReader {
            inner,
            path: entry.path.clone(),
            expected: entry.size,
            got: 0,
        })
    }
}

/// Reads one listed entry, enforcing its listed size.
pub struct EntryReader<'a> {
    inner: Box<dyn Read + 'a>,
    path: String,
    expected: u64,
    got: u64,
}

impl EntryReader<'_> {
    /// Fills `buf` from the entry; returns how many bytes were read (less than `buf.len()`
    /// only at the end of the entry).
    pub fn fill(&mut self, buf: &mut [u8]) -> HostResult<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.inner.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => {
                    filled += n;
                    self.got += n as u64;
                    if self.got > self.expected {
                        return Err(size_mismatch(&self.path, self.expected, self.got));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge => {
                    return Err(size_mismatch(&self.path, self.expected, self.expected + 1))
                }
                // Classified by kind: malformed content (a corrupt deflate stream, a CRC-32
                // mismatch, a truncated entry) is the archive's fault, anything else is I/O.
                Err(e) => {
                    let code = match e.kind() {
                        std::io::ErrorKind::InvalidData
                        | std::io::ErrorKind::InvalidInput
                        | std::io::ErrorKind::UnexpectedEof => ErrorCode::ArchiveInvalid,
                        _ => ErrorCode::SourceIo,
                    };
                    return Err(
                        HostError::new(code, format!("cannot read {:?}: {e}", self.path))
                            .with("path", &self.path),
                    );
                }
            }
        }
        Ok(filled)
    }

    /// Checks that the entry is exactly as long as listed.
    pub fn finish(mut self) -> HostResult<()> {
        let mut probe = [0u8; 1];
        self.fill(&mut probe)?;
        if self.got != self.expected {
            return Err(size_mismatch(&self.path, self.expected, self.got));
        }
        Ok(())
    }
}

fn size_mismatch(path: &str, expected: u64, got: u64) -> HostError {
    HostError::new(
        ErrorCode::ArchiveSizeMismatch,
        format!("{path:?} holds more or fewer bytes than listed ({expected} listed, {got}+ read)"),
    )
    .with("path", path)
    .with("listedSize", expected)
}

/// Checks that apply to every source once its entries are known, then sorts them.
fn finish_listing(listing: &mut Listing, limits: &Limits) -> HostResult<()> {
    path::check_collisions(listing.entries.iter().map(|e| e.path.as_str()))?;
    if !listing.entries.iter().any(|e| e.path == "APP.md") {
        return Err(HostError::new(
            ErrorCode::ManifestMissing,
            "the package has no APP.md at its root",
        ));
    }
    if let Some(app_md) = listing.entries.iter().find(|e| e.path == "APP.md") {
        if app_md.size > limits.max_manifest_bytes {
            return Err(HostError::new(
                ErrorCode::ManifestTooLarge,
                format!(
                    "APP.md is {} bytes; the limit is {} bytes",
                    app_md.size, limits.max_manifest_bytes
                ),
            )
            .with("size", app_md.size)
            .with("limit", limits.max_manifest_bytes));
        }
    }
    listing
        .entries
        .sort_by(|a, b| path::cli_order(&a.path, &b.path));
    Ok(())
}

/// Shared limit checks while listing.
struct Budget<'a> {
    limits: &'a Limits,
    files: usize,
    bytes: u64,
}

impl<'a> Budget<'a> {
    fn new(limits: &'a Limits) -> Self {
        Budget {
            limits,
            files: 0,
            bytes: 0,
        }
    }

    fn add(&mut self, path: &str, size: u64) -> HostResult<()> {
        self.files += 1;
        if self.files > self.limits.max_files {
            return Err(HostError::new(
                ErrorCode::ArchiveTooManyFiles,
                format!("the package has more than {} files", self.limits.max_files),
            )
            .with("limit", self.limits.max_files));
        }
        self.bytes = self.bytes.saturating_add(size);
        if self.bytes > self.limits.max_unpacked_bytes {
            return Err(HostError::new(
                ErrorCode::ArchiveTooLarge,
                format!(
                    "the package unpacks to more than {} bytes (reached at {path:?})",
                    self.limits.max_unpacked_bytes
                ),
            )
            .with("limit", self.limits.max_unpacked_bytes)
            .with("path", path));
        }
        Ok(())
    }
}
