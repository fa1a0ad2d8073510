//! Which `remote-allowed` services of an app the user let reach the network, as rows of the
//! `settings` table keyed `app-network/<app>/<service>` (no schema change; the value is when it
//! was granted). Granting and revoking are audited (`service.network_grant` /
//! `service.network_revoke`); every uninstall removes the rows (a reinstall asks again). The
//! service host re-reads the grant at each launch; a service never sees or changes it.

use rusqlite::Connection;

use super::app_rows::{self, NETWORK as PREFIX};
use super::{audit, Store};
use crate::foundation::error::HostResult;

impl Store {
    /// The services of `app` granted network, by key.
    pub fn network_grants(&self, app: &str) -> HostResult<Vec<String>> {
        grants_in(&self.conn, app)
    }

    /// Whether `service` of `app` is granted network.
    pub fn network_granted(&self, app: &str, service: &str) -> HostResult<bool> {
        Ok(app_rows::value(&self.conn, PREFIX, app, service)?.is_some())
    }

    /// Grants network to `service` of the installed `app` (audited `service.network_grant`);
    /// `false` if it was already granted. The caller checked the service declares
    /// `remote-allowed`.
    pub fn grant_network(&self, app: &str, version: &str, service: &str) -> HostResult<bool> {
        self.require_lock()?;
        app_rows::require_service_key(service)?;
        let tx = self.conn.unchecked_transaction()?;
        let had = app_rows::value(&tx, PREFIX, app, service)?.is_some();
        if !had {
            let now = jiff::Timestamp::now().to_string();
            app_rows::put(&tx, PREFIX, app, service, &now)?;
            audit(
                &tx,
                "service.network_grant",
                Some(app),
                Some(version),
                &serde_json::json!({ "service": service }),
            )?;
        }
        tx.commit()?;
        Ok(!had)
    }

    /// Revokes the grant (audited `service.network_revoke`); `false` if there was none.
    pub fn revoke_network(
        &self,
        app: &str,
        version: Option<&str>,
        service: &str,
    ) -> HostResult<bool> {
        self.revoke_service_row(PREFIX, "service.network_revoke", app, version, service)
    }
}

/// Deletes every grant row of `app` (inside the caller's transaction).
pub(super) fn delete_all(tx: &Connection, app: &str) -> HostResult<usize> {
    app_rows::delete_all(tx, PREFIX, app)
}

fn grants_in(conn: &Connection, app: &str) -> HostResult<Vec<String>> {
    Ok(app_rows::items(conn, PREFIX, app)?
        .into_iter()
        .map(|(service, _)| service)
        .collect())
}
