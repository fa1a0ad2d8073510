//! The client's update workflow (TUF §5, the subset of `super::tuf`): root rotation, then
//! timestamp, snapshot, targets and the release files, each checked before the next is
//! fetched. It works on a copy: the caller saves the new state only when everything passed,
//! so any refusal leaves the trusted state as it was.
//!
//! What each step refuses:
//! - root `N+1`: not signed by a threshold of the trusted root's root keys *and* of its own,
//!   or not version `N+1` (`catalog.root_rotation_refused`: fast-forward, forged rotation).
//!   A rotation of the timestamp or snapshot keys drops the trusted timestamp and snapshot
//!   (recovery from a fast-forward attack).
//! - any role: wrong keys or threshold not met (`catalog.signature_invalid`), not JSON of the
//!   role's shape (`catalog.metadata_invalid`), past its expiry (`catalog.metadata_expired`),
//!   more bytes than its signed length or fixed bound (`catalog.metadata_too_large`).
//! - timestamp, snapshot, targets older than trusted (`catalog.rollback`), also the versions a
//!   snapshot lists.
//! - snapshot / targets whose version, length or hash differs from what the timestamp /
//!   snapshot signed (`catalog.metadata_mismatch`: mix-and-match).
//! - release files whose length or hash differs from the signed targets
//!   (`catalog.target_mismatch`).

use std::collections::BTreeMap;

use super::releases;
use super::state::TrustedState;
use super::trusted::{
    check_snapshot_matches, check_target, check_targets_match, meta_of, verify_state,
    SNAPSHOT_JSON, TARGETS_JSON,
};
use super::tuf::metadata::{Role, Root, Snapshot, Targets, Timestamp};
use super::tuf::verify::{
    check_meta_file, check_not_expired, check_root_shape, check_threshold, envelope, invalid,
    role_keys, typed, verify_role,
};
use crate::foundation::error::{ErrorCode, HostError, HostResult};

/// How the update workflow reads the catalog's files (HTTP in production, anything in tests).
pub trait Fetch {
    /// The file at `path` (relative to the catalog URL), at most `max` bytes
    /// (`catalog.metadata_too_large` past it); `None` when the server has no such file (404).
    fn fetch(&self, path: &str, max: u64) -> HostResult<Option<Vec<u8>>>;
}

/// The most root rotations one refresh follows.
const MAX_ROOT_ROTATIONS: u64 = 32;
/// The most release files a catalog may sign, and their total bytes.
pub const MAX_RELEASE_FILES: usize = 20_000;
const MAX_RELEASE_BYTES: u64 = 64 * 1024 * 1024;

fn required(fetch: &dyn Fetch, path: &str, max: u64) -> HostResult<Vec<u8>> {
    fetch.fetch(path, max)?.ok_or_else(|| {
        HostError::new(
            ErrorCode::CatalogFetchFailed,
            format!("the catalog has no {path} (HTTP 404)"),
        )
        .with("path", path)
    })
}

fn rollback(role: &str, got: u64, trusted: u64) -> HostError {
    HostError::new(
        ErrorCode::CatalogRollback,
        format!("the catalog's {role} metadata is version {got}, older than the trusted {trusted}"),
    )
    .with("role", role)
    .with("version", got)
    .with("trustedVersion", trusted)
}

fn utf8(role: &str, bytes: Vec<u8>) -> HostResult<String> {
    String::from_utf8(bytes).map_err(|_| invalid(role, "not UTF-8"))
}

