//! Readiness: can this app (and each of its entries) run here, and if not, what fixes it.
//!
//! A pure function of (manifest, files, host profile, host state): it reads declarations and
//! host facts and never executes app code. Every check is machine-readable
//! (`{severity, kind, key, required, message, setupAction}` plus `outcome`), so the CLI and the
//! app center render the same facts.
//!
//! Status rule: `disabled` if the user disabled the app; else `blocked` if any required check is
//! blocked or has an unknown outcome (AppHost cannot confirm a requirement it does not know,
//! such as an unknown `requires.lime.*` key or eval check type); else `needs-setup` if any
//! required check needs setup; else `ready-degraded` if any optional/recommended check failed;
//! else `ready`. Entries get the same rule over the
//! app-wide checks plus their own (`requiredCapabilities`, `permissions`).
//!
//! One module per check family ([`compat`], [`capabilities`], [`package`] (paths and storage),
//! [`permissions`], [`setup`] (secrets, integrations), [`runtimes`] (services, workflows,
//! knowledge, tools: what this host can run), [`evals`]); [`status`]
//! folds the checks into the report. Manifest fields are read through the typed view
//! ([`crate::install::manifest::ManifestView`]); this module reads no clock and no file system
//! (`clippy::disallowed_methods`, see `clippy.toml`): the time is [`HostState::now`].

#![deny(clippy::disallowed_methods)]

mod capabilities;
mod compat;
mod evals;
mod package;
mod permissions;
pub mod remote_services;
mod runtimes;
mod services;
mod setup;
mod status;
pub mod workflow_cache;

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use crate::foundation::hashing::FileRecord;
use crate::foundation::profile::HostProfile;
use crate::install::manifest::Manifest;
use crate::install::projection::package_path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Ready,
    ReadyDegraded,
    NeedsSetup,
    Blocked,
    Disabled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ready => "ready",
            Status::ReadyDegraded => "ready-degraded",
            Status::NeedsSetup => "needs-setup",
            Status::Blocked => "blocked",
            Status::Disabled => "disabled",
        }
    }
}

/// What one check concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Pass,
    /// Worth showing; changes nothing.
    Notice,
    /// AppHost cannot evaluate this check (an unknown check type). Shown; a required check
    /// with this outcome keeps the app from launching (`blocked`), an optional one does not.
    Unknown,
    Degraded,
    NeedsSetup,
    Blocked,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetupAction {
    pub key: String,
    pub title: String,
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    pub severity: &'static str,
    pub kind: &'static str,
    pub key: String,
    pub required: bool,
    pub outcome: Outcome,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tier: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup_action: Option<SetupAction>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntryReadiness {
    pub entry_key: String,
    pub status: Status,
    /// Keys of this entry's own checks that keep it from `ready`. App-wide checks count in
    /// `status` but are listed once, in the report's checks, not again for every entry (that
    /// would make the report entries x checks long).
    pub missing: Vec<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub ok: bool,
    pub status: Status,
    pub app: String,
    pub checks: Vec<Check>,
    pub blockers: Vec<String>,
    pub warnings: Vec<String>,
    pub setup_actions: Vec<SetupAction>,
    pub entries: Vec<EntryReadiness>,
}

/// Permissions the user has granted, or a preview of a fresh install.
#[derive(Debug, Clone)]
pub enum Grants {
    /// Not installed yet: required permissions are shown as granted by install consent.
    Preview,
    Granted(BTreeSet<String>),
}

/// Host facts readiness depends on. Today the host has no secret store, knowledge service or
/// ToolHub, so nothing is bound; those fields exist so readiness already reads them.
#[derive(Debug, Clone)]
pub struct HostState {
    pub now: jiff::Timestamp,
    pub disabled: bool,
    pub grants: Grants,
    pub bound_secrets: BTreeSet<String>,
    pub bound_knowledge: BTreeSet<String>,
    pub available_tools: BTreeSet<String>,
    /// Why this version's storage migrations could not be applied (blocks the app).
    pub storage_failure: Option<StorageFailure>,
    /// A model provider is configured (`model_settings`): without one, `lime.agent` needs
    /// setup ("Set up a model").
    pub model_configured: bool,
    /// What this host offers backend services (`install::service_launch::probe_host`) and
    /// their supervisors' health.
    pub services: ServiceFacts,
}

/// Host facts about backend services: a missing sandbox layer (the first one, named), the host
/// interpreters that exist, and per service key a crash-loop or crash health from the
/// supervisor (`hosting/services/`).
#[derive(Debug, Clone, Default)]
pub struct ServiceFacts {
    /// `Some(what)`: a sandbox layer is missing, no service can start.
    pub sandbox_missing: Option<String>,
    pub runtimes: BTreeSet<String>,
    /// `key -> (crash loop?, reason)`.
    pub health: std::collections::BTreeMap<String, (bool, String)>,
    /// Keys of this app's `remote-allowed` services the user granted network (host.db).
    pub network_granted: BTreeSet<String>,
    /// This app's `remote-http` services the user allowed, each with the endpoint origin it
    /// was allowed for (host.db, `install/store/remote_grants.rs`).
    pub remote_allowed: std::collections::BTreeMap<String, String>,
    /// `key -> why`: stopped or refused for its disk quota and still over it (host.db + a
    /// fresh measure).
    pub disk_over: std::collections::BTreeMap<String, String>,
    /// The admin's `<data>/policy/services.json` (`install/services_policy.rs`); `None`: no data
    /// dir to read it from (nothing denied).
    pub policy: Option<std::sync::Arc<crate::install::services_policy::ServicesPolicy>>,
}

/// A storage migration batch that failed for an app version (recorded in `host.db`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StorageFailure {
    /// `storage.migration_*` cause.
    pub cause: String,
    /// The migration's id (file name).
    pub migration: String,
    pub message: String,
}

