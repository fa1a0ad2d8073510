//! Which `lime.secrets` slots of an app are bound, as rows of the `settings` table keyed
//! `app-secret/<app>/<slot>` (no schema change): the opaque ref the app sees and where the
//! value is kept (a [`SecretRef`](crate::install::secrets::SecretRef)), never the value. Binding and
//! unbinding are audited like grants. `uninstall --delete-data` removes the rows in its own
//! transaction (and the values after its commit); `--keep-data` keeps both.

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use super::app_rows::{self, SECRET as PREFIX};
use super::{audit, Store};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;
use crate::install::secrets::{self, SecretRef};

/// One bound slot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretBinding {
    #[serde(skip)]
    pub slot: String,
    /// The opaque ref `lime.secrets.getRef` answers: random, new on every bind.
    #[serde(rename = "ref")]
    pub handle: String,
    /// Where the value is kept (`keyring:app/<app>/<slot>/<id>` or `encrypted-file:…`).
    pub stored_as: String,
    pub bound_at: String,
}

impl Store {
    /// The bound slots of `app` (installed or uninstalled with its data kept), by slot.
    pub fn secret_bindings(&self, app: &str) -> HostResult<Vec<SecretBinding>> {
        bindings_in(&self.conn, app)
    }

    /// Records a binding, replacing any earlier one of the slot (audited `secret.bind`).
    /// Returns the binding it replaced.
    pub fn bind_secret(
        &self,
        app: &str,
        version: &str,
        binding: &SecretBinding,
    ) -> HostResult<Option<SecretBinding>> {
        self.require_lock()?;
        let tx = self.conn.unchecked_transaction()?;
        let previous = bindings_in(&tx, app)?
            .into_iter()
            .find(|b| b.slot == binding.slot);
        let value = serde_json::to_string(binding)
            .map_err(|e| HostError::new(ErrorCode::Internal, e.to_string()))?;
        app_rows::put(&tx, PREFIX, app, &binding.slot, &value)?;
        audit(
            &tx,
            "secret.bind",
            Some(app),
            Some(version),
            &serde_json::json!({
                "slot": binding.slot,
                "store": binding.stored_as.split(':').next(),
                "rebound": previous.is_some(),
            }),
        )?;
        tx.commit()?;
        Ok(previous)
    }

    /// Removes a binding (audited `secret.unbind`); `None` if the slot was not bound.
    pub fn unbind_secret(
        &self,
        app: &str,
        version: Option<&str>,
        slot: &str,
    ) -> HostResult<Option<SecretBinding>> {
        self.require_lock()?;
        let tx = self.conn.unchecked_transaction()?;
        let previous = bindings_in(&tx, app)?.into_iter().find(|b| b.slot == slot);
        app_rows::delete_audited(
            tx,
            PREFIX,
            app,
            slot,
            "secret.unbind",
            version,
            &serde_json::json!({ "slot": slot }),
        )?;
        Ok(previous)
    }
}

/// Deletes every binding row of `app` (inside the caller's transaction).
pub(super) fn delete_all(tx: &Connection, app: &str) -> HostResult<usize> {
    app_rows::delete_all(tx, PREFIX, app)
}

pub(super) fn bindings_in(conn: &Connection, app: &str) -> HostResult<Vec<SecretBinding>> {
    let mut out = Vec::new();
    for (key, slot, value) in app_rows::rows(conn, PREFIX, app)? {
        let mut b: SecretBinding = serde_json::from_str(&value).map_err(|e| {
            HostError::new(
                ErrorCode::StoreCorrupt,
                format!("stored secret binding {key}: {e}"),
            )
        })?;
        b.slot = slot;
        out.push(b);
    }
    Ok(out)
}

/// Deletes the values of `bindings` from their secret stores; each failure is returned as a
/// warning (the bindings are gone already, so a leftover value is unreachable).
pub fn delete_secret_values(dir: &DataDir, bindings: &[SecretBinding]) -> Vec<HostError> {
    let mut warnings = Vec::new();
    for b in bindings {
        let Some(r) = SecretRef::parse(&b.stored_as) else {
            continue;
        };
        if let Err(e) = secrets::open_backend(dir, r.backend).and_then(|s| s.delete(&r.name)) {
            warnings.push(
                HostError::new(
                    e.code,
                    format!(
                        "the value of secret slot {} could not be removed from the {}: {}",
                        b.slot,
                        r.backend.as_str(),
                        e.message
                    ),
                )
                .with("slot", b.slot.clone()),
            );
        }
    }
    warnings
}
