//! The minimal window: prints `apphost-bench: center <unix ns>` when its page first painted
//! (the same line apphost-desktop prints under APPHOST_BENCH_PAINT). Under APPHOST_TRACE_START it
//! also prints the start-up milestones apphost-desktop traces (src-tauri/src/desktop/start_trace.rs:
//! `apphost-start: <ms> <unix ns> <what>` on stderr), so `BENCH_TRACE=1 scripts/bench-window.sh`
//! compares the two stage by stage.
//!
//! With `MIN_WINDOW_PAGE=<folder>` it loads `<folder>/index.html` instead of its own page, served
//! from that folder on the `snap:` scheme (files directly in it only): the bench's "static
//! snapshot" case, the app center's first view saved as HTML + CSS without its script, shows
//! what the WebView alone needs to paint that page.

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

/// The folder `MIN_WINDOW_PAGE` names, if set.
fn page_folder() -> Option<std::path::PathBuf> {
    std::env::var_os("MIN_WINDOW_PAGE")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
}

/// A file of the snapshot folder: `snap://localhost/<name>`, a plain name only.
fn snapshot_file(
    folder: &std::path::Path,
    request: &tauri::http::Request<Vec<u8>>,
) -> tauri::http::Response<Vec<u8>> {
    let name = request.uri().path().trim_start_matches('/');
    let plain = !name.is_empty() && !name.contains(['/', '\\']) && !name.starts_with('.');
    let body = plain
        .then(|| std::fs::read(folder.join(name)).ok())
        .flatten();
    let kind = match name.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css",
        Some("js") => "text/javascript",
        _ => "application/octet-stream",
    };
    let builder = tauri::http::Response::builder();
    match body {
        Some(body) => builder.header("Content-Type", kind).body(body),
        None => builder.status(404).body(Vec::new()),
    }
    .unwrap_or_default()
}

fn main() {
    mark("run");
    let snapshot = page_folder();
    let mut builder = tauri::Builder::default();
    if let Some(folder) = snapshot.clone() {
        builder = builder.register_uri_scheme_protocol("snap", move |_, request| {
            snapshot_file(&folder, &request)
        });
    }
    let app = builder
        .setup(move |app| {
            // The config's window (`create: false`), on the snapshot's page when one is given.
            let mut config = app.config().app.windows[0].clone();
            if snapshot.is_some() {
                config.url = tauri::WebviewUrl::CustomProtocol(
                    "snap://localhost/index.html".parse().expect("a valid URL"),
                );
            }
            tauri::WebviewWindowBuilder::from_config(app.handle(), &config)?.build()?;
            Ok(())
        })
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
