//! Install and update: stage (read, hash, verify, project, readiness) → plan (what changes,
//! which permissions need consent) → commit (after consent) or abort.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::params;
use serde::Serialize;
use serde_json::{json, Value};

use super::journal::Op;
use super::packs::{self, PackSink};
use super::{audit, failpoint, manifest_to_json, now_str, AppSummary, Store};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::profile::HostProfile;
use crate::install::inspect::{inspect, InspectOptions, Inspection};
use crate::install::manifest::Permission;
use crate::install::package::ResolvedSource;
use crate::install::signature::{self, SignatureCheck};

mod commit;
mod permission_diff;
mod plan;
#[cfg(test)]
mod tests;

pub(crate) use permission_diff::diff_permissions;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InstallMode {
    Install,
    Update,
}

/// A package read into staging, not yet installed. Its inspection is read-only: `commit`
/// re-derives every trust decision from it. Dropping it removes the staging folder (a failure
/// to remove it is logged; the next locked open of the store removes it), so a refusal at any
/// step leaves nothing behind without a manual `abort` on every path.
pub struct Staged {
    /// `None` once `commit` has taken the operation over (it then owns the journal).
    op: Option<Op>,
    sink: PackSink,
    inspection: Inspection,
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(op) = self.op.take() {
            if let Err(e) = op.finish() {
                tracing::warn!(error = %e, "cannot remove the staging folder; the next start will");
            }
        }
    }
}

/// One field of a permission that differs between the installed and the new version.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldChange {
    pub field: String,
    pub old: Value,
    pub new: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionChange {
    pub key: String,
    /// `added`, `changed`, `unchanged` or `removed` (relative to the active version).
    pub change: &'static str,
    pub required: bool,
    pub scope: Value,
    pub access: Value,
    pub reason: Value,
    pub domains: Value,
    pub paths: Value,
    /// For `changed`: every field that differs, old and new value.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FieldChange>,
    /// What happens to the grant: `kept` (unchanged and granted), `asked` (required: consent
    /// is asked now; a changed permission's old grant is dropped first), `at-first-use`
    /// (optional: not granted now, asked when first used), `dropped` (removed, and its grant
    /// with it) or `none` (removed, never granted).
    pub grant: &'static str,
}

/// Who signed a version: the full public key is the publisher's identity; the key id and name
/// are for display.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Signer {
    /// `None`: unsigned.
    pub key_id: Option<String>,
    /// `None` with a key id: signed before AppHost recorded full keys, by a key it cannot
    /// identify any more.
    pub public_key: Option<String>,
    /// The trusted key's name, when the key is trusted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Signer {
    pub(super) fn pinned(key_id: Option<String>, public_key: Option<String>) -> Signer {
        Signer {
            key_id,
            public_key,
            name: None,
        }
    }

    fn of(sig: &SignatureCheck) -> Signer {
        Signer {
            key_id: sig.key_id.clone(),
            public_key: sig.public_key.clone(),
            name: sig.signer.clone(),
        }
    }

    pub fn is_signed(&self) -> bool {
        self.key_id.is_some() || self.public_key.is_some()
    }

    /// Same publisher: the same full key, or both unsigned. A key id alone never matches.
    fn same_as(&self, other: &Signer) -> bool {
        match (&self.public_key, &other.public_key) {
            (Some(a), Some(b)) => a == b,
            (None, None) => !self.is_signed() && !other.is_signed(),
            _ => false,
        }
    }

    /// `ed25519:… (full key …) "name"` or `unsigned`, for messages.
    pub fn describe(&self) -> String {
        match (&self.key_id, &self.public_key) {
            (None, None) => "unsigned".into(),
            (id, key) => {
                let mut s = format!(
                    "{} (public key {})",
                    id.as_deref().unwrap_or("?"),
                    key.as_deref().unwrap_or("unknown")
                );
                if let Some(n) = &self.name {
                    s.push_str(&format!(" \"{n}\""));
                }
                s
            }
        }
    }
}

