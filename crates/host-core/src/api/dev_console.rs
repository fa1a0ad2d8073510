//! The dev console (`apphost dev` installs only): what a dev app's frame reports (an uncaught
//! error, an unhandled rejection, a CSP violation, a `<form>` the
//! sandbox refuses; posted by the host's own script, `hosting/surface/dev_console.rs`) and the
//! calls the bridge refused it become one line on this process's stderr (the output of
//! `apphost dev --serve`, and of `apphost dev`'s window, whose stderr is dev's) and one
//! `dev:diagnostic` event for the overlay on the app's tab.
//!
//! The frame is a hostile party: its report is untrusted text. It is taken only from a mounted
//! frame whose origin matches, of an app that is a dev install *now* (a dev build with its
//! `dev-app/<name>` row, re-read from the store on every report); it is parsed from at most
//! [`MAX_DATA`] bytes, its kind is one of a fixed set, every field is cut to [`MAX_FIELD`]
//! characters with control characters replaced, and each mount may report [`BURST`] at once and
//! [`PER_SECOND`] after that (what is dropped is counted and said once). A report triggers
//! nothing but the line and the event. Refusals are answers with a stable `refused` code.

use std::collections::HashMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{answer, args, Command, Session};
use crate::foundation::error::HostResult;
use crate::hosting::bridge::host::Outgoing;
use crate::hosting::bridge::mounts::Mount;
use crate::hosting::surface::serve::is_dev_build;
use crate::install::store::Store;

/// The outbox event of one diagnostic (payload: [`DevDiagnostic`]).
pub const DEV_DIAGNOSTIC: &str = "dev:diagnostic";
/// Largest report parsed (bytes); a longer one is refused, never read.
pub const MAX_DATA: usize = 2 * 1024 * 1024;
/// Longest field kept (characters); the rest is cut and marked `…`.
pub const MAX_FIELD: usize = 300;
/// Reports a mount may make at once, and per second after that.
pub const BURST: f64 = 20.0;
pub const PER_SECOND: f64 = 2.0;
/// Mounts whose rate is remembered (mounts are bounded; this bounds a stale table too).
const MAX_BUCKETS: usize = 256;

pub const COMMANDS: &[Command] = &[Command {
    name: "dev_diagnostic",
    run: dev_diagnostic,
}];

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "DevDiagnosticArgs")]
pub(crate) struct Report {
    mount_id: String,
    origin: String,
    /// The frame's message as JSON text (what the relay would relay as a bridge message).
    data: String,
}

/// One line of the dev console.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DevDiagnostic {
    pub mount_id: String,
    pub app_id: String,
    /// `error`, `rejection`, `csp`, `form`, `refused-call` or `dropped`.
    pub kind: String,
    /// What happened, for people (plain text: shown with textContent, never as HTML).
    pub text: String,
    /// The file (URL) and position it happened at, when the browser said.
    pub source: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
}

impl DevDiagnostic {
    /// The `apphost dev` output line: `dev: <app>: <text> at <source>:<line>:<column>`.
    pub fn line_text(&self) -> String {
        let mut s = format!("dev: {}: {}", self.app_id, self.text);
        if let Some(src) = self.source.as_deref().filter(|s| !s.is_empty()) {
            s.push_str(" at ");
            s.push_str(src);
            if let Some(l) = self.line.filter(|l| *l > 0) {
                s.push_str(&format!(":{l}"));
                if let Some(c) = self.column.filter(|c| *c > 0) {
                    s.push_str(&format!(":{c}"));
                }
            }
        }
        s
    }
}

/// `dev_diagnostic`'s answer: taken, or the stable reason it was not.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DevDiagnosticAnswer {
    pub accepted: bool,
    /// `dev_console.unknown_mount`, `dev_console.wrong_origin`, `dev_console.not_dev`,
    /// `dev_console.too_large`, `dev_console.bad_report` or `dev_console.rate_limited`.
    pub refused: Option<String>,
}

