//! Start-up probe for `scripts/bench-window.sh` (docs/benchmarks.md, "Window start-up"): off
//! unless `APPHOST_BENCH_PAINT` is set. Then a top-frame script (`bench.js`) reports when the app
//! center and a deep-linked app first painted, and this prints one stdout line per event,
//! `apphost-bench: <what> <unix time in ns>`, which the bench script subtracts its own launch
//! time from. Nothing else changes: the command is unknown (`api.unknown_command`) when the
//! probe is off.
//!
//! With `APPHOST_BENCH_SNAPSHOT=<file>` as well, the "center" report carries the page's HTML as
//! it was when the app list first showed (`document.documentElement.outerHTML`), and this writes
//! it to that file: the bench's static snapshot of the first view (the minimal window paints it
//! without any script, `tools/min-window`).

use serde::Deserialize;

/// The command `bench.js` invokes.
pub const COMMAND: &str = "bench_painted";
const ENV: &str = "APPHOST_BENCH_PAINT";
const SNAPSHOT_ENV: &str = "APPHOST_BENCH_SNAPSHOT";
/// The largest snapshot written.
const SNAPSHOT_MAX: usize = 4 << 20;

fn snapshot_file() -> Option<std::path::PathBuf> {
    std::env::var_os(SNAPSHOT_ENV)
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
}

pub fn enabled() -> bool {
    std::env::var_os(ENV).is_some_and(|v| !v.is_empty())
}

/// The probe script, for a plugin's init script.
pub fn plugin<R: tauri::Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri::plugin::Builder::new("apphost-bench")
        .js_init_script(format!(
            "const APPHOST_BENCH_SNAPSHOT = {};\n{}",
            snapshot_file().is_some(),
            include_str!("bench.js")
        ))
        .build()
}

#[derive(Deserialize)]
struct Painted {
    what: String,
    #[serde(default)]
    snapshot: Option<String>,
}

/// Prints the event line (`what` is `shell`, `center` or `app`; anything else is ignored).
pub fn painted(args: &serde_json::Value) {
    let Ok(Painted { what, snapshot }) = serde_json::from_value(args.clone()) else {
        return;
    };
    if !matches!(what.as_str(), "shell" | "center" | "app") {
        return;
    }
    if let (Some(file), Some(html), "center") = (snapshot_file(), snapshot, what.as_str()) {
        if html.len() <= SNAPSHOT_MAX {
            if let Err(e) = std::fs::write(&file, html) {
                eprintln!("apphost-bench: cannot write {}: {e}", file.display());
            }
        }
    }
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "apphost-bench: {what} {ns}");
    let _ = out.flush();
}