impl HostState {
    pub fn preview(now: jiff::Timestamp) -> Self {
        HostState {
            now,
            disabled: false,
            grants: Grants::Preview,
            bound_secrets: BTreeSet::new(),
            bound_knowledge: BTreeSet::new(),
            available_tools: BTreeSet::new(),
            storage_failure: None,
            model_configured: false,
            services: ServiceFacts {
                sandbox_missing: Some("not checked".into()),
                ..ServiceFacts::default()
            },
        }
    }
}

pub(super) struct Ctx<'a> {
    m: &'a Manifest,
    files: &'a [FileRecord],
    /// The package's paths, for lookups by path (sorted, so a folder is a range).
    paths: BTreeSet<&'a str>,
    /// Declared permissions by key: (some declaration is required, some is optional).
    declared: HashMap<&'a str, (bool, bool)>,
    profile: &'a HostProfile,
    state: &'a HostState,
    checks: Vec<Check>,
}

fn severity(o: Outcome, required: bool) -> &'static str {
    match o {
        Outcome::Unknown if required => "error",
        Outcome::Pass | Outcome::Notice | Outcome::Unknown => "info",
        Outcome::Degraded | Outcome::NeedsSetup => "warning",
        Outcome::Blocked => "error",
    }
}

impl Ctx<'_> {
    pub(super) fn push(
        &mut self,
        kind: &'static str,
        key: impl Into<String>,
        required: bool,
        outcome: Outcome,
        message: impl Into<String>,
    ) -> &mut Check {
        self.checks.push(Check {
            severity: severity(outcome, required),
            kind,
            key: key.into(),
            required,
            outcome,
            message: message.into(),
            code: None,
            version: None,
            tier: None,
            entry: None,
            setup_action: None,
            remediation: None,
        });
        self.checks.last_mut().expect("just pushed")
    }

    pub(super) fn has_path(&self, reference: &str) -> bool {
        let p = package_path(reference);
        let prefix = format!("{p}/");
        // The first path at or after `p/` is inside the folder if any is.
        self.paths.contains(p.as_str())
            || self
                .paths
                .range(prefix.as_str()..)
                .next()
                .is_some_and(|f| f.starts_with(&prefix))
    }

    pub(super) fn granted(&self, permission: &str) -> bool {
        match &self.state.grants {
            Grants::Granted(set) => set.contains(permission),
            Grants::Preview => self.declared.get(permission).is_some_and(|d| d.0),
        }
    }
}

pub(super) fn action(
    key: &str,
    title: String,
    kind: &'static str,
    target: Option<String>,
) -> Option<SetupAction> {
    Some(SetupAction {
        key: key.to_owned(),
        title,
        kind,
        target,
        description: None,
    })
}

pub fn evaluate(
    m: &Manifest,
    files: &[FileRecord],
    profile: &HostProfile,
    state: &HostState,
) -> Report {
    let mut declared: HashMap<&str, (bool, bool)> = HashMap::new();
    for p in m.view().permissions() {
        if let Some(key) = p.key() {
            let d = declared.entry(key).or_default();
            if p.required() {
                d.0 = true;
            } else {
                d.1 = true;
            }
        }
    }
    let mut cx = Ctx {
        m,
        files,
        paths: files.iter().map(|f| f.path.as_str()).collect(),
        declared,
        profile,
        state,
        checks: Vec::new(),
    };
    compat::compatibility(&mut cx);
    capabilities::capabilities(&mut cx);
    package::package_files(&mut cx);
    package::storage(&mut cx);
    permissions::permissions(&mut cx);
    setup::declared_requirements(&mut cx);
    runtimes::runtimes(&mut cx);
    evals::eval_tiers(&mut cx);
    compat::install_modes(&mut cx);
    status::finish(m, state, cx.checks)
}

#[cfg(test)]
mod tests;