/// One refresh: the new trusted state, or the refusal (nothing saved either way).
pub fn refresh(
    state: &TrustedState,
    fetch: &dyn Fetch,
    now: jiff::Timestamp,
) -> HostResult<TrustedState> {
    let trusted = verify_state(state)?;
    let mut next = state.clone();
    let mut root = trusted.root;
    let mut trusted_ts = trusted.timestamp;
    let mut trusted_snap = trusted.snapshot;
    let trusted_targets = trusted.targets;

    // 1. Root rotations.
    for _ in 0..MAX_ROOT_ROTATIONS {
        let n = root.version + 1;
        let Some(bytes) = fetch.fetch(&format!("metadata/{n}.root.json"), Root::MAX_BYTES)? else {
            break;
        };
        let new = rotate(&root, &bytes, n)?;
        if role_keys(&new, "timestamp")? != role_keys(&root, "timestamp")?
            || role_keys(&new, "snapshot")? != role_keys(&root, "snapshot")?
        {
            trusted_ts = None;
            trusted_snap = None;
            next.timestamp = None;
            next.snapshot = None;
        }
        root = new;
        next.root = utf8("root", bytes)?;
    }
    check_not_expired(&root, now)?;

    // 2. Timestamp.
    let ts_bytes = required(fetch, "metadata/timestamp.json", Timestamp::MAX_BYTES)?;
    let mut ts: Timestamp = verify_role(&ts_bytes, &root)?;
    let snap_meta = meta_of("timestamp", &ts.meta, SNAPSHOT_JSON)?.clone();
    let mut ts_text = Some(utf8("timestamp", ts_bytes)?);
    if let Some(old) = &trusted_ts {
        if ts.version < old.version {
            return Err(rollback("timestamp", ts.version, old.version));
        }
        let old_snap = meta_of("timestamp", &old.meta, SNAPSHOT_JSON)?;
        if snap_meta.version < old_snap.version {
            return Err(rollback("snapshot", snap_meta.version, old_snap.version));
        }
        if ts.version == old.version {
            // The same version again: keep the one already trusted (TUF §5.4.3.1).
            ts = old.clone();
            ts_text = next.timestamp.clone();
        }
    }
    check_not_expired(&ts, now)?;
    let snap_meta = meta_of("timestamp", &ts.meta, SNAPSHOT_JSON)?.clone();

    // 3. Snapshot.
    let max = snap_meta
        .length
        .unwrap_or(Snapshot::MAX_BYTES)
        .min(Snapshot::MAX_BYTES);
    let snap_bytes = required(fetch, "metadata/snapshot.json", max)?;
    check_meta_file(
        "snapshot",
        &snap_bytes,
        snap_meta.length,
        snap_meta.hashes.as_ref(),
    )?;
    let snap: Snapshot = verify_role(&snap_bytes, &root)?;
    check_snapshot_matches(&ts, &snap)?;
    if let Some(old) = &trusted_snap {
        if snap.version < old.version {
            return Err(rollback("snapshot", snap.version, old.version));
        }
        for (name, m) in &old.meta {
            match snap.meta.get(name) {
                Some(now_m) if now_m.version >= m.version => {}
                Some(now_m) => return Err(rollback(name, now_m.version, m.version)),
                None => return Err(rollback(name, 0, m.version)),
            }
        }
    }
    check_not_expired(&snap, now)?;

    // 4. Targets.
    let t_meta = meta_of("snapshot", &snap.meta, TARGETS_JSON)?.clone();
    let max = t_meta
        .length
        .unwrap_or(Targets::MAX_BYTES)
        .min(Targets::MAX_BYTES);
    let t_bytes = required(fetch, "metadata/targets.json", max)?;
    check_meta_file("targets", &t_bytes, t_meta.length, t_meta.hashes.as_ref())?;
    let targets: Targets = verify_role(&t_bytes, &root)?;
    check_targets_match(&snap, &targets)?;
    if let Some(old) = &trusted_targets {
        if targets.version < old.version {
            return Err(rollback("targets", targets.version, old.version));
        }
    }
    check_not_expired(&targets, now)?;
    check_target_paths(&targets)?;

    // 5. Release files.
    let files = fetch_release_files(&targets, state, fetch)?;

    next.timestamp = ts_text;
    next.snapshot = Some(utf8("snapshot", snap_bytes)?);
    next.targets = Some(utf8("targets", t_bytes)?);
    next.files = files;
    Ok(next)
}

