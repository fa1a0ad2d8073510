//! A service's durable health (host.db, `install/store/service_health_rows.rs`) as the service
//! host uses it: the supervisor's audit sink records each crash and each disk-quota stop or
//! refusal; before a launch the supervisor's crash history is replaced by the record (another
//! process may have crashed it into a loop, or the user reset it from the CLI); `services list`
//! shows the record when the service is not running here.

use service_sandbox::{AuditEvent, Supervisor};

use super::id::ServiceId;
use super::status::ServiceStatus;
use crate::foundation::paths::DataDir;
use crate::install::store::service_health_rows::now_ms;
use crate::install::store::{ServiceHealthRow, Store};

const DISK_QUOTA: &str = "service.disk_quota_exceeded";

/// Records what `event` says about the health of `id` at `version` (from the audit sink).
pub(super) fn on_event(store: &Store, id: &ServiceId, version: &str, event: &AuditEvent) {
    let out = match event {
        AuditEvent::Crashed { status } => {
            store.record_service_crash(&id.app, version, &id.key, now_ms(), status)
        }
        AuditEvent::LimitHit { what } if what.starts_with("disk") => {
            store.record_service_disk_quota(&id.app, &id.key, Some(what))
        }
        AuditEvent::Refused { code } if code == DISK_QUOTA => {
            store.record_service_disk_quota(&id.app, &id.key, Some("over its disk quota at launch"))
        }
        // a launch passed the quota check
        AuditEvent::Started { .. } => store.record_service_disk_quota(&id.app, &id.key, None),
        _ => Ok(()),
    };
    if let Err(e) = out {
        tracing::warn!(error = %e.message, "cannot record a service's health");
    }
}

/// Before a launch (the supervisor is not running): its crash history becomes the durable one.
pub(super) fn sync_before_start(
    data: &DataDir,
    id: &ServiceId,
    version: &str,
    sup: &mut Supervisor,
) {
    if sup.is_running() {
        return;
    }
    let row = Store::open(data).and_then(|s| s.service_health_of(&id.app, &id.key));
    match row {
        Ok(row) => sup.set_crash_history(
            &row.map(|r| r.crash_ages(version, now_ms()))
                .unwrap_or_default(),
        ),
        Err(e) => tracing::warn!(error = %e.message, "cannot read a service's health"),
    }
}

/// Clears the durable record (a user's stop or reset); audited `service.reset` if there was one.
pub(super) fn reset(data: &DataDir, id: &ServiceId, by: &str) -> bool {
    match Store::open(data).and_then(|s| s.reset_service_health(&id.app, &id.key, by)) {
        Ok(was) => was,
        Err(e) => {
            tracing::warn!(error = %e.message, "cannot reset a service's health");
            false
        }
    }
}

/// A service not running here shows its durable health (`row`: none recorded = healthy): a
/// crash loop or a disk-quota stop still over the quota (`disk`) is `blocked`, a recent crash
/// `degraded`; a refusal from its plan is kept.
pub(super) fn apply(
    st: &mut ServiceStatus,
    row: Option<&ServiceHealthRow>,
    version: &str,
    disk: Option<String>,
) {
    let row = row.cloned().unwrap_or_default();
    st.last_crash_at = row
        .last_crash_at()
        .and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok())
        .map(|t| t.to_string());
    st.crashes_in_window = row
        .crash_health(version, now_ms())
        .map(|_| {
            row.recent(
                now_ms(),
                crate::install::store::service_health_rows::crash_rule().0,
            )
        })
        .and_then(|n| u32::try_from(n).ok());
    st.last_error = row.last_error.clone();
    let planned_refusal = st.state == "blocked" && st.code.as_deref() != Some("service.crash_loop");
    // A remote service has no process: no crash or disk record changes its state.
    if st.state == "running" || st.state == "remote" || planned_refusal {
        return;
    }
    let disk = disk.filter(|_| row.disk_quota.is_some());
    let (state, code, reason) = match (row.crash_health(version, now_ms()), disk) {
        (Some((true, why)), _) => ("blocked", Some("service.crash_loop"), Some(why)),
        (_, Some(why)) => ("blocked", Some(DISK_QUOTA), Some(why)),
        (Some((false, why)), _) => ("degraded", None, Some(why)),
        (None, None) => ("stopped", None, None),
    };
    st.state = state.into();
    st.code = code.map(Into::into);
    st.reason = reason;
}
