//! The minimal window: prints `apphost-bench: center <unix ns>` when its page first painted
//! (the same line apphost-desktop prints under APPHOST_BENCH_PAINT). Under APPHOST_TRACE_START it
//! also prints the start-up milestones apphost-desktop traces (src-tauri/src/desktop/start_trace.rs:
//! `apphost-start: <ms> <unix ns> <what>` on stderr), so `BENCH_TRACE=1 scripts/bench-window.sh`
//! compares the two stage by stage.

use std::io::Write as _;

fn unix_ns() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

static START: std::sync::OnceLock<Option<std::time::Instant>> = std::sync::OnceLock::new();

fn mark(what: &str) {
    let start = START.get_or_init(|| {
        std::env::var_os("APPHOST_TRACE_START")
            .is_some_and(|v| !v.is_empty())
            .then(std::time::Instant::now)
    });
    if let Some(start) = start {
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        eprintln!("apphost-start: {ms:8.1} {} {what}", unix_ns());
    }
}

#[tauri::command]
fn painted() {
    mark("painted center");
    let ns = unix_ns();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "apphost-bench: center {ns}");
    let _ = out.flush();
}

fn main() {
    mark("run");
    let app = tauri::Builder::default()
        .invoke_handler(tauri::generate_handler![painted])
        .on_page_load(|_, payload| match payload.event() {
            tauri::webview::PageLoadEvent::Started => mark("page load started"),
            tauri::webview::PageLoadEvent::Finished => mark("page load finished"),
        })
        .build(tauri::generate_context!())
        .expect("the minimal window runs");
    mark("window built");
    app.run(|_, event| {
        if let tauri::RunEvent::Ready = event {
            mark("event loop ready");
        }
    });
}
