//! Scheduled starts: a `background-task` entry with `workflow: <key>` and `schedule: {every:
//! "15m"}` (`docs/package-format.md` §8.6) starts that workflow every period while a host
//! process (the window, `apphost serve`) runs.
//!
//! - The next due time of each schedule is durable (`<data>/runtime/workflows/schedules.json`,
//!   0600, written to a temporary file, fsynced and renamed over the old one), so a restart
//!   keeps the rhythm.
//! - A new (or changed) schedule is first due one period after the host first sees it.
//! - A due time that passed more than [`GRACE`] ago passed while no host ran: it is *missed*.
//!   It is reported (`missed` in the schedule's record, a `workflow:changed` event, the Tasks
//!   page), never caught up: no start for it, and the next due time is the first slot after now.
//! - A start is recorded as done (the file) before the run starts, and its run's idempotency key
//!   is `schedule:<entry>:<slot>`: a slot never starts twice, even across a crash.
//!
//! [`plan`] is pure (now is an input); [`due_now`] reads the store and the file around it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::foundation::paths::DataDir;
pub use crate::install::schedules::{code, of_manifest, parse, Declared, MAX_EVERY, MIN_EVERY};
use crate::install::store::Store;

/// A due time passed by more than this when the host looks was passed while no host ran.
pub const GRACE: SignedDuration = SignedDuration::from_secs(60);
/// Most schedules kept (entries beyond it are ignored, in app and entry order).
pub const MAX_SCHEDULES: usize = 256;

/// The durable record of one schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleRecord {
    pub app: String,
    pub entry: String,
    pub workflow: String,
    pub every_secs: i64,
    /// RFC 3339.
    pub next_due: String,
    pub last_started: Option<String>,
    /// Slots missed while no host ran, in all.
    pub missed_total: u64,
    pub last_missed: Option<MissedSlots>,
}

/// Slots that passed while no host ran, reported when the host next looked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MissedSlots {
    pub app: String,
    pub entry: String,
    pub missed: u64,
    /// The first missed slot and when the host noticed (RFC 3339).
    pub first: String,
    pub noticed_at: String,
}

/// One start to make now.
#[derive(Debug, Clone, PartialEq)]
pub struct Start {
    pub app: String,
    pub entry: String,
    pub workflow: String,
    /// The slot (RFC 3339): part of the run's idempotency key.
    pub slot: String,
}

/// What [`plan`] decided.
#[derive(Debug, Default, PartialEq)]
pub struct Due {
    pub start: Vec<Start>,
    pub missed: Vec<MissedSlots>,
}

fn id(app: &str, entry: &str) -> String {
    format!("{app}/{entry}")
}

fn ts(text: &str) -> Option<Timestamp> {
    text.parse().ok()
}

/// The first slot `next + k * every` (k ≥ 0) after `now`, and `k`.
fn first_after(next: Timestamp, every: SignedDuration, now: Timestamp) -> (Timestamp, u64) {
    let behind = now.duration_since(next);
    if behind.is_negative() {
        return (next, 0);
    }
    let k = (behind.as_secs() / every.as_secs().max(1)) as u64 + 1;
    let at = next
        .checked_add(every.checked_mul(k as i32).unwrap_or(MAX_EVERY))
        .unwrap_or(now);
    (at, k)
}

/// Decides, from the declared schedules and their records, what starts now and what was missed;
/// updates `records` (drops those no longer declared).
pub fn plan(
    declared: &[Declared],
    records: &mut BTreeMap<String, ScheduleRecord>,
    now: Timestamp,
) -> Due {
    let mut due = Due::default();
    let mut keep = BTreeMap::new();
    for d in declared.iter().take(MAX_SCHEDULES) {
        let key = id(&d.app, &d.entry);
        let every = d.every.as_secs();
        let fresh = || ScheduleRecord {
            app: d.app.clone(),
            entry: d.entry.clone(),
            workflow: d.workflow.clone(),
            every_secs: every,
            next_due: now.checked_add(d.every).unwrap_or(now).to_string(),
            last_started: None,
            missed_total: 0,
            last_missed: None,
        };
        let mut r = match records.remove(&key) {
            Some(r) if r.every_secs == every && r.workflow == d.workflow => r,
            Some(old) => ScheduleRecord {
                missed_total: old.missed_total,
                last_missed: old.last_missed,
                ..fresh()
            },
            None => fresh(),
        };
        let next = ts(&r.next_due).unwrap_or(now);
        if next <= now {
            let late = now.duration_since(next);
            let (after, k) = first_after(next, d.every, now);
            if late > GRACE {
                let m = MissedSlots {
                    app: d.app.clone(),
                    entry: d.entry.clone(),
                    missed: k,
                    first: next.to_string(),
                    noticed_at: now.to_string(),
                };
                r.missed_total += k;
                r.last_missed = Some(m.clone());
                due.missed.push(m);
            } else {
                due.start.push(Start {
                    app: d.app.clone(),
                    entry: d.entry.clone(),
                    workflow: d.workflow.clone(),
                    slot: next.to_string(),
                });
                r.last_started = Some(next.to_string());
                if k > 1 {
                    // Slots after the first that are also past: missed, not caught up.
                    r.missed_total += k - 1;
                }
            }
            r.next_due = after.to_string();
        }
        keep.insert(key, r);
    }
    *records = keep;
    due
}

/// Where the records live.
pub fn records_path(data: &DataDir) -> PathBuf {
    super::runs_dir(data).join("schedules.json")
}

/// The records on disk (none when the file is absent; an unreadable file counts as empty and
/// is replaced on the next save).
pub fn load(path: &Path) -> BTreeMap<String, ScheduleRecord> {
    std::fs::read(path)
        .ok()
        .filter(|b| b.len() <= 4 << 20)
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Writes the records durably (temporary file, fsync, rename, directory fsync).
pub fn save(path: &Path, records: &BTreeMap<String, ScheduleRecord>) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    runtime_core::private_fs::create_private_dir(dir)?;
    let tmp = dir.join("schedules.json.tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut f = runtime_core::private_fs::create_private_file(&tmp)?;
    f.write_all(&serde_json::to_vec_pretty(records).unwrap_or_default())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    runtime_core::durable::sync_dir(dir)
}

/// Every enabled app's declared schedules (invalid ones skipped: readiness reports them).
pub fn declared(store: &Store) -> Result<Vec<Declared>, String> {
    let mut out = Vec::new();
    for app in store.app_names().map_err(|e| e.message)? {
        let Ok(active) = store.active_app(&app) else {
            continue;
        };
        if !active.enabled {
            continue;
        }
        out.extend(
            of_manifest(&app, active.manifest.view())
                .into_iter()
                .filter_map(Result::ok),
        );
    }
    Ok(out)
}

/// The starts due now and the slots missed, with the records saved first. Writes nothing when
/// no app declares a schedule and there is no record.
pub fn due_now(store: &Store, data: &DataDir) -> Result<Due, String> {
    let declared = declared(store)?;
    let path = records_path(data);
    if declared.is_empty() && !path.exists() {
        return Ok(Due::default());
    }
    let mut records = load(&path);
    let before = records.clone();
    let due = plan(&declared, &mut records, Timestamp::now());
    if records != before {
        save(&path, &records).map_err(|e| format!("cannot save the schedules: {e}"))?;
    }
    Ok(due)
}

#[cfg(test)]
mod tests;
