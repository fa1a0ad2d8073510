//! The trusted state re-derived: every reader of `trusted.json` verifies it again against its
//! root (signatures, the timestamp → snapshot → targets chain, each kept file against the
//! signed targets), so a file changed on disk is refused rather than believed.

use super::releases::{self, Release};
use super::state::TrustedState;
use super::tuf::metadata::{MetaFile, Role, Root, Snapshot, TargetFile, Targets, Timestamp};
use super::tuf::verify::{self, check_meta_file, invalid, self_signed_root, verify_role};
use crate::foundation::error::{ErrorCode, HostError, HostResult};

pub const SNAPSHOT_JSON: &str = "snapshot.json";
pub const TARGETS_JSON: &str = "targets.json";

/// A catalog's verified metadata.
#[derive(Debug, Clone)]
pub struct Verified {
    pub root: Root,
    pub timestamp: Option<Timestamp>,
    pub snapshot: Option<Snapshot>,
    pub targets: Option<Targets>,
    pub releases: Vec<Release>,
}

/// `meta[name]` of a timestamp or snapshot.
pub fn meta_of<'m>(
    role: &str,
    meta: &'m std::collections::BTreeMap<String, MetaFile>,
    name: &str,
) -> HostResult<&'m MetaFile> {
    meta.get(name)
        .ok_or_else(|| invalid(role, format!("names no {name}")))
}

fn mismatch(role: &str, why: String) -> HostError {
    HostError::new(
        ErrorCode::CatalogMetadataMismatch,
        format!("the catalog's {role} metadata is not the one its parent signed: {why}"),
    )
    .with("role", role)
}

/// Checks a snapshot is the one `ts` signed (version; length and hash checked on the bytes).
pub fn check_snapshot_matches(ts: &Timestamp, snap: &Snapshot) -> HostResult<()> {
    let m = meta_of("timestamp", &ts.meta, SNAPSHOT_JSON)?;
    if m.version != snap.version {
        return Err(mismatch(
            "snapshot",
            format!(
                "version {}, the timestamp signed {}",
                snap.version, m.version
            ),
        ));
    }
    Ok(())
}

pub fn check_targets_match(snap: &Snapshot, targets: &Targets) -> HostResult<()> {
    let m = meta_of("snapshot", &snap.meta, TARGETS_JSON)?;
    if m.version != targets.version {
        return Err(mismatch(
            "targets",
            format!(
                "version {}, the snapshot signed {}",
                targets.version, m.version
            ),
        ));
    }
    Ok(())
}

/// Checks a downloaded or kept target file against its signed length and SHA-256.
pub fn check_target(path: &str, bytes: &[u8], target: &TargetFile) -> HostResult<()> {
    let got = verify::sha256_hex(bytes);
    if bytes.len() as u64 != target.length || !got.eq_ignore_ascii_case(target.sha256()) {
        return Err(HostError::new(
            ErrorCode::CatalogTargetMismatch,
            format!("{path} is not the file the catalog signed"),
        )
        .with("path", path)
        .with("length", bytes.len())
        .with("signedLength", target.length)
        .with("sha256", got)
        .with("signedSha256", target.sha256()));
    }
    Ok(())
}

/// Verifies a trusted state as kept on disk (expiry is not checked here: see [`check_fresh`]).
pub fn verify_state(state: &TrustedState) -> HostResult<Verified> {
    let root = self_signed_root(state.root.as_bytes())?;
    let timestamp = match &state.timestamp {
        Some(t) => Some(verify_role::<Timestamp>(t.as_bytes(), &root)?),
        None => None,
    };
    let snapshot = match (&state.snapshot, &timestamp) {
        (Some(s), Some(ts)) => {
            let m = meta_of("timestamp", &ts.meta, SNAPSHOT_JSON)?;
            check_meta_file("snapshot", s.as_bytes(), m.length, m.hashes.as_ref())?;
            let snap = verify_role::<Snapshot>(s.as_bytes(), &root)?;
            check_snapshot_matches(ts, &snap)?;
            Some(snap)
        }
        _ => None,
    };
    let targets = match (&state.targets, &snapshot) {
        (Some(t), Some(snap)) => {
            let m = meta_of("snapshot", &snap.meta, TARGETS_JSON)?;
            check_meta_file("targets", t.as_bytes(), m.length, m.hashes.as_ref())?;
            let targets = verify_role::<Targets>(t.as_bytes(), &root)?;
            check_targets_match(snap, &targets)?;
            Some(targets)
        }
        _ => None,
    };
    let mut list = Vec::new();
    if let Some(targets) = &targets {
        for (path, body) in &state.files {
            let target = targets
                .targets
                .get(path)
                .ok_or_else(|| unknown_target(path))?;
            check_target(path, body.as_bytes(), target)?;
            list.extend(releases::parse(path, body.as_bytes())?.releases);
        }
    }
    Ok(Verified {
        root,
        timestamp,
        snapshot,
        targets,
        releases: list,
    })
}

pub fn unknown_target(path: &str) -> HostError {
    HostError::new(
        ErrorCode::CatalogTargetUnknown,
        format!("{path} is not a target the catalog signed"),
    )
    .with("path", path)
}

/// The first role past its expiry at `now`, with its expiry.
pub fn first_expired(v: &Verified, now: jiff::Timestamp) -> Option<(&'static str, String)> {
    fn check<T: Role>(r: Option<&T>, now: jiff::Timestamp) -> Option<(&'static str, String)> {
        let r = r?;
        match verify::expiry(T::NAME, r.expires()) {
            Ok(at) if at > now => None,
            _ => Some((T::NAME, r.expires().to_owned())),
        }
    }
    check(Some(&v.root), now)
        .or_else(|| check(v.timestamp.as_ref(), now))
        .or_else(|| check(v.snapshot.as_ref(), now))
        .or_else(|| check(v.targets.as_ref(), now))
}

/// Refuses metadata with a role past its expiry, or never refreshed.
pub fn check_fresh(v: &Verified, now: jiff::Timestamp) -> HostResult<()> {
    if v.targets.is_none() {
        return Err(HostError::new(
            ErrorCode::CatalogMetadataInvalid,
            "the catalog was never refreshed",
        ));
    }
    if let Some((role, expires)) = first_expired(v, now) {
        return Err(HostError::new(
            ErrorCode::CatalogMetadataExpired,
            format!("the catalog's {role} metadata expired at {expires}"),
        )
        .with("role", role)
        .with("expires", expires));
    }
    Ok(())
}
