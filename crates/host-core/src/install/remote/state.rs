//! What a host keeps of each remote catalog, under `<data>/catalogs/`:
//! - `<name>/trusted.json`: the catalog's URL and the metadata this host trusts (root,
//!   timestamp, snapshot, targets, and the verified release files), as received. It is
//!   replaced as a whole (a temporary file, fsynced, renamed) only after a refresh verified
//!   everything, so a refused refresh leaves it byte for byte as it was. Every reader verifies
//!   it again (`super::trusted`): a file edited on disk is refused, not believed.
//! - `<name>/status.json`: the last refresh attempt, its error, and since when the catalog has
//!   been failing (what `catalog list` calls stale). Not trusted for anything.
//! - `apps.json`: per installed app, the catalog and channel it follows (`update`).
//! - `downloads/`: packages being downloaded (`<sha256>.part`, resumed with a Range request).

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;

/// `<data>/catalogs`.
pub fn catalogs_dir(dir: &DataDir) -> PathBuf {
    dir.root().join("catalogs")
}

/// `<data>/catalogs/downloads`.
pub fn downloads_dir(dir: &DataDir) -> PathBuf {
    catalogs_dir(dir).join("downloads")
}

fn catalog_dir(dir: &DataDir, name: &str) -> PathBuf {
    catalogs_dir(dir).join(name)
}

/// The file a test compares to prove a refusal changed nothing.
pub fn trusted_path(dir: &DataDir, name: &str) -> PathBuf {
    catalog_dir(dir, name).join("trusted.json")
}

/// Catalog names: `[a-z0-9][a-z0-9._-]{0,63}` (a folder name, never `downloads`).
pub fn check_name(name: &str) -> HostResult<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name != "downloads"
        && name.bytes().enumerate().all(|(i, b)| {
            b.is_ascii_lowercase()
                || b.is_ascii_digit()
                || (i > 0 && matches!(b, b'.' | b'_' | b'-'))
        });
    if ok {
        Ok(())
    } else {
        Err(HostError::new(
            ErrorCode::CatalogBadName,
            format!("{name:?} is not a catalog name: lowercase letters, digits, '.', '_' and '-', at most 64, not \"downloads\""),
        )
        .with("name", name))
    }
}

/// The trusted metadata of one catalog, as received (the bytes that were verified).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TrustedState {
    pub name: String,
    pub url: String,
    pub added_at: String,
    pub root: String,
    #[serde(default)]
    pub timestamp: Option<String>,
    #[serde(default)]
    pub snapshot: Option<String>,
    #[serde(default)]
    pub targets: Option<String>,
    /// Verified target files kept (the release files), by target path.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
}

/// The last refresh attempt of one catalog.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    #[serde(default)]
    pub last_attempt_at: Option<String>,
    #[serde(default)]
    pub last_success_at: Option<String>,
    /// The first failed attempt after the last success.
    #[serde(default)]
    pub failing_since: Option<String>,
    #[serde(default)]
    pub error: Option<StatusError>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct StatusError {
    pub code: String,
    pub message: String,
}

/// Per installed app: where its updates come from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Followed {
    pub catalog: String,
    pub channel: String,
}

fn state_err(path: &Path, why: impl std::fmt::Display) -> HostError {
    HostError::new(
        ErrorCode::CatalogStateInvalid,
        format!("{}: {why}", path.display()),
    )
    .with("path", path.display().to_string())
}

/// The most bytes a state file may have (a 1,000-app catalog's trusted.json is a few MiB).
const MAX_STATE_BYTES: u64 = 256 * 1024 * 1024;

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> HostResult<Option<T>> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(state_err(path, e)),
    };
    if !meta.is_file() || meta.len() > MAX_STATE_BYTES {
        return Err(state_err(path, "not a regular file of a sane size"));
    }
    let bytes = std::fs::read(path).map_err(|e| state_err(path, e))?;
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| state_err(path, e))
}

/// Writes `value` to `path` atomically: a fresh 0600 file beside it, fsynced, renamed over it,
/// the folder fsynced.
fn write_json(path: &Path, value: &impl Serialize) -> HostResult<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    let io = |e: std::io::Error| {
        HostError::io(ErrorCode::Internal, "cannot write catalog state", path, e)
    };
    std::fs::create_dir_all(parent).map_err(io)?;
    let tmp = parent.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("state"),
        crate::foundation::random::random_hex(8)?
    ));
    let bytes = serde_json::to_vec_pretty(value).unwrap_or_default();
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(parent)?.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
}

/// Names of the catalogs added, sorted.
pub fn names(dir: &DataDir) -> HostResult<Vec<String>> {
    let root = catalogs_dir(dir);
    let mut out = Vec::new();
    let rd = match std::fs::read_dir(&root) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(state_err(&root, e)),
    };
    for entry in rd.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if check_name(&name).is_ok() && entry.path().join("trusted.json").is_file() {
            out.push(name);
        }
    }
    out.sort();
    Ok(out)
}

pub fn load(dir: &DataDir, name: &str) -> HostResult<TrustedState> {
    check_name(name)?;
    read_json(&trusted_path(dir, name))?.ok_or_else(|| {
        HostError::new(
            ErrorCode::CatalogNotFound,
            format!("no catalog named {name}: add it with `apphost catalog add`"),
        )
        .with("name", name)
    })
}

pub fn exists(dir: &DataDir, name: &str) -> bool {
    trusted_path(dir, name).exists()
}

pub fn save(dir: &DataDir, state: &TrustedState) -> HostResult<()> {
    check_name(&state.name)?;
    let folder = catalog_dir(dir, &state.name);
    std::fs::create_dir_all(&folder)
        .map_err(|e| HostError::io(ErrorCode::Internal, "cannot create", &folder, e))?;
    write_json(&trusted_path(dir, &state.name), state)
}

pub fn remove(dir: &DataDir, name: &str) -> HostResult<()> {
    load(dir, name)?;
    let folder = catalog_dir(dir, name);
    std::fs::remove_dir_all(&folder)
        .map_err(|e| HostError::io(ErrorCode::Internal, "cannot remove", &folder, e))
}

pub fn load_status(dir: &DataDir, name: &str) -> HostResult<Status> {
    Ok(read_json(&catalog_dir(dir, name).join("status.json"))?.unwrap_or_default())
}

pub fn save_status(dir: &DataDir, name: &str, status: &Status) -> HostResult<()> {
    write_json(&catalog_dir(dir, name).join("status.json"), status)
}

fn followed_path(dir: &DataDir) -> PathBuf {
    catalogs_dir(dir).join("apps.json")
}

pub fn followed(dir: &DataDir) -> HostResult<BTreeMap<String, Followed>> {
    Ok(read_json(&followed_path(dir))?.unwrap_or_default())
}

pub fn set_followed(dir: &DataDir, app: &str, f: Followed) -> HostResult<()> {
    let mut all = followed(dir)?;
    all.insert(app.to_owned(), f);
    write_json(&followed_path(dir), &all)
}

/// Drops `app`'s follows record (on uninstall); nothing is written when it has none.
pub fn unfollow(dir: &DataDir, app: &str) -> HostResult<()> {
    let mut all = followed(dir)?;
    if all.remove(app).is_none() {
        return Ok(());
    }
    write_json(&followed_path(dir), &all)
}
