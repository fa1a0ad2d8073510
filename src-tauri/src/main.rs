// No console window on Windows release builds; the CLI still writes to the parent console.
#![cfg_attr(
    all(not(debug_assertions), target_os = "windows"),
    windows_subsystem = "windows"
)]

fn main() {
    std::process::exit(apphost::main_entry());
}
