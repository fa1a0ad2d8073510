//! The publisher's side: `apphost catalog build <folder-of-packages> --key <key> --out <dir>`.
//!
//! Every `.zip` in the folder is inspected (nothing installed, no app code run) and becomes a
//! release object; an optional `<name>.release.json` beside a zip sets its `channel`
//! (default `stable`), `rollbackTarget` (default: the previous unrevoked version of the same
//! channel) and `revoked` (`{"reason": "..."}`). The repository written to `--out`:
//!
//! ```text
//! metadata/root.json, metadata/<N>.root.json, metadata/targets.json,
//! metadata/snapshot.json, metadata/timestamp.json
//! targets/packages/<appId>-<version>.zip, targets/releases/<appId>.json
//! ```
//!
//! Building again into the same `--out` bumps every role's version (a client refuses older
//! ones); the root changes (version + 1, signed by the old and new root keys given) only when
//! its keys or expiry do. One key for all roles is the dev setup; [`Keys`] takes one per role.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ed25519_dalek::SigningKey;
use serde::Deserialize;

use super::releases::{self, Release, ReleasesFile, Revocation, SignatureRef, STABLE};
use super::trusted::{SNAPSHOT_JSON, TARGETS_JSON};
use super::tuf::metadata::{
    MetaFile, Role, RoleKeys, Root, Snapshot, TargetFile, Targets, Timestamp, SHA256, SPEC_VERSION,
};
use super::tuf::sign::{public_key, sign, signing_key_id};
use super::tuf::verify::{self, sha256_hex};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::install::inspect::{inspect, InspectOptions};
use crate::install::manifest::Key;
use crate::install::package::catalog::CatalogSelect;
use crate::install::package::source::resolve;

/// The signing keys of each role (threshold 1 each).
pub struct Keys {
    pub root: SigningKey,
    pub targets: SigningKey,
    pub snapshot: SigningKey,
    pub timestamp: SigningKey,
    /// Keys of the previous root that also sign a new root (a rotation).
    pub previous_root: Vec<SigningKey>,
}

impl Keys {
    /// One key for every role (the dev setup).
    pub fn single(key: &SigningKey) -> Keys {
        Keys {
            root: key.clone(),
            targets: key.clone(),
            snapshot: key.clone(),
            timestamp: key.clone(),
            previous_root: Vec::new(),
        }
    }
}

/// Each role's expiry.
#[derive(Debug, Clone, Copy)]
pub struct Expiries {
    pub root: jiff::Timestamp,
    pub targets: jiff::Timestamp,
    pub snapshot: jiff::Timestamp,
    pub timestamp: jiff::Timestamp,
}

impl Expiries {
    /// `--expires <duration>` for every role, or the defaults: root 365 days, targets and
    /// snapshot 90, timestamp 7.
    pub fn from_now(expires: Option<&str>) -> HostResult<Expiries> {
        let t = jiff::Timestamp::now();
        let after = |d: jiff::SignedDuration| t.checked_add(d).unwrap_or(t);
        let days = |n: i64| after(jiff::SignedDuration::from_hours(n * 24));
        Ok(match expires {
            Some(text) => Expiries::all(after(parse_duration(text)?)),
            None => Expiries {
                root: days(365),
                targets: days(90),
                snapshot: days(90),
                timestamp: days(7),
            },
        })
    }

    /// The same expiry for every role.
    pub fn all(at: jiff::Timestamp) -> Expiries {
        Expiries {
            root: at,
            targets: at,
            snapshot: at,
            timestamp: at,
        }
    }
}

/// Parses `30d`, `12h`, `90m`, `45s`.
pub fn parse_duration(text: &str) -> HostResult<jiff::SignedDuration> {
    let bad = || {
        HostError::new(
            ErrorCode::CliUsage,
            format!("{text:?} is not a duration like 30d, 12h, 90m or 45s"),
        )
    };
    let (num, unit) = text.split_at(text.len().saturating_sub(1));
    let n: i64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(bad()),
    };
    if n <= 0 || n > 3650 * 86_400 {
        return Err(bad());
    }
    Ok(jiff::SignedDuration::from_secs(n * secs))
}

/// What a build wrote.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BuildReport {
    pub out: PathBuf,
    pub releases: Vec<Release>,
    pub root_version: u64,
    pub targets_version: u64,
    pub root_key_id: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ReleaseExtra {
    channel: Option<String>,
    rollback_target: Option<String>,
    revoked: Option<Revocation>,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> HostError + '_ {
    move |e| HostError::io(ErrorCode::SourceIo, "cannot write", path, e)
}

