//! Read-only queries the app center needs beyond the CLI's: the audit log filtered by app,
//! capability and decision with a keyset cursor, and each installed version with its date.

use rusqlite::params;
use serde::Serialize;
use serde_json::Value;

use super::Store;
use crate::foundation::error::HostResult;

/// Most audit rows one query answers.
pub const MAX_AUDIT_LIMIT: usize = 1000;

/// A filter over the audit log. `before` is a row id: only older rows are answered (the
/// cursor of the next page is the last row's `id`).
#[derive(Debug, Clone, Default)]
pub struct AuditQuery {
    pub app: Option<String>,
    /// `capability.call` rows whose capability is this (`lime.storage`).
    pub capability: Option<String>,
    /// `capability.call` rows with this decision (`allow`, `ask`, `deny`).
    pub decision: Option<String>,
    pub limit: usize,
    pub before: Option<i64>,
}

/// One audit log row.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditRow {
    pub id: i64,
    pub at: String,
    pub action: String,
    pub app: Option<String>,
    pub version: Option<String>,
    pub details: Value,
}

/// One installed version of an app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersionInfo {
    pub version: String,
    pub installed_at: String,
    pub active: bool,
    pub package_hash: String,
    pub trust: String,
}

impl Store {
    /// Audit rows matching `q`, newest first, at most `q.limit` (capped at
    /// [`MAX_AUDIT_LIMIT`]). Filtering happens in SQLite: memory is bounded by the limit.
    pub fn audit_query(&self, q: &AuditQuery) -> HostResult<Vec<AuditRow>> {
        let limit = q.limit.clamp(1, MAX_AUDIT_LIMIT) as i64;
        let mut stmt = self.conn.prepare(
            "SELECT id, at, action, app, version, details FROM audit_log
             WHERE (?1 IS NULL OR app = ?1)
               AND (?2 IS NULL OR (action = 'capability.call' AND json_extract(details, '$.capability') = ?2))
               AND (?3 IS NULL OR (action = 'capability.call' AND json_extract(details, '$.decision') = ?3))
               AND (?4 IS NULL OR id < ?4)
             ORDER BY id DESC LIMIT ?5",
        )?;
        let rows = stmt.query_map(
            params![q.app, q.capability, q.decision, q.before, limit],
            |r| {
                let details: String = r.get(5)?;
                Ok(AuditRow {
                    id: r.get(0)?,
                    at: r.get(1)?,
                    action: r.get(2)?,
                    app: r.get(3)?,
                    version: r.get(4)?,
                    details: serde_json::from_str(&details).unwrap_or(Value::Null),
                })
            },
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The installed versions of `name`, oldest first (`app.not_installed` if it is not).
    pub fn versions(&self, name: &str) -> HostResult<Vec<VersionInfo>> {
        let app = self.app_row(name)?;
        let mut stmt = self.conn.prepare(
            "SELECT version, installed_at, package_hash, trust FROM app_versions
             WHERE name = ?1 ORDER BY installed_at, version",
        )?;
        let rows = stmt.query_map([name], |r| {
            let version: String = r.get(0)?;
            Ok(VersionInfo {
                active: version == app.active,
                version,
                installed_at: r.get(1)?,
                package_hash: r.get(2)?,
                trust: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
