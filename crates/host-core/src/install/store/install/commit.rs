//! Carrying out a checked plan: the journaled steps that make the staged package the active
//! version (recovery undoes them after a failure).

use super::*;

impl Store {
    pub(super) fn commit_staged(
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
        // A release over an `apphost dev` install ends the dev marking: the app is an ordinary
        // install from now on (its data is kept as in any update).
        let dev_build = semver::Version::parse(version).is_ok_and(|v| is_dev_build(&v));
        if !dev_build {
            tx.execute(
                "DELETE FROM settings WHERE key = ?1",
                [format!("{}{name}", super::super::DEV_PREFIX)],
            )?;
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
