//! The one install driver: stage → plan → consent → commit.
//!
//! Every way a package gets installed or updated goes through here: the CLI (`apphost
//! install|update`), the app center's review sheet (`center::review`) and the dev loop
//! (`center::dev`). A caller brings only what differs between them:
//! - how the mode is chosen ([`ModeChoice`]) and the [`PlanOptions`];
//! - what it checks between staging and planning (the dev loop's own checks);
//! - how consent is given ([`Consent`]): a terminal question, the plan the user reviewed, or a
//!   developer's own folder.
//!
//! A refusal at any step drops the [`Staged`] package, which removes its staging folder: no
//! step needs its own cleanup call.

use std::collections::BTreeSet;

use super::install::{InstallMode, InstallPlan, PlanOptions, Staged};
use super::{AppSummary, Store};
use crate::foundation::error::HostResult;
use crate::install::inspect::{InspectOptions, Inspection};
use crate::install::package::ResolvedSource;

/// How the driver picks install or update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeChoice {
    /// The caller says which (`apphost install` vs `apphost update`): the other one is refused
    /// by the plan (`install.already_installed`, `app.not_installed`).
    Fixed(InstallMode),
    /// Update when an app of the package's name is installed, else install (the review sheet,
    /// the dev loop).
    ByInstalled,
}

/// How consent to a plan is given. Answers the permission keys consented to (they must cover
/// the plan's `needs_consent`, which `Store::commit` checks again), or the refusal.
pub trait Consent {
    fn grant(
        &mut self,
        inspection: &Inspection,
        plan: &InstallPlan,
    ) -> HostResult<BTreeSet<String>>;
}

/// Consent already given for exactly this plan (`--yes`, the review sheet's Install after its
/// own checks, a developer's own folder): every permission the plan asks for.
pub struct Given;

impl Consent for Given {
    fn grant(&mut self, _: &Inspection, plan: &InstallPlan) -> HostResult<BTreeSet<String>> {
        Ok(plan.needs_consent().iter().cloned().collect())
    }
}

impl<F> Consent for F
where
    F: FnMut(&Inspection, &InstallPlan) -> HostResult<BTreeSet<String>>,
{
    fn grant(
        &mut self,
        inspection: &Inspection,
        plan: &InstallPlan,
    ) -> HostResult<BTreeSet<String>> {
        self(inspection, plan)
    }
}

/// A staged package and its plan: what the user is asked about. Dropping it removes the
/// staging folder.
pub struct Planned {
    staged: Staged,
    plan: InstallPlan,
}

impl Planned {
    pub fn plan(&self) -> &InstallPlan {
        &self.plan
    }

    pub fn inspection(&self) -> &Inspection {
        self.staged.inspection()
    }

    /// Asks `consent`, then commits what it granted. The commit plans again and installs only
    /// the same plan (`install.plan_mismatch` otherwise).
    pub fn commit(self, store: &Store, consent: &mut dyn Consent) -> HostResult<Installed> {
        let granted = consent.grant(self.staged.inspection(), &self.plan)?;
        let summary = store.commit(self.staged, &self.plan, &granted)?;
        Ok(Installed {
            plan: self.plan,
            summary,
        })
    }
}

/// What an install or update did.
#[derive(Debug)]
pub struct Installed {
    pub plan: InstallPlan,
    pub summary: AppSummary,
}

impl Store {
    /// The mode `choice` means for this staged package.
    pub fn mode_for(&self, staged: &Staged, choice: ModeChoice) -> HostResult<InstallMode> {
        Ok(match choice {
            ModeChoice::Fixed(mode) => mode,
            ModeChoice::ByInstalled => {
                let name = staged.inspection().manifest.name();
                if self.app_names()?.iter().any(|n| n == name) {
                    InstallMode::Update
                } else {
                    InstallMode::Install
                }
            }
        })
    }

    /// Plans a staged package. On a refusal the staging is dropped (and removed).
    pub fn plan_staged(
        &self,
        staged: Staged,
        choice: ModeChoice,
        options: PlanOptions,
    ) -> HostResult<Planned> {
        let mode = self.mode_for(&staged, choice)?;
        let plan = self.plan_with(&staged, mode, options)?;
        Ok(Planned { staged, plan })
    }

    /// The whole drive: stage `source`, plan it, ask `consent`, commit.
    pub fn drive_install(
        &self,
        source: &ResolvedSource,
        opts: &InspectOptions,
        choice: ModeChoice,
        options: PlanOptions,
        progress: &mut dyn FnMut(u64, u64),
        consent: &mut dyn Consent,
    ) -> HostResult<Installed> {
        let staged = self.stage(source, opts, progress)?;
        self.plan_staged(staged, choice, options)?
            .commit(self, consent)
    }
}
