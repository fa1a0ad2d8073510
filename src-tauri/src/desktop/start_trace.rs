//! Start-up timestamps for profiling the window's cold start (docs/benchmarks.md, "Window
//! start-up"): off unless `APPHOST_TRACE_START` is set. Then each milestone prints one stderr line,
//! `apphost-start: <ms since run()> <unix time in ns> <what>` (the session made, the window built, the page's load
//! events, each host command's first call and answer, the App Server door opened), so a change
//! to what runs before the first paint can be shown with numbers (`BENCH_TRACE=1
//! scripts/bench-window.sh` prints each milestone's median from the process spawn). Nothing else
//! changes.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

const ENV: &str = "APPHOST_TRACE_START";

struct Trace {
    start: Instant,
    seen: Mutex<HashSet<String>>,
}

static TRACE: OnceLock<Option<Trace>> = OnceLock::new();

fn trace() -> Option<&'static Trace> {
    TRACE
        .get_or_init(|| {
            std::env::var_os(ENV)
                .is_some_and(|v| !v.is_empty())
                .then(|| Trace {
                    start: Instant::now(),
                    seen: Mutex::default(),
                })
        })
        .as_ref()
}

/// Starts the clock (call first thing in `run`).
pub fn begin() {
    mark("run");
}

/// Prints one milestone.
pub fn mark(what: &str) {
    if let Some(t) = trace() {
        let ms = t.start.elapsed().as_secs_f64() * 1000.0;
        let ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        eprintln!("apphost-start: {ms:8.1} {ns} {what}");
    }
}

/// Prints a milestone the first time `what` is seen (a host command's first call or answer).
pub fn first(what: &str) {
    if let Some(t) = trace() {
        let new = t
            .seen
            .lock()
            .map(|mut s| s.insert(what.to_owned()))
            .unwrap_or(false);
        if new {
            mark(what);
        }
    }
}

/// The host UI page's load events.
pub fn page_load(event: tauri::webview::PageLoadEvent) {
    match event {
        tauri::webview::PageLoadEvent::Started => first("page load started"),
        tauri::webview::PageLoadEvent::Finished => first("page load finished"),
    }
}

/// Whether the trace is on.
pub fn enabled() -> bool {
    trace().is_some()
}

/// The host command an invoke runs, for the trace: `host_call`'s inner command, else the name.
pub fn command_name(command: &str, payload: &tauri::ipc::InvokeBody) -> String {
    let inner = match payload {
        tauri::ipc::InvokeBody::Json(v) if command == "host_call" => v
            .get("command")
            .and_then(|c| c.as_str())
            .map(|c| c.chars().take(64).collect()),
        _ => None,
    };
    inner.unwrap_or_else(|| command.chars().take(64).collect())
}

/// The page's own milestones (`bench.js` under the trace: `{what: "marks", marks: {name: unix
/// ms}}`, from `performance.timeOrigin`), printed as trace lines at the times the page took.
pub fn page_marks(args: &serde_json::Value) {
    let (Some(t), Some(marks)) = (trace(), args.get("marks").and_then(|m| m.as_object())) else {
        return;
    };
    let now_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let since_start_ms = t.start.elapsed().as_secs_f64() * 1000.0;
    for (name, at) in marks.iter().take(64) {
        let Some(ms) = at.as_f64().filter(|v| v.is_finite() && *v > 0.0) else {
            continue;
        };
        let ns = (ms * 1e6) as u128;
        let ago_ms = (now_ns.saturating_sub(ns)) as f64 / 1e6;
        let name: String = name.chars().take(64).collect();
        eprintln!(
            "apphost-start: {:8.1} {ns} page {name}",
            since_start_ms - ago_ms
        );
    }
}
