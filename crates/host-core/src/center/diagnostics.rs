//! The diagnostics page: the audit log filtered by app, capability and decision; "verify
//! store"; and a diagnostics bundle (a zip) for bug reports that holds no secret, no secret
//! ref and no secret name: settings are copied from an allowlist only, and audit rows about
//! secrets and the model key keep their action but not their details.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{json, Value};

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;
use crate::hosting::bridge::host::Diagnostics;
use crate::hosting::surface::serve::ServeRefusal;
use crate::install::store::{AuditQuery, AuditRow, Store, VerifyReport};

/// The audit log, newest first, filtered (`limit` defaults to 100, at most 1000).
pub fn audit(dir: &DataDir, q: &AuditQuery) -> HostResult<Vec<AuditRow>> {
    let mut q = q.clone();
    if q.limit == 0 {
        q.limit = 100;
    }
    Store::open(dir)?.audit_query(&q)
}

/// Checks the store: every blob re-hashed unless `quick`. Takes the lock (recovering an
/// interrupted operation first, which the report lists).
pub fn verify_store(dir: &DataDir, quick: bool) -> HostResult<VerifyReport> {
    let (store, recovered) = Store::open_locked(dir)?;
    store.verify(None, !quick, recovered)
}

/// What only the running host knows (the window's or the server's refusals), for the bundle.
#[derive(Debug, Clone, Default)]
pub struct LiveDiagnostics {
    /// Refused bridge messages.
    pub bridge: Diagnostics,
    /// Refused app file requests (`serve.tampered`: bytes no longer matching the installed hash).
    pub serve_refusals: Vec<ServeRefusal>,
}

/// Where a bundle was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Bundle {
    pub path: String,
    pub bytes: u64,
}

/// Audit rows in a bundle.
pub const BUNDLE_AUDIT_ROWS: usize = 1000;

/// Settings a bundle may carry; every other key (secret bindings, the model key's ref) is
/// left out, and so is the model endpoint (a URL may carry credentials).
fn bundle_settings(store: &Store) -> HostResult<Value> {
    let stored = store.settings()?;
    let l = store.limits()?;
    let omitted = stored
        .keys()
        .filter(|k| !k.starts_with("limits.") && k.as_str() != super::settings::THEME_KEY)
        .count();
    Ok(json!({
        "limits": {
            "maxFiles": l.max_files,
            "maxUnpackedBytes": l.max_unpacked_bytes,
            "maxManifestBytes": l.max_manifest_bytes,
            "maxCompressionRatio": l.max_compression_ratio,
        },
        "theme": super::settings::theme(store)?,
        "modelConfigured": stored.contains_key(crate::foundation::setting_keys::MODEL_BASE_URL),
        "omittedSettings": omitted,
    }))
}

/// Audit rows without the details of the ones about secrets and model settings.
fn redacted(rows: Vec<AuditRow>) -> Vec<AuditRow> {
    rows.into_iter()
        .map(|mut r| {
            if r.action.starts_with("secret") || r.action.starts_with("model") {
                r.details = json!("omitted from diagnostics");
            }
            r
        })
        .collect()
}

