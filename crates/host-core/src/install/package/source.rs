//! Turning a command-line argument into a package source.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::catalog::{self, CatalogRelease, CatalogSelect};
use crate::foundation::error::{ErrorCode, HostError, HostResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    Folder,
    Zip,
}

/// Where a package comes from, after catalog resolution.
#[derive(Debug, Clone)]
pub struct ResolvedSource {
    pub kind: SourceKind,
    /// Absolute path of the folder or zip.
    pub path: PathBuf,
    /// How the user named it: `catalog` when it came through a catalog, else the kind.
    pub origin: &'static str,
    /// The catalog release this package must match, when installed from a catalog.
    pub release: Option<CatalogRelease>,
}

impl ResolvedSource {
    /// A `file://` URI for provenance.
    pub fn uri(&self) -> String {
        format!("file://{}", self.path.display())
    }
}

/// Resolves a folder, a `.zip`, or a catalog file (`.json`; `select` picks the release).
pub fn resolve(arg: &Path, select: &CatalogSelect) -> HostResult<ResolvedSource> {
    let meta = fs::metadata(arg).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            HostError::new(
                ErrorCode::SourceNotFound,
                format!("{} does not exist", arg.display()),
            )
            .with("path", arg.display().to_string())
        } else {
            HostError::io(ErrorCode::SourceIo, "cannot read", arg, e)
        }
    })?;
    let abs = fs::canonicalize(arg)
        .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot resolve", arg, e))?;
    if meta.is_dir() {
        return Ok(ResolvedSource {
            kind: SourceKind::Folder,
            path: abs,
            origin: "folder",
            release: None,
        });
    }
    if !meta.is_file() {
        return Err(unsupported(arg));
    }
    if is_zip(&abs)? {
        return Ok(ResolvedSource {
            kind: SourceKind::Zip,
            path: abs,
            origin: "zip",
            release: None,
        });
    }
    if abs
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    {
        let catalog = catalog::load(&abs)?;
        let release = catalog.select(select)?;
        let package = release.package_path.clone();
        let mut resolved = resolve(&package, &CatalogSelect::default()).map_err(|e| {
            if e.code == ErrorCode::SourceNotFound {
                HostError::new(
                    ErrorCode::SourceNotFound,
                    format!(
                        "the catalog's package for {}@{} is missing: {}",
                        release.app_id,
                        release.version,
                        package.display()
                    ),
                )
                .with("path", package.display().to_string())
            } else {
                e
            }
        })?;
        if resolved.release.is_some() {
            return Err(HostError::new(
                ErrorCode::CatalogInvalid,
                "a catalog release may not point at another catalog",
            ));
        }
        resolved.origin = "catalog";
        resolved.release = Some(release);
        return Ok(resolved);
    }
    Err(unsupported(arg))
}

fn unsupported(arg: &Path) -> HostError {
    HostError::new(
        ErrorCode::SourceUnsupported,
        format!(
            "{} is not a package folder, a .zip or a catalog .json",
            arg.display()
        ),
    )
    .with("path", arg.display().to_string())
}

fn is_zip(path: &Path) -> HostResult<bool> {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("zip"))
    {
        return Ok(true);
    }
    let mut magic = [0u8; 4];
    let mut f = fs::File::open(path)
        .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot open", path, e))?;
    let n = f
        .read(&mut magic)
        .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot read", path, e))?;
    Ok(n == 4 && (magic == *b"PK\x03\x04" || magic == *b"PK\x05\x06"))
}
