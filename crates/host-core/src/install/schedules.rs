//! Scheduled starts as an app declares them: a `background-task` entry with `workflow: <key>`
//! and `schedule: {every: "15m"}` (`docs/package-format.md` §8, "Scheduled starts"). Parsed here,
//! below both halves: readiness reports an invalid schedule with its stable code
//! (`install/readiness/runtimes.rs`), and the host's scheduler
//! (`hosting/workflow/schedule.rs`) starts the valid ones.

use jiff::SignedDuration;
use serde_json::Value;

use crate::install::manifest::{EntryKind, ManifestView};

/// Shortest and longest period.
pub const MIN_EVERY: SignedDuration = SignedDuration::from_secs(60);
pub const MAX_EVERY: SignedDuration = SignedDuration::from_secs(7 * 24 * 3600);

/// Stable codes of a schedule that cannot run (readiness and the schedule's record).
pub mod code {
    pub const INVALID: &str = "schedule.invalid";
    pub const NO_WORKFLOW: &str = "schedule.no_workflow";
}

/// A schedule as an app declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    pub app: String,
    pub entry: String,
    pub workflow: String,
    pub every: SignedDuration,
}

/// Parses `schedule` of a `background-task` entry: `{every: "<n>s|m|h|d"}` between one minute
/// and seven days. The error is `(code, message)`.
pub fn parse(schedule: &Value) -> Result<SignedDuration, (&'static str, String)> {
    let bad = |m: &str| (code::INVALID, m.to_owned());
    let o = schedule
        .as_object()
        .ok_or_else(|| bad("schedule must be a mapping like {every: \"15m\"}"))?;
    if let Some(k) = o.keys().find(|k| k.as_str() != "every") {
        return Err(bad(&format!(
            "schedule has an unknown key {:?} (only every)",
            k.chars().take(40).collect::<String>()
        )));
    }
    let every = o
        .get("every")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("schedule.every must be a string like \"15m\""))?;
    let cut = every.char_indices().last().map_or(0, |(i, _)| i);
    let (num, unit) = every.split_at(cut);
    let n: i64 = (!num.is_empty() && num.len() <= 6 && num.bytes().all(|b| b.is_ascii_digit()))
        .then(|| num.parse().ok())
        .flatten()
        .ok_or_else(|| bad("schedule.every is a number and a unit: s, m, h or d (\"15m\")"))?;
    let secs = match unit {
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        _ => return Err(bad("schedule.every's unit is s, m, h or d")),
    };
    let d = SignedDuration::from_secs(secs);
    if d < MIN_EVERY || d > MAX_EVERY {
        return Err(bad("schedule.every is between 1m and 7d"));
    }
    Ok(d)
}

/// The schedules of one manifest's entries: `Ok` declared ones, `Err((entry, code, message))`
/// for those that cannot run.
pub fn of_manifest(
    app: &str,
    view: ManifestView<'_>,
) -> Vec<Result<Declared, (String, &'static str, String)>> {
    let mut out = Vec::new();
    for e in view.entries() {
        if e.kind() != Some(EntryKind::BackgroundTask) {
            continue;
        }
        let (Some(key), Some(s)) = (e.key(), e.schedule()) else {
            continue;
        };
        let every = match parse(s) {
            Ok(d) => d,
            Err((c, m)) => {
                out.push(Err((key.to_owned(), c, m)));
                continue;
            }
        };
        let Some(wf) = e
            .workflow()
            .filter(|w| view.workflows().any(|x| x.key() == Some(*w)))
        else {
            out.push(Err((
                key.to_owned(),
                code::NO_WORKFLOW,
                "a scheduled background-task names one of the app's workflows in `workflow`".into(),
            )));
            continue;
        };
        out.push(Ok(Declared {
            app: app.to_owned(),
            entry: key.to_owned(),
            workflow: wf.to_owned(),
            every,
        }));
    }
    out
}