/// The publisher of the new version against the one pinned for this app name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PublisherChange {
    /// `new` (nothing pinned: a first install, or no kept data), `same`, `signed` (the pinned
    /// versions were unsigned; the new one is signed), `changed` (another key, or unsigned over
    /// signed) or `unknown` (kept data whose publisher was never recorded).
    pub status: &'static str,
    pub old: Option<Signer>,
    pub new: Signer,
    /// `changed`/`unknown` only: the user accepted the new publisher explicitly.
    pub accepted: bool,
}

impl PublisherChange {
    /// Whether installing needs the user's explicit acceptance of a new publisher.
    pub fn needs_acceptance(&self) -> bool {
        matches!(self.status, "changed" | "unknown")
    }
}

/// What the user allowed when asking for a plan. Neither is implied by the other, nor by
/// consenting to permissions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// Allow an unsigned package or one signed by a key this host does not trust.
    pub sideload: bool,
    /// Accept a publisher other than the pinned one (update or reinstall over kept data).
    pub accept_new_publisher: bool,
}

/// What installing a staged package does. Only [`Store::plan`] makes one, and
/// [`Store::commit`] re-derives it from the staged package before acting on it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallPlan {
    mode: InstallMode,
    app: String,
    version: String,
    from_version: Option<String>,
    /// The staged package this plan is for.
    package_hash: String,
    trust: &'static str,
    sideload: bool,
    publisher: PublisherChange,
    permissions: Vec<PermissionChange>,
    needs_consent: Vec<String>,
    existing_data: bool,
    prunes: Vec<String>,
    new_blobs: usize,
    new_bytes: u64,
    #[serde(skip)]
    options: PlanOptions,
}

impl InstallPlan {
    pub fn mode(&self) -> InstallMode {
        self.mode
    }
    pub fn app(&self) -> &str {
        &self.app
    }
    pub fn version(&self) -> &str {
        &self.version
    }
    pub fn from_version(&self) -> Option<&str> {
        self.from_version.as_deref()
    }
    /// The hash of the staged package the plan was made for.
    pub fn package_hash(&self) -> &str {
        &self.package_hash
    }
    /// `trusted`, `unknown-key` or `unsigned`, checked against the host's trusted keys.
    pub fn trust(&self) -> &'static str {
        self.trust
    }
    /// Whether the package is installed as a sideload (not signed by a trusted key).
    pub fn sideload(&self) -> bool {
        self.sideload
    }
    pub fn publisher(&self) -> &PublisherChange {
        &self.publisher
    }
    pub fn permissions(&self) -> &[PermissionChange] {
        &self.permissions
    }
    /// Required permissions to consent to now: new ones, changed ones (their old grant is
    /// dropped) and ones not granted yet.
    pub fn needs_consent(&self) -> &[String] {
        &self.needs_consent
    }
    /// Whether data from an earlier install of this app exists and will be used again
    /// (on install: data kept by `uninstall --keep-data`, reattached).
    pub fn existing_data(&self) -> bool {
        self.existing_data
    }
    /// Versions removed so that two stay side by side: the new one and the rollback target.
    pub fn prunes(&self) -> &[String] {
        &self.prunes
    }
    pub fn new_blobs(&self) -> usize {
        self.new_blobs
    }
    pub fn new_bytes(&self) -> u64 {
        self.new_bytes
    }
    pub fn options(&self) -> PlanOptions {
        self.options
    }
}

impl Staged {
    /// Removes the staging folder now and says whether that worked (dropping does the same,
    /// quietly).
    pub fn abort(mut self) -> HostResult<()> {
        match self.op.take() {
            Some(op) => op.finish(),
            None => Ok(()),
        }
    }

    pub fn inspection(&self) -> &Inspection {
        &self.inspection
    }

    /// Marks a staged `apphost dev` folder: its version becomes `<version>+dev.<build>`, so
    /// every save is a new version of the app (same precedence as the folder's version; the
    /// store keeps the previous one for rollback as with any update). Only the center's dev
    /// loop calls this, before planning.
    pub fn set_dev_build(&mut self, build: u64) {
        let base = self
            .inspection
            .manifest
            .version()
            .split('+')
            .next()
            .unwrap_or_default()
            .to_owned();
        self.inspection
            .manifest
            .data
            .insert("version".into(), json!(format!("{base}+dev.{build}")));
    }
}

