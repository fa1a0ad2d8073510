//! Build script of the `apphost` command: embeds
//! - the built host UI (`ui-host/dist`) for `apphost serve`, the same files the desktop window
//!   embeds, so the UI a server hands out always matches the command layer of the same binary;
//! - the app templates (`templates/`) for `apphost new`;
//! - the Host Bridge SDK's package (`bridge-sdk/package.json`, `README.md`, the built `dist/`,
//!   and the `npm pack` tarball its build writes to `bridge-sdk/pack/`) for `apphost sdk` and the
//!   SDK that `apphost new` vendors.
//!
//! When `ui-host/dist` has not been built, nothing is embedded and `apphost serve` fails at start
//! with `serve.ui_missing`; without `bridge-sdk/dist`, `apphost new` and `apphost sdk` fail with
//! `author.sdk_missing` (every other command works): the CLI stays buildable without npm.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let mut out = String::new();

    println!("cargo:rerun-if-changed=ui-host/dist");
    let dist = Path::new("ui-host/dist");
    let mut ui = Vec::new();
    if dist.join("index.html").is_file() {
        collect(dist, dist, &mut ui);
    }
    emit(
        &mut out,
        "The built host UI: (path under `/`, bytes).",
        "UI_FILES",
        ui,
    );
    write_out("ui_files.rs", &out);

    let mut out = String::new();

    println!("cargo:rerun-if-changed=templates");
    let templates = Path::new("templates");
    let mut files = Vec::new();
    collect(templates, templates, &mut files);
    emit(
        &mut out,
        "The app templates of `apphost new`: (path under `templates/`, bytes).",
        "TEMPLATE_FILES",
        files,
    );

    let sdk = Path::new("bridge-sdk");
    let sdk_dist = sdk.join("dist");
    println!("cargo:rerun-if-changed=bridge-sdk/dist");
    println!("cargo:rerun-if-changed=bridge-sdk/pack");
    let mut files = Vec::new();
    if sdk_dist.join("index.js").is_file() {
        for name in ["package.json", "README.md"] {
            println!("cargo:rerun-if-changed=bridge-sdk/{name}");
            files.push((name.to_owned(), absolute(sdk.join(name))));
        }
        let mut built = Vec::new();
        collect(&sdk_dist, &sdk_dist, &mut built);
        files.extend(
            built
                .into_iter()
                .map(|(rel, abs)| (format!("dist/{rel}"), abs)),
        );
    }
    emit(&mut out, "The SDK's npm package (`bridge-sdk/`): (path in the package, bytes); empty when `bridge-sdk/dist` was not built.", "SDK_FILES", files);

    let version = std::env::var("CARGO_PKG_VERSION").expect("CARGO_PKG_VERSION");
    let tarball = format!("apphost-bridge-sdk-{version}.tgz");
    let packed = sdk.join("pack").join(&tarball);
    let mut pack = Vec::new();
    if packed.is_file() {
        pack.push((tarball, absolute(packed)));
    }
    emit(
        &mut out,
        "`npm pack` of the SDK for this version (at most one file).",
        "SDK_PACK",
        pack,
    );

    write_out("author_files.rs", &out);
}

fn write_out(name: &str, text: &str) {
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join(name);
    std::fs::write(dest, text).expect("write the embedded file list");
}

fn emit(out: &mut String, doc: &str, name: &str, mut files: Vec<(String, PathBuf)>) {
    files.sort();
    let _ = writeln!(out, "/// {doc}\npub static {name}: &[(&str, &[u8])] = &[");
    for (rel, abs) in &files {
        println!("cargo:rerun-if-changed={}", abs.display());
        let _ = writeln!(
            out,
            "    ({rel:?}, include_bytes!({:?})),",
            abs.display().to_string()
        );
    }
    out.push_str("];\n");
}

fn absolute(path: PathBuf) -> PathBuf {
    std::fs::canonicalize(&path).unwrap_or(path)
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            collect(root, &path, files);
        } else if kind.is_file() {
            let rel = path.strip_prefix(root).unwrap_or(&path);
            let rel = rel.to_string_lossy().replace('\\', "/");
            files.push((rel, absolute(path)));
        }
    }
}
