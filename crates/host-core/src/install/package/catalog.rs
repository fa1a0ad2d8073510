//! Local catalog files: a JSON list of releases.
//!
//! ```json
//! { "releases": [ { "appId": "hello-app", "version": "1.0.0",
//!                   "packageUrl": "hello-app-1.0.0.zip",
//!                   "packageHash": "sha256:…", "manifestHash": "sha256:…" } ] }
//! ```
//! A bare array of releases is accepted too. `packageUrl` is a path (relative to the catalog
//! file) or a `file://` URL; other schemes are refused (AppHost does not download here).
//! `packageHash` is required: a catalog pins what it lists. `manifestHash` is optional.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::foundation::error::{ErrorCode, HostError, HostResult};

#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogRelease {
    pub app_id: String,
    pub version: String,
    pub package_url: String,
    #[serde(skip)]
    pub package_path: PathBuf,
    pub package_hash: String,
    pub manifest_hash: Option<String>,
    pub catalog: String,
}

#[derive(Debug, Clone, Default)]
pub struct CatalogSelect {
    pub app: Option<String>,
    pub version: Option<String>,
}

#[derive(Debug)]
pub struct Catalog {
    pub path: PathBuf,
    pub releases: Vec<CatalogRelease>,
}

fn invalid(path: &Path, why: impl std::fmt::Display) -> HostError {
    HostError::new(
        ErrorCode::CatalogInvalid,
        format!("catalog {} is invalid: {why}", path.display()),
    )
    .with("path", path.display().to_string())
}

/// The largest catalog file AppHost reads.
pub const MAX_CATALOG_BYTES: u64 = 16 * 1024 * 1024;

fn too_large(path: &Path, size: Option<u64>) -> HostError {
    let err = invalid(
        path,
        format!("larger than {MAX_CATALOG_BYTES} bytes (16 MiB)"),
    )
    .with("limit", MAX_CATALOG_BYTES);
    match size {
        Some(size) => err.with("size", size),
        None => err,
    }
}

/// Reads a catalog file: its size is checked before a byte is read (a regular file only: a
/// FIFO or device is refused rather than opened), and the read itself stops one byte past the
/// limit, in case the file grows in between.
fn read_bounded(path: &Path) -> HostResult<Vec<u8>> {
    let io = |e| HostError::io(ErrorCode::SourceIo, "cannot read catalog", path, e);
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(invalid(path, "not a regular file"));
    }
    if meta.len() > MAX_CATALOG_BYTES {
        return Err(too_large(path, Some(meta.len())));
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_CATALOG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_CATALOG_BYTES {
        return Err(too_large(path, None));
    }
    Ok(bytes)
}

pub fn load(path: &Path) -> HostResult<Catalog> {
    let bytes = read_bounded(path)?;
    let doc: Value = serde_json::from_slice(&bytes).map_err(|e| invalid(path, e))?;
    let list = match &doc {
        Value::Array(a) => a,
        Value::Object(o) => match o.get("releases") {
            Some(Value::Array(a)) => a,
            _ => {
                return Err(invalid(
                    path,
                    "expected an object with a \"releases\" array",
                ))
            }
        },
        _ => return Err(invalid(path, "expected an array of releases")),
    };
    let base = path.parent().unwrap_or(Path::new("."));
    let mut releases = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let field = |name: &str| -> HostResult<String> {
            item.get(name)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| invalid(path, format!("release {i} has no string \"{name}\"")))
        };
        let app_id = field("appId")?;
        let version = field("version")?;
        let package_url = field("packageUrl")?;
        let package_hash = field("packageHash")?;
        if !crate::foundation::hashing::is_sha256_ref(&package_hash) {
            return Err(invalid(
                path,
                format!("release {i} packageHash is not sha256:<64 hex>"),
            ));
        }
        let manifest_hash = match item.get("manifestHash") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if crate::foundation::hashing::is_sha256_ref(s) => {
                Some(s.clone())
            }
            Some(_) => {
                return Err(invalid(
                    path,
                    format!("release {i} manifestHash is not sha256:<64 hex>"),
                ))
            }
        };
        let package_path = package_location(base, &package_url)?;
        releases.push(CatalogRelease {
            app_id,
            version,
            package_url,
            package_path,
            package_hash: package_hash.to_ascii_lowercase(),
            manifest_hash: manifest_hash.map(|h| h.to_ascii_lowercase()),
            catalog: path.display().to_string(),
        });
    }
    Ok(Catalog {
        path: path.to_owned(),
        releases,
    })
}

