//! One function per command: call host-core, then render.

use std::path::Path;

use serde_json::{json, Value};

use super::args::{Cli, Command, DataChoice, InstallArgs, SourceArgs, TrustCommand};
use super::install_run::{install_source, print_installed, with_limit_flags};
use super::output::{self, Progress};
use super::prompt;
use super::store_open::open_locked;
use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::foundation::limits::Limits;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::install::inspect::{inspect, InspectOptions};
use host_core::install::package::catalog::CatalogSelect;
use host_core::install::package::source::resolve;
use host_core::install::signature::{self, TrustedKey};
use host_core::install::store::{DataMode, InstallMode, Store};

pub fn dispatch(cli: Cli) -> HostResult<i32> {
    let dir = match &cli.data_dir {
        Some(d) => DataDir::at(d),
        None => DataDir::from_env()?,
    };
    let json = cli.json;
    match cli.command {
        Command::Open(a) => {
            if let Some(file) = a
                .app
                .as_deref()
                .filter(|a| crate::launch::names_a_package(a))
            {
                if a.entry.is_some() {
                    return Err(HostError::new(
                        ErrorCode::CliUsage,
                        "--entry opens an installed app's entry, not a package file",
                    ));
                }
                return crate::launch::open_window_for_package(
                    cli.data_dir.as_deref(),
                    Path::new(file),
                );
            }
            if let Some(app) = &a.app {
                // Fail here, with the CLI's exit codes, rather than in an empty window.
                let store = Store::open(&dir)?;
                if a.entry.is_none() {
                    host_core::hosting::bridge::mounting::default_entry(&store, app)?;
                } else {
                    store.active_app(app)?;
                }
            }
            crate::launch::open_window(
                cli.data_dir.as_deref(),
                a.app.as_deref(),
                a.entry.as_deref(),
            )
        }
        Command::Validate(a) => validate(&dir, &a, json),
        Command::Inspect(a) => inspect_cmd(&dir, &a, json),
        Command::Install(a) if super::catalog::is_app_spec(&a.source.source) => {
            super::catalog_install::install_by_id(&dir, &a, json)
        }
        Command::Install(a) => install(&dir, &a, InstallMode::Install, json),
        Command::Update(a) => match super::catalog_install::package_update(&a) {
            Some(args) => install(&dir, &args, InstallMode::Update, json),
            None => super::catalog_install::update(&dir, a, json),
        },
        Command::Catalog(c) => super::catalog::run(&dir, c, json),
        Command::List => {
            let apps = Store::open(&dir)?.list_apps()?;
            output::list(&apps, json);
            Ok(0)
        }
        Command::Rollback { app } => {
            let store = open_locked(&dir, json)?;
            let s = store.rollback(&app)?;
            output::done(
                json,
                &format!("{} rolled back to {}", s.name, s.active_version),
                &serde_json::to_value(&s).unwrap_or_default(),
            );
            Ok(0)
        }
        Command::Disable { app } => set_enabled(&dir, &app, false, json),
        Command::Enable { app } => set_enabled(&dir, &app, true, json),
        Command::Uninstall(a) => uninstall(&dir, &a.app, &a.data, a.yes, json),
        Command::Verify { app, quick } => {
            let (store, recovered) = Store::open_locked(&dir)?;
            let report = store.verify(app.as_deref(), !quick, recovered)?;
            output::verify(&report, json);
            Ok(if report.ok { 0 } else { 1 })
        }
        Command::CleanupPlan { app, delete_data } => {
            let store = Store::open(&dir)?;
            let plan = store.cleanup_plan(
                &app,
                if delete_data {
                    DataMode::DeleteData
                } else {
                    DataMode::KeepData
                },
            )?;
            output::cleanup_plan(&plan, json);
            Ok(0)
        }
        Command::Readiness { app } => {
            let store = Store::open(&dir)?;
            let report = store.readiness(&app, &HostProfile::current())?;
            output::readiness(&report, json);
            Ok(0)
        }
        Command::Grants { app } => super::grants::list(&dir, &app, json),
        Command::Grant { app, permission } => super::grants::grant(&dir, &app, &permission, json),
        Command::Revoke { app, permission } => super::grants::revoke(&dir, &app, &permission, json),
        Command::Secrets(c) => super::secrets::run(&dir, c, json),
        Command::Files(c) => super::files::run(&dir, c, json),
        Command::Tools(c) => super::tools::run(&dir, c, json),
        Command::Knowledge(c) => super::knowledge::run(&dir, c, json),
        Command::Services(c) => super::services::run(&dir, c, json),
        Command::Workflow(c) => super::workflow::run(&dir, c, json),
        Command::Export { app, out } => super::records::export_data(&dir, &app, &out, json),
        Command::Artifacts { app } => super::records::artifacts(&dir, &app, json),
        Command::Evidence { app, kind, export } => {
            super::records::evidence(&dir, &app, kind.as_deref(), export.as_deref(), json)
        }
        Command::Audit { app, limit } => {
            let rows = Store::open(&dir)?.audit_log(app.as_deref(), limit)?;
            output::audit(&rows, json);
            Ok(0)
        }
        Command::Lock { dir: pkg } => lock(&pkg, None, json),
        Command::Sign { dir: pkg, key } => lock(&pkg, Some(&key), json),
        Command::Keygen { out, name } => keygen(&out, &name, json),
        Command::Trust(t) => trust(&dir, t, json),
        Command::Config { key, value, unset } => config(&dir, key, value, unset, json),
        Command::Model(m) => super::model::run(&dir, m, json),
        Command::AppServer { stdio } => super::app_server::run(&dir, stdio),
        Command::Dev(a) => super::dev::run(&dir, cli.data_dir.as_deref(), a, json),
        Command::New(a) => super::author::new_app(&a, json),
        Command::Sdk(a) => super::author::sdk(&a, json),
        Command::Serve { port, listen } => {
            crate::serve::run(dir, crate::serve::ServeOptions { port, json, listen })
        }
    }
}

