//! The minimal window: prints `apphost-bench: center <unix ns>` when its page first painted
//! (the same line apphost-desktop prints under APPHOST_BENCH_PAINT).

use std::io::Write as _;

#[tauri::command]
fn painted() {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "apphost-bench: center {ns}");
    let _ = out.flush();
}

fn main() {
    tauri::Builder::default()
        .invoke_handler(tauri::generate_handler![painted])
        .run(tauri::generate_context!())
        .expect("the minimal window runs");
}
