//! Build script of the `apphost` package: generates the Tauri context (config, ACL, embedded UI).
//!
//! `tauri.conf.json` lives at the repository root (the package folder); the capability files live in
//! `src-tauri/capabilities/`, so the default `./capabilities/**/*` pattern is overridden.

use std::path::Path;

fn main() {
    // `generate_context!` embeds `ui-host/dist` but only tracks the files it saw last time; watch
    // the whole folder so a rebuilt UI (new or removed files too) re-embeds.
    println!("cargo:rerun-if-changed=ui-host/dist");
    // Fail early, with the command that builds it, when the UI was never built.
    let index = Path::new("ui-host/dist/index.html");
    if !index.is_file() {
        panic!(
            "ui-host/dist/index.html is missing: build the host UI first with \
             `npm ci && npm run build` (from the repository root)"
        );
    }

    // tauri-build watches `./capabilities` only when the default pattern is used.
    println!("cargo:rerun-if-changed=src-tauri/capabilities");
    let attributes =
        tauri_build::Attributes::new().capabilities_path_pattern("./src-tauri/capabilities/**/*");
    if let Err(error) = tauri_build::try_build(attributes) {
        panic!("tauri-build failed: {error:#}");
    }
}
