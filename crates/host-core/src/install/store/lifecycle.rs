//! Rollback, disable/enable and uninstall.

use std::path::Path;

use rusqlite::params;
use serde::Serialize;
use serde_json::json;

use super::cleanup::{CleanupPlan, DataMode};
use super::journal::Op;
use super::packs;
use super::{app_id, audit, failpoint, now_str, AppSummary, Store};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::profile::HostProfile;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UninstallOutcome {
    pub plan: CleanupPlan,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exported_to: Option<String>,
    /// Entries of the app's data the export left out (links, special files, too deep).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub export_skipped: Vec<runtime_core::SkippedEntry>,
    /// Problems after the commit point: the app is uninstalled all the same.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<HostError>,
}

impl Store {
    /// Switches the active version to the previous one (and back again, if called twice).
    /// Data is kept and no downgrade migration runs.
    pub fn rollback(&self, name: &str) -> HostResult<AppSummary> {
        self.require_lock()?;
        // The check and the switch in one write transaction: no other process can change the
        // app in between.
        let tx = self.immediate_transaction()?;
        let app = self.app_row(name)?;
        let Some(prev) = app.previous.clone() else {
            return Err(HostError::new(
                ErrorCode::AppNoRollbackTarget,
                format!("{name} has no previous version to roll back to"),
            )
            .with("app", name));
        };
        tx.execute(
            "UPDATE apps SET active_version = ?2, previous_version = ?3, updated_at = ?4 WHERE name = ?1",
            params![name, prev, app.active, now_str()],
        )?;
        // The pin follows the active version (both versions' publishers were accepted).
        tx.execute(
            "UPDATE publishers SET key_id = v.key_id, public_key = v.public_key, pinned_at = ?3
             FROM (SELECT key_id, public_key FROM app_versions WHERE name = ?1 AND version = ?2) AS v
             WHERE app = ?1",
            params![name, prev, now_str()],
        )?;
        audit(
            &tx,
            "rollback",
            Some(name),
            Some(&prev),
            &json!({"fromVersion": app.active, "toVersion": prev}),
        )?;
        tx.commit()?;
        self.summary(name, &HostProfile::current())
    }

    pub fn set_enabled(&self, name: &str, enabled: bool) -> HostResult<AppSummary> {
        self.require_lock()?;
        if !enabled {
            // This process's backend services of the app stop first (other processes' hosts
            // stop theirs when they see the change).
            crate::foundation::service_health::app_leaving(self.dir.root(), name, "disabled");
        }
        let tx = self.immediate_transaction()?;
        let app = self.app_row(name)?;
        if app.enabled != enabled {
            tx.execute(
                "UPDATE apps SET enabled = ?2, updated_at = ?3 WHERE name = ?1",
                params![name, enabled, now_str()],
            )?;
            audit(
                &tx,
                if enabled { "enable" } else { "disable" },
                Some(name),
                Some(&app.active),
                &json!({}),
            )?;
        }
        tx.commit()?;
        self.summary(name, &HostProfile::current())
    }