/// Trusted keys and limits in effect, reading the store once, and only if it exists (inspecting
/// must not create a data directory). Opening host.db is a large part of a small `inspect`.
fn trusted_keys_and_limits(dir: &DataDir, a: &SourceArgs) -> HostResult<(Vec<TrustedKey>, Limits)> {
    let (keys, l) = if dir.db_path().exists() {
        let store = Store::open(dir)?;
        (store.trusted_keys()?, store.limits()?)
    } else {
        (Vec::new(), Limits::default())
    };
    Ok((keys, with_limit_flags(l, a)))
}

fn select(a: &SourceArgs) -> CatalogSelect {
    CatalogSelect {
        app: a.app.clone(),
        version: a.release.clone(),
    }
}

fn validate(dir: &DataDir, a: &SourceArgs, json: bool) -> HostResult<i32> {
    let source = resolve(&a.source, &select(a))?;
    let (keys, limits) = trusted_keys_and_limits(dir, a)?;
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(limits, &profile, &keys);
    let mut progress = Progress::new("Reading", json);
    let result = inspect(&source, &opts, None, &mut |d, t| progress.update(d, t));
    progress.finish();
    let report = match result {
        Ok(mut insp) => {
            let authoring = insp.authoring_findings(&limits);
            insp.manifest.findings.extend(authoring);
            let ok = insp.error_count() == 0;
            let blocker = insp.install_blocker(true);
            json!({
                "ok": ok && blocker.is_none(),
                "status": if !ok || blocker.is_some() { "failed" } else if insp.manifest.findings.is_empty() { "passed" } else { "needs-review" },
                "command": "validate",
                "app": insp.manifest.name(),
                "version": insp.manifest.version(),
                "findings": insp.manifest.findings,
                "error": blocker.filter(|_| ok),
                "trust": insp.signature,
                "manifestHash": insp.manifest_hash,
                "packageHash": insp.read.package_hash,
                "filesDigest": insp.files_digest,
            })
        }
        Err(e)
            if matches!(
                e.code.class(),
                host_core::foundation::error::ErrorClass::Rejected
            ) =>
        {
            json!({
                "ok": false, "status": "failed", "command": "validate",
                "findings": [{"severity": "error", "code": e.code.as_str(), "path": e.details.get("path").cloned().unwrap_or(json!("package")), "message": e.message}],
                "error": e,
            })
        }
        Err(e) => return Err(e),
    };
    output::validate(&report, json);
    Ok(if report["ok"] == json!(true) { 0 } else { 1 })
}

fn inspect_cmd(dir: &DataDir, a: &SourceArgs, json: bool) -> HostResult<i32> {
    let source = resolve(&a.source, &select(a))?;
    let (keys, limits) = trusted_keys_and_limits(dir, a)?;
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(limits, &profile, &keys);
    let mut progress = Progress::new("Reading", json);
    let insp = inspect(&source, &opts, None, &mut |d, t| progress.update(d, t));
    progress.finish();
    let insp = insp?;
    output::inspection(&insp, json);
    Ok(0)
}

pub(super) fn install(
    dir: &DataDir,
    a: &InstallArgs,
    mode: InstallMode,
    json: bool,
) -> HostResult<i32> {
    let source = resolve(&a.source.source, &select(&a.source))?;
    let (summary, plan) = install_source(dir, &source, a, mode, json)?;
    print_installed(json, mode, &summary, &plan);
    Ok(0)
}

