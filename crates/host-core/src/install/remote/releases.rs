//! Release objects (the standard's registry side): one signed target file per app,
//! `releases/<appId>.json`, and picking a release from them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tuf::verify::invalid;
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::hashing::is_sha256_ref;

/// The target path of an app's releases file.
pub fn releases_path(app_id: &str) -> String {
    format!("releases/{app_id}.json")
}

/// The most releases one app's file may list.
pub const MAX_RELEASES_PER_APP: usize = 10_000;

/// The default channel.
pub const STABLE: &str = "stable";

/// `releases/<appId>.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleasesFile {
    pub app_id: String,
    pub releases: Vec<Release>,
}

/// One release: the standard's release object.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Release {
    pub app_id: String,
    pub version: String,
    /// A target path of the same catalog (`packages/<appId>-<version>.zip`).
    pub package_url: String,
    pub package_hash: String,
    pub manifest_hash: String,
    /// The package's own signature (`app.signature.yaml`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<SignatureRef>,
    /// What the package requires of its host (the manifest's `requires`), for display.
    #[serde(default)]
    pub compatibility: Value,
    pub channel: String,
    /// The version to go back to if this one is withdrawn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked: Option<Revocation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<String>,
    /// The permission keys the package declares (a summary for browsing).
    #[serde(default)]
    pub permissions: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SignatureRef {
    pub file: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Revocation {
    pub reason: String,
}

/// Parses and checks one app's releases file (already verified against the signed targets).
pub fn parse(path: &str, bytes: &[u8]) -> HostResult<ReleasesFile> {
    let file: ReleasesFile =
        serde_json::from_slice(bytes).map_err(|e| invalid("targets", format!("{path}: {e}")))?;
    if releases_path(&file.app_id) != path {
        return Err(invalid(
            "targets",
            format!("{path} names app {}", file.app_id),
        ));
    }
    if file.releases.len() > MAX_RELEASES_PER_APP {
        return Err(invalid(
            "targets",
            format!("{path} lists more than {MAX_RELEASES_PER_APP} releases"),
        ));
    }
    for r in &file.releases {
        let bad = |why: &str| invalid("targets", format!("{path}: release {}: {why}", r.version));
        if r.app_id != file.app_id {
            return Err(bad("appId differs from the file's"));
        }
        if r.version.is_empty() || r.channel.is_empty() {
            return Err(bad("empty version or channel"));
        }
        if !is_sha256_ref(&r.package_hash) || !is_sha256_ref(&r.manifest_hash) {
            return Err(bad("packageHash and manifestHash must be sha256:<64 hex>"));
        }
    }
    Ok(file)
}

/// Semver order where both parse, else the text.
pub fn version_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    match (semver::Version::parse(a), semver::Version::parse(b)) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        _ => a.cmp(b),
    }
}

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct Wanted {
    pub app: String,
    pub version: Option<String>,
    pub channel: Option<String>,
}

impl Wanted {
    /// `<app-id>[@<version>]`.
    pub fn parse(spec: &str, channel: Option<String>) -> Wanted {
        match spec.split_once('@') {
            Some((app, v)) => Wanted {
                app: app.to_owned(),
                version: Some(v.to_owned()),
                channel,
            },
            None => Wanted {
                app: spec.to_owned(),
                version: None,
                channel,
            },
        }
    }
}

/// Picks the release `wanted` names: that version (refused when revoked), or the highest
/// version not revoked in the channel (`stable` by default).
pub fn select<'a>(releases: &'a [Release], wanted: &Wanted) -> HostResult<&'a Release> {
    let mut of_app = releases.iter().filter(|r| r.app_id == wanted.app);
    if let Some(v) = &wanted.version {
        let r = of_app
            .rfind(|r| &r.version == v)
            .ok_or_else(|| not_found(wanted))?;
        if let Some(rev) = &r.revoked {
            return Err(revoked(r, rev));
        }
        return Ok(r);
    }
    let channel = wanted.channel.as_deref().unwrap_or(STABLE);
    let in_channel: Vec<&Release> = of_app.filter(|r| r.channel == channel).collect();
    let best = in_channel
        .iter()
        .copied()
        .filter(|r| r.revoked.is_none())
        .max_by(|a, b| version_cmp(&a.version, &b.version));
    match best {
        Some(r) => Ok(r),
        None => match in_channel
            .iter()
            .filter_map(|r| r.revoked.as_ref().map(|rev| (*r, rev)))
            .max_by(|a, b| version_cmp(&a.0.version, &b.0.version))
        {
            Some((r, rev)) => Err(revoked(r, rev)),
            None => Err(not_found(wanted)),
        },
    }
}

fn not_found(w: &Wanted) -> HostError {
    HostError::new(
        ErrorCode::CatalogReleaseNotFound,
        format!(
            "no catalog has a release of {}{}{}",
            w.app,
            w.version
                .as_ref()
                .map(|v| format!("@{v}"))
                .unwrap_or_default(),
            w.channel
                .as_ref()
                .map(|c| format!(" in channel {c}"))
                .unwrap_or_default()
        ),
    )
    .with("app", w.app.clone())
}

fn revoked(r: &Release, rev: &Revocation) -> HostError {
    HostError::new(
        ErrorCode::CatalogReleaseRevoked,
        format!(
            "{}@{} is revoked by its publisher: {}",
            r.app_id, r.version, rev.reason
        ),
    )
    .with("app", r.app_id.clone())
    .with("version", r.version.clone())
    .with("reason", rev.reason.clone())
}
