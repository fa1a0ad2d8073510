//! Build script of `apphost-desktop`: generates the Tauri context (config, ACL, embedded UI).
//!
//! `tauri.conf.json` and `capabilities/` live in this package folder (`src-tauri/`); the host UI
//! it embeds is built into `../ui-host/dist`.

use std::path::Path;

fn main() {
    // `generate_context!` embeds `ui-host/dist` but only tracks the files it saw last time; watch
    // the whole folder so a rebuilt UI (new or removed files too) re-embeds.
    println!("cargo:rerun-if-changed=../ui-host/dist");
    // Fail early, with the command that builds it, when the UI was never built.
    let index = Path::new("../ui-host/dist/index.html");
    if !index.is_file() {
        panic!(
            "ui-host/dist/index.html is missing: build the host UI first with \
             `npm ci && npm run build` (from the repository root)"
        );
    }

    if let Err(error) = tauri_build::try_build(tauri_build::Attributes::new()) {
        panic!("tauri-build failed: {error:#}");
    }
}
