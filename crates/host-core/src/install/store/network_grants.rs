//! Which `remote-allowed` services of an app the user let reach the network, as rows of the
//! `settings` table keyed `app-network/<app>/<service>` (no schema change; the value is when it
//! was granted). Granting and revoking are audited (`service.network_grant` /
//! `service.network_revoke`); every uninstall removes the rows (a reinstall asks again). The
//! service host re-reads the grant at each launch; a service never sees or changes it.

use rusqlite::{params, Connection};

use super::{audit, Store};
use crate::foundation::error::{ErrorCode, HostError, HostResult};

const PREFIX: &str = "app-network/";

impl Store {
    /// The services of `app` granted network, by key.
    pub fn network_grants(&self, app: &str) -> HostResult<Vec<String>> {
        grants_in(&self.conn, app)
    }

    /// Whether `service` of `app` is granted network.
    pub fn network_granted(&self, app: &str, service: &str) -> HostResult<bool> {
        Ok(grants_in(&self.conn, app)?.iter().any(|s| s == service))
    }

    /// Grants network to `service` of the installed `app` (audited `service.network_grant`);
    /// `false` if it was already granted. The caller checked the service declares
    /// `remote-allowed`.
    pub fn grant_network(&self, app: &str, version: &str, service: &str) -> HostResult<bool> {
        self.require_lock()?;
        if !runtime_core::app_area::services::valid_key(service) {
            return Err(HostError::new(
                ErrorCode::ServiceNotDeclared,
                format!("{service:?} is not a service name"),
            ));
        }
        let tx = self.conn.unchecked_transaction()?;
        let had = grants_in(&tx, app)?.iter().any(|s| s == service);
        if !had {
            tx.execute(
                "INSERT INTO settings (key, value) VALUES (?1, ?2)",
                params![
                    super::app_rows::key(PREFIX, app, service),
                    jiff::Timestamp::now().to_string()
                ],
            )?;
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
        self.require_lock()?;
        let tx = self.conn.unchecked_transaction()?;
        let n = tx.execute(
            "DELETE FROM settings WHERE key = ?1",
            [super::app_rows::key(PREFIX, app, service)],
        )?;
        if n > 0 {
            audit(
                &tx,
                "service.network_revoke",
                Some(app),
                version,
                &serde_json::json!({ "service": service }),
            )?;
        }
        tx.commit()?;
        Ok(n > 0)
    }
}

/// Deletes every grant row of `app` (inside the caller's transaction).
pub(super) fn delete_all(tx: &Connection, app: &str) -> HostResult<usize> {
    super::app_rows::delete_all(tx, PREFIX, app)
}

fn grants_in(conn: &Connection, app: &str) -> HostResult<Vec<String>> {
    Ok(super::app_rows::rows(conn, PREFIX, app)?
        .into_iter()
        .map(|(_, service, _)| service)
        .collect())
}
