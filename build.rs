//! Build script of the `apphost` command: embeds the built host UI (`ui-host/dist`) for
//! `apphost serve`, the same files the desktop window embeds, so the UI a server hands out
//! always matches the command layer of the same binary.
//!
//! When `ui-host/dist` has not been built, nothing is embedded and `apphost serve` fails at start
//! with `serve.ui_missing` (every other command works): the CLI stays buildable without npm.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=ui-host/dist");
    let dist = Path::new("ui-host/dist");
    let mut files = Vec::new();
    if dist.join("index.html").is_file() {
        collect(dist, dist, &mut files);
    }
    files.sort();
    let mut out = String::from("/// The built host UI: (path under `/`, bytes).\npub static UI_FILES: &[(&str, &[u8])] = &[\n");
    for (rel, abs) in &files {
        println!("cargo:rerun-if-changed={}", abs.display());
        let _ = writeln!(
            out,
            "    ({rel:?}, include_bytes!({:?})),",
            abs.display().to_string()
        );
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("ui_files.rs");
    std::fs::write(dest, out).expect("write ui_files.rs");
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
            let abs = std::fs::canonicalize(&path).unwrap_or(path);
            files.push((rel, abs));
        }
    }
}
