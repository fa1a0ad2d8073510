//! The status rule and the report.

use std::collections::{BTreeSet, HashMap};

use serde_json::{json, Value};

use super::{Check, EntryReadiness, HostState, Outcome, Report, SetupAction, Status};
use crate::install::manifest::Manifest;

fn status_of<'a>(checks: impl Iterator<Item = &'a Check>) -> (Status, Vec<String>) {
    let mut worst = Status::Ready;
    let mut missing = Vec::new();
    for c in checks {
        let s = match (c.outcome, c.required) {
            (Outcome::Blocked | Outcome::Unknown, true) => Status::Blocked,
            (Outcome::NeedsSetup, true) => Status::NeedsSetup,
            (Outcome::Blocked | Outcome::NeedsSetup | Outcome::Degraded, _) => {
                Status::ReadyDegraded
            }
            _ => continue,
        };
        missing.push(c.key.clone());
        worst = worst.max(s);
    }
    (worst, missing)
}

pub(super) fn finish(m: &Manifest, state: &HostState, checks: Vec<Check>) -> Report {
    let (mut status, _) = status_of(checks.iter().filter(|c| c.entry.is_none()));
    // Each entry's own checks, grouped once (not one scan of every check per entry).
    let mut own: HashMap<&str, Vec<&Check>> = HashMap::new();
    for c in &checks {
        if let Some(e) = c.entry.as_deref() {
            own.entry(e).or_default().push(c);
        }
    }
    // An app whose every entry is blocked cannot launch anything.
    let entries: Vec<EntryReadiness> = m
        .view()
        .entries()
        .map(|e| {
            let key = e.label("entry").to_owned();
            let (s, missing) = status_of(own.get(key.as_str()).into_iter().flatten().copied());
            EntryReadiness {
                entry_key: key,
                status: if state.disabled {
                    Status::Disabled
                } else {
                    s.max(status)
                },
                missing,
            }
        })
        .collect();
    if !entries.is_empty() && entries.iter().all(|e| e.status == Status::Blocked) {
        status = Status::Blocked;
    } else if status == Status::Ready && entries.iter().any(|e| e.status > Status::Ready) {
        status = Status::ReadyDegraded;
    }
    if state.disabled {
        status = Status::Disabled;
    }
    let blockers = checks
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Blocked | Outcome::Unknown) && c.required)
        .map(|c| c.message.clone())
        .collect();
    let warnings = checks
        .iter()
        .filter(|c| {
            matches!(c.outcome, Outcome::Degraded | Outcome::Notice)
                || (matches!(c.outcome, Outcome::Blocked | Outcome::Unknown) && !c.required)
        })
        .map(|c| c.message.clone())
        .collect();
    let mut setup_actions: Vec<SetupAction> = Vec::new();
    let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
    for a in checks
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::NeedsSetup | Outcome::Degraded))
        .filter_map(|c| c.setup_action.as_ref())
    {
        if seen.insert((a.key.as_str(), a.kind)) {
            setup_actions.push(a.clone());
        }
    }
    Report {
        ok: status != Status::Blocked,
        status,
        app: m.name().to_owned(),
        checks,
        blockers,
        warnings,
        setup_actions,
        entries,
    }
}

impl Report {
    /// The report as the standard's readiness result (`app-readiness.schema.json`).
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(self).expect("report serializes");
        v["command"] = json!("readiness");
        v["workspace"] = Value::Null;
        v
    }
}
