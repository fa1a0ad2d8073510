//! The `settings` table: host settings (each write checked and audited) and the limits they set.

use rusqlite::params;
use serde_json::Value;

use super::{audit, Store};
use crate::foundation::error::{ErrorCode, HostError, HostResult};

impl Store {
    /// Every stored setting, by key.
    pub fn settings(&self) -> HostResult<std::collections::BTreeMap<String, String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT key, value FROM settings ORDER BY key")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Stores a setting after checking it (`None` removes it). A key under a prefix the store
    /// keeps for its own audited per-app rows ([`super::RESERVED_SETTING_PREFIXES`]) is refused
    /// `setting.reserved` before anything is read or written.
    pub fn set_setting(&self, key: &str, value: Option<&str>) -> HostResult<()> {
        if let Some(prefix) = super::app_rows::reserved_prefix(key) {
            return Err(HostError::new(
                ErrorCode::SettingReserved,
                format!(
                    "{key:?} is under {prefix:?}, which the host writes only through its own audited commands"
                ),
            )
            .with("key", key)
            .with("prefix", prefix));
        }
        self.require_lock()?;
        let check = |v: &str| {
            match crate::foundation::setting_keys::check_tools_setting(key, v) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(m) => return Err(HostError::new(ErrorCode::SettingInvalid, m).with("key", key)),
            }
            match crate::foundation::budget_keys::check_budget_setting(key, v) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(m) => return Err(HostError::new(ErrorCode::SettingInvalid, m).with("key", key)),
            }
            if key == crate::foundation::setting_keys::ARTIFACT_WRITE_APPROVAL {
                return crate::foundation::setting_keys::check_artifact_write_approval(v)
                    .map_err(|m| HostError::new(ErrorCode::SettingInvalid, m).with("key", key));
            }
            crate::foundation::limits::Limits::default()
                .apply_setting(key, v)
                .map_err(|m| HostError::new(ErrorCode::SettingInvalid, m).with("key", key))
        };
        let tx = self.conn.unchecked_transaction()?;
        match value {
            Some(v) => {
                check(v)?;
                tx.execute(
                    "INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    params![key, v.trim()],
                )?;
            }
            None => {
                check(
                    if key == crate::foundation::setting_keys::ARTIFACT_WRITE_APPROVAL {
                        crate::foundation::setting_keys::ASK
                    } else if key.starts_with("tools.grants.") {
                        "[]"
                    } else if key.starts_with("tools.") {
                        "{}"
                    } else {
                        "1"
                    },
                )?;
                tx.execute("DELETE FROM settings WHERE key = ?1", [key])?;
            }
        }
        audit(
            &tx,
            "setting",
            None,
            None,
            &serde_json::json!({"key": key, "value": value}),
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Writes (or with `None` removes) host settings outside the `limits.*` family, which
    /// their own module has checked (model settings), in one transaction with an audit entry.
    pub fn write_settings(
        &self,
        values: &[(&str, Option<&str>)],
        audit_action: &str,
        audit_details: &Value,
    ) -> HostResult<()> {
        self.require_lock()?;
        let tx = self.conn.unchecked_transaction()?;
        for (key, value) in values {
            match value {
                Some(v) => tx.execute(
                    "INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    params![key, v],
                )?,
                None => tx.execute("DELETE FROM settings WHERE key = ?1", [key])?,
            };
        }
        audit(&tx, audit_action, None, None, audit_details)?;
        tx.commit()?;
        Ok(())
    }

    /// The limits in effect: defaults overridden by stored settings.
    pub fn limits(&self) -> HostResult<crate::foundation::limits::Limits> {
        let mut limits = crate::foundation::limits::Limits::default();
        for (k, v) in self.settings()? {
            if k.starts_with("limits.") {
                limits
                    .apply_setting(&k, &v)
                    .map_err(|m| HostError::new(ErrorCode::StoreCorrupt, m).with("key", k))?;
            }
        }
        Ok(limits)
    }
}