fn set_enabled(dir: &DataDir, app: &str, enabled: bool, json: bool) -> HostResult<i32> {
    let store = open_locked(dir, json)?;
    let s = store.set_enabled(app, enabled)?;
    output::done(
        json,
        &format!(
            "{} {}",
            s.name,
            if enabled { "enabled" } else { "disabled" }
        ),
        &serde_json::to_value(&s).unwrap_or_default(),
    );
    Ok(0)
}

fn uninstall(
    dir: &DataDir,
    app: &str,
    data: &DataChoice,
    yes: bool,
    json: bool,
) -> HostResult<i32> {
    let mode = if data.keep_data {
        DataMode::KeepData
    } else if data.delete_data {
        DataMode::DeleteData
    } else {
        DataMode::ExportThenDelete
    };
    let store = open_locked(dir, json)?;
    if !yes {
        let plan = store.cleanup_plan(app, mode)?;
        if !prompt::interactive() {
            return Err(HostError::new(
                ErrorCode::InstallConsentRequired,
                "uninstalling needs confirmation: run on a terminal, or pass --yes",
            )
            .with("plan", &plan));
        }
        if !json {
            output::cleanup_plan(&plan, false);
        }
        if !prompt::confirm(&format!("Uninstall {app}?"))? {
            return Err(HostError::new(
                ErrorCode::InstallConsentDeclined,
                "nothing was removed",
            ));
        }
    }
    let outcome = store.uninstall(app, mode, data.export.as_deref())?;
    let mut text = format!(
        "{app} uninstalled: {} version(s), {} file(s) removed",
        outcome.plan.versions.len(),
        outcome.plan.blobs_removed.len()
    );
    match mode {
        DataMode::KeepData => text.push_str(&format!("; data kept in {}", outcome.plan.data_dir)),
        _ => text.push_str(&format!(
            "; {} data file(s) deleted",
            outcome.plan.data_files_removed.len()
        )),
    }
    if let Some(e) = &outcome.exported_to {
        text.push_str(&format!("; data exported to {e}"));
    }
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
    output::warnings(json, &outcome.warnings);
    output::done(
        json,
        &text,
        &serde_json::to_value(&outcome).unwrap_or_default(),
    );
    Ok(0)
}

fn read_json_file(path: &Path) -> HostResult<Value> {
    let bytes = std::fs::read(path)
        .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot read", path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        HostError::new(
            ErrorCode::KeyInvalid,
            format!("{} is not a key file: {e}", path.display()),
        )
    })
}

/// `apphost lock` and `apphost sign`: hash the folder, write app.lock.json (and the signature).
fn lock(pkg: &Path, key: Option<&Path>, json: bool) -> HostResult<i32> {
    let signing = key
        .map(|k| read_json_file(k).and_then(|d| signature::parse_secret_key(&d)))
        .transpose()?;
    let source = resolve(pkg, &CatalogSelect::default())?;
    if source.kind != host_core::install::package::SourceKind::Folder {
        return Err(HostError::new(
            ErrorCode::SourceUnsupported,
            "lock and sign work on a package folder",
        ));
    }
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(Limits::default(), &profile, &[]);
    let mut reader = host_core::install::package::PackageReader::open(&source, &opts.limits)?;
    let read = host_core::install::package::pipeline::read_package(
        &mut reader,
        None,
        &opts.limits,
        &mut |_| {},
    )?;
    let lock_text = host_core::install::lockfile::render(&read.files);
    let write = |name: &str, text: &str| -> HostResult<()> {
        let p = source.path.join(name);
        std::fs::write(&p, text)
            .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot write", &p, e))
    };
    write(host_core::foundation::hashing::LOCK_FILE, &lock_text)?;
    let mhash = host_core::foundation::hashing::manifest_hash(
        read.captured
            .get("APP.md")
            .map(Vec::as_slice)
            .unwrap_or_default(),
    );
    let digest = host_core::foundation::hashing::files_digest(&read.files);
    let mut result = json!({"lockFile": source.path.join(host_core::foundation::hashing::LOCK_FILE), "files": read.files.len(), "manifestHash": mhash, "filesDigest": digest});
    if let Some(k) = signing {
        let block = signature::sign_block(&k, &mhash, &digest);
        write(
            host_core::foundation::hashing::SIGNATURE_FILE,
            &signature::render_signature_file(&block),
        )?;
        result["signatureFile"] = json!(source
            .path
            .join(host_core::foundation::hashing::SIGNATURE_FILE));
        result["keyId"] = block["keyId"].clone();
    }
    let text = match result.get("keyId") {
        Some(k) => format!(
            "wrote app.lock.json ({} files) and app.signature.yaml (key {})",
            read.files.len(),
            k.as_str().unwrap_or("")
        ),
        None => format!("wrote app.lock.json ({} files)", read.files.len()),
    };
    output::done(json, &text, &result);
    Ok(0)
}

