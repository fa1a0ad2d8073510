//! `apphost artifacts <app>`, `apphost evidence <app> [--kind K] [--export FILE]` and
//! `apphost export <app> --out FILE`: what an app keeps (through `lime.artifacts`,
//! `lime.evidence`, and its whole data area), read-only (RuntimeCore's stores are
//! opened read-only: nothing is created, cleaned up or changed, even while the window runs the
//! app). Works for kept data of an uninstalled app too.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use runtime_core::app_artifacts::{AppArtifacts, ArtifactMeta, MAX_LIST_LIMIT};
use runtime_core::app_evidence::{AppEvidence, EvidenceRecord};
use runtime_core::{durable, partial_export_path, AppId};
use serde_json::{json, Value};

use super::output;
use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::foundation::paths::DataDir;
use host_core::install::store::Store;

/// The app's data directory, after checking the app is installed or has kept data.
fn app_dir(dir: &DataDir, app: &str) -> HostResult<(PathBuf, Value)> {
    let not_installed = || {
        HostError::new(
            ErrorCode::AppNotInstalled,
            format!("{app} is not installed and has no data"),
        )
        .with("app", app)
    };
    let id = AppId::new(app).map_err(|_| not_installed())?;
    let data = dir.apps_data().join(id.as_str());
    let info = match Store::open(dir).and_then(|s| s.active_app(app)) {
        Ok(a) => json!({"appId": app, "appVersion": a.version,
                        "packageHash": a.package_hash, "manifestHash": a.manifest_hash}),
        Err(e) if e.code == ErrorCode::AppNotInstalled => {
            if std::fs::symlink_metadata(&data).is_err() {
                return Err(not_installed());
            }
            json!({"appId": app, "installed": false})
        }
        Err(e) => return Err(e),
    };
    Ok((data, info))
}

fn unreadable(app: &str, what: &str, e: impl std::fmt::Display) -> HostError {
    HostError::new(
        ErrorCode::AppDataUnreadable,
        format!("cannot read {app}'s {what}: {e}"),
    )
    .with("app", app)
}

fn all_artifacts(app: &str, store: &AppArtifacts) -> HostResult<Vec<ArtifactMeta>> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = store
            .list(cursor.as_deref(), MAX_LIST_LIMIT)
            .map_err(|e| unreadable(app, "artifacts", e))?;
        items.extend(page.items);
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => return Ok(items),
        }
    }
}

pub fn artifacts(dir: &DataDir, app: &str, json: bool) -> HostResult<i32> {
    let (data, _) = app_dir(dir, app)?;
    let store = AppArtifacts::open_read_only(&data).map_err(|e| unreadable(app, "artifacts", e))?;
    let (items, used) = match &store {
        Some(s) => (
            all_artifacts(app, s)?,
            s.used().map_err(|e| unreadable(app, "artifacts", e))?,
        ),
        None => (Vec::new(), 0),
    };
    if json {
        output::print_json(&json!({"app": app, "artifacts": items, "totalBytes": used}));
    } else if items.is_empty() {
        out_line!("{app} has no artifacts");
    } else {
        for m in &items {
            out_line!(
                "{}  {:>10}  {:<24}  {}  {}",
                m.id,
                m.size,
                m.mime_type,
                m.created_at,
                m.name
            );
        }
        out_line!(
            "{} artifact(s), {used} bytes stored (each distinct content once)",
            items.len()
        );
    }
    Ok(0)
}