fn package_location(base: &Path, url: &str) -> HostResult<PathBuf> {
    if let Some(rest) = url.strip_prefix("file://") {
        // file:///abs/path or file://localhost/abs/path
        let rest = rest.strip_prefix("localhost").unwrap_or(rest);
        if !rest.starts_with('/') {
            return Err(HostError::new(
                ErrorCode::CatalogUnsupportedUrl,
                format!("{url} is not a local file URL"),
            )
            .with("packageUrl", url));
        }
        return Ok(PathBuf::from(percent_decode(rest)?));
    }
    if url.contains("://") {
        return Err(HostError::new(
            ErrorCode::CatalogUnsupportedUrl,
            format!("{url}: only paths and file:// URLs are supported in local catalogs"),
        )
        .with("packageUrl", url));
    }
    Ok(base.join(url))
}

fn percent_decode(s: &str) -> HostResult<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            let v = hex
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    HostError::new(
                        ErrorCode::CatalogUnsupportedUrl,
                        format!("bad percent-escape in {s}"),
                    )
                })?;
            out.push(v);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| {
        HostError::new(
            ErrorCode::CatalogUnsupportedUrl,
            format!("{s} is not UTF-8 once decoded"),
        )
    })
}

impl Catalog {
    /// Picks one release: `--app` is needed when the catalog lists several apps; without
    /// `--version` the highest version (semver order, else the last listed) is taken.
    pub fn select(&self, sel: &CatalogSelect) -> HostResult<CatalogRelease> {
        let mut apps: Vec<&str> = self.releases.iter().map(|r| r.app_id.as_str()).collect();
        apps.sort();
        apps.dedup();
        let app = match (&sel.app, apps.as_slice()) {
            (Some(a), _) => a.as_str(),
            (None, [only]) => only,
            (None, []) => {
                return Err(HostError::new(
                    ErrorCode::CatalogReleaseNotFound,
                    "the catalog lists no releases",
                ))
            }
            (None, many) => {
                return Err(HostError::new(
                    ErrorCode::CatalogAmbiguous,
                    format!(
                        "the catalog lists several apps ({}); choose one with --app",
                        many.join(", ")
                    ),
                )
                .with("apps", many))
            }
        };
        let candidates: Vec<&CatalogRelease> = self
            .releases
            .iter()
            .filter(|r| r.app_id == app)
            .filter(|r| sel.version.as_ref().is_none_or(|v| &r.version == v))
            .collect();
        let best = candidates.iter().copied().max_by(|a, b| {
            match (
                semver::Version::parse(&a.version),
                semver::Version::parse(&b.version),
            ) {
                (Ok(x), Ok(y)) => x.cmp(&y),
                _ => std::cmp::Ordering::Less,
            }
        });
        best.cloned().ok_or_else(|| {
            HostError::new(
                ErrorCode::CatalogReleaseNotFound,
                format!(
                    "the catalog has no release of {app}{}",
                    sel.version
                        .as_ref()
                        .map(|v| format!("@{v}"))
                        .unwrap_or_default()
                ),
            )
            .with("app", app)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

    fn write(dir: &Path, body: &str) -> PathBuf {
        let p = dir.join("catalog.json");
        std::fs::write(&p, body).unwrap();
        p
    }

    #[test]
    fn selects_highest_version_and_resolves_paths() {
        let tmp = tempfile::tempdir().unwrap();
        let p = write(
            tmp.path(),
            &format!(
                r#"{{"releases":[{{"appId":"a","version":"1.2.0","packageUrl":"a-1.2.0.zip","packageHash":"{H}"}},
                   {{"appId":"a","version":"1.10.0","packageUrl":"file:///opt/a%20b.zip","packageHash":"{H}"}}]}}"#
            ),
        );
        let c = load(&p).unwrap();
        let r = c.select(&CatalogSelect::default()).unwrap();
        assert_eq!(r.version, "1.10.0");
        assert_eq!(r.package_path, PathBuf::from("/opt/a b.zip"));
        let r = c
            .select(&CatalogSelect {
                app: None,
                version: Some("1.2.0".into()),
            })
            .unwrap();
        assert_eq!(r.package_path, tmp.path().join("a-1.2.0.zip"));
    }