/// Inspects one package zip into its release object.
fn release_of(zip: &Path, opts: &InspectOptions) -> HostResult<Release> {
    let source = resolve(zip, &CatalogSelect::default())?;
    let insp = inspect(&source, opts, None, &mut |_, _| {})?;
    let view = insp.manifest.view();
    let extra_path = zip.with_extension("release.json");
    let extra: ReleaseExtra = match std::fs::read(&extra_path) {
        Ok(b) => serde_json::from_slice(&b).map_err(|e| {
            HostError::new(
                ErrorCode::CatalogInvalid,
                format!("{}: {e}", extra_path.display()),
            )
        })?,
        Err(_) => ReleaseExtra::default(),
    };
    let app = insp.manifest.name().to_owned();
    let version = insp.manifest.version().to_owned();
    Ok(Release {
        package_url: format!("packages/{app}-{version}.zip"),
        app_id: app,
        version,
        package_hash: insp.read.package_hash.clone(),
        manifest_hash: insp.manifest_hash.clone(),
        signature: insp.signature.public_key.as_ref().map(|pk| SignatureRef {
            file: "app.signature.yaml".into(),
            key_id: insp.signature.key_id.clone(),
            public_key: Some(pk.clone()),
        }),
        compatibility: view.value(Key::Requires).cloned().unwrap_or_default(),
        channel: extra.channel.unwrap_or_else(|| STABLE.to_owned()),
        rollback_target: extra.rollback_target,
        revoked: extra.revoked,
        display_name: view.display_name().map(str::to_owned),
        description: view.description().map(str::to_owned),
        publisher: view.publisher_name().map(str::to_owned),
        permissions: view
            .permissions()
            .filter_map(|p| p.key())
            .map(str::to_owned)
            .collect(),
    })
}

fn read_version<T: Role>(path: &Path) -> Option<(u64, T)> {
    let bytes = std::fs::read(path).ok()?;
    let env = verify::envelope(T::NAME, &bytes).ok()?;
    let role: T = verify::typed(&env).ok()?;
    Some((role.version(), role))
}

fn write(path: &Path, bytes: &[u8]) -> HostResult<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    std::fs::write(path, bytes).map_err(io(path))
}

fn meta_file(version: u64, bytes: &[u8]) -> MetaFile {
    MetaFile {
        version,
        length: Some(bytes.len() as u64),
        hashes: Some(BTreeMap::from([(SHA256.to_owned(), sha256_hex(bytes))])),
    }
}

fn target_file(bytes: &[u8]) -> TargetFile {
    TargetFile {
        length: bytes.len() as u64,
        hashes: BTreeMap::from([(SHA256.to_owned(), sha256_hex(bytes))]),
        custom: None,
    }
}

/// The releases of a folder of package zips, with default rollback targets filled in.
pub fn releases_of_folder(
    packages: &Path,
    opts: &InspectOptions,
) -> HostResult<Vec<(PathBuf, Release)>> {
    let rd = std::fs::read_dir(packages)
        .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot read", packages, e))?;
    let mut zips: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("zip")))
        .collect();
    zips.sort();
    let mut out = Vec::with_capacity(zips.len());
    for zip in zips {
        let r = release_of(&zip, opts)?;
        out.push((zip, r));
    }
    out.sort_by(|a, b| {
        (a.1.app_id.as_str(), &a.1.channel)
            .cmp(&(b.1.app_id.as_str(), &b.1.channel))
            .then_with(|| releases::version_cmp(&a.1.version, &b.1.version))
    });
    for i in 1..out.len() {
        let (prev, cur) = out.split_at_mut(i);
        let cur = &mut cur[0].1;
        if cur.rollback_target.is_none() {
            cur.rollback_target = prev
                .iter()
                .rev()
                .map(|(_, r)| r)
                .find(|r| r.app_id == cur.app_id && r.channel == cur.channel && r.revoked.is_none())
                .map(|r| r.version.clone());
        }
    }
    Ok(out)
}

/// Builds (or rebuilds) the repository in `out` from the package zips in `packages`.
pub fn build(
    packages: &Path,
    out: &Path,
    keys: &Keys,
    expiries: &Expiries,
    opts: &InspectOptions,
) -> HostResult<BuildReport> {
    let list = releases_of_folder(packages, opts)?;
    let mut targets = BTreeMap::new();
    for (zip, r) in &list {
        let bytes = std::fs::read(zip)
            .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot read", zip, e))?;
        write(&out.join("targets").join(&r.package_url), &bytes)?;
        targets.insert(r.package_url.clone(), target_file(&bytes));
    }
    let mut by_app: BTreeMap<String, Vec<Release>> = BTreeMap::new();
    for (_, r) in &list {
        by_app.entry(r.app_id.clone()).or_default().push(r.clone());
    }
    for (app, rels) in by_app {
        let path = releases::releases_path(&app);
        let bytes = serde_json::to_vec_pretty(&ReleasesFile {
            app_id: app,
            releases: rels,
        })
        .unwrap_or_default();
        write(&out.join("targets").join(&path), &bytes)?;
        targets.insert(path, target_file(&bytes));
    }
    let report_releases = list.into_iter().map(|(_, r)| r).collect();
    sign_repository(out, targets, keys, expiries).map(|(root_version, targets_version)| {
        BuildReport {
            out: out.to_owned(),
            releases: report_releases,
            root_version,
            targets_version,
            root_key_id: signing_key_id(&keys.root),
        }
    })
}

