//! The durable health of each backend service, as `settings` rows keyed
//! `app-service-health/<app>/<service>` (no schema change) whose value is a small JSON record:
//! the last crashes' times (at most [`KEPT_CRASHES`], unix ms), the last error, and whether the
//! service was stopped or refused for its disk quota. Every process of the data dir writes it
//! (the supervisor's audit sink, on a crash or a disk-quota hit) and reads it (readiness,
//! `services list`, and the service host before each launch), so a crash loop one process saw
//! blocks the service in every process and survives a restart. Whether a crash loop holds is
//! derived at read time from the crash times inside the supervisor's window. A row is only
//! written for an installed app; `apphost services reset` (or a user stop) clears it, every
//! uninstall removes them.

use rusqlite::{params, Connection};
use serde::{Deserialize, Serialize};

use super::app_rows::{self, SERVICE_HEALTH as PREFIX};
use super::Store;
use crate::foundation::error::HostResult;

/// Crash times kept per service (twice the default crash limit).
pub const KEPT_CRASHES: usize = 10;

/// One service's durable health.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ServiceHealthRow {
    /// The app version the crashes are of (an update starts afresh).
    pub version: Option<String>,
    /// Unix milliseconds of the last crashes, oldest first.
    pub crashes: Vec<i64>,
    pub last_error: Option<String>,
    /// Why the service was last stopped or refused for its disk quota (cleared by a launch
    /// that passes the quota check).
    pub disk_quota: Option<String>,
    /// At the last write: crashes inside the window, and whether that made a crash loop.
    pub crashes_in_window: u32,
    pub crash_loop: bool,
}

impl ServiceHealthRow {
    /// Crashes less than `window_ms` before `now_ms`.
    pub fn recent(&self, now_ms: i64, window_ms: i64) -> usize {
        self.crashes
            .iter()
            .filter(|t| now_ms.saturating_sub(**t) < window_ms)
            .count()
    }

    pub fn last_crash_at(&self) -> Option<i64> {
        self.crashes.last().copied()
    }

    /// The crash health of `version` at `now_ms`: `Some((true, why))` in a crash loop,
    /// `Some((false, why))` after a recent crash, `None` when there is none (or the crashes
    /// are of another version).
    pub fn crash_health(&self, version: &str, now_ms: i64) -> Option<(bool, String)> {
        if self.version.as_deref() != Some(version) {
            return None;
        }
        let (window, limit) = crash_rule();
        let recent = self.recent(now_ms, window);
        let last = self
            .last_error
            .as_deref()
            .map(|e| format!("; last: {e}"))
            .unwrap_or_default();
        if recent >= limit {
            Some((
                true,
                format!(
                    "crash loop: {recent} crashes within {}s{last}",
                    window / 1000
                ),
            ))
        } else if recent > 0 {
            Some((false, format!("{recent} recent crash(es){last}")))
        } else {
            None
        }
    }

    /// The crash ages of `version` at `now_ms` (for the supervisor's history).
    pub fn crash_ages(&self, version: &str, now_ms: i64) -> Vec<std::time::Duration> {
        if self.version.as_deref() != Some(version) {
            return Vec::new();
        }
        self.crashes
            .iter()
            .map(|t| std::time::Duration::from_millis(u64::try_from(now_ms - t).unwrap_or(0)))
            .collect()
    }
}

/// The window and limit a crash loop is judged by (the supervisor's defaults).
pub fn crash_rule() -> (i64, usize) {
    let p = service_sandbox::Policy::default();
    (
        i64::try_from(p.crash_window.as_millis()).unwrap_or(i64::MAX),
        p.crash_limit,
    )
}

pub fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

fn parse(value: &str) -> ServiceHealthRow {
    serde_json::from_str(value).unwrap_or_default()
}

fn read(conn: &Connection, app: &str, service: &str) -> HostResult<Option<ServiceHealthRow>> {
    Ok(app_rows::value(conn, PREFIX, app, service)?.map(|v| parse(&v)))
}

/// Writes `row` only while `app` is installed (a late write after an uninstall adds nothing).
fn write(conn: &Connection, app: &str, service: &str, row: &ServiceHealthRow) -> HostResult<()> {
    let value = serde_json::to_string(row).unwrap_or_else(|_| "{}".into());
    conn.execute(
        "INSERT OR REPLACE INTO settings (key, value)
         SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM apps WHERE name = ?3)",
        params![app_rows::key(PREFIX, app, service), value, app],
    )?;
    Ok(())
}