/// Whether a version is an `apphost dev` build (`<version>+dev.<ms>`, see
/// [`Staged::set_dev_build`]).
pub(crate) fn is_dev_build(v: &semver::Version) -> bool {
    v.build.as_str().starts_with("dev.")
}

impl Store {
    /// Reads the package into this operation's staging area. Nothing in the store changes; on
    /// any error the staging area is removed.
    pub fn stage(
        &self,
        source: &ResolvedSource,
        opts: &InspectOptions,
        progress: &mut dyn FnMut(u64, u64),
    ) -> HostResult<Staged> {
        self.stage_as(source, opts, progress, false)
    }

    /// [`Store::stage`] for `apphost dev` ([`crate::install::inspect::inspect_dev`]: a stale lock or
    /// signature is ignored, the package is unsigned).
    pub fn stage_dev(
        &self,
        source: &ResolvedSource,
        opts: &InspectOptions,
        progress: &mut dyn FnMut(u64, u64),
    ) -> HostResult<Staged> {
        self.stage_as(source, opts, progress, true)
    }

    fn stage_as(
        &self,
        source: &ResolvedSource,
        opts: &InspectOptions,
        progress: &mut dyn FnMut(u64, u64),
        dev: bool,
    ) -> HostResult<Staged> {
        self.require_lock()?;
        let op = Op::begin(&self.dir, "install", None)?;
        let result = (|| {
            let known = packs::known_blobs(&self.conn)?;
            let mut sink = PackSink::new(op.dir.join("pack"), known)?;
            let inspection = if dev {
                crate::install::inspect::inspect_dev(source, opts, Some(&mut sink), progress)?
            } else {
                inspect(source, opts, Some(&mut sink), progress)?
            };
            Ok((sink, inspection))
        })();
        match result {
            Ok((sink, inspection)) => Ok(Staged {
                op: Some(op),
                sink,
                inspection,
            }),
            Err(e) => Err(match op.finish() {
                Ok(()) => e,
                // The staging folder stays; the next locked open removes it.
                Err(fe) => e.with("cleanupError", &fe),
            }),
        }
    }

    /// [`Store::plan_with`] without accepting a new publisher.
    pub fn plan(
        &self,
        staged: &Staged,
        mode: InstallMode,
        sideload: bool,
    ) -> HostResult<InstallPlan> {
        self.plan_with(
            staged,
            mode,
            PlanOptions {
                sideload,
                accept_new_publisher: false,
            },
        )
    }

    /// Installs a planned package. The plan is not trusted: it is made again from the staged
    /// package and the store as they are now (signature against the trusted keys, sideload
    /// state, install blockers, publisher, permissions) and must be the same plan, for the same
    /// package. `consented` must include every key in `needs_consent`; only those are granted.
    pub fn commit(
        &self,
        staged: Staged,
        plan: &InstallPlan,
        consented: &BTreeSet<String>,
    ) -> HostResult<AppSummary> {
        self.require_lock()?;
        // Dropping `staged` on each refusal below removes its folder.
        let fresh = self.plan_with(&staged, plan.mode, plan.options)?;
        if fresh != *plan {
            let e = if fresh.package_hash != plan.package_hash {
                HostError::new(
                    ErrorCode::InstallPlanMismatch,
                    "the plan was made for another package than the one staged",
                )
            } else {
                HostError::new(
                    ErrorCode::InstallPlanMismatch,
                    "the store or the trusted keys changed since the plan was made; plan again",
                )
            };
            return Err(e
                .with("plannedPackageHash", &plan.package_hash)
                .with("stagedPackageHash", &fresh.package_hash)
                .with("plan", &fresh));
        }
        if let Some(missing) = fresh.needs_consent.iter().find(|k| !consented.contains(*k)) {
            return Err(HostError::new(
                ErrorCode::InstallConsentRequired,
                format!("permission {missing} was not consented to"),
            )
            .with("permission", missing));
        }
        let name = fresh.app.clone();
        match self.commit_staged(staged, &fresh, consented) {
            Ok(warnings) => {
                let mut summary = self.summary(&name, &HostProfile::current())?;
                summary.warnings = warnings;
                Ok(summary)
            }
            // Undo whatever got done, exactly as recovery would after a crash here.
            Err(e) => Err(self.recover_after_failure(e)),
        }
    }
}
