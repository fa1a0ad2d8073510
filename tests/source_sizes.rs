//! No source file over 800 lines: the renovation's size rule, kept by a test so it stays.
//!
//! Counted: every `.rs`, `.ts`, `.tsx` and `.mjs` file under the product's source folders.
//! Aside (as the rule says): test files and folders (`tests/`, `test/`, `tests.rs`,
//! `*_tests.rs`, `*.test.*`, `benches/`), generated files (`generated/`), and in a Rust file
//! the lines from its trailing `#[cfg(test)]` module on (unit tests kept beside the code).

use std::path::{Path, PathBuf};

const MAX_LINES: usize = 800;

/// The folders whose files the rule covers, relative to the repository root.
const SOURCE_ROOTS: &[&str] = &[
    "src",
    "src-tauri/src",
    "crates/host-core/src",
    "crates/runtime-core/src",
    "ui-host/src",
    "bridge-sdk/src",
];

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn is_aside(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let in_folder = |folder: &str| path.components().any(|c| c.as_os_str() == folder);
    in_folder("tests")
        || in_folder("test")
        || in_folder("benches")
        || in_folder("generated")
        || name == "tests.rs"
        || name.ends_with("_tests.rs")
        || name.contains(".test.")
}

fn is_source(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("rs" | "ts" | "tsx" | "mjs")
    )
}

/// Lines of a file that count: in Rust, everything before the first top-level
/// `#[cfg(test)]` (the unit-test module beside the code is a test file in all but name).
fn counted_lines(path: &Path, text: &str) -> usize {
    let is_rust = path.extension().and_then(|e| e.to_str()) == Some("rs");
    let mut n = 0;
    for line in text.lines() {
        if is_rust && line.starts_with("#[cfg(test)]") {
            break;
        }
        n += 1;
    }
    n
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(root, &path, out);
        } else if kind.is_file()
            && is_source(&path)
            && !is_aside(path.strip_prefix(root).unwrap_or(&path))
        {
            out.push(path);
        }
    }
}

#[test]
fn no_source_file_is_over_800_lines() {
    let root = repo_root();
    let mut files = Vec::new();
    for dir in SOURCE_ROOTS {
        walk(&root, &root.join(dir), &mut files);
    }
    assert!(
        files.len() > 100,
        "the scan found only {} files: are the source roots right?",
        files.len()
    );
    let mut over: Vec<(usize, String)> = files
        .iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(p).ok()?;
            let n = counted_lines(p, &text);
            let rel = p.strip_prefix(&root).unwrap_or(p).display().to_string();
            (n > MAX_LINES).then_some((n, rel))
        })
        .collect();
    over.sort();
    assert!(
        over.is_empty(),
        "source files over {MAX_LINES} lines (split them along what they do; tests and \
         generated files aside):\n{}",
        over.iter()
            .map(|(n, f)| format!("  {n:>5}  {f}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_counter_stops_at_the_unit_test_module() {
    let text = "fn a() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n";
    assert_eq!(counted_lines(Path::new("x.rs"), text), 2);
    // Not in TypeScript: there is no such module there.
    assert_eq!(counted_lines(Path::new("x.ts"), text), 7);
    assert!(is_aside(Path::new("crates/x/src/generated/host-api.ts")));
    assert!(is_aside(Path::new("crates/x/src/manifest/tests.rs")));
    assert!(!is_aside(Path::new("crates/x/src/manifest/view.rs")));
}
