//! The catalog operations the CLI (and later the app center) calls: add, refresh, list,
//! search, remove, and fetching a release's package for the install pipeline.
//!
//! Registry failure never touches installed apps: nothing here writes `host.db`; a failed
//! refresh records only `status.json` (what `list` reports as stale, and since when).

use std::path::PathBuf;

use serde::Serialize;

use super::fetch::{HttpFetch, Timeouts};
use super::releases::{self, Release, Wanted};
use super::state::{self, Status, StatusError, TrustedState};
use super::trusted::{check_fresh, first_expired, unknown_target, verify_state, Verified};
use super::tuf::verify::self_signed_root;
use super::update::{earliest_expiry, refresh};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;
use crate::install::package::catalog::CatalogRelease;
use crate::install::package::source::{ResolvedSource, SourceKind};

/// The wall clock the catalog commands check expiries against.
pub fn now() -> jiff::Timestamp {
    jiff::Timestamp::now()
}

/// What `catalog list` shows of one catalog.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CatalogInfo {
    pub name: String,
    pub url: String,
    pub added_at: String,
    pub root_version: Option<u64>,
    pub targets_version: Option<u64>,
    pub apps: usize,
    pub releases: usize,
    pub refreshed_at: Option<String>,
    /// The earliest expiry of the trusted metadata: the catalog is stale after it.
    pub expires: Option<String>,
    pub stale: bool,
    pub stale_since: Option<String>,
    pub stale_reason: Option<String>,
    pub last_attempt_at: Option<String>,
    pub last_error: Option<StatusError>,
}

/// One app as `catalog search` shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    pub catalog: String,
    pub app_id: String,
    /// The newest release that is not revoked (stable first), else the newest.
    pub latest: Release,
    pub versions: Vec<String>,
    pub channels: Vec<String>,
}

/// Adds a catalog: pins `root` (self-signed, checked), then refreshes; saves nothing unless
/// the first refresh passes.
pub fn add(
    dir: &DataDir,
    name: &str,
    url: &str,
    root: &[u8],
    now: jiff::Timestamp,
) -> HostResult<CatalogInfo> {
    state::check_name(name)?;
    if state::exists(dir, name) {
        return Err(HostError::new(
            ErrorCode::CatalogExists,
            format!("a catalog named {name} exists: remove it first"),
        )
        .with("name", name));
    }
    let url = super::fetch::check_url(url)?;
    self_signed_root(root)?;
    let state = TrustedState {
        name: name.to_owned(),
        url: url.to_string(),
        added_at: now.to_string(),
        root: String::from_utf8(root.to_vec())
            .map_err(|_| super::tuf::verify::invalid("root", "not UTF-8"))?,
        timestamp: None,
        snapshot: None,
        targets: None,
        files: Default::default(),
    };
    let fetch = HttpFetch::new(url.as_str(), Timeouts::from_env())?;
    let new = refresh(&state, &fetch, now)?;
    state::save(dir, &new)?;
    state::save_status(
        dir,
        name,
        &Status {
            last_attempt_at: Some(now.to_string()),
            last_success_at: Some(now.to_string()),
            ..Status::default()
        },
    )?;
    info(dir, name, now)
}

/// Refreshes one catalog. On a refusal the trusted state stays as it was and the failure is
/// recorded in its status.
pub fn refresh_one(dir: &DataDir, name: &str, now: jiff::Timestamp) -> HostResult<CatalogInfo> {
    let state = state::load(dir, name)?;
    let mut status = state::load_status(dir, name).unwrap_or_default();
    status.last_attempt_at = Some(now.to_string());
    let result = HttpFetch::new(&state.url, Timeouts::from_env())
        .and_then(|fetch| refresh(&state, &fetch, now));
    match result {
        Ok(new) => {
            if new != state {
                state::save(dir, &new)?;
            }
            status.last_success_at = Some(now.to_string());
            status.failing_since = None;
            status.error = None;
            state::save_status(dir, name, &status)?;
            info(dir, name, now)
        }
        Err(e) => {
            status.failing_since.get_or_insert_with(|| now.to_string());
            status.error = Some(StatusError {
                code: e.code.as_str().to_owned(),
                message: e.message.clone(),
            });
            let _ = state::save_status(dir, name, &status);
            Err(e.with("catalog", name))
        }
    }
}

/// Every catalog (or the one named) refreshed; the first error after trying all.
pub fn refresh_all(
    dir: &DataDir,
    name: Option<&str>,
    now: jiff::Timestamp,
) -> (Vec<CatalogInfo>, Vec<HostError>) {
    let names = match name {
        Some(n) => vec![n.to_owned()],
        None => state::names(dir).unwrap_or_default(),
    };
    let mut ok = Vec::new();
    let mut errors = Vec::new();
    for n in names {
        match refresh_one(dir, &n, now) {
            Ok(i) => ok.push(i),
            Err(e) => errors.push(e),
        }
    }
    (ok, errors)
}

