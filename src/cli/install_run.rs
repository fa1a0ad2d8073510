//! Installing or updating from a resolved source (a path, or a package a remote catalog
//! downloaded) through the one install driver, with the terminal's consent: shared by
//! `commands` (paths) and `catalog_install` (app ids).

use std::collections::BTreeSet;

use serde_json::json;

use super::args::{InstallArgs, SourceArgs};
use super::output::{self, Progress};
use super::prompt;
use super::store_open::open_locked;
use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::foundation::limits::Limits;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::install::inspect::{InspectOptions, Inspection};
use host_core::install::package::source::ResolvedSource;
use host_core::install::store::{
    AppSummary, InstallMode, InstallPlan, ModeChoice, PlanOptions, Store,
};

/// Limits in effect: defaults, then the host's settings, then command-line flags.
pub(super) fn limits(dir: &DataDir, a: &SourceArgs) -> HostResult<Limits> {
    let l = if dir.db_path().exists() {
        Store::open(dir)?.limits()?
    } else {
        Limits::default()
    };
    Ok(with_limit_flags(l, a))
}

/// Command-line limit flags override the host's settings for one run.
pub(super) fn with_limit_flags(mut l: Limits, a: &SourceArgs) -> Limits {
    if let Some(v) = a.max_files {
        l.max_files = v;
    }
    if let Some(v) = a.max_unpacked_bytes {
        l.max_unpacked_bytes = v;
    }
    if let Some(v) = a.max_manifest_bytes {
        l.max_manifest_bytes = v;
    }
    l
}

/// Installs or updates from a resolved source (a path, or a package a remote catalog
/// downloaded); answers the installed summary.
pub(super) fn install_source(
    dir: &DataDir,
    source: &ResolvedSource,
    a: &InstallArgs,
    mode: InstallMode,
    json: bool,
) -> HostResult<(AppSummary, InstallPlan)> {
    let store = open_locked(dir, json)?;
    let keys = store.trusted_keys()?;
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(limits(dir, &a.source)?, &profile, &keys);
    let mut progress = Progress::new(
        if mode == InstallMode::Install {
            "Installing"
        } else {
            "Updating"
        },
        json,
    );
    let staged = store.stage(source, &opts, &mut |d, t| progress.update(d, t));
    progress.finish();
    let options = PlanOptions {
        sideload: a.sideload,
        accept_new_publisher: a.accept_new_publisher,
    };
    let planned = store.plan_staged(staged?, ModeChoice::Fixed(mode), options)?;
    let plan = planned.plan().clone();
    if !json {
        output::inspection(planned.inspection(), false);
        output::plan(&plan);
    }
    let not_ready = output::not_ready_yet(&planned.inspection().readiness);
    let not_ready = not_ready.as_deref();
    let mut ask = |_: &Inspection, plan: &InstallPlan| -> HostResult<BTreeSet<String>> {
        if let (Some(why), false, false) = (not_ready, a.yes, json) {
            // Before the question: installing is not the same as being able to run it.
            err_line!("Note: {} is not ready: {why}.", plan.app());
        }
        let consented = if a.yes {
            true
        } else if prompt::interactive() {
            prompt::confirm(&prompt::consent_question(plan))?
        } else {
            return Err(HostError::new(
                ErrorCode::InstallConsentRequired,
                "installing needs your consent: run on a terminal to be asked, or pass --yes to consent in a script",
            )
            .with("plan", plan));
        };
        if !consented {
            return Err(HostError::new(
                ErrorCode::InstallConsentDeclined,
                "not installed: you declined",
            ));
        }
        Ok(plan.needs_consent().iter().cloned().collect())
    };
    let summary = planned.commit(&store, &mut ask)?.summary;
    Ok((summary, plan))
}

/// Prints what an install or update did.
pub(super) fn print_installed(
    json: bool,
    mode: InstallMode,
    summary: &AppSummary,
    plan: &InstallPlan,
) {
    let verb = if mode == InstallMode::Install {
        "installed"
    } else {
        "updated to"
    };
    let mut text = format!("{} {verb} {}", summary.name, summary.active_version);
    if summary.sideloaded {
        text.push_str(&format!(" (sideloaded, {})", summary.trust));
    }
    text.push_str(&format!(" — readiness: {}", summary.readiness));
    output::warnings(json, &summary.warnings);
    output::done(json, &text, &json!({"app": summary, "plan": plan}));
}