/// Writes the four roles' metadata for `targets` into `out/metadata`, each version one past
/// what `out` holds. Answers the root's and the targets' versions.
pub fn sign_repository(
    out: &Path,
    targets: BTreeMap<String, TargetFile>,
    keys: &Keys,
    expiries: &Expiries,
) -> HostResult<(u64, u64)> {
    let meta = out.join("metadata");
    let next = |name: &str| -> u64 {
        let p = meta.join(name);
        match name {
            "targets.json" => read_version::<Targets>(&p).map(|v| v.0),
            "snapshot.json" => read_version::<Snapshot>(&p).map(|v| v.0),
            _ => read_version::<Timestamp>(&p).map(|v| v.0),
        }
        .unwrap_or(0)
            + 1
    };
    let (t_v, s_v, ts_v) = (
        next("targets.json"),
        next("snapshot.json"),
        next("timestamp.json"),
    );

    let mut root = root_for(keys, expiries.root, 1);
    let old_root = read_version::<Root>(&meta.join("root.json"));
    let root_bytes = match &old_root {
        Some((v, old))
            if old.keys == root.keys && old.roles == root.roles && old.expires == root.expires =>
        {
            let _ = v;
            None
        }
        Some((v, _)) => {
            root.version = v + 1;
            let mut signers: Vec<&SigningKey> = vec![&keys.root];
            signers.extend(keys.previous_root.iter());
            Some(sign(&root, &signers))
        }
        None => Some(sign(&root, &[&keys.root])),
    };
    let root_version = match (&root_bytes, &old_root) {
        (Some(b), _) => {
            write(&meta.join(format!("{}.root.json", root.version)), b)?;
            write(&meta.join("root.json"), b)?;
            root.version
        }
        (None, Some((v, _))) => *v,
        (None, None) => 1,
    };

    let targets_role = Targets {
        kind: "targets".into(),
        spec_version: SPEC_VERSION.into(),
        version: t_v,
        expires: expiries.targets.to_string(),
        targets,
    };
    let t_bytes = sign(&targets_role, &[&keys.targets]);
    let snapshot = Snapshot {
        kind: "snapshot".into(),
        spec_version: SPEC_VERSION.into(),
        version: s_v,
        expires: expiries.snapshot.to_string(),
        meta: BTreeMap::from([(TARGETS_JSON.to_owned(), meta_file(t_v, &t_bytes))]),
    };
    let s_bytes = sign(&snapshot, &[&keys.snapshot]);
    let timestamp = Timestamp {
        kind: "timestamp".into(),
        spec_version: SPEC_VERSION.into(),
        version: ts_v,
        expires: expiries.timestamp.to_string(),
        meta: BTreeMap::from([(SNAPSHOT_JSON.to_owned(), meta_file(s_v, &s_bytes))]),
    };
    let ts_bytes = sign(&timestamp, &[&keys.timestamp]);
    write(&meta.join("targets.json"), &t_bytes)?;
    write(&meta.join("snapshot.json"), &s_bytes)?;
    write(&meta.join("timestamp.json"), &ts_bytes)?;
    Ok((root_version, t_v))
}

/// A root naming `keys` (threshold 1 per role).
pub fn root_for(keys: &Keys, expires: jiff::Timestamp, version: u64) -> Root {
    let mut all = BTreeMap::new();
    let mut roles = BTreeMap::new();
    for (role, key) in [
        ("root", &keys.root),
        ("targets", &keys.targets),
        ("snapshot", &keys.snapshot),
        ("timestamp", &keys.timestamp),
    ] {
        let id = signing_key_id(key);
        all.insert(id.clone(), public_key(&key.verifying_key()));
        roles.insert(
            role.to_owned(),
            RoleKeys {
                keyids: vec![id],
                threshold: 1,
            },
        );
    }
    Root {
        kind: "root".into(),
        spec_version: SPEC_VERSION.into(),
        version,
        expires: expires.to_string(),
        consistent_snapshot: false,
        keys: all,
        roles,
    }
}