pub fn remove(dir: &DataDir, name: &str) -> HostResult<()> {
    state::remove(dir, name)
}

fn info(dir: &DataDir, name: &str, now: jiff::Timestamp) -> HostResult<CatalogInfo> {
    let state = state::load(dir, name)?;
    let status = state::load_status(dir, name).unwrap_or_default();
    let verified = verify_state(&state);
    let mut out = CatalogInfo {
        name: state.name.clone(),
        url: state.url.clone(),
        added_at: state.added_at.clone(),
        root_version: None,
        targets_version: None,
        apps: 0,
        releases: 0,
        refreshed_at: status.last_success_at.clone(),
        expires: None,
        stale: false,
        stale_since: status.failing_since.clone(),
        stale_reason: status.error.as_ref().map(|e| e.code.clone()),
        last_attempt_at: status.last_attempt_at.clone(),
        last_error: status.error.clone(),
    };
    match verified {
        Ok(v) => {
            out.root_version = Some(v.root.version);
            out.targets_version = v.targets.as_ref().map(|t| t.version);
            out.releases = v.releases.len();
            let mut apps: Vec<&str> = v.releases.iter().map(|r| r.app_id.as_str()).collect();
            apps.sort_unstable();
            apps.dedup();
            out.apps = apps.len();
            out.expires = earliest_expiry(&v);
            if let Some((role, at)) = first_expired(&v, now) {
                out.stale_reason
                    .get_or_insert_with(|| format!("catalog.metadata_expired ({role})"));
                out.stale_since = Some(match out.stale_since.take() {
                    Some(s) if s < at => s,
                    _ => at,
                });
            }
        }
        Err(e) => {
            out.stale_reason = Some(e.code.as_str().to_owned());
            out.stale_since.get_or_insert_with(|| now.to_string());
        }
    }
    out.stale = out.stale_since.is_some();
    Ok(out)
}

pub fn list(dir: &DataDir, now: jiff::Timestamp) -> HostResult<Vec<CatalogInfo>> {
    state::names(dir)?
        .iter()
        .map(|n| info(dir, n, now))
        .collect()
}

/// Apps in every catalog's trusted metadata (no network) whose id, name, description or
/// publisher contains `text` (case-insensitive; empty matches all).
pub fn search(dir: &DataDir, text: &str) -> HostResult<Vec<Listing>> {
    let needle = text.to_lowercase();
    let mut out = Vec::new();
    for name in state::names(dir)? {
        let Ok(v) = verify_state(&state::load(dir, &name)?) else {
            continue;
        };
        let mut apps: Vec<&str> = v.releases.iter().map(|r| r.app_id.as_str()).collect();
        apps.sort_unstable();
        apps.dedup();
        for app in apps {
            let of_app: Vec<&Release> = v.releases.iter().filter(|r| r.app_id == app).collect();
            let pick = |channel: Option<&str>| {
                of_app
                    .iter()
                    .copied()
                    .filter(|r| r.revoked.is_none() && channel.is_none_or(|c| r.channel == c))
                    .max_by(|a, b| releases::version_cmp(&a.version, &b.version))
            };
            let Some(latest) = pick(Some(releases::STABLE))
                .or_else(|| pick(None))
                .or_else(|| {
                    of_app
                        .iter()
                        .copied()
                        .max_by(|a, b| releases::version_cmp(&a.version, &b.version))
                })
            else {
                continue;
            };
            let hay = [
                Some(latest.app_id.as_str()),
                latest.display_name.as_deref(),
                latest.description.as_deref(),
                latest.publisher.as_deref(),
            ];
            if !needle.is_empty()
                && !hay
                    .iter()
                    .flatten()
                    .any(|h| h.to_lowercase().contains(&needle))
            {
                continue;
            }
            let mut versions: Vec<String> = of_app.iter().map(|r| r.version.clone()).collect();
            versions.sort_by(|a, b| releases::version_cmp(a, b));
            let mut channels: Vec<String> = of_app.iter().map(|r| r.channel.clone()).collect();
            channels.sort();
            channels.dedup();
            out.push(Listing {
                catalog: name.clone(),
                app_id: app.to_owned(),
                latest: latest.clone(),
                versions,
                channels,
            });
        }
    }
    Ok(out)
}

/// A catalog's verified, unexpired metadata, for picking a release.
fn fresh(dir: &DataDir, name: &str, now: jiff::Timestamp) -> HostResult<(TrustedState, Verified)> {
    let state = state::load(dir, name)?;
    let v = verify_state(&state)?;
    check_fresh(&v, now).map_err(|e| e.with("catalog", name))?;
    Ok((state, v))
}

