//! What the host shows of an installed app: its readiness now and its summary (`AppSummary`),
//! read from `host.db`.

use super::{stored_manifest, AppSummary, EntrySummary, Store, DEV_PREFIX, MAX_READINESS_REASONS};
use crate::foundation::error::HostResult;
use crate::foundation::profile::HostProfile;
use crate::install::manifest::Manifest;
use crate::install::readiness::{self, Grants, HostState, Report};

impl Store {
    /// Readiness of the active version of an installed app, now.
    pub fn readiness(&self, name: &str, profile: &HostProfile) -> HostResult<Report> {
        let app = self.app_row(name)?;
        let manifest = self.manifest(name, &app.active)?;
        let files = self.file_records(name, &app.active)?;
        let mut state = HostState::preview(jiff::Timestamp::now());
        state.disabled = !app.enabled;
        state.grants = Grants::Granted(self.grants_of(name)?);
        state.bound_secrets = self
            .secret_bindings(name)?
            .into_iter()
            .map(|b| b.slot)
            .collect();
        state.bound_knowledge = self
            .knowledge_bindings(name)?
            .into_iter()
            .map(|b| b.template)
            .collect();
        state.storage_failure = self.storage_failure(name, &app.active)?;
        let settings = self.settings()?;
        state.model_configured = crate::foundation::setting_keys::model_configured(&settings);
        state.available_tools = super::tool_rows::ready_tool_refs(&manifest, &settings, name);
        state.services = crate::install::service_launch::probe_host();
        // Durable (host.db): what any process of this data dir saw.
        (state.services.health, state.services.disk_over) =
            self.service_health_facts(name, &app.active)?;
        state.services.network_granted = self.network_grants(name)?.into_iter().collect();
        state.services.remote_allowed = self.remote_allowances(name)?.into_iter().collect();
        state.services.policy = Some(crate::install::services_policy::load(self.data_dir()));
        Ok(readiness::evaluate(&manifest, &files, profile, &state))
    }

    pub fn summary(&self, name: &str, profile: &HostProfile) -> HostResult<AppSummary> {
        let app = self.app_row(name)?;
        let row = self.version_row(name, &app.active)?;
        let manifest = stored_manifest(&row.manifest_json)?;
        let readiness = self.readiness(name, profile)?;
        Ok(AppSummary {
            name: name.to_owned(),
            display_name: manifest.view().display_name().map(str::to_owned),
            description: manifest.view().description().unwrap_or_default().to_owned(),
            active_version: app.active.clone(),
            previous_version: app.previous.clone(),
            versions: self.versions_of(name)?,
            enabled: app.enabled,
            trust: row.trust,
            sideloaded: row.sideloaded,
            readiness: readiness.status.as_str().to_owned(),
            package_hash: row.package_hash,
            installed_at: app.installed_at,
            updated_at: app.updated_at,
            warnings: Vec::new(),
            entries: entry_summaries(&manifest),
            dev: self.is_dev(name)?,
            publisher: manifest.view().publisher_name().map(str::to_owned),
            icon: self.icon_data_url(name, &app.active, &manifest),
            readiness_reasons: readiness_reasons(&readiness),
            setup_actions: readiness.setup_actions,
        })
    }

    /// Whether `name` is an `apphost dev` install (a `dev-app/<name>` settings row).
    pub fn is_dev(&self, name: &str) -> HostResult<bool> {
        Ok(self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM settings WHERE key = ?1)",
            [format!("{DEV_PREFIX}{name}")],
            |r| r.get(0),
        )?)
    }

    /// How the active version came to be installed, for the bridge's snapshot: `dev` (an
    /// `apphost dev` install), `sideload` (a package the user accepted without a trusted
    /// signature) or `installed`.
    pub fn install_mode(&self, name: &str) -> HostResult<&'static str> {
        if self.is_dev(name)? {
            return Ok("dev");
        }
        let app = self.app_row(name)?;
        let row = self.version_row(name, &app.active)?;
        Ok(if row.sideloaded {
            "sideload"
        } else {
            "installed"
        })
    }

    /// Every installed app, by name.
    pub fn list_apps(&self) -> HostResult<Vec<AppSummary>> {
        let profile = HostProfile::current();
        self.app_names()?
            .iter()
            .map(|n| self.summary(n, &profile))
            .collect()
    }
}

/// The messages of the checks that keep an app from being simply ready, each once.
fn readiness_reasons(report: &crate::install::readiness::Report) -> Vec<String> {
    use crate::install::readiness::Outcome;
    let mut out: Vec<String> = Vec::new();
    for c in &report.checks {
        let counts = match c.outcome {
            Outcome::Blocked | Outcome::NeedsSetup | Outcome::Degraded => true,
            Outcome::Unknown => c.required,
            Outcome::Pass | Outcome::Notice => false,
        };
        if counts && !out.contains(&c.message) {
            out.push(c.message.clone());
            if out.len() == MAX_READINESS_REASONS {
                break;
            }
        }
    }
    out
}

/// The entries of a manifest, in order; entries without a string `key` are skipped.
fn entry_summaries(manifest: &Manifest) -> Vec<EntrySummary> {
    manifest
        .view()
        .entries()
        .filter(|e| e.is_object())
        .filter_map(|e| {
            let kind = e.kind().map(|k| k.as_str().to_owned()).unwrap_or_default();
            Some(EntrySummary {
                key: e.key()?.to_owned(),
                mountable: e.kind().is_some_and(|k| k.is_ui_surface()),
                kind,
                title: e.title().map(str::to_owned),
            })
        })
        .collect()
}
