//! The `apphost` command: every CLI command, and the launcher of the desktop window.
//!
//! Architecture invariant: this package links neither `tauri` nor GTK/WebKit (checked by
//! `tests/lean_binary.rs`), so commands start in milliseconds. The window is a separate binary,
//! `apphost-desktop`, installed beside `apphost`; [`launch`] execs it.

pub mod author;
pub mod cli;
pub mod launch;
pub mod serve;

/// Entry point shared by `main.rs`: returns the process exit code.
///
/// Without arguments it opens the desktop window (by replacing this process with
/// `apphost-desktop`); with arguments it is the CLI.
pub fn main_entry() -> i32 {
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.len() <= 1 {
        argv.truncate(1);
        if argv.is_empty() {
            argv.push("apphost".into());
        }
        argv.push("open".into());
    }
    cli::run(argv)
}