fn keygen(out: &Path, name: &str, json: bool) -> HostResult<i32> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let key = signature::generate_key()?;
    let secret = signature::secret_key_json(&key, name);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(out)
        .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot create key file", out, e))?;
    f.write_all(
        serde_json::to_string_pretty(&secret)
            .unwrap_or_default()
            .as_bytes(),
    )
    .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot write", out, e))?;
    let public = signature::public_key_json(&key.verifying_key(), name);
    let pub_path = out.with_extension("pub.json");
    std::fs::write(
        &pub_path,
        serde_json::to_string_pretty(&public).unwrap_or_default(),
    )
    .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot write", &pub_path, e))?;
    output::done(
        json,
        &format!(
            "wrote secret key {} and public key {} ({})",
            out.display(),
            pub_path.display(),
            public["keyId"].as_str().unwrap_or("")
        ),
        &json!({"secretKeyFile": out, "publicKeyFile": pub_path, "keyId": public["keyId"], "publicKey": public["publicKey"]}),
    );
    Ok(0)
}

fn trust(dir: &DataDir, cmd: TrustCommand, json: bool) -> HostResult<i32> {
    match cmd {
        TrustCommand::List => {
            let keys = Store::open(dir)?.trusted_keys()?;
            output::trusted(&keys, json);
        }
        TrustCommand::Add { key_file, name } => {
            let (vk, file_name) = match read_json_file(&key_file) {
                Ok(doc) => signature::parse_public_key_doc(&doc)?,
                Err(_) => {
                    let text = std::fs::read_to_string(&key_file).map_err(|e| {
                        HostError::io(ErrorCode::SourceIo, "cannot read", &key_file, e)
                    })?;
                    (signature::parse_public_key(&text)?, None)
                }
            };
            let doc = signature::public_key_json(&vk, "");
            let key = TrustedKey {
                key_id: doc["keyId"].as_str().unwrap_or_default().to_owned(),
                public_key: doc["publicKey"].as_str().unwrap_or_default().to_owned(),
                name: name.or(file_name).unwrap_or_else(|| "publisher".into()),
            };
            let store = open_locked(dir, json)?;
            let key = store.add_trusted_key(&key)?;
            output::done(
                json,
                &format!("trusting {} ({})", key.key_id, key.name),
                &serde_json::to_value(&key).unwrap_or_default(),
            );
        }
        TrustCommand::Remove { key_id } => {
            let store = open_locked(dir, json)?;
            let key = store.remove_trusted_key(&key_id)?;
            output::done(
                json,
                &format!("no longer trusting {} ({})", key.key_id, key.public_key),
                &serde_json::to_value(&key).unwrap_or_default(),
            );
        }
    }
    Ok(0)
}

fn config(
    dir: &DataDir,
    key: Option<String>,
    value: Option<String>,
    unset: bool,
    json: bool,
) -> HostResult<i32> {
    match (key, value, unset) {
        (Some(k), Some(v), _) => {
            let store = open_locked(dir, json)?;
            store.set_setting(&k, Some(&v))?;
            output::done(json, &format!("{k} = {v}"), &json!({"key": k, "value": v}));
        }
        (Some(k), None, true) => {
            let store = open_locked(dir, json)?;
            store.set_setting(&k, None)?;
            output::done(
                json,
                &format!("{k} reset to its default"),
                &json!({"key": k, "value": null}),
            );
        }
        (key, None, _) => {
            let store = Store::open(dir)?;
            let stored = store.settings()?;
            let effective = store.limits()?;
            let all = json!({
                "limits.maxFiles": effective.max_files,
                "limits.maxUnpackedBytes": effective.max_unpacked_bytes,
                "limits.maxManifestBytes": effective.max_manifest_bytes,
                "limits.maxCompressionRatio": effective.max_compression_ratio,
            });
            let shown: Value = match &key {
                Some(k) => {
                    let v = all.get(k).cloned().ok_or_else(|| {
                        HostError::new(ErrorCode::SettingInvalid, format!("unknown setting {k:?}"))
                            .with("key", k)
                    })?;
                    json!({ k.clone(): v })
                }
                None => all,
            };
            if json {
                output::done(true, "", &shown);
            } else {
                for (k, v) in shown.as_object().into_iter().flatten() {
                    let origin = if stored.contains_key(k) {
                        "set"
                    } else {
                        "default"
                    };
                    out_line!("{k} = {v} ({origin})");
                }
            }
        }
        (None, Some(_), _) => unreachable!("clap requires a key before a value"),
    }
    Ok(0)
}
