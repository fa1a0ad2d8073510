//! What the app surfaces need from the store: the active version of an app, its manifest and
//! hashes, whether it is enabled, and its grants, in one consistent read.

use std::collections::BTreeSet;

use rusqlite::params;

use super::{audit, now_str, stored_manifest, Store};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::install::manifest::Manifest;

/// The facts a mount or a served file is decided from.
#[derive(Debug, Clone)]
pub struct ActiveApp {
    pub name: String,
    pub version: String,
    pub enabled: bool,
    pub package_hash: String,
    pub manifest_hash: String,
    pub manifest: Manifest,
    pub grants: BTreeSet<String>,
}

impl Store {
    /// The active version of an installed app (`app.not_installed` when it is not).
    pub fn active_app(&self, name: &str) -> HostResult<ActiveApp> {
        let app = self.app_row(name)?;
        let (package_hash, manifest_hash, manifest_json): (String, String, String) =
            self.conn.query_row(
                "SELECT package_hash, manifest_hash, manifest_json FROM app_versions WHERE name = ?1 AND version = ?2",
                params![name, app.active],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?;
        Ok(ActiveApp {
            name: name.to_owned(),
            version: app.active,
            enabled: app.enabled,
            package_hash,
            manifest_hash,
            manifest: stored_manifest(&manifest_json)?,
            grants: self.grants_of(name)?,
        })
    }

    /// Appends one audit record (capability decisions, prompts, refusals).
    pub fn record_audit(
        &self,
        action: &str,
        app: Option<&str>,
        version: Option<&str>,
        details: &serde_json::Value,
    ) -> HostResult<()> {
        audit(&self.conn, action, app, version, details)
    }

    /// [`Store::record_audit`], fsynced on any connection: for the record of an effect that is
    /// itself fsynced, so the effect is never on disk without it (`store::durability`).
    pub fn record_audit_durably(
        &self,
        action: &str,
        app: Option<&str>,
        version: Option<&str>,
        details: &serde_json::Value,
    ) -> HostResult<()> {
        self.durably(|| audit(&self.conn, action, app, version, details))
    }

    /// The permissions granted to an app.
    pub fn grants(&self, name: &str) -> HostResult<BTreeSet<String>> {
        self.app_row(name)?;
        self.grants_of(name)
    }

    /// Grants a permission the active version declares ("allow always", or `apphost grant`).
    /// A user's decision: fsynced on any connection (`store::durability`).
    pub fn grant(&self, name: &str, permission: &str) -> HostResult<()> {
        self.durably(|| self.grant_now(name, permission))
    }

    fn grant_now(&self, name: &str, permission: &str) -> HostResult<()> {
        let app = self.active_app(name)?;
        let declared = app.manifest.view().permission(permission).is_some();
        if !declared {
            return Err(HostError::new(
                ErrorCode::PermissionUnknown,
                format!("{name} does not declare a permission {permission}"),
            )
            .with("app", name)
            .with("permission", permission));
        }
        let tx = self.conn.unchecked_transaction()?;
        tx.execute(
            "INSERT INTO grants (app, permission, granted_at, granted_for_version) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (app, permission) DO UPDATE SET granted_at = excluded.granted_at,
                 granted_for_version = excluded.granted_for_version",
            params![name, permission, now_str(), app.version],
        )?;
        audit(
            &tx,
            "permission.grant",
            Some(name),
            Some(&app.version),
            &serde_json::json!({ "permission": permission }),
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Revokes a grant; takes effect on the app's next call. Returns whether it was granted.
    /// A user's decision: fsynced on any connection (`store::durability`).
    pub fn revoke(&self, name: &str, permission: &str) -> HostResult<bool> {
        self.durably(|| self.revoke_now(name, permission))
    }

    fn revoke_now(&self, name: &str, permission: &str) -> HostResult<bool> {
        let app = self.active_app(name)?;
        let tx = self.conn.unchecked_transaction()?;
        let n = tx.execute(
            "DELETE FROM grants WHERE app = ?1 AND permission = ?2",
            params![name, permission],
        )?;
        if n > 0 {
            audit(
                &tx,
                "permission.revoke",
                Some(name),
                Some(&app.version),
                &serde_json::json!({ "permission": permission }),
            )?;
        }
        tx.commit()?;
        Ok(n > 0)
    }
}
