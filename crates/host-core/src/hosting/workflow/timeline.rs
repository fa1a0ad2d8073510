//! A run's step timeline for the host UI, folded from the run's recorded facts (pure: events in,
//! rows out). One row per step key (`wf:<run>:<state>:<visit>:<attempt>`, and the `:backoff` /
//! `:decision` keys of retries): its state and kind, attempt, start and end times, status,
//! error, and its output summarized (at most [`MAX_OUTPUT_PREVIEW`] bytes of JSON).

use runtime_core::event::facts::WORKFLOW_FACT;
use runtime_core::event::{Event, EventBody};
use serde::Serialize;
use serde_json::{Map, Value};

/// Longest JSON text of a step's output, an error message or the run's result kept in a view.
pub const MAX_OUTPUT_PREVIEW: usize = 2048;
/// Most rows a timeline has (a run's history is bounded too).
pub const MAX_ROWS: usize = 1000;

/// One step of a run.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepRow {
    pub key: String,
    pub state: String,
    /// The state's kind in the run's pinned definition (`agent-task`, `human-review`, ...).
    pub kind: String,
    /// `step`, `review`, `input`, `decision`, `wait` or `retry`.
    pub what: String,
    pub capability: Option<String>,
    pub method: Option<String>,
    pub visit: u32,
    pub attempt: u32,
    pub started_at: String,
    pub ended_at: Option<String>,
    /// `running`, `waiting`, `succeeded`, `failed`, `timed-out`, `approved`, `rejected`,
    /// `answered`, `fired`.
    pub status: String,
    pub error: Option<StepFailure>,
    /// The output as bounded JSON text (`…` marks a cut).
    pub output: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepFailure {
    pub code: String,
    pub message: String,
}

/// What the whole history says about the run beyond its rows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Timeline {
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub steps: Vec<StepRow>,
    /// Retries made so far (attempts after the first, over every state).
    pub retries: u32,
}

/// `text` cut to at most `max` bytes on a character boundary, `…` appended when cut.
pub fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// A JSON value as bounded text.
pub fn preview(v: &Value) -> String {
    bounded(&v.to_string(), MAX_OUTPUT_PREVIEW)
}

fn payload(ev: &Event) -> Option<&Map<String, Value>> {
    match &ev.body {
        EventBody::Other(_, m) if m.contains_key(WORKFLOW_FACT) => Some(m),
        _ => None,
    }
}

/// `(state, visit, attempt, suffix)` of a step key of `run`.
fn parse_key<'a>(run: &str, key: &'a str) -> Option<(&'a str, u32, u32, &'a str)> {
    let rest = key
        .strip_prefix("wf:")?
        .strip_prefix(run)?
        .strip_prefix(':')?;
    let (rest, suffix) = match rest.rsplit_once(':') {
        Some((r, s @ ("backoff" | "decision"))) => (r, s),
        _ => (rest, ""),
    };
    let (rest, attempt) = rest.rsplit_once(':')?;
    let (state, visit) = rest.rsplit_once(':')?;
    Some((state, visit.parse().ok()?, attempt.parse().ok()?, suffix))
}

fn kinds(first: Option<&Map<String, Value>>) -> Map<String, Value> {
    let mut out = Map::new();
    let states = first
        .and_then(|p| p.get("definition"))
        .and_then(|d| d.get("states"))
        .and_then(Value::as_array);
    for s in states.into_iter().flatten() {
        if let (Some(k), Some(kind)) = (s.get("key").and_then(Value::as_str), s.get("kind")) {
            out.insert(k.to_owned(), kind.clone());
        }
    }
    out
}