/// Checks root `n` against the trusted root and itself.
fn rotate(trusted: &Root, bytes: &[u8], n: u64) -> HostResult<Root> {
    let refused = |why: String| {
        HostError::new(
            ErrorCode::CatalogRootRotationRefused,
            format!("the catalog's root {n} is refused: {why}"),
        )
        .with("version", n)
    };
    let env = envelope("root", bytes)?;
    check_threshold("root", &env, &trusted.keys, role_keys(trusted, "root")?).map_err(|e| {
        refused(format!(
            "not signed by the trusted root's keys ({})",
            e.message
        ))
    })?;
    let new: Root = typed(&env)?;
    check_root_shape(&new)?;
    check_threshold("root", &env, &new.keys, role_keys(&new, "root")?)
        .map_err(|e| refused(format!("not signed by its own root keys ({})", e.message)))?;
    if new.version != n {
        return Err(refused(format!("it says version {}", new.version)));
    }
    Ok(new)
}

/// Target paths: relative, `/`-separated, no empty, `.` or `..` segment, no backslash or
/// control character, at most 512 bytes; every target has a SHA-256.
fn check_target_paths(targets: &Targets) -> HostResult<()> {
    for (path, t) in &targets.targets {
        let bad_path = path.is_empty()
            || path.len() > 512
            || path.starts_with('/')
            || path.contains('\\')
            || path.chars().any(char::is_control)
            || path
                .split('/')
                .any(|s| s.is_empty() || s == "." || s == "..");
        let sha_ok = t.sha256().len() == 64 && t.sha256().bytes().all(|b| b.is_ascii_hexdigit());
        if bad_path || !sha_ok {
            return Err(invalid(
                "targets",
                format!("target {path:?} has a bad path or no sha256"),
            ));
        }
    }
    Ok(())
}

fn fetch_release_files(
    targets: &Targets,
    state: &TrustedState,
    fetch: &dyn Fetch,
) -> HostResult<BTreeMap<String, String>> {
    let paths: Vec<(&String, _)> = targets
        .targets
        .iter()
        .filter(|(p, _)| p.starts_with("releases/") && p.ends_with(".json"))
        .collect();
    if paths.len() > MAX_RELEASE_FILES {
        return Err(invalid(
            "targets",
            format!("more than {MAX_RELEASE_FILES} release files"),
        ));
    }
    let total: u64 = paths.iter().map(|(_, t)| t.length).sum();
    if total > MAX_RELEASE_BYTES {
        return Err(HostError::new(
            ErrorCode::CatalogMetadataTooLarge,
            format!("the release files total {total} bytes, more than {MAX_RELEASE_BYTES}"),
        ));
    }
    let mut out = BTreeMap::new();
    for (path, target) in paths {
        let kept = state
            .files
            .get(path)
            .filter(|b| check_target(path, b.as_bytes(), target).is_ok());
        let body = match kept {
            Some(b) => b.clone(),
            None => {
                let bytes = fetch
                    .fetch(&format!("targets/{path}"), target.length)
                    .map_err(|e| {
                        if e.code == ErrorCode::CatalogMetadataTooLarge {
                            HostError::new(
                                ErrorCode::CatalogTargetTooLarge,
                                format!("{path}: more bytes than the {} signed", target.length),
                            )
                            .with("path", path.as_str())
                        } else {
                            e
                        }
                    })?
                    .ok_or_else(|| {
                        HostError::new(
                            ErrorCode::CatalogFetchFailed,
                            format!("the catalog has no targets/{path} (HTTP 404)"),
                        )
                    })?;
                check_target(path, &bytes, target)?;
                utf8("targets", bytes)?
            }
        };
        releases::parse(path, body.as_bytes())?;
        out.insert(path.clone(), body);
    }
    Ok(out)
}

/// The role whose expiry bounds how long a catalog can be used without a refresh.
pub fn earliest_expiry(v: &super::trusted::Verified) -> Option<String> {
    let mut all: Vec<&str> = vec![v.root.expires()];
    all.extend(v.timestamp.as_ref().map(|r| r.expires()));
    all.extend(v.snapshot.as_ref().map(|r| r.expires()));
    all.extend(v.targets.as_ref().map(|r| r.expires()));
    all.into_iter()
        .filter_map(|e| e.parse::<jiff::Timestamp>().ok())
        .min()
        .map(|t| t.to_string())
}
