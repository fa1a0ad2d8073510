//! The `apphost` binary: the desktop window without arguments, the CLI with a subcommand.
//!
//! Architecture invariant: this package is the only one that names `tauri`, and only inside
//! `desktop`. The CLI and the desktop window both call `host-core`; neither holds domain logic.

// Moved to the root package's `src/cli/` (the lean CLI); included from there until the split.
#[path = "../../src/cli/mod.rs"]
pub mod cli;
pub mod desktop;

/// Entry point shared by `main.rs`: returns the process exit code.
pub fn main_entry() -> i32 {
    if std::env::args_os().len() > 1 {
        cli::run(std::env::args_os().collect())
    } else {
        desktop::run()
    }
}