/// Writes `apphost-diagnostics-<time>.zip` into `<data>/diagnostics/`: `host.json` (version,
/// apps), `audit.json`, `bridge-refusals.json`, `file-refusals.json`, `verify.json`,
/// `settings.json`. Written to a temporary name and renamed: a failed bundle leaves no file.
pub fn diagnostics_bundle(dir: &DataDir, live: &LiveDiagnostics) -> HostResult<Bundle> {
    let verify = verify_store(dir, false)?;
    let store = Store::open(dir)?;
    let apps: Vec<Value> = store
        .list_apps()?
        .into_iter()
        .map(|a| {
            json!({"id": a.name, "version": a.active_version, "enabled": a.enabled,
                   "trust": a.trust, "sideloaded": a.sideloaded, "readiness": a.readiness,
                   "packageHash": a.package_hash})
        })
        .collect();
    let audit_rows = redacted(store.audit_query(&AuditQuery {
        limit: BUNDLE_AUDIT_ROWS,
        ..AuditQuery::default()
    })?);
    let generated_at = jiff::Timestamp::now();
    let files: Vec<(&str, Value)> = vec![
        (
            "host.json",
            json!({"version": env!("CARGO_PKG_VERSION"), "generatedAt": generated_at.to_string(), "apps": apps}),
        ),
        (
            "audit.json",
            serde_json::to_value(&audit_rows).unwrap_or_default(),
        ),
        (
            "bridge-refusals.json",
            serde_json::to_value(&live.bridge).unwrap_or_default(),
        ),
        (
            "file-refusals.json",
            serde_json::to_value(&live.serve_refusals).unwrap_or_default(),
        ),
        (
            "verify.json",
            serde_json::to_value(&verify).unwrap_or_default(),
        ),
        ("settings.json", bundle_settings(&store)?),
    ];
    let folder = dir.root().join("diagnostics");
    runtime_core::private_fs::create_private_dir(&folder)
        .map_err(|e| io("cannot create", &folder, e))?;
    let stamp = generated_at.strftime("%Y%m%dT%H%M%SZ").to_string();
    let dest = folder.join(format!(
        "apphost-diagnostics-{stamp}-{}.zip",
        &super::random_id()?[..8]
    ));
    let tmp = dest.with_extension("zip.tmp");
    let written = write_zip(&tmp, &files)
        .and_then(|()| fs::rename(&tmp, &dest).map_err(|e| io("cannot rename", &tmp, e)));
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    let bytes = fs::metadata(&dest).map(|m| m.len()).unwrap_or(0);
    prune_bundles(&folder, KEEP_BUNDLES);
    Ok(Bundle {
        path: dest.display().to_string(),
        bytes,
    })
}

/// How many diagnostics bundles are kept; older ones are removed when a new one is written.
pub const KEEP_BUNDLES: usize = 5;

/// Keeps the `keep` newest bundles in `folder` (names carry a sortable UTC stamp) and removes the
/// rest, and any temp file a crashed export left. Best effort: a file that cannot be removed stays.
fn prune_bundles(folder: &Path, keep: usize) {
    let Ok(read) = fs::read_dir(folder) else {
        return;
    };
    let mut bundles: Vec<(String, PathBuf)> = Vec::new();
    for entry in read.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("apphost-diagnostics-") {
            continue;
        }
        if name.ends_with(".zip.tmp") {
            let _ = fs::remove_file(entry.path());
        } else if name.ends_with(".zip") {
            bundles.push((name, entry.path()));
        }
    }
    bundles.sort();
    let excess = bundles.len().saturating_sub(keep);
    for (_, path) in bundles.into_iter().take(excess) {
        let _ = fs::remove_file(path);
    }
}

fn io(what: &str, path: &Path, e: std::io::Error) -> HostError {
    HostError::io(ErrorCode::StoreIo, what, path, e)
}

fn write_zip(path: &Path, files: &[(&str, Value)]) -> HostResult<()> {
    let file = runtime_core::private_fs::create_private_file(path)
        .map_err(|e| io("cannot create", path, e))?;
    let mut zip = zip::ZipWriter::new(file);
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let zerr = |e: zip::result::ZipError| {
        HostError::new(
            ErrorCode::StoreIo,
            format!("cannot write {}: {e}", path.display()),
        )
    };
    for (name, value) in files {
        zip.start_file(*name, opts).map_err(zerr)?;
        let text = serde_json::to_vec_pretty(value).unwrap_or_default();
        zip.write_all(&text)
            .map_err(|e| io("cannot write", path, e))?;
    }
    let file = zip.finish().map_err(zerr)?;
    file.sync_all().map_err(|e| io("cannot sync", path, e))
}

#[cfg(test)]
mod prune_tests {
    use super::*;

    #[test]
    fn only_the_newest_bundles_are_kept_and_temp_files_go() {
        let tmp = tempfile::tempdir().unwrap();
        let names = [
            "apphost-diagnostics-20260101T000000Z-aaaaaaaa.zip",
            "apphost-diagnostics-20260102T000000Z-bbbbbbbb.zip",
            "apphost-diagnostics-20260103T000000Z-cccccccc.zip",
            "apphost-diagnostics-20260104T000000Z-dddddddd.zip.tmp",
            "unrelated.zip",
        ];
        for n in names {
            fs::write(tmp.path().join(n), b"x").unwrap();
        }
        prune_bundles(tmp.path(), 2);
        let mut left: Vec<String> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "apphost-diagnostics-20260102T000000Z-bbbbbbbb.zip",
                "apphost-diagnostics-20260103T000000Z-cccccccc.zip",
                "unrelated.zip"
            ]
        );
    }
}
