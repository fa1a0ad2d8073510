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

fn perm_map(list: &[Value]) -> BTreeMap<String, &Value> {
    list.iter()
        .filter_map(|p| Some((Permission::new(p).key()?.to_owned(), p)))
        .collect()
}

fn is_required(p: &Value) -> bool {
    Permission::new(p).required()
}

/// Every field of a permission that differs (a missing field is `null`; `required` compares
/// as the boolean it means).
pub(crate) fn permission_diff(old: &Value, new: &Value) -> Vec<FieldChange> {
    let fields: BTreeSet<&String> = [old, new]
        .iter()
        .filter_map(|p| p.as_object())
        .flat_map(|o| o.keys())
        .collect();
    fields
        .into_iter()
        .filter_map(|f| {
            let (o, n) = if f == "required" {
                (json!(is_required(old)), json!(is_required(new)))
            } else {
                (
                    old.get(f).cloned().unwrap_or(Value::Null),
                    new.get(f).cloned().unwrap_or(Value::Null),
                )
            };
            (o != n).then(|| FieldChange {
                field: f.clone(),
                old: o,
                new: n,
            })
        })
        .collect()
}

/// The permission diff between the active version and the new one, given the current grants.
pub(crate) fn diff_permissions(
    old_perms: &[Value],
    new_perms: &[Value],
    granted: &BTreeSet<String>,
) -> Vec<PermissionChange> {
    let old = perm_map(old_perms);
    let new = perm_map(new_perms);
    let entry = |key: &str, p: &Value, change, fields, grant| {
        let p = Permission::new(p);
        PermissionChange {
            key: key.to_owned(),
            change,
            required: p.required(),
            scope: p.scope_raw().cloned().unwrap_or(Value::Null),
            access: p.access_raw().cloned().unwrap_or(Value::Null),
            reason: p.reason_raw().cloned().unwrap_or(Value::Null),
            domains: p.domains_raw().cloned().unwrap_or(json!([])),
            paths: p.paths_raw().cloned().unwrap_or(json!([])),
            fields,
            grant,
        }
    };
    let mut out = Vec::new();
    for (key, p) in &new {
        let (change, fields) = match old.get(key) {
            None => ("added", Vec::new()),
            Some(o) => {
                let fields = permission_diff(o, p);
                (
                    if fields.is_empty() {
                        "unchanged"
                    } else {
                        "changed"
                    },
                    fields,
                )
            }
        };
        // Any change drops the old grant: the user consented to the old permission.
        let grant = if change == "unchanged" && granted.contains(key) {
            "kept"
        } else if is_required(p) {
            "asked"
        } else {
            "at-first-use"
        };
        out.push(entry(key, p, change, fields, grant));
    }
    for (key, p) in &old {
        if !new.contains_key(key) {
            let grant = if granted.contains(key) {
                "dropped"
            } else {
                "none"
            };
            out.push(entry(key, p, "removed", Vec::new(), grant));
        }
    }
    out
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
        self.require_lock()?;
        let op = Op::begin(&self.dir, "install", None)?;
        let result = (|| {
            let known = packs::known_blobs(&self.conn)?;
            let mut sink = PackSink::new(op.dir.join("pack"), known)?;
            let inspection = inspect(source, opts, Some(&mut sink), progress)?;
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

    /// The package's signature checked now against this store's trusted keys (never the keys
    /// the caller inspected with).
    fn verified_signature(&self, insp: &Inspection) -> HostResult<SignatureCheck> {
        signature::check(
            insp.manifest.signature_doc.as_ref(),
            &insp.manifest_hash,
            &insp.files_digest,
            &self.trusted_keys()?,
        )
    }

    /// Decides what installing `staged` would do, or why it may not.
    pub fn plan_with(
        &self,
        staged: &Staged,
        mode: InstallMode,
        options: PlanOptions,
    ) -> HostResult<InstallPlan> {
        let insp = &staged.inspection;
        let sig = self.verified_signature(insp)?;
        if let Some(e) = insp.install_blocker_for(&sig, options.sideload) {
            return Err(e);
        }
        let name = insp.manifest.name().to_owned();
        let version = insp.manifest.version().to_owned();
        let current = self.app_row(&name).ok();
        let versions = self.versions_of(&name)?;
        let mut from_version = None;
        match (mode, &current) {
            (InstallMode::Install, Some(app)) => {
                return Err(HostError::new(
                    ErrorCode::InstallAlreadyInstalled,
                    format!("{name} is already installed (version {}); use `apphost update` to change versions", app.active),
                )
                .with("app", &name)
                .with("installedVersion", &app.active))
            }
            (InstallMode::Update, None) => {
                return Err(HostError::new(ErrorCode::AppNotInstalled, format!("{name} is not installed; use `apphost install`")).with("app", &name))
            }
            (InstallMode::Update, Some(app)) => {
                if versions.contains(&version) {
                    let existing = self.version_row(&name, &version)?;
                    let same = crate::foundation::hashing::same_hash(&existing.package_hash, &insp.read.package_hash);
                    return Err(if same && app.active == version {
                        HostError::new(ErrorCode::InstallAlreadyInstalled, format!("{name}@{version} is already the active version"))
                    } else if same {
                        HostError::new(ErrorCode::InstallAlreadyInstalled, format!("{name}@{version} is already installed; use `apphost rollback {name}` to switch to it"))
                    } else {
                        HostError::new(ErrorCode::InstallVersionConflict, format!("{name}@{version} is installed with different contents; a release must bump its version"))
                            .with("installedPackageHash", &existing.package_hash)
                            .with("newPackageHash", &insp.read.package_hash)
                    }
                    .with("app", &name)
                    .with("version", &version));
                }
                if let (Ok(new), Ok(old)) = (semver::Version::parse(&version), semver::Version::parse(&app.active)) {
                    if new < old {
                        return Err(HostError::new(
                            ErrorCode::InstallNotNewer,
                            format!("{name}@{version} is older than the active {}; use `apphost rollback` to go back", app.active),
                        )
                        .with("app", &name));
                    }
                }
                from_version = Some(app.active.clone());
            }
            (InstallMode::Install, None) => {}
        }

        let existing_data = self.app_data().exists(&super::app_id(&name)?);
        let publisher = self.publisher_change(&name, mode, existing_data, &sig, options)?;
        if publisher.needs_acceptance() && !publisher.accepted {
            return Err(publisher_error(&name, mode, &publisher));
        }

        let old_perms = match &from_version {
            Some(v) => self.manifest(&name, v)?.view().permissions_raw().to_vec(),
            None => Vec::new(),
        };
        let permissions = diff_permissions(
            &old_perms,
            insp.manifest.view().permissions_raw(),
            &self.grants_of(&name)?,
        );
        let needs_consent = permissions
            .iter()
            .filter(|p| p.grant == "asked")
            .map(|p| p.key.clone())
            .collect();
        let prunes = match &from_version {
            Some(active) => versions.iter().filter(|v| *v != active).cloned().collect(),
            None => Vec::new(),
        };
        let new_bytes = staged.sink.entries().iter().map(|e| e.size).sum();
        Ok(InstallPlan {
            mode,
            app: name.clone(),
            version,
            from_version,
            package_hash: insp.read.package_hash.clone(),
            trust: sig.trust.as_str(),
            sideload: sig.trust.needs_sideload(),
            publisher,
            permissions,
            needs_consent,
            existing_data,
            prunes,
            new_blobs: staged.sink.entries().len(),
            new_bytes,
            options,
        })
    }

    /// The new signer against the pin. On install the pin matters only when kept data would be
    /// reattached: without data there is nothing of the old publisher's to hand over.
    fn publisher_change(
        &self,
        name: &str,
        mode: InstallMode,
        existing_data: bool,
        sig: &SignatureCheck,
        options: PlanOptions,
    ) -> HostResult<PublisherChange> {
        let new = Signer::of(sig);
        let pin = if mode == InstallMode::Update || existing_data {
            self.publisher_pin(name)?
        } else {
            None
        };
        let old = pin.map(|mut p| {
            if let Some(pk) = &p.public_key {
                p.name = self
                    .trusted_keys()
                    .ok()
                    .and_then(|keys| keys.into_iter().find(|k| k.public_key == *pk))
                    .map(|k| k.name);
            }
            p
        });
        let status = match &old {
            None if existing_data || mode == InstallMode::Update => "unknown",
            None => "new",
            Some(o) if o.same_as(&new) => "same",
            Some(o) if !o.is_signed() => "signed",
            Some(_) => "changed",
        };
        let accepted = matches!(status, "changed" | "unknown") && options.accept_new_publisher;
        Ok(PublisherChange {
            status,
            old,
            new,
            accepted,
        })
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

    fn commit_staged(
        &self,
        staged: Staged,
        plan: &InstallPlan,
        consented: &BTreeSet<String>,
    ) -> HostResult<Vec<HostError>> {
        let mut staged = staged;
        // From here the operation is the commit's: on a failure its folder stays for
        // `recover_after_failure` (and crash recovery), so the staging's drop must not remove it.
        let Some(mut op) = staged.op.take() else {
            return Err(HostError::new(
                ErrorCode::Internal,
                "the staged package was already aborted",
            ));
        };
        let sink = &mut staged.sink;
        let insp = &staged.inspection;
        op.journal.kind = match plan.mode {
            InstallMode::Install => "install".into(),
            InstallMode::Update => "update".into(),
        };
        op.journal.app = Some(plan.app.clone());
        op.write()?;

        // Durable staged content, then into the store (one rename).
        let pack_size = sink.finish()?;
        let pack_id = packs::new_id()?;
        if pack_size > 0 {
            packs::place(sink.path(), &self.dir.packs(), &pack_id)?;
            failpoint::hit("install.pack_placed");
        }

        let now = now_str();
        let name = &plan.app;
        let version = &plan.version;
        let tx = self.immediate_transaction()?;
        // The app as planned is the app as it is now, checked inside the write transaction.
        let active = self.app_row(name).ok().map(|a| a.active);
        if active != plan.from_version {
            return Err(HostError::new(
                ErrorCode::InstallPlanStale,
                format!(
                    "{name} changed since the plan (active version {} instead of {}); nothing was installed",
                    active.as_deref().unwrap_or("none"),
                    plan.from_version.as_deref().unwrap_or("none")
                ),
            )
            .with("app", name));
        }
        tx.execute(
            "INSERT INTO app_versions (name, version, package_hash, manifest_hash, files_digest, trust, key_id, sideloaded,
                 source_kind, source_uri, manifest_json, projection_json, file_count, total_bytes, installed_at, public_key)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            params![
                name,
                version,
                insp.read.package_hash,
                insp.manifest_hash,
                insp.files_digest,
                plan.trust,
                plan.publisher.new.key_id,
                plan.sideload,
                insp.source.origin,
                insp.source.uri(),
                manifest_to_json(&insp.manifest).to_string(),
                insp.projection.to_string(),
                insp.read.files.len() as i64,
                insp.read.total_bytes as i64,
                now,
                plan.publisher.new.public_key,
            ],
        )?;
        if pack_size > 0 {
            packs::record_pack(&tx, &pack_id, pack_size, sink.entries(), &now)?;
        }
        {
            let mut stmt = tx.prepare("INSERT INTO version_files (name, version, path, blob, size) VALUES (?1, ?2, ?3, ?4, ?5)")?;
            for f in &insp.read.files {
                stmt.execute(params![name, version, f.path, f.hex(), f.size as i64])?;
            }
        }
        match &plan.from_version {
            None => {
                tx.execute(
                    "INSERT INTO apps (name, active_version, previous_version, enabled, installed_at, updated_at) VALUES (?1, ?2, NULL, 1, ?3, ?3)",
                    params![name, version, now],
                )?;
            }
            Some(prev) => {
                tx.execute(
                    "UPDATE apps SET active_version = ?2, previous_version = ?3, updated_at = ?4 WHERE name = ?1",
                    params![name, version, prev, now],
                )?;
            }
        }
        for old in &plan.prunes {
            tx.execute(
                "DELETE FROM app_versions WHERE name = ?1 AND version = ?2",
                params![name, old],
            )?;
        }
        if !plan.prunes.is_empty() {
            packs::collect_rows(&tx)?;
        }
        // Grants: drop those of permissions removed or changed (and any the new version does not
        // declare), then grant the ones consented to now.
        let declared: BTreeSet<&str> = plan
            .permissions
            .iter()
            .filter(|p| p.change != "removed")
            .map(|p| p.key.as_str())
            .collect();
        let still_granted: BTreeSet<&str> = plan
            .permissions
            .iter()
            .filter(|p| p.grant == "kept")
            .map(|p| p.key.as_str())
            .collect();
        let existing: Vec<String> = {
            let mut stmt = tx.prepare("SELECT permission FROM grants WHERE app = ?1")?;
            let rows = stmt.query_map([name], |r| r.get::<_, String>(0))?;
            rows.collect::<Result<_, _>>()?
        };
        for g in existing
            .iter()
            .filter(|g| !declared.contains(g.as_str()) || !still_granted.contains(g.as_str()))
        {
            tx.execute(
                "DELETE FROM grants WHERE app = ?1 AND permission = ?2",
                params![name, g],
            )?;
        }
        let granted: Vec<&String> = plan
            .needs_consent
            .iter()
            .filter(|k| consented.contains(*k))
            .collect();
        for key in &granted {
            tx.execute(
                "INSERT INTO grants (app, permission, granted_at, granted_for_version) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (app, permission) DO UPDATE SET granted_at = excluded.granted_at, granted_for_version = excluded.granted_for_version",
                params![name, key, now, version],
            )?;
        }
        // The publisher pin: the key that signed the active version (kept across
        // `uninstall --keep-data`, so kept data goes back only to the same publisher).
        tx.execute(
            "INSERT INTO publishers (app, key_id, public_key, pinned_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (app) DO UPDATE SET key_id = excluded.key_id, public_key = excluded.public_key, pinned_at = excluded.pinned_at",
            params![name, plan.publisher.new.key_id, plan.publisher.new.public_key, now],
        )?;
        if plan.publisher.needs_acceptance() {
            audit(
                &tx,
                "publisher.change",
                Some(name),
                Some(version),
                &json!({
                    "status": plan.publisher.status,
                    "old": plan.publisher.old,
                    "new": plan.publisher.new,
                    "accepted": plan.publisher.accepted,
                    "reattachedData": plan.existing_data,
                }),
            )?;
        }
        let action = match plan.mode {
            InstallMode::Install => "install",
            InstallMode::Update => "update",
        };
        audit(
            &tx,
            action,
            Some(name),
            Some(version),
            &json!({
                "fromVersion": plan.from_version,
                "packageHash": insp.read.package_hash,
                "manifestHash": insp.manifest_hash,
                "trust": plan.trust,
                "sideload": plan.sideload,
                "source": insp.source.uri(),
                "granted": granted,
                "pruned": plan.prunes,
                "publisher": plan.publisher,
                "existingData": plan.existing_data,
            }),
        )?;
        tx.execute(
            "INSERT INTO ops (op_id, kind, app, committed_at) VALUES (?1, ?2, ?3, ?4)",
            params![op.journal.op_id, action, name, now],
        )?;
        failpoint::hit("install.commit");
        tx.commit()?;
        failpoint::hit("install.committed");

        let op_id = op.journal.op_id.clone();
        Ok(
            self.after_commit(&format!("{action} of {name}@{version}"), || {
                if !plan.prunes.is_empty() {
                    self.collect_garbage()?;
                }
                op.finish()?;
                failpoint::hit("install.finished");
                self.conn
                    .execute("DELETE FROM ops WHERE op_id = ?1", [&op_id])?;
                if !plan.prunes.is_empty() {
                    self.compact()?;
                }
                Ok(())
            }),
        )
    }
}

/// The refusal when the publisher is not the pinned one and the user did not accept it.
fn publisher_error(name: &str, mode: InstallMode, p: &PublisherChange) -> HostError {
    let old = p
        .old
        .as_ref()
        .map_or_else(|| "not recorded".to_owned(), Signer::describe);
    let what = match (mode, p.status) {
        (InstallMode::Update, _) => format!("the installed version of {name} is signed by {old}"),
        (InstallMode::Install, "unknown") => {
            format!("data kept from an earlier install of {name} has no recorded publisher")
        }
        (InstallMode::Install, _) => {
            format!("data kept from an earlier install of {name} belongs to the publisher {old}")
        }
    };
    HostError::new(
        ErrorCode::InstallPublisherChanged,
        format!(
            "{what}, and this package is {}{}. Refused: if you trust the new publisher, run again with --accept-new-publisher (--yes and --sideload do not imply it)",
            if p.new.is_signed() { "signed by " } else { "" },
            p.new.describe()
        ),
    )
    .with("app", name)
    .with("publisher", p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn perm(v: Value) -> Value {
        v
    }

    fn granted(keys: &[&str]) -> BTreeSet<String> {
        keys.iter().map(|k| (*k).to_owned()).collect()
    }

    fn by_key<'a>(d: &'a [PermissionChange], key: &str) -> &'a PermissionChange {
        d.iter().find(|p| p.key == key).unwrap()
    }

    #[test]
    fn any_field_change_drops_the_grant_and_shows_old_and_new() {
        let old = vec![
            perm(
                json!({"key": "net", "scope": "network", "access": "read", "required": true, "domains": ["a.example"]}),
            ),
            perm(
                json!({"key": "files", "scope": "filesystem", "access": "read", "required": true, "paths": ["~/Notes"]}),
            ),
            perm(
                json!({"key": "store", "scope": "storage", "access": "read-write", "required": true}),
            ),
            perm(json!({"key": "opt", "scope": "network", "access": "read", "required": false})),
            perm(json!({"key": "gone", "scope": "storage", "access": "read"})),
            perm(json!({"key": "demoted", "scope": "storage", "access": "read", "required": true})),
        ];
        let new = vec![
            perm(
                json!({"key": "net", "scope": "network", "access": "read", "required": true, "domains": ["a.example", "b.example"]}),
            ),
            perm(
                json!({"key": "files", "scope": "filesystem", "access": "read", "required": true, "paths": ["~"]}),
            ),
            perm(
                json!({"key": "store", "scope": "storage", "access": "read-write", "required": true}),
            ),
            perm(
                json!({"key": "opt", "scope": "network", "access": "read-write", "required": false}),
            ),
            perm(
                json!({"key": "demoted", "scope": "storage", "access": "read", "required": false}),
            ),
            perm(
                json!({"key": "promoted", "scope": "storage", "access": "read", "required": true}),
            ),
        ];
        let g = granted(&["net", "files", "store", "opt", "gone", "demoted"]);
        let d = diff_permissions(&old, &new, &g);

        let net = by_key(&d, "net");
        assert_eq!((net.change, net.grant), ("changed", "asked"));
        assert_eq!(
            net.fields,
            [FieldChange {
                field: "domains".into(),
                old: json!(["a.example"]),
                new: json!(["a.example", "b.example"])
            }]
        );
        let files = by_key(&d, "files");
        assert_eq!((files.change, files.grant), ("changed", "asked"));
        assert_eq!(files.fields[0].field, "paths");
        assert_eq!(files.fields[0].old, json!(["~/Notes"]));
        assert_eq!(files.fields[0].new, json!(["~"]));
        assert_eq!(by_key(&d, "store").grant, "kept");
        // An optional permission that changed loses its grant and is asked at first use.
        let opt = by_key(&d, "opt");
        assert_eq!((opt.change, opt.grant), ("changed", "at-first-use"));
        assert_eq!(opt.fields[0].field, "access");
        // required -> optional is a change too: the grant goes.
        let demoted = by_key(&d, "demoted");
        assert_eq!((demoted.change, demoted.grant), ("changed", "at-first-use"));
        assert_eq!(
            demoted.fields,
            [FieldChange {
                field: "required".into(),
                old: json!(true),
                new: json!(false)
            }]
        );
        assert_eq!(by_key(&d, "promoted").grant, "asked");
        let gone = by_key(&d, "gone");
        assert_eq!((gone.change, gone.grant), ("removed", "dropped"));
    }

    #[test]
    fn a_missing_required_flag_equals_false_and_unchanged_ungranted_required_is_asked() {
        let old = vec![
            json!({"key": "a", "scope": "storage"}),
            json!({"key": "b", "scope": "storage", "required": true}),
        ];
        let new = vec![
            json!({"key": "a", "scope": "storage", "required": false}),
            json!({"key": "b", "scope": "storage", "required": true}),
        ];
        let d = diff_permissions(&old, &new, &BTreeSet::new());
        assert_eq!(
            (by_key(&d, "a").change, by_key(&d, "a").grant),
            ("unchanged", "at-first-use")
        );
        assert_eq!(
            (by_key(&d, "b").change, by_key(&d, "b").grant),
            ("unchanged", "asked")
        );
    }

    #[test]
    fn publishers_are_the_same_only_by_full_key() {
        let k = |id: &str, pk: &str| Signer::pinned(Some(id.into()), Some(pk.into()));
        let unsigned = Signer::pinned(None, None);
        assert!(k("ed25519:aa", "K1").same_as(&k("ed25519:aa", "K1")));
        assert!(
            !k("ed25519:aa", "K1").same_as(&k("ed25519:aa", "K2")),
            "same id, other key"
        );
        assert!(!k("ed25519:aa", "K1").same_as(&unsigned));
        assert!(unsigned.same_as(&Signer::pinned(None, None)));
        let legacy = Signer::pinned(Some("ed25519:aa".into()), None);
        assert!(
            !legacy.same_as(&k("ed25519:aa", "K1")),
            "an id alone proves nothing"
        );
        assert!(!legacy.same_as(&legacy.clone()));
    }
}
