//! Install and update: stage (read, hash, verify, project, readiness) → plan (what changes,
//! which permissions need consent) → commit (after consent) or abort.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::params;
use serde::Serialize;
use serde_json::{json, Value};

use super::journal::Op;
use super::packs::{self, PackSink};
use super::{audit, failpoint, manifest_to_json, now_str, AppSummary, Store};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::inspect::{inspect, InspectOptions, Inspection};
use crate::package::ResolvedSource;
use crate::profile::HostProfile;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InstallMode {
    Install,
    Update,
}

/// A package read into staging, not yet installed.
pub struct Staged {
    op: Op,
    sink: PackSink,
    pub inspection: Inspection,
}

#[derive(Debug, Clone, Serialize)]
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
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallPlan {
    pub mode: InstallMode,
    pub app: String,
    pub version: String,
    pub from_version: Option<String>,
    pub trust: &'static str,
    pub sideload: bool,
    pub permissions: Vec<PermissionChange>,
    /// Required permissions the user has not granted yet: installing grants them.
    pub needs_consent: Vec<String>,
    /// Whether data from an earlier install of this app exists and will be used again.
    pub existing_data: bool,
    /// Versions removed so that two stay side by side: the new one and the rollback target.
    pub prunes: Vec<String>,
    pub new_blobs: usize,
    pub new_bytes: u64,
}

impl Staged {
    pub fn abort(self) -> HostResult<()> {
        self.op.finish()
    }
}

fn perm_map(list: &[Value]) -> BTreeMap<String, &Value> {
    list.iter()
        .filter_map(|p| Some((p.get("key")?.as_str()?.to_owned(), p)))
        .collect()
}

fn is_required(p: &Value) -> bool {
    p.get("required").and_then(Value::as_bool).unwrap_or(false)
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
                op,
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

    /// Decides what installing `staged` would do, or why it may not.
    pub fn plan(
        &self,
        staged: &Staged,
        mode: InstallMode,
        sideload: bool,
    ) -> HostResult<InstallPlan> {
        let insp = &staged.inspection;
        if let Some(e) = insp.install_blocker(sideload) {
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
                    let same = crate::hashing::same_hash(&existing.package_hash, &insp.read.package_hash);
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

        let old_perms = match &from_version {
            Some(v) => self.manifest(&name, v)?.array("permissions").to_vec(),
            None => Vec::new(),
        };
        let granted = self.grants_of(&name)?;
        let old = perm_map(&old_perms);
        let new = perm_map(insp.manifest.array("permissions"));
        let mut permissions = Vec::new();
        let mut needs_consent = Vec::new();
        for (key, p) in &new {
            let change = match old.get(key) {
                None if from_version.is_some() => "added",
                None => "added",
                Some(o) if *o != *p => "changed",
                Some(_) => "unchanged",
            };
            if is_required(p) && (change != "unchanged" || !granted.contains(key)) {
                needs_consent.push(key.clone());
            }
            permissions.push(PermissionChange {
                key: key.clone(),
                change,
                required: is_required(p),
                scope: p.get("scope").cloned().unwrap_or(Value::Null),
                access: p.get("access").cloned().unwrap_or(Value::Null),
                reason: p.get("reason").cloned().unwrap_or(Value::Null),
                domains: p.get("domains").cloned().unwrap_or(json!([])),
            });
        }
        for (key, p) in &old {
            if !new.contains_key(key) {
                permissions.push(PermissionChange {
                    key: key.clone(),
                    change: "removed",
                    required: is_required(p),
                    scope: p.get("scope").cloned().unwrap_or(Value::Null),
                    access: p.get("access").cloned().unwrap_or(Value::Null),
                    reason: p.get("reason").cloned().unwrap_or(Value::Null),
                    domains: p.get("domains").cloned().unwrap_or(json!([])),
                });
            }
        }
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
            trust: insp.signature.trust.as_str(),
            sideload: insp.signature.trust.needs_sideload(),
            permissions,
            needs_consent,
            existing_data: self.app_data().exists(&super::app_id(&name)?),
            prunes,
            new_blobs: staged.sink.entries().len(),
            new_bytes,
        })
    }

    /// Installs a planned package. `consented` must include every key in `plan.needs_consent`.
    pub fn commit(
        &self,
        staged: Staged,
        plan: &InstallPlan,
        consented: &BTreeSet<String>,
    ) -> HostResult<AppSummary> {
        self.require_lock()?;
        if let Some(missing) = plan.needs_consent.iter().find(|k| !consented.contains(*k)) {
            if let Err(ae) = staged.abort() {
                tracing::warn!(error = %ae, "cannot remove the staging folder; the next start will");
            }
            return Err(HostError::new(
                ErrorCode::InstallConsentRequired,
                format!("permission {missing} was not consented to"),
            )
            .with("permission", missing));
        }
        let name = plan.app.clone();
        match self.commit_staged(staged, plan, consented) {
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
        let Staged {
            mut op,
            sink,
            inspection: insp,
        } = staged;
        op.journal.kind = match plan.mode {
            InstallMode::Install => "install".into(),
            InstallMode::Update => "update".into(),
        };
        op.journal.app = Some(plan.app.clone());
        op.write()?;

        // Durable staged content, then into the store (one rename).
        let mut sink = sink;
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
                 source_kind, source_uri, manifest_json, projection_json, file_count, total_bytes, installed_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            params![
                name,
                version,
                insp.read.package_hash,
                insp.manifest_hash,
                insp.files_digest,
                plan.trust,
                insp.signature.key_id,
                plan.sideload,
                insp.source.origin,
                insp.source.uri(),
                manifest_to_json(&insp.manifest).to_string(),
                insp.projection.to_string(),
                insp.read.files.len() as i64,
                insp.read.total_bytes as i64,
                now,
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
        // Grants: drop permissions the new version no longer declares, add the consented ones.
        let declared: BTreeSet<String> = plan
            .permissions
            .iter()
            .filter(|p| p.change != "removed")
            .map(|p| p.key.clone())
            .collect();
        let existing: Vec<String> = {
            let mut stmt = tx.prepare("SELECT permission FROM grants WHERE app = ?1")?;
            let rows = stmt.query_map([name], |r| r.get::<_, String>(0))?;
            rows.collect::<Result<_, _>>()?
        };
        for g in existing.iter().filter(|g| !declared.contains(*g)) {
            tx.execute(
                "DELETE FROM grants WHERE app = ?1 AND permission = ?2",
                params![name, g],
            )?;
        }
        for key in consented.iter().filter(|k| declared.contains(*k)) {
            tx.execute(
                "INSERT INTO grants (app, permission, granted_at, granted_for_version) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (app, permission) DO UPDATE SET granted_at = excluded.granted_at, granted_for_version = excluded.granted_for_version",
                params![name, key, now, version],
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
                "granted": consented,
                "pruned": plan.prunes,
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