impl DevDiagnosticAnswer {
    fn refused(code: &str) -> Self {
        DevDiagnosticAnswer {
            accepted: false,
            refused: Some(code.to_owned()),
        }
    }
}

/// How long a dev install's frame may take to complete the handshake (`app:ready`) before the
/// console says it never connected.
pub const CONNECT_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);
/// Findings listed as likely causes of a frame that never connected.
const MAX_CAUSES: usize = 5;

/// Per-mount token buckets, and when the watcher first saw each mount not yet connected.
#[derive(Default)]
pub struct DevConsole {
    buckets: HashMap<String, Bucket>,
    /// Mount id → when first seen unconnected, and whether it was looked at already.
    unconnected: HashMap<String, (Instant, bool)>,
}

struct Bucket {
    tokens: f64,
    at: Instant,
    dropped: u64,
}

/// Whether a report may pass, and how many were dropped before it.
enum Admit {
    Pass { dropped_before: u64 },
    Drop,
}

impl DevConsole {
    fn admit(&mut self, mount_id: &str, now: Instant) -> Admit {
        if !self.buckets.contains_key(mount_id) && self.buckets.len() >= MAX_BUCKETS {
            self.buckets.clear();
        }
        let b = self.buckets.entry(mount_id.to_owned()).or_insert(Bucket {
            tokens: BURST,
            at: now,
            dropped: 0,
        });
        let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
        b.tokens = (b.tokens + elapsed * PER_SECOND).min(BURST);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Admit::Pass {
                dropped_before: std::mem::take(&mut b.dropped),
            }
        } else {
            b.dropped += 1;
            Admit::Drop
        }
    }
}

/// The mount of `mount_id` if it shows a dev install now (re-derived from the store).
fn dev_mount(session: &Session, mount_id: &str) -> HostResult<Result<Mount, &'static str>> {
    session.with_bridge(|bridge, store| {
        let Some(mount) = bridge.mounts().get(mount_id).cloned() else {
            return Err("dev_console.unknown_mount");
        };
        if is_dev_mount(store, &mount) {
            Ok(mount)
        } else {
            Err("dev_console.not_dev")
        }
    })
}

fn is_dev_mount(store: &Store, mount: &Mount) -> bool {
    is_dev_build(&mount.version) && store.is_dev(&mount.app_id).unwrap_or(false)
}

/// `dev_diagnostic {mountId, origin, data}` → [`DevDiagnosticAnswer`].
fn dev_diagnostic(session: &Session, raw: Value) -> HostResult<Value> {
    let a: Report = args("dev_diagnostic", raw)?;
    let mount = match dev_mount(session, &a.mount_id)? {
        Ok(m) => m,
        Err(code) => return answer(DevDiagnosticAnswer::refused(code)),
    };
    if a.origin != mount.origin {
        return answer(DevDiagnosticAnswer::refused("dev_console.wrong_origin"));
    }
    if a.data.len() > MAX_DATA {
        return answer(DevDiagnosticAnswer::refused("dev_console.too_large"));
    }
    let Some(d) = parse(&mount, &a.data) else {
        return answer(DevDiagnosticAnswer::refused("dev_console.bad_report"));
    };
    if !publish(session, &mount, d) {
        return answer(DevDiagnosticAnswer::refused("dev_console.rate_limited"));
    }
    answer(DevDiagnosticAnswer {
        accepted: true,
        refused: None,
    })
}

/// Prints and announces `d` if the mount's rate allows; says first how many were dropped.
fn publish(session: &Session, mount: &Mount, d: DevDiagnostic) -> bool {
    let admit = match session.dev_console.lock() {
        Ok(mut c) => c.admit(&mount.mount_id, Instant::now()),
        Err(_) => Admit::Drop,
    };
    match admit {
        Admit::Drop => false,
        Admit::Pass { dropped_before } => {
            if dropped_before > 0 {
                emit(
                    session,
                    DevDiagnostic {
                        mount_id: mount.mount_id.clone(),
                        app_id: mount.app_id.clone(),
                        kind: "dropped".to_owned(),
                        text: format!("{dropped_before} more report(s) dropped (at most {PER_SECOND} per second)"),
                        source: None,
                        line: None,
                        column: None,
                    },
                );
            }
            emit(session, d);
            true
        }
    }
}

