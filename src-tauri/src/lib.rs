//! `apphost-desktop`: the AppHost window. Started by the lean `apphost` command (which execs it
//! from its own folder); not meant to be run directly.
//!
//! Architecture invariant: this package is the only one that names `tauri`. The window calls
//! `host-core` and holds no domain logic.

pub mod desktop;

/// Entry point shared by `main.rs`: returns the process exit code.
pub fn main_entry() -> i32 {
    desktop::run()
}