    #[test]
    fn an_oversized_catalog_is_refused_before_it_is_read() {
        let tmp = tempfile::tempdir().unwrap();
        // A sparse 64 GiB file: reading it first would ask for 64 GiB of memory (and fail with
        // an I/O error, or take minutes); the size check refuses it at once.
        let p = tmp.path().join("huge.json");
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(64 << 30).unwrap();
        drop(f);
        let started = std::time::Instant::now();
        let err = load(&p).unwrap_err();
        assert_eq!(err.code, ErrorCode::CatalogInvalid, "{err:?}");
        assert_eq!(err.details["size"], 64u64 << 30);
        assert_eq!(err.details["limit"], MAX_CATALOG_BYTES);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));

        // Just over the limit is refused too; at the limit the JSON is parsed.
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(MAX_CATALOG_BYTES + 1).unwrap();
        drop(f);
        assert_eq!(load(&p).unwrap_err().details["size"], MAX_CATALOG_BYTES + 1);
        let mut body = b"[]".to_vec();
        body.resize(MAX_CATALOG_BYTES as usize, b' ');
        std::fs::write(&p, &body).unwrap();
        assert!(load(&p).unwrap().releases.is_empty());
    }

    #[test]
    fn a_catalog_that_is_not_a_regular_file_is_not_opened() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("catalog.json");
        let st = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo (coreutils)");
        assert!(st.success());
        // Opening a FIFO with no writer would block forever.
        assert_eq!(load(&fifo).unwrap_err().code, ErrorCode::CatalogInvalid);
        assert_eq!(
            load(tmp.path()).unwrap_err().code,
            ErrorCode::CatalogInvalid
        );
    }

    #[test]
    fn errors_are_specific() {
        let tmp = tempfile::tempdir().unwrap();
        let bad = |body: &str| load(&write(tmp.path(), body)).unwrap_err().code;
        assert_eq!(bad("{"), ErrorCode::CatalogInvalid);
        assert_eq!(bad(r#"[{"appId":"a"}]"#), ErrorCode::CatalogInvalid);
        assert_eq!(
            bad(&format!(
                r#"[{{"appId":"a","version":"1","packageUrl":"https://x/a.zip","packageHash":"{H}"}}]"#
            )),
            ErrorCode::CatalogUnsupportedUrl
        );
        let two = load(&write(
            tmp.path(),
            &format!(
                r#"[{{"appId":"a","version":"1","packageUrl":"a","packageHash":"{H}"}},{{"appId":"b","version":"1","packageUrl":"b","packageHash":"{H}"}}]"#
            ),
        ))
        .unwrap();
        assert_eq!(
            two.select(&CatalogSelect::default()).unwrap_err().code,
            ErrorCode::CatalogAmbiguous
        );
        let sel = CatalogSelect {
            app: Some("c".into()),
            version: None,
        };
        assert_eq!(
            two.select(&sel).unwrap_err().code,
            ErrorCode::CatalogReleaseNotFound
        );
    }
}
