//! Start-up probe for `scripts/bench-window.sh` (docs/benchmarks.md, "Window start-up"): off
//! unless `APPHOST_BENCH_PAINT` is set. Then a top-frame script (`bench.js`) reports when the app
//! center and a deep-linked app first painted, and this prints one stdout line per event,
//! `apphost-bench: <what> <unix time in ns>`, which the bench script subtracts its own launch
//! time from. Nothing else changes: the command is unknown (`api.unknown_command`) when the
//! probe is off.

use serde::Deserialize;

/// The command `bench.js` invokes.
pub const COMMAND: &str = "bench_painted";
const ENV: &str = "APPHOST_BENCH_PAINT";

pub fn enabled() -> bool {
    std::env::var_os(ENV).is_some_and(|v| !v.is_empty())
}

/// The probe script, for a plugin's init script.
pub fn plugin<R: tauri::Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri::plugin::Builder::new("apphost-bench")
        .js_init_script(include_str!("bench.js").to_owned())
        .build()
}

#[derive(Deserialize)]
struct Painted {
    what: String,
}

/// Prints the event line (`what` is `shell`, `center` or `app`; anything else is ignored).
pub fn painted(args: &serde_json::Value) {
    let Ok(Painted { what }) = serde_json::from_value(args.clone()) else {
        return;
    };
    if !matches!(what.as_str(), "shell" | "center" | "app") {
        return;
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
