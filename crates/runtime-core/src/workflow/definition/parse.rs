//! Builds a [`Definition`] from a `workflows[]` entry's JSON value.
//!
//! Bounded before anything else: the value's depth, then its serialized size, then the state
//! count. The workflow object itself is open (the schema's `additionalProperties: true`: `path`,
//! `inputs`, `outputs`, `artifactOutputs`, `overview`, `diagram` ... are kept by the projection and
//! ignored here). A state is open in the schema too, so an unknown state field is a warning;
//! `recovery` and branch cases are AppHost/spec objects with fixed fields, so an unknown field
//! there is an error. `retryPolicy` is open in the schema: unknown fields warn.

use serde_json::Value;

use super::fields::{depth_exceeds, is_output_name, Obj};
use super::*;
use crate::workflow::finding::{code, Findings};
use crate::workflow::limits::*;

const COMMON: &[&str] = &[
    "key",
    "kind",
    "next",
    "output",
    "timeout",
    "timeoutMs",
    "retryPolicy",
    "recovery",
    "onError",
    "title",
    "description",
];

/// Parses one workflow. Returns the definition when nothing blocked parsing, and the findings.
pub fn parse(v: &Value) -> (Option<Definition>, Findings) {
    let mut f = Findings::default();
    let def = parse_inner(v, &mut f);
    if f.has_errors() {
        (None, f)
    } else {
        (def, f)
    }
}

fn parse_inner(v: &Value, f: &mut Findings) -> Option<Definition> {
    if depth_exceeds(v, MAX_DEFINITION_DEPTH) {
        f.error(
            code::TOO_LARGE,
            "",
            format!("nested deeper than {MAX_DEFINITION_DEPTH}"),
        );
        return None;
    }
    let size = serde_json::to_vec(v).map(|b| b.len()).unwrap_or(usize::MAX);
    if size > MAX_DEFINITION_BYTES {
        f.error(
            code::TOO_LARGE,
            "",
            format!("{size} bytes; at most {MAX_DEFINITION_BYTES}"),
        );
        return None;
    }
    let wf = Obj::new(v, "", "a workflow", f)?;
    let key = wf
        .required("key", wf.string("key", MAX_KEY_LEN, f), f)
        .map(str::to_string);
    let defaults = Defaults {
        timeout_ms: wf.uint("timeoutMs", 1, MAX_DURATION_MS, f),
        retry: wf
            .get("retryPolicy")
            .and_then(|r| retry_policy(r, &wf.at("retryPolicy"), f)),
        recovery: wf
            .get("recovery")
            .and_then(|r| recovery(r, &wf.at("recovery"), f)),
    };
    let Some(states_v) = wf.get("states") else {
        f.error(
            code::MISSING_FIELD,
            "/states",
            "a runnable workflow lists its states",
        );
        return None;
    };
    let Some(list) = states_v.as_array() else {
        f.error(code::INVALID_FIELD, "/states", "states must be a list");
        return None;
    };
    if list.len() > MAX_STATES {
        f.error(
            code::TOO_LARGE,
            "/states",
            format!("{} states; at most {MAX_STATES}", list.len()),
        );
        return None;
    }
    let states: Vec<State> = list
        .iter()
        .enumerate()
        .filter_map(|(i, s)| state(s, &format!("/states/{i}"), f))
        .collect();
    Some(Definition {
        key: key?,
        states,
        defaults,
    })
}