impl Store {
    /// Every recorded service of `app`: `(key, row)`, by key.
    pub fn service_health(&self, app: &str) -> HostResult<Vec<(String, ServiceHealthRow)>> {
        Ok(app_rows::items(&self.conn, PREFIX, app)?
            .into_iter()
            .map(|(service, value)| (service, parse(&value)))
            .collect())
    }

    /// The recorded health of `service` of `app`, if any.
    pub fn service_health_of(
        &self,
        app: &str,
        service: &str,
    ) -> HostResult<Option<ServiceHealthRow>> {
        read(&self.conn, app, service)
    }

    /// Adds a crash at `at_ms` with its error (bounded) to the record.
    pub fn record_service_crash(
        &self,
        app: &str,
        version: &str,
        service: &str,
        at_ms: i64,
        error: &str,
    ) -> HostResult<()> {
        self.update_health(app, service, |row| {
            if row.version.as_deref() != Some(version) {
                row.crashes.clear();
                row.version = Some(version.to_owned());
            }
            row.crashes.push(at_ms);
            row.crashes.sort_unstable();
            let extra = row.crashes.len().saturating_sub(KEPT_CRASHES);
            row.crashes.drain(..extra);
            row.last_error = Some(error.chars().take(300).collect());
            let (window, limit) = crash_rule();
            let recent = row.recent(at_ms, window);
            row.crashes_in_window = u32::try_from(recent).unwrap_or(u32::MAX);
            row.crash_loop = recent >= limit;
        })
    }

    /// Records (`Some(why)`) or clears (`None`) a disk-quota stop or refusal.
    pub fn record_service_disk_quota(
        &self,
        app: &str,
        service: &str,
        why: Option<&str>,
    ) -> HostResult<()> {
        if why.is_none() && self.service_health_of(app, service)?.is_none() {
            return Ok(());
        }
        self.update_health(app, service, |row| {
            row.disk_quota = why.map(|w| w.chars().take(300).collect());
        })
    }

    fn update_health(
        &self,
        app: &str,
        service: &str,
        change: impl FnOnce(&mut ServiceHealthRow),
    ) -> HostResult<()> {
        let tx = self.immediate_transaction()?;
        let mut row = read(&tx, app, service)?.unwrap_or_default();
        change(&mut row);
        write(&tx, app, service, &row)?;
        tx.commit()?;
        Ok(())
    }

    /// Clears the record of `service` of `app` (a user's reset or stop), audited
    /// `service.reset` with who asked when there was one; `false` if there was none.
    pub fn reset_service_health(&self, app: &str, service: &str, by: &str) -> HostResult<bool> {
        app_rows::delete_audited(
            self.immediate_transaction()?,
            PREFIX,
            app,
            service,
            "service.reset",
            None,
            &serde_json::json!({ "service": service, "by": by }),
        )
    }
}

/// Readiness facts of `app` at `version`: per service key, its crash health
/// ([`ServiceHealthRow::crash_health`]) and, for one stopped or refused for its disk quota and
/// still over it now, why.
pub type HealthFacts = (
    std::collections::BTreeMap<String, (bool, String)>,
    std::collections::BTreeMap<String, String>,
);

impl Store {
    pub fn service_health_facts(&self, app: &str, version: &str) -> HostResult<HealthFacts> {
        let now = now_ms();
        let mut crash = std::collections::BTreeMap::new();
        let mut disk = std::collections::BTreeMap::new();
        for (key, row) in self.service_health(app)? {
            if let Some(h) = row.crash_health(version, now) {
                crash.insert(key.clone(), h);
            }
            if row.disk_quota.is_some() {
                if let Some(why) = crate::install::service_disk::still_over(&self.dir, app, &key) {
                    disk.insert(key, why);
                }
            }
        }
        Ok((crash, disk))
    }
}

/// Deletes every record of `app` (inside the caller's transaction).
pub(super) fn delete_all(tx: &Connection, app: &str) -> HostResult<usize> {
    app_rows::delete_all(tx, PREFIX, app)
}