    /// Uninstalls `name`. With `ExportThenDelete`, `export_to` receives a zip of the app's data
    /// before anything is removed; if the export fails, nothing is removed.
    pub fn uninstall(
        &self,
        name: &str,
        mode: DataMode,
        export_to: Option<&Path>,
    ) -> HostResult<UninstallOutcome> {
        self.require_lock()?;
        // No service process of the app may outlive (or write during) the removal.
        crate::foundation::service_health::app_leaving(self.dir.root(), name, "uninstalled");
        let plan = self.cleanup_plan(name, mode)?;
        let id = app_id(name)?;
        let data = self.app_data();
        let mut op = Op::begin(&self.dir, "uninstall", Some(name))?;
        let mut export_skipped = Vec::new();
        let result =
            (|| -> HostResult<(Option<String>, Vec<super::SecretBinding>, Vec<String>)> {
                let mut exported = None;
                if mode == DataMode::ExportThenDelete {
                    let dest = export_to.ok_or_else(|| {
                        HostError::new(
                            ErrorCode::CliUsage,
                            "export-then-delete needs a destination file",
                        )
                    })?;
                    let dest = std::path::absolute(dest)
                        .map_err(|e| super::io("cannot resolve", dest, e))?;
                    if dest.exists() {
                        return Err(HostError::new(
                            ErrorCode::ExportFailed,
                            format!("{} already exists; choose a new file", dest.display()),
                        )
                        .with("path", dest.display().to_string()));
                    }
                    op.remember_file(&runtime_core::partial_export_path(&dest), true)?;
                    op.remember_file(&dest, false)?;
                    let report = data.export_zip(&id, &dest).map_err(|e| {
                        HostError::new(
                            ErrorCode::ExportFailed,
                            format!("export failed, nothing was removed: {e}"),
                        )
                    })?;
                    export_skipped = report.skipped;
                    failpoint::hit("uninstall.exported");
                    exported = Some(dest.display().to_string());
                }
                if mode != DataMode::KeepData && data.exists(&id) {
                    op.move_aside(&data.dir(&id), "app-data")?;
                }
                let secret_values = if mode != DataMode::KeepData {
                    self.secret_bindings(name)?
                } else {
                    Vec::new()
                };
                let tx = self.immediate_transaction()?;
                // Re-checked inside the write transaction: still installed, same versions.
                if self.versions_of(name)? != plan.versions {
                    return Err(HostError::new(
                        ErrorCode::InstallPlanStale,
                        format!(
                            "{name} changed while it was being uninstalled; nothing was removed"
                        ),
                    )
                    .with("app", name));
                }
                tx.execute("DELETE FROM version_files WHERE name = ?1", [name])?;
                tx.execute("DELETE FROM app_versions WHERE name = ?1", [name])?;
                tx.execute("DELETE FROM apps WHERE name = ?1", [name])?;
                tx.execute("DELETE FROM grants WHERE app = ?1", [name])?;
                // A bound folder is the user's grant to this install: a reinstall asks again.
                super::knowledge_bindings::delete_all(&tx, name)?;
                // So is a service's network grant.
                super::network_grants::delete_all(&tx, name)?;
                // And a remote service's allowance.
                super::remote_grants::delete_all(&tx, name)?;
                // An `apphost dev` install stops being one with its package: a later install of
                // the name is a normal one.
                tx.execute(
                    "DELETE FROM settings WHERE key = ?1",
                    [format!("{}{name}", super::DEV_PREFIX)],
                )?;
                // Kept data stays bound to its publisher; with the data gone, so is the pin.
                if mode != DataMode::KeepData {
                    tx.execute("DELETE FROM publishers WHERE app = ?1", [name])?;
                    super::secret_bindings::delete_all(&tx, name)?;
                }
                // The user's file refs go in every mode: they were handed to this installation.
                let uploaded_files = super::file_refs::delete_all(&tx, name)?;
                packs::collect_rows(&tx)?;
                audit(
                    &tx,
                    "uninstall",
                    Some(name),
                    None,
                    &json!({"mode": mode, "versions": plan.versions, "blobsRemoved": plan.blobs_removed.len(), "dataFilesRemoved": plan.data_files_removed.len(), "exportedTo": exported}),
                )?;
                tx.execute(
                "INSERT INTO ops (op_id, kind, app, committed_at) VALUES (?1, 'uninstall', ?2, ?3)",
                params![op.journal.op_id, name, now_str()],
            )?;
                failpoint::hit("uninstall.commit");
                tx.commit()?;
                failpoint::hit("uninstall.committed");
                Ok((exported, secret_values, uploaded_files))
            })();
        let (exported, secret_values, uploaded_files) = match result {
            Ok(e) => e,
            Err(e) => {
                // Undo everything, exactly as recovery would after a crash here.
                drop(op);
                return Err(self.recover_after_failure(e));
            }
        };
        let op_id = op.journal.op_id.clone();
        let warnings = self.after_commit(&format!("uninstalling {name}"), || {
            self.collect_garbage()?;
            op.finish()?;
            failpoint::hit("uninstall.finished");
            self.conn
                .execute("DELETE FROM ops WHERE op_id = ?1", [&op_id])?;
            self.compact()
        });
        // The bindings are gone with the commit; their values are unreachable now, and removed
        // here (a value that cannot be removed is a warning, as a leftover pack file is).
        let mut warnings = warnings;
        warnings.extend(super::secret_bindings::delete_secret_values(
            &self.dir,
            &secret_values,
        ));
        for handle in &uploaded_files {
            let copy = self.dir.user_file_uploads().join(handle);
            if let Err(e) = std::fs::remove_file(&copy) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    warnings.push(HostError::new(
                        ErrorCode::StoreCleanupIncomplete,
                        format!(
                            "the uploaded file {} could not be removed: {e}",
                            copy.display()
                        ),
                    ));
                }
            }
        }
        // The read-only package copy its backend services ran from (`hosting/services/package.rs`)
        // goes in every mode: it is no data of the app's.
        let service_packages = self.dir.root().join("runtime/service-packages").join(name);
        if service_packages.exists() {
            let _ = std::fs::remove_dir_all(&service_packages);
        }
        // The app's agent tasks (RuntimeCore's task rows and their sessions' events) go with its
        // data; a failure is a warning like any cleanup after the commit point.
        if mode != DataMode::KeepData {
            let runtime_dir = self.dir.root().join("runtime");
            if let Err(e) = runtime_core::agent_task::store::purge_app(&runtime_dir, name) {
                warnings.push(HostError::new(
                    ErrorCode::StoreCleanupIncomplete,
                    format!(
                        "the agent tasks of {name} could not be removed from {}: {e}",
                        runtime_dir.display()
                    ),
                ));
            }
        }
        Ok(UninstallOutcome {
            plan,
            exported_to: exported,
            export_skipped,
            warnings,
        })
    }
}