pub fn evidence(
    dir: &DataDir,
    app: &str,
    kind: Option<&str>,
    export: Option<&Path>,
    json: bool,
) -> HostResult<i32> {
    let (data, info) = app_dir(dir, app)?;
    if let Some(k) = kind {
        runtime_core::app_evidence::check_kind(k).map_err(|e| {
            HostError::new(ErrorCode::CliUsage, format!("--kind: {e}")).with("kind", k)
        })?;
    }
    let ev = AppEvidence::open_read_only(&data).map_err(|e| unreadable(app, "evidence", e))?;
    if let Some(dest) = export {
        let arts =
            AppArtifacts::open_read_only(&data).map_err(|e| unreadable(app, "artifacts", e))?;
        let generated_at = runtime_core::app_artifacts::now_rfc3339();
        let pack = match &ev {
            Some(ev) => ev
                .export(info, kind, arts.as_ref(), &generated_at)
                .map_err(|e| unreadable(app, "evidence", e))?,
            None => json!({
                "schemaVersion": runtime_core::app_evidence::PACK_SCHEMA_VERSION,
                "app": info, "generatedAt": generated_at, "kind": kind,
                "records": [], "artifacts": [],
            }),
        };
        let records = pack["records"].as_array().map_or(0, Vec::len);
        write_new(dest, &pack)?;
        if json {
            output::print_json(
                &json!({"app": app, "exported": dest.display().to_string(), "records": records}),
            );
        } else {
            out_line!(
                "wrote {records} evidence record(s) of {app} to {}",
                dest.display()
            );
        }
        return Ok(0);
    }
    let mut records: Vec<EvidenceRecord> = Vec::new();
    if let Some(ev) = &ev {
        let mut cursor: Option<String> = None;
        loop {
            let page = ev
                .list(
                    kind,
                    cursor.as_deref(),
                    runtime_core::app_evidence::MAX_LIST_LIMIT,
                )
                .map_err(|e| unreadable(app, "evidence", e))?;
            records.extend(page.items);
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
    }
    if json {
        output::print_json(&json!({"app": app, "records": records}));
    } else if records.is_empty() {
        out_line!("{app} has no evidence records");
    } else {
        for r in &records {
            out_line!(
                "{}  {:<20}  {}  {}{}",
                r.id,
                r.kind,
                r.created_at,
                r.summary.lines().next().unwrap_or(""),
                if r.artifacts.is_empty() {
                    String::new()
                } else {
                    format!("  [{} artifact(s)]", r.artifacts.len())
                }
            );
        }
    }
    Ok(0)
}

/// Writes `pack` as pretty JSON to `dest` through a temporary file moved into place without
/// replacing anything, made durable; `dest` is either complete or absent.
fn write_new(dest: &Path, pack: &Value) -> HostResult<()> {
    let fail = |e: std::io::Error| {
        HostError::new(
            ErrorCode::ExportFailed,
            format!("cannot write {}: {e}", dest.display()),
        )
        .with("path", dest.display().to_string())
    };
    if std::fs::symlink_metadata(dest).is_ok() {
        return Err(fail(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "it already exists (never replaced)",
        )));
    }
    let tmp = partial_export_path(dest);
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        serde_json::to_writer_pretty(&mut f, pack).map_err(std::io::Error::other)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        drop(f);
        durable::rename_noreplace(&tmp, dest)?;
        durable::sync_parent(dest)
    })();
    if result.is_err() {
        std::fs::remove_file(&tmp).ok();
    }
    result.map_err(fail)
}

/// `apphost export <app> --out FILE`: the app's data as uninstall's `--export` zip, removing
/// nothing (the store, the app and its data stay as they were).
pub fn export_data(dir: &DataDir, app: &str, out: &Path, json: bool) -> HostResult<i32> {
    let outcome = Store::open(dir)?.export_data(app, out)?;
    for s in &outcome.export_skipped {
        output::note(
            json,
            &format!(
                "not exported: {} ({}: {})",
                s.path,
                output::entry_kind_words(s.kind),
                s.reason
            ),
        );
    }
    output::done(
        json,
        &format!(
            "wrote the data of {app} ({} file(s), {} bytes) to {}",
            outcome.files, outcome.bytes, outcome.exported_to
        ),
        &serde_json::to_value(&outcome).unwrap_or_default(),
    );
    Ok(0)
}