fn emit(session: &Session, d: DevDiagnostic) {
    eprintln!("{}", d.line_text());
    match serde_json::to_value(&d) {
        Ok(v) => {
            session.outbox.push(DEV_DIAGNOSTIC, v);
        }
        Err(e) => tracing::warn!(error = %e, "could not encode a dev diagnostic"),
    }
}

/// The mount watcher's look (every `next_events` pass, `api/events.rs`): a frame that has not
/// completed the handshake [`CONNECT_WITHIN`] after the watcher first saw it gets, if its app is
/// a dev install, one `never-connected` line naming the likely causes: the warnings `validate`
/// found in the folder (kept in the dev row; `install/manifest/authoring/`). Each mount is
/// looked at once; the store is read only for a mount that passed the deadline unconnected.
pub fn check_connections(session: &Session) {
    let now = Instant::now();
    let due: Vec<Mount> = {
        let Ok(guard) = session.bridge() else { return };
        let Ok(mut console) = session.dev_console.lock() else {
            return;
        };
        let mounts = guard.host.mounts();
        console
            .unconnected
            .retain(|id, _| mounts.get(id).is_some_and(|_| !mounts.is_ready(id)));
        let mut due = Vec::new();
        for m in mounts.all() {
            if mounts.is_ready(&m.mount_id) {
                continue;
            }
            let entry = console
                .unconnected
                .entry(m.mount_id.clone())
                .or_insert((now, false));
            if !entry.1 && now.saturating_duration_since(entry.0) >= CONNECT_WITHIN {
                entry.1 = true;
                due.push(m.clone());
            }
        }
        due
    };
    for mount in due {
        let Ok(Ok(mount)) = dev_mount(session, &mount.mount_id) else {
            continue;
        };
        let causes = likely_causes(session, &mount.app_id);
        let text = if causes.is_empty() {
            format!("the app never connected (no handshake within {} s): is its page's script loaded, and does it call the SDK's ready()?", CONNECT_WITHIN.as_secs())
        } else {
            format!(
                "the app never connected (no handshake within {} s); likely causes: {}",
                CONNECT_WITHIN.as_secs(),
                causes.join("; ")
            )
        };
        publish(
            session,
            &mount,
            DevDiagnostic {
                mount_id: mount.mount_id.clone(),
                app_id: mount.app_id.clone(),
                kind: "never-connected".to_owned(),
                text: clean(&text, MAX_FIELD * 4),
                source: None,
                line: None,
                column: None,
            },
        );
    }
}

/// The warnings of the app's last dev pass (`code path: message`), at most [`MAX_CAUSES`].
fn likely_causes(session: &Session, app: &str) -> Vec<String> {
    let Ok(store) = Store::open(&session.data) else {
        return Vec::new();
    };
    let Ok(settings) = store.settings() else {
        return Vec::new();
    };
    let key = format!("{}{app}", crate::install::store::DEV_PREFIX);
    let Some(status) = settings
        .get(&key)
        .and_then(|v| serde_json::from_str::<crate::center::dev::DevStatus>(v).ok())
    else {
        return Vec::new();
    };
    status
        .findings
        .iter()
        .take(MAX_CAUSES)
        .map(|f| format!("{} {}: {}", f.code, f.path, f.message))
        .collect()
}