/// Folds a run's facts (oldest first) into its timeline.
pub fn fold(run_id: &str, events: &[Event]) -> Timeline {
    let mut t = Timeline {
        started_at: events.first().map(|e| e.timestamp.clone()),
        ..Timeline::default()
    };
    let kinds = kinds(events.first().and_then(payload));
    for ev in events {
        let Some(p) = payload(ev) else { continue };
        let name = p.get(WORKFLOW_FACT).and_then(Value::as_str).unwrap_or("");
        if matches!(name, "ended" | "cancelled") {
            t.ended_at = Some(ev.timestamp.clone());
        }
        let fact = p.get("fact");
        let key = p
            .get("key")
            .or_else(|| fact.and_then(|f| f.get("key")))
            .and_then(Value::as_str);
        let Some(key) = key else { continue };
        let Some((state, visit, attempt, suffix)) = parse_key(run_id, key) else {
            continue;
        };
        let opened = match name {
            "step_started" => Some("step"),
            "review_requested" => Some("review"),
            "input_requested" => Some("input"),
            "decision_requested" => Some("decision"),
            "wait_scheduled" => Some("wait"),
            "retry_scheduled" => Some("retry"),
            _ => None,
        };
        if let Some(what) = opened {
            if t.steps.iter().any(|r| r.key == key) || t.steps.len() >= MAX_ROWS {
                continue;
            }
            let what = if suffix == "backoff" { "retry" } else { what };
            if what == "step" && attempt > 1 {
                t.retries += 1;
            }
            let text = |k: &str| p.get(k).and_then(Value::as_str).map(str::to_owned);
            t.steps.push(StepRow {
                key: key.to_owned(),
                state: state.to_owned(),
                kind: kinds
                    .get(state)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                what: what.to_owned(),
                capability: text("capability"),
                method: text("method"),
                visit,
                attempt,
                // A step's start is committed with its result; `startedAt` is when it began.
                started_at: text("startedAt").unwrap_or_else(|| ev.timestamp.clone()),
                ended_at: None,
                status: if what == "step" { "running" } else { "waiting" }.to_owned(),
                error: None,
                output: None,
            });
            continue;
        }
        let Some(f) = fact else { continue };
        let tag = f.get("fact").and_then(Value::as_str).unwrap_or("");
        if !t.steps.iter().any(|r| r.key == key) {
            // An answer recorded before its request (the user answered what the run's state
            // showed before the driver recorded the request): the row starts with the answer.
            if t.steps.len() >= MAX_ROWS {
                continue;
            }
            let what = match tag {
                "reviewed" => "review",
                "inputGiven" => "input",
                "decided" => "decision",
                "timerFired" => "wait",
                _ => "step",
            };
            t.steps.push(StepRow {
                key: key.to_owned(),
                state: state.to_owned(),
                kind: kinds
                    .get(state)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                what: what.to_owned(),
                capability: None,
                method: None,
                visit,
                attempt,
                started_at: ev.timestamp.clone(),
                ended_at: None,
                status: String::new(),
                error: None,
                output: None,
            });
        }
        let Some(row) = t.steps.iter_mut().rev().find(|r| r.key == key) else {
            continue;
        };
        row.ended_at = Some(ev.timestamp.clone());
        row.status = match tag {
            "succeeded" => "succeeded",
            "failed" => "failed",
            "timedOut" => "timed-out",
            "reviewed" if f.get("approved") == Some(&Value::Bool(true)) => "approved",
            "reviewed" => "rejected",
            "inputGiven" => "answered",
            "timerFired" => "fired",
            "decided" => "answered",
            other => other,
        }
        .to_owned();
        if tag == "failed" {
            let s = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            row.error = Some(StepFailure {
                code: bounded(&s("code"), 128),
                message: bounded(&s("message"), MAX_OUTPUT_PREVIEW),
            });
        }
        let out = f.get("output").or_else(|| f.get("data"));
        row.output = out.filter(|v| !v.is_null()).map(preview);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_keys_parse_with_their_suffixes_and_foreign_keys_do_not() {
        assert_eq!(
            parse_key("run_1", "wf:run_1:draft:1:2"),
            Some(("draft", 1, 2, ""))
        );
        assert_eq!(
            parse_key("run_1", "wf:run_1:draft:3:1:backoff"),
            Some(("draft", 3, 1, "backoff"))
        );
        assert_eq!(parse_key("run_1", "wf:run_2:draft:1:1"), None);
        assert_eq!(parse_key("run_1", "wf:run_1:draft:x:1"), None);
        assert_eq!(parse_key("run_1", "nonsense"), None);
    }

    #[test]
    fn bounded_text_cuts_on_a_character_boundary() {
        assert_eq!(bounded("abc", 3), "abc");
        assert_eq!(bounded("aéb", 2), "a…");
        let big = Value::String("x".repeat(10_000));
        assert!(preview(&big).len() <= MAX_OUTPUT_PREVIEW + '…'.len_utf8());
    }
}