fn state(v: &Value, path: &str, f: &mut Findings) -> Option<State> {
    let o = Obj::new(v, path, "a state", f)?;
    let key = o.required("key", o.state_ref("key", f), f);
    let kind_name = o.required("kind", o.string("kind", MAX_KEY_LEN, f), f)?;
    let Some(kind) = Kind::from_name(kind_name) else {
        let shown = crate::workflow::finding::clip(kind_name, MAX_KEY_LEN);
        f.error(
            code::UNKNOWN_KIND,
            o.at("kind"),
            format!("unknown state kind {shown:?}"),
        );
        return None;
    };
    let next = next(&o, kind, f);
    let output = o.string("output", MAX_KEY_LEN, f).and_then(|s| {
        if is_output_name(s) {
            Some(s.to_string())
        } else {
            f.error(
                code::INVALID_KEY,
                o.at("output"),
                format!("{s:?} is not an output name"),
            );
            None
        }
    });
    if o.has("timeout") && o.has("timeoutMs") {
        f.error(
            code::INVALID_FIELD,
            o.at("timeoutMs"),
            "give timeout or timeoutMs, not both",
        );
    }
    let timeout_ms = o
        .duration("timeout", f)
        .or_else(|| o.uint("timeoutMs", 1, MAX_DURATION_MS, f));
    let retry = o
        .get("retryPolicy")
        .and_then(|r| retry_policy(r, &o.at("retryPolicy"), f));
    let mut recovery_v = o
        .get("recovery")
        .and_then(|r| recovery(r, &o.at("recovery"), f));
    if let Some(s) = o.get("onError") {
        let on_error = on_failure(s, &o.at("onError"), false, f);
        if recovery_v.as_ref().is_some_and(|r| r.on_error.is_some()) {
            f.error(
                code::INVALID_FIELD,
                o.at("onError"),
                "onError is also in recovery",
            );
        }
        let r = recovery_v.get_or_insert_with(Recovery::default);
        r.on_error = r.on_error.take().or(on_error);
    }
    let (allowed, settings) = settings(&o, kind, f);
    let mut all: Vec<&str> = COMMON.to_vec();
    all.extend_from_slice(allowed);
    o.unknown_keys(&all, false, f);
    Some(State {
        key: key?,
        kind,
        next,
        output,
        timeout_ms,
        retry,
        recovery: recovery_v,
        settings: settings?,
    })
}

fn next(o: &Obj<'_>, kind: Kind, f: &mut Findings) -> Option<String> {
    let v = o.get("next")?;
    if matches!(kind, Kind::End | Kind::Branch) {
        f.error(
            code::INVALID_FIELD,
            o.at("next"),
            format!(
                "a {} state has no next (branch: cases and default)",
                kind.name()
            ),
        );
        return None;
    }
    let s = match v {
        Value::String(s) => s.as_str(),
        Value::Array(a) if a.len() == 1 && a[0].is_string() => a[0].as_str().unwrap_or_default(),
        Value::Array(_) => {
            f.error(
                code::INVALID_FIELD,
                o.at("next"),
                "a state has one next; use a branch to choose",
            );
            return None;
        }
        _ => {
            f.error(
                code::INVALID_FIELD,
                o.at("next"),
                "next must be a state key",
            );
            return None;
        }
    };
    if !super::fields::is_state_key(s) {
        f.error(code::INVALID_KEY, o.at("next"), "next must be a state key");
        return None;
    }
    Some(s.to_string())
}