/// The calls the bridge refused a dev install's frame (the `host:error` posts of an answer),
/// as diagnostics: one per refusal, rate-limited like the frame's own reports.
pub fn refused_calls(session: &Session, mount_id: &str, out: &[Outgoing]) {
    let errors: Vec<&Value> = out
        .iter()
        .filter_map(|o| match o {
            Outgoing::Post { message, .. } if message["type"] == "host:error" => {
                Some(&message["payload"])
            }
            _ => None,
        })
        .collect();
    if errors.is_empty() {
        return;
    }
    let Ok(Ok(mount)) = dev_mount(session, mount_id) else {
        return;
    };
    for e in errors {
        let s = |k: &str| e[k].as_str().unwrap_or("");
        let cause = e["causeCode"]
            .as_str()
            .map(|c| format!(" [{c}]"))
            .unwrap_or_default();
        let text = format!(
            "refused call {}.{}: {}{cause}: {}",
            s("capability"),
            s("method"),
            s("code"),
            s("message")
        );
        let d = DevDiagnostic {
            mount_id: mount.mount_id.clone(),
            app_id: mount.app_id.clone(),
            kind: "refused-call".to_owned(),
            text: clean(&text, MAX_FIELD * 2),
            source: None,
            line: None,
            column: None,
        };
        publish(session, &mount, d);
    }
}

/// A frame's report as a diagnostic, or `None` when it is not one.
fn parse(mount: &Mount, data: &str) -> Option<DevDiagnostic> {
    let v: Value = serde_json::from_str(data).ok()?;
    let obj = v.as_object()?;
    let field = |k: &str| {
        obj.get(k)
            .and_then(Value::as_str)
            .map(|s| clean(s, MAX_FIELD))
            .filter(|s| !s.is_empty())
    };
    let number = |k: &str| {
        obj.get(k)
            .and_then(Value::as_u64)
            .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
    };
    let kind = obj.get("kind")?.as_str()?;
    let message = field("message").unwrap_or_default();
    let text = match kind {
        "error" => format!("uncaught error: {message}"),
        "rejection" => format!("unhandled promise rejection: {message}"),
        "form" => message,
        "csp" => {
            let directive = field("directive").unwrap_or_else(|| "?".to_owned());
            let blocked = field("blockedUri").unwrap_or_else(|| "inline".to_owned());
            let sample = if message.is_empty() {
                String::new()
            } else {
                format!(" ({message})")
            };
            format!("the CSP blocked {blocked} ({directive}){sample}")
        }
        _ => return None,
    };
    Some(DevDiagnostic {
        mount_id: mount.mount_id.clone(),
        app_id: mount.app_id.clone(),
        kind: kind.to_owned(),
        text,
        source: field("source"),
        line: number("line"),
        column: number("column"),
    })
}

/// At most `max` characters of `s`, control characters as spaces, `…` when cut.
fn clean(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .take(max)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if s.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_burst_then_the_rate_and_the_drops_are_counted() {
        let mut c = DevConsole::default();
        let t0 = Instant::now();
        let passed = (0..100)
            .filter(|_| matches!(c.admit("m", t0), Admit::Pass { .. }))
            .count();
        assert_eq!(passed, BURST as usize);
        match c.admit("m", t0 + Duration::from_secs(1)) {
            Admit::Pass { dropped_before } => assert_eq!(dropped_before, 100 - BURST as u64),
            Admit::Drop => panic!("a second later the bucket has refilled"),
        }
        // Another mount has its own bucket.
        assert!(matches!(c.admit("other", t0), Admit::Pass { .. }));
    }

    #[test]
    fn fields_are_cut_and_control_characters_replaced() {
        assert_eq!(clean("a\nb\u{1b}[31m", 10), "a b [31m");
        let long = "x".repeat(1_000_000);
        let cut = clean(&long, MAX_FIELD);
        assert_eq!(cut.chars().count(), MAX_FIELD + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(clean("exact", 5), "exact");
    }

    #[test]
    fn the_bucket_table_is_bounded() {
        let mut c = DevConsole::default();
        let t0 = Instant::now();
        for i in 0..(MAX_BUCKETS * 3) {
            c.admit(&format!("m{i}"), t0);
        }
        assert!(c.buckets.len() <= MAX_BUCKETS);
    }
}
