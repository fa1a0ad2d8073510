//! Which `remote-http` services of an app the user allowed (host policy for `server-assisted`
//! services, docs/services.md "Remote services"), as rows of the `settings` table keyed
//! `app-remote/<app>/<service>` (no schema change) whose value is the endpoint origin the user
//! saw when allowing it: an update that moves the endpoint elsewhere is not allowed until the
//! user allows it again. Allowing and revoking are audited (`service.remote_allow` /
//! `service.remote_revoke`); every uninstall removes the rows (a reinstall asks again). Readiness
//! and every call re-read them; an app never sees or changes them.

use super::app_rows::{self, REMOTE as PREFIX};
use super::{audit, Store};
use crate::foundation::error::HostResult;

impl Store {
    /// The remote services of `app` the user allowed, as `(service, origin)`, by key.
    pub fn remote_allowances(&self, app: &str) -> HostResult<Vec<(String, String)>> {
        app_rows::items(&self.conn, PREFIX, app)
    }

    /// The origin `service` of `app` was allowed for, if it was.
    pub fn remote_allowed_origin(&self, app: &str, service: &str) -> HostResult<Option<String>> {
        app_rows::value(&self.conn, PREFIX, app, service)
    }

    /// Allows `service` of the installed `app` to be called at `origin` (audited
    /// `service.remote_allow`); `false` if it already was, for that origin. The caller checked
    /// the service's declaration.
    pub fn allow_remote(
        &self,
        app: &str,
        version: &str,
        service: &str,
        origin: &str,
    ) -> HostResult<bool> {
        self.require_lock()?;
        app_rows::require_service_key(service)?;
        let tx = self.conn.unchecked_transaction()?;
        let had = app_rows::value(&tx, PREFIX, app, service)?;
        if had.as_deref() != Some(origin) {
            app_rows::put(&tx, PREFIX, app, service, origin)?;
            audit(
                &tx,
                "service.remote_allow",
                Some(app),
                Some(version),
                &serde_json::json!({ "service": service, "origin": origin, "previous": had }),
            )?;
        }
        tx.commit()?;
        Ok(had.as_deref() != Some(origin))
    }

    /// Revokes the allowance (audited `service.remote_revoke`); `false` if there was none.
    pub fn revoke_remote(
        &self,
        app: &str,
        version: Option<&str>,
        service: &str,
    ) -> HostResult<bool> {
        self.revoke_service_row(PREFIX, "service.remote_revoke", app, version, service)
    }
}

/// Deletes every allowance row of `app` (inside the caller's transaction).
pub(super) fn delete_all(tx: &rusqlite::Connection, app: &str) -> HostResult<usize> {
    app_rows::delete_all(tx, PREFIX, app)
}
