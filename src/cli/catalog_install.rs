//! `apphost install <app-id>[@<version>]` and `apphost update <app-id>|--all`: a release of a
//! remote catalog (host-core `install::remote::catalogs`) downloaded, then the one install
//! driver (`install_run`).

use std::path::PathBuf;

use serde_json::json;

use super::args::{InstallArgs, SourceArgs};
use super::catalog::{is_app_spec, UpdateArgs};
use super::install_run::{install_source, print_installed};
use super::output;
use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::foundation::paths::DataDir;
use host_core::install::remote::catalogs::{self, now};
use host_core::install::remote::releases::Wanted;
use host_core::install::remote::state::{self, Followed};
use host_core::install::store::{InstallMode, Store};

/// `update <package>`: the install arguments; `None` for an app id or `--all`.
pub fn package_update(a: &UpdateArgs) -> Option<InstallArgs> {
    match &a.source {
        Some(src) if !a.all && !is_app_spec(src) => Some(install_args(a, src.clone())),
        _ => None,
    }
}

/// The install arguments of an update, for `source`.
fn install_args(a: &UpdateArgs, source: PathBuf) -> InstallArgs {
    InstallArgs {
        source: SourceArgs {
            source,
            app: a.app.clone(),
            release: a.release.clone(),
            max_files: None,
            max_unpacked_bytes: None,
            max_manifest_bytes: None,
        },
        yes: a.yes,
        sideload: a.sideload,
        accept_new_publisher: a.accept_new_publisher,
        channel: a.channel.clone(),
        catalog: a.catalog.clone(),
    }
}

/// `apphost install <app-id>[@<version>] [--channel c] [--catalog n]`.
pub fn install_by_id(dir: &DataDir, a: &InstallArgs, json: bool) -> HostResult<i32> {
    if a.catalog.is_none() && state::names(dir)?.is_empty() {
        // No catalog added: a name that is not a path is what it always was, a missing source.
        return Err(HostError::new(
            ErrorCode::SourceNotFound,
            format!(
                "{} does not exist (and no catalog is added to look it up in)",
                a.source.source.display()
            ),
        )
        .with("path", a.source.source.display().to_string()));
    }
    let spec = a.source.source.to_string_lossy().into_owned();
    let wanted = Wanted::parse(&spec, a.channel.clone());
    let fetched =
        catalogs::fetch_release(dir, &wanted, a.catalog.as_deref(), now(), &mut |_, _| true)?;
    let (summary, plan) = install_source(dir, &fetched.source, a, InstallMode::Install, json)?;
    follow(
        dir,
        &summary.name,
        &fetched.catalog,
        a.channel.as_deref(),
        &fetched.release.channel,
    )?;
    print_installed(json, InstallMode::Install, &summary, &plan);
    Ok(0)
}

fn follow(
    dir: &DataDir,
    app: &str,
    catalog: &str,
    asked: Option<&str>,
    release_channel: &str,
) -> HostResult<()> {
    state::set_followed(
        dir,
        app,
        Followed {
            catalog: catalog.to_owned(),
            channel: asked.unwrap_or(release_channel).to_owned(),
        },
    )
}

/// `apphost update <source> | <app-id> | --all`.
pub fn update(dir: &DataDir, a: UpdateArgs, json: bool) -> HostResult<i32> {
    match (&a.source, a.all) {
        (Some(src), false) if is_app_spec(src) => {
            let app = src.to_string_lossy().into_owned();
            let outcome = update_one(dir, &app, &a, json)?;
            match outcome {
                Outcome::Updated { .. } => {}
                Outcome::UpToDate { ref version } => output::done(
                    json,
                    &format!("{app} is up to date ({version})"),
                    &json!({"app": app, "upToDate": version}),
                ),
            }
            Ok(0)
        }
        (None, true) => update_all(dir, &a, json),
        _ => Err(HostError::new(
            ErrorCode::CliUsage,
            "name a package, an app id, or --all",
        )),
    }
}

enum Outcome {
    Updated { from: String, to: String },
    UpToDate { version: String },
}

fn update_one(dir: &DataDir, app: &str, a: &UpdateArgs, json: bool) -> HostResult<Outcome> {
    let installed = Store::open(dir)?
        .list_apps()?
        .into_iter()
        .find(|s| s.name == app)
        .ok_or_else(|| {
            HostError::new(
                ErrorCode::AppNotInstalled,
                format!("{app} is not installed"),
            )
            .with("app", app)
        })?;
    let followed = state::followed(dir)?.remove(app);
    let channel = a
        .channel
        .clone()
        .or_else(|| followed.as_ref().map(|f| f.channel.clone()));
    let catalog = a
        .catalog
        .clone()
        .or_else(|| followed.as_ref().map(|f| f.catalog.clone()));
    let Some((cat, v, release)) = catalogs::newer_release(
        dir,
        app,
        &installed.active_version,
        channel.as_deref(),
        catalog.as_deref(),
        now(),
    )?
    else {
        return Ok(Outcome::UpToDate {
            version: installed.active_version,
        });
    };
    let fetched = catalogs::download(dir, &cat, &v, &release, &mut |_, _| true)?;
    let args = install_args(a, PathBuf::from(app));
    let (summary, plan) = install_source(dir, &fetched.source, &args, InstallMode::Update, json)?;
    follow(dir, app, &cat, channel.as_deref(), &release.channel)?;
    if !json {
        print_installed(json, InstallMode::Update, &summary, &plan);
    }
    Ok(Outcome::Updated {
        from: installed.active_version,
        to: summary.active_version,
    })
}

fn update_all(dir: &DataDir, a: &UpdateArgs, json: bool) -> HostResult<i32> {
    let followed = state::followed(dir)?;
    let installed: Vec<String> = Store::open(dir)?
        .list_apps()?
        .into_iter()
        .map(|s| s.name)
        .collect();
    let mut updated = Vec::new();
    let mut current = Vec::new();
    let mut failed = Vec::new();
    for app in followed.keys().filter(|a| installed.contains(a)) {
        match update_one(dir, app, a, json) {
            Ok(Outcome::Updated { from, to }) => {
                updated.push(json!({"app": app, "from": from, "to": to}))
            }
            Ok(Outcome::UpToDate { version }) => {
                current.push(json!({"app": app, "version": version}))
            }
            Err(e) => {
                if !json {
                    output::print_error(&e, false);
                }
                failed.push(json!({"app": app, "error": e}));
            }
        }
    }
    output::done(
        json,
        &format!(
            "{} updated, {} up to date, {} failed",
            updated.len(),
            current.len(),
            failed.len()
        ),
        &json!({"updated": updated, "upToDate": current, "failed": failed}),
    );
    Ok(if failed.is_empty() { 0 } else { 1 })
}
