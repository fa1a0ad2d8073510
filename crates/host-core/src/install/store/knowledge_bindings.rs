//! Which knowledge templates of an app are bound to a folder, as rows of the `settings` table
//! keyed `app-knowledge/<app>/<template>` (no schema change): the folder's absolute path and
//! when it was bound. Binding and unbinding are audited (`knowledge.bind` / `knowledge.unbind`).
//! Every uninstall removes the rows in its own transaction (a reinstall asks the user again);
//! the index itself lives in the app's data area and goes with `--delete-data`.

use rusqlite::{params, Connection};
use serde::{Deserialize, Serialize};

use super::app_rows::{self, KNOWLEDGE as PREFIX};
use super::{audit, Store};
use crate::foundation::error::{ErrorCode, HostError, HostResult};

/// One bound template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KnowledgeBinding {
    #[serde(skip_deserializing)]
    pub template: String,
    /// The bound folder (absolute).
    pub folder: String,
    pub bound_at: String,
}

impl Store {
    /// The bound templates of `app`, by template.
    pub fn knowledge_bindings(&self, app: &str) -> HostResult<Vec<KnowledgeBinding>> {
        bindings_in(&self.conn, app)
    }

    /// Every app's bound templates, by app then template (`apphost knowledge status`, the
    /// host's watcher).
    pub fn all_knowledge_bindings(&self) -> HostResult<Vec<(String, KnowledgeBinding)>> {
        let mut stmt = self
            .conn
            .prepare("SELECT key, value FROM settings WHERE key >= ?1 AND key < ?2 ORDER BY key")?;
        let rows = stmt.query_map(params![PREFIX, "app-knowledge0"], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (key, value) = row?;
            let Some((app, template)) = key[PREFIX.len()..].split_once('/') else {
                continue;
            };
            out.push((app.to_owned(), parse(&key, template, &value)?));
        }
        Ok(out)
    }

    /// Records a binding, replacing an earlier one of the template (audited `knowledge.bind`).
    pub fn bind_knowledge(
        &self,
        app: &str,
        version: &str,
        binding: &KnowledgeBinding,
    ) -> HostResult<Option<KnowledgeBinding>> {
        self.require_lock()?;
        let tx = self.conn.unchecked_transaction()?;
        let previous = bindings_in(&tx, app)?
            .into_iter()
            .find(|b| b.template == binding.template);
        let value = serde_json::to_string(binding)
            .map_err(|e| HostError::new(ErrorCode::Internal, e.to_string()))?;
        app_rows::put(&tx, PREFIX, app, &binding.template, &value)?;
        audit(
            &tx,
            "knowledge.bind",
            Some(app),
            Some(version),
            &serde_json::json!({
                "template": binding.template,
                "folder": binding.folder,
                "rebound": previous.is_some(),
            }),
        )?;
        tx.commit()?;
        Ok(previous)
    }

    /// Removes a binding (audited `knowledge.unbind`); `None` if the template was not bound.
    pub fn unbind_knowledge(
        &self,
        app: &str,
        version: Option<&str>,
        template: &str,
    ) -> HostResult<Option<KnowledgeBinding>> {
        self.require_lock()?;
        let tx = self.conn.unchecked_transaction()?;
        let previous = bindings_in(&tx, app)?
            .into_iter()
            .find(|b| b.template == template);
        app_rows::delete_audited(
            tx,
            PREFIX,
            app,
            template,
            "knowledge.unbind",
            version,
            &serde_json::json!({ "template": template }),
        )?;
        Ok(previous)
    }
}

/// Deletes every binding row of `app` (inside the caller's transaction).
pub(super) fn delete_all(tx: &Connection, app: &str) -> HostResult<usize> {
    app_rows::delete_all(tx, PREFIX, app)
}

fn parse(key: &str, template: &str, value: &str) -> HostResult<KnowledgeBinding> {
    let mut b: KnowledgeBinding = serde_json::from_str(value).map_err(|e| {
        HostError::new(
            ErrorCode::StoreCorrupt,
            format!("stored knowledge binding {key}: {e}"),
        )
    })?;
    template.clone_into(&mut b.template);
    Ok(b)
}

fn bindings_in(conn: &Connection, app: &str) -> HostResult<Vec<KnowledgeBinding>> {
    app_rows::rows(conn, PREFIX, app)?
        .iter()
        .map(|(key, template, value)| parse(key, template, value))
        .collect()
}