/// The catalog (of `only`, or of all) that has `app`, refreshed first. Refuses an app offered
/// by several catalogs unless one is named (`catalog.ambiguous`).
pub fn locate(
    dir: &DataDir,
    app: &str,
    only: Option<&str>,
    now: jiff::Timestamp,
) -> HostResult<(String, Verified)> {
    let names = match only {
        Some(n) => vec![n.to_owned()],
        None => state::names(dir)?,
    };
    if names.is_empty() {
        return Err(HostError::new(
            ErrorCode::CatalogNotFound,
            "no catalog is added: add one with `apphost catalog add <name> <url> --root <root.json>`",
        ));
    }
    let mut found = Vec::new();
    for name in &names {
        refresh_one(dir, name, now)?;
        let (_, v) = fresh(dir, name, now)?;
        if v.releases.iter().any(|r| r.app_id == app) {
            found.push((name.clone(), v));
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(HostError::new(
            ErrorCode::CatalogReleaseNotFound,
            format!("no catalog offers {app}"),
        )
        .with("app", app)),
        _ => Err(HostError::new(
            ErrorCode::CatalogAmbiguous,
            format!(
                "several catalogs offer {app} ({}): choose one with --catalog",
                found
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .with("app", app)),
    }
}

/// A package downloaded from a catalog, ready for the install pipeline. Dropping it removes
/// the downloaded file.
pub struct Fetched {
    pub source: ResolvedSource,
    pub catalog: String,
    pub release: Release,
    file: PathBuf,
}

impl Drop for Fetched {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

/// Downloads the package of `release` (a release of `catalog`'s verified metadata `v`).
pub fn download(
    dir: &DataDir,
    catalog: &str,
    v: &Verified,
    release: &Release,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> HostResult<Fetched> {
    let targets = v
        .targets
        .as_ref()
        .ok_or_else(|| unknown_target(&release.package_url))?;
    let target = targets
        .targets
        .get(&release.package_url)
        .ok_or_else(|| unknown_target(&release.package_url))?;
    let state = state::load(dir, catalog)?;
    let downloads = state::downloads_dir(dir);
    std::fs::create_dir_all(&downloads)
        .map_err(|e| HostError::io(ErrorCode::Internal, "cannot create", &downloads, e))?;
    let downloads = std::fs::canonicalize(&downloads)
        .map_err(|e| HostError::io(ErrorCode::Internal, "cannot resolve", &downloads, e))?;
    let part = downloads.join(format!("{}.part", target.sha256()));
    let fetch = HttpFetch::new(&state.url, Timeouts::from_env())?;
    fetch.download(&release.package_url, target, &part, progress)?;
    let file = downloads.join(format!(
        "{}-{}.zip",
        target.sha256(),
        crate::foundation::random::random_hex(4)?
    ));
    std::fs::rename(&part, &file)
        .map_err(|e| HostError::io(ErrorCode::Internal, "cannot move", &part, e))?;
    Ok(Fetched {
        source: ResolvedSource {
            kind: SourceKind::Zip,
            path: file.clone(),
            origin: "catalog",
            release: Some(CatalogRelease {
                app_id: release.app_id.clone(),
                version: release.version.clone(),
                package_url: format!("{}targets/{}", state.url, release.package_url),
                package_path: file.clone(),
                package_hash: release.package_hash.to_ascii_lowercase(),
                manifest_hash: Some(release.manifest_hash.to_ascii_lowercase()),
                catalog: catalog.to_owned(),
            }),
        },
        catalog: catalog.to_owned(),
        release: release.clone(),
        file,
    })
}

/// Refreshes, picks the release `wanted` names and downloads it.
pub fn fetch_release(
    dir: &DataDir,
    wanted: &Wanted,
    only: Option<&str>,
    now: jiff::Timestamp,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> HostResult<Fetched> {
    let (catalog, v) = locate(dir, &wanted.app, only, now)?;
    let release = releases::select(&v.releases, wanted)?.clone();
    download(dir, &catalog, &v, &release, progress)
}

/// The newest release of `app` in `channel` newer than `installed`, if any (refreshed first).
pub fn newer_release(
    dir: &DataDir,
    app: &str,
    installed: &str,
    channel: Option<&str>,
    only: Option<&str>,
    now: jiff::Timestamp,
) -> HostResult<Option<(String, Verified, Release)>> {
    let (catalog, v) = locate(dir, app, only, now)?;
    let wanted = Wanted {
        app: app.to_owned(),
        version: None,
        channel: channel.map(str::to_owned),
    };
    let best = releases::select(&v.releases, &wanted)?.clone();
    if releases::version_cmp(&best.version, installed) == std::cmp::Ordering::Greater {
        Ok(Some((catalog, v, best)))
    } else {
        Ok(None)
    }
}