/// The kind's own fields and its settings.
fn settings(
    o: &Obj<'_>,
    kind: Kind,
    f: &mut Findings,
) -> (&'static [&'static str], Option<Settings>) {
    match kind {
        Kind::Start => (&[], Some(Settings::Start)),
        Kind::AgentTask => {
            let entry = o.string("entry", MAX_KEY_LEN, f);
            let task_kind = o.string("taskKind", MAX_KEY_LEN, f);
            let target = match (entry, task_kind) {
                (Some(e), None) => Some(AgentTarget::Entry(e.into())),
                (None, Some(t)) => Some(AgentTarget::TaskKind(t.into())),
                (Some(_), Some(_)) => {
                    f.error(
                        code::INVALID_FIELD,
                        o.at("taskKind"),
                        "give entry or taskKind, not both",
                    );
                    None
                }
                (None, None) => {
                    if !o.has("entry") && !o.has("taskKind") {
                        f.error(
                            code::MISSING_FIELD,
                            o.at("entry"),
                            "an agent-task names an entry or a taskKind",
                        );
                    }
                    None
                }
            };
            let input = o.template("input", f);
            let expected_output = o.get("expectedOutput").cloned();
            if expected_output.as_ref().is_some_and(|v| !v.is_object()) {
                f.error(
                    code::INVALID_FIELD,
                    o.at("expectedOutput"),
                    "expectedOutput must be an object",
                );
            }
            let s = target.map(|target| Settings::AgentTask {
                target,
                input,
                expected_output,
            });
            (&["entry", "taskKind", "input", "expectedOutput"], s)
        }
        Kind::ToolCall => {
            let uses = match o.get("uses") {
                Some(Value::Array(a)) if a.len() == 1 && a[0].is_string() => {
                    a[0].as_str().map(str::to_string)
                }
                Some(Value::Array(_)) => {
                    f.error(
                        code::INVALID_FIELD,
                        o.at("uses"),
                        "a tool-call uses exactly one tool",
                    );
                    None
                }
                _ => o.string("uses", 128, f).map(str::to_string),
            };
            let uses = o.required("uses", uses, f);
            let arguments = o.template("arguments", f);
            (
                &["uses", "arguments"],
                uses.map(|uses| Settings::ToolCall { uses, arguments }),
            )
        }
        Kind::HumanReview => {
            let prompt = o.required("prompt", o.string("prompt", MAX_TEXT_LEN, f), f);
            let show = o.template("show", f);
            let s = prompt.map(|p| Settings::HumanReview {
                prompt: p.into(),
                show,
            });
            (&["prompt", "show"], s)
        }
        Kind::UserInput => {
            let prompt = o.required("prompt", o.string("prompt", MAX_TEXT_LEN, f), f);
            let schema = o.get("schema").cloned();
            if schema.as_ref().is_some_and(|v| !v.is_object()) {
                f.error(
                    code::INVALID_FIELD,
                    o.at("schema"),
                    "schema must be a JSON Schema object",
                );
            }
            let s = prompt.map(|p| Settings::UserInput {
                prompt: p.into(),
                schema,
            });
            (&["prompt", "schema"], s)
        }
        Kind::StorageWrite => {
            let key = o.required("storageKey", o.string("storageKey", 256, f), f);
            let value = o.required("value", o.template("value", f), f);
            let s = match (key, value) {
                (Some(k), Some(value)) => Some(Settings::StorageWrite {
                    storage_key: k.into(),
                    value,
                }),
                _ => None,
            };
            (&["storageKey", "value"], s)
        }
        Kind::ArtifactCreate => {
            let ak = o.required("artifactKind", o.string("artifactKind", MAX_KEY_LEN, f), f);
            let title = o.required("title", o.template("title", f), f);
            let content = o.required("content", o.template("content", f), f);
            let s = match (ak, title, content) {
                (Some(a), Some(title), Some(content)) => Some(Settings::ArtifactCreate {
                    artifact_kind: a.into(),
                    title,
                    content,
                }),
                _ => None,
            };
            (&["artifactKind", "content"], s)
        }
        Kind::Branch => (&["cases", "default"], branch(o, f)),
        Kind::Wait => {
            let s = match (o.has("duration"), o.has("until")) {
                (true, false) => o.duration("duration", f).map(WaitFor::DurationMs),
                (false, true) => o.expr("until", f).map(|e| WaitFor::Until(Box::new(e))),
                (true, true) => {
                    f.error(
                        code::INVALID_FIELD,
                        o.at("until"),
                        "give duration or until, not both",
                    );
                    None
                }
                (false, false) => {
                    f.error(
                        code::MISSING_FIELD,
                        o.at("duration"),
                        "a wait has a duration or an until",
                    );
                    None
                }
            };
            (&["duration", "until"], s.map(Settings::Wait))
        }
        Kind::End => (
            &["result"],
            Some(Settings::End {
                result: o.template("result", f),
            }),
        ),
    }
}

fn branch(o: &Obj<'_>, f: &mut Findings) -> Option<Settings> {
    let default = o.state_ref("default", f);
    let Some(cases_v) = o.get("cases") else {
        f.error(code::MISSING_FIELD, o.at("cases"), "a branch has cases");
        return None;
    };
    let Some(list) = cases_v.as_array().filter(|l| !l.is_empty()) else {
        f.error(
            code::INVALID_FIELD,
            o.at("cases"),
            "cases must be a non-empty list",
        );
        return None;
    };
    if list.len() > MAX_CASES {
        f.error(
            code::TOO_LARGE,
            o.at("cases"),
            format!("at most {MAX_CASES} cases"),
        );
        return None;
    }
    let mut cases = Vec::new();
    for (i, c) in list.iter().enumerate() {
        let Some(co) = Obj::new(c, &format!("{}/{i}", o.at("cases")), "a case", f) else {
            continue;
        };
        co.unknown_keys(&["when", "next"], true, f);
        let when = co.required("when", co.expr("when", f), f);
        let next = co.required("next", co.state_ref("next", f), f);
        if let (Some(when), Some(next)) = (when, next) {
            cases.push(Case { when, next });
        }
    }
    Some(Settings::Branch { cases, default })
}

fn recovery(v: &Value, path: &str, f: &mut Findings) -> Option<Recovery> {
    let o = Obj::new(v, path, "recovery", f)?;
    o.unknown_keys(
        &["onTimeout", "onError", "maxRetries", "saveCheckpoint"],
        true,
        f,
    );
    Some(Recovery {
        on_timeout: o
            .get("onTimeout")
            .and_then(|s| on_failure(s, &o.at("onTimeout"), true, f)),
        on_error: o
            .get("onError")
            .and_then(|s| on_failure(s, &o.at("onError"), false, f)),
        max_retries: o
            .uint("maxRetries", 0, u64::from(MAX_ATTEMPTS - 1), f)
            .map(|n| n as u32),
        save_checkpoint: o.bool("saveCheckpoint", f),
    })
}

fn on_failure(v: &Value, path: &str, timeout: bool, f: &mut Findings) -> Option<OnFailure> {
    let s = v.as_str().unwrap_or_default();
    let r = match s {
        "retry" => Some(OnFailure::Retry),
        "retry_with_longer_timeout" if timeout => Some(OnFailure::RetryWithLongerTimeout),
        "show_error_and_allow_retry" => Some(OnFailure::AskUser),
        "fail" => Some(OnFailure::Fail),
        _ => s
            .strip_prefix("goto:")
            .filter(|k| super::fields::is_state_key(k))
            .map(|k| OnFailure::Goto(k.to_string())),
    };
    if r.is_none() {
        let allowed = if timeout {
            "retry, retry_with_longer_timeout, show_error_and_allow_retry, fail or goto:<state>"
        } else {
            "retry, show_error_and_allow_retry, fail or goto:<state>"
        };
        f.error(code::INVALID_FIELD, path, format!("must be {allowed}"));
    }
    r
}

fn retry_policy(v: &Value, path: &str, f: &mut Findings) -> Option<RetryPolicy> {
    let o = Obj::new(v, path, "retryPolicy", f)?;
    o.unknown_keys(
        &[
            "maxAttempts",
            "backoffMs",
            "backoffMultiplier",
            "maxBackoffMs",
        ],
        false,
        f,
    );
    let d = RetryPolicy::default();
    Some(RetryPolicy {
        max_attempts: o
            .uint("maxAttempts", 1, u64::from(MAX_ATTEMPTS), f)
            .map(|n| n as u32),
        backoff_ms: o
            .uint("backoffMs", 0, MAX_BACKOFF_MS, f)
            .unwrap_or(d.backoff_ms),
        multiplier: o
            .uint("backoffMultiplier", 1, 10, f)
            .map(|n| n as u32)
            .unwrap_or(d.multiplier),
        max_backoff_ms: o
            .uint("maxBackoffMs", 0, MAX_BACKOFF_MS, f)
            .unwrap_or(d.max_backoff_ms),
    })
}
