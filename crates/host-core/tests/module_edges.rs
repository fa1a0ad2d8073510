//! Pins the module edges of host-core and keeps both Rust trees (host-core's `src/` and the
//! `apphost` crate's `src/`) free of file-level import cycles.
//!
//! The scan reads every `.rs` file under a `src/` and records, per file, the `crate::…`,
//! `self::…` and `super::…` paths it names (in `use` statements, `{…}` groups expanded, and
//! inline in code), outside `//` comments and before a `#[cfg(test)] mod …` block. Each path is
//! resolved to the file that defines the longest matching module prefix: that is one edge
//! "file A uses file B". Paths a `mod.rs` names relative to itself (`child::item`) are not
//! scanned: a folder's `mod.rs` is its facade and may use its children.
//!
//! Two rules:
//! - host-core's top modules point only down the allowed table [`ALLOWED`]
//!   (foundation ← install ← hosting ← {api, center}).
//! - no two files import each other in a loop (A → … → A), in either tree.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// host-core's top modules and the top modules each may use (besides itself).
const ALLOWED: &[(&str, &[&str])] = &[
    ("foundation", &[]),
    ("install", &["foundation"]),
    ("hosting", &["install", "foundation"]),
    ("api", &["hosting", "install", "foundation", "center"]),
    ("center", &["hosting", "install", "foundation"]),
];

/// One edge: the file that names the path, the file the path resolves to, and the path.
#[derive(Debug, Clone)]
struct Edge {
    from: String,
    to: String,
    path: String,
}

/// Module path of a file under `src/`: `a/b/mod.rs` → `a::b`, `a/c.rs` → `a::c`,
/// `lib.rs` → `` (the crate root).
fn module_of(rel: &str) -> String {
    let rel = rel.trim_end_matches(".rs");
    let rel = rel.strip_suffix("/mod").unwrap_or(rel);
    if rel == "lib" || rel == "main" {
        return String::new();
    }
    rel.replace('/', "::")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src dir") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file the scan reads: comments dropped, and nothing from the first
/// `#[cfg(test)]` that is followed by a `mod` line (a file's inline test module).
fn scanned_code(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]")
            && lines
                .get(i + 1)
                .is_some_and(|n| n.trim_start().starts_with("mod "))
        {
            break;
        }
        out.push_str(line.split("//").next().unwrap_or(""));
        out.push('\n');
    }
    out
}

/// Expands a use tree (`a::{b, c::{d, e}}`) into its paths.
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = tree[open + 1..]
        .strip_suffix('}')
        .unwrap_or(&tree[open + 1..]);
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(p).into_iter().map(move |s| format!("{prefix}{s}")))
        .collect()
}

/// Every `crate::`/`self::`/`super::` path named in `code`.
fn named_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    // `use` statements, groups expanded.
    for (i, _) in code.match_indices("use ") {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| !(c.is_whitespace() || c == ';' || c == '{' || c == '}')) {
            continue;
        }
        let stmt = &code[i + 4..];
        let tree = &stmt[..stmt.find(';').unwrap_or(stmt.len())];
        out.extend(expand(tree.split(" as ").next().unwrap_or(tree)));
    }
    // Inline paths in code (`crate::a::b::f()`).
    for start in ["crate::", "self::", "super::"] {
        for (i, _) in code.match_indices(start) {
            let before = code[..i].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '$') {
                continue;
            }
            let rest = &code[i..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            if rest[end..].starts_with('{') {
                continue; // a `use` group, expanded above
            }
            out.push(rest[..end].trim_end_matches(':').to_string());
        }
    }
    out.retain(|p| p.starts_with("crate::") || p.starts_with("self::") || p.starts_with("super::"));
    out
}

/// Resolves `path` named in module `here` to a module path from the crate root.
fn absolute(path: &str, here: &str) -> Vec<String> {
    let mut segs: Vec<String> = path.split("::").map(str::to_string).collect();
    let mut base: Vec<String> = here
        .split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    match segs[0].as_str() {
        "crate" => base.clear(),
        "self" => {}
        _ => {
            while segs.first().is_some_and(|s| s == "super") {
                base.pop();
                segs.remove(0);
            }
            base.extend(segs);
            return base;
        }
    }
    segs.remove(0);
    base.extend(segs);
    base
}

/// Every edge between distinct files of the tree under `src`.
fn edges(src: &Path) -> Vec<Edge> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let rel_of = |p: &Path| {
        p.strip_prefix(src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/")
    };
    let by_module: BTreeMap<String, String> = files
        .iter()
        .map(|p| (module_of(&rel_of(p)), rel_of(p)))
        .collect();
    let mut out = Vec::new();
    for f in &files {
        let rel = rel_of(f);
        let here = module_of(&rel);
        let text = std::fs::read_to_string(f).expect("read source");
        for path in named_paths(&scanned_code(&text)) {
            let mut segs = absolute(&path, &here);
            let target = loop {
                if let Some(t) = by_module.get(&segs.join("::")) {
                    break Some(t.clone());
                }
                if segs.pop().is_none() {
                    break None;
                }
            };
            if let Some(to) = target.filter(|t| *t != rel) {
                out.push(Edge {
                    from: rel.clone(),
                    to,
                    path,
                });
            }
        }
    }
    out
}

fn top_of(rel: &str) -> &str {
    rel.split('/').next().unwrap_or(rel).trim_end_matches(".rs")
}

/// Edges between host-core's top modules that [`ALLOWED`] does not list.
fn upward_edges(edges: &[Edge]) -> Vec<String> {
    let mut out = BTreeSet::new();
    for e in edges {
        let (from, to) = (top_of(&e.from), top_of(&e.to));
        if from == to || from == "lib" || to == "lib" {
            continue;
        }
        let allowed = ALLOWED
            .iter()
            .find(|(m, _)| *m == from)
            .is_some_and(|(_, ok)| ok.contains(&to));
        if !allowed {
            out.insert(format!(
                "{}: `{}` points from {from} to {to} ({})",
                e.from, e.path, e.to
            ));
        }
    }
    out.into_iter().collect()
}

/// Each edge A → B for which B reaches A again: the edges of a file import cycle.
fn cycle_edges(edges: &[Edge]) -> Vec<String> {
    let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for e in edges {
        next.entry(&e.from).or_default().insert(&e.to);
    }
    let reaches = |from: &str, goal: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(n) = todo.pop() {
            if n == goal {
                return true;
            }
            if seen.insert(n) {
                todo.extend(next.get(n).into_iter().flatten().copied());
            }
        }
        false
    };
    let mut out = BTreeSet::new();
    for e in edges {
        if reaches(&e.to, &e.from) {
            out.insert(format!(
                "{}: `{}` uses {}, which leads back to {}",
                e.from, e.path, e.to, e.from
            ));
        }
    }
    out.into_iter().collect()
}

fn host_core_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn apphost_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../src")
}

#[test]
fn host_core_top_modules_point_only_down() {
    let e = edges(&host_core_src());
    assert!(e.len() > 100, "the scan found only {} edges", e.len());
    let bad = upward_edges(&e);
    assert!(
        bad.is_empty(),
        "edges outside foundation ← install ← hosting ← {{api, center}}:\n{}",
        bad.join("\n")
    );
}

#[test]
fn host_core_files_import_no_cycle() {
    let bad = cycle_edges(&edges(&host_core_src()));
    assert!(
        bad.is_empty(),
        "file import cycles in host-core:\n{}",
        bad.join("\n")
    );
}

#[test]
fn apphost_files_import_no_cycle() {
    let e = edges(&apphost_src());
    assert!(e.len() > 10, "the scan found only {} edges", e.len());
    let bad = cycle_edges(&e);
    assert!(
        bad.is_empty(),
        "file import cycles in src/:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_scan_finds_upward_edges_and_cycles() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path();
    for d in ["foundation", "install/store", "hosting"] {
        std::fs::create_dir_all(src.join(d)).expect("mkdir");
    }
    let write = |p: &str, text: &str| std::fs::write(src.join(p), text).expect("write");
    write(
        "lib.rs",
        "pub mod foundation;\npub mod install;\npub mod hosting;\n",
    );
    write("foundation/mod.rs", "pub mod error;\n");
    write("foundation/error.rs", "pub struct E;\n");
    write("hosting/mod.rs", "pub mod bridge;\n");
    write(
        "hosting/bridge.rs",
        "use crate::{foundation::error::E, install::store::journal};\n",
    );
    write("install/mod.rs", "pub mod store;\n");
    // An upward edge (install → hosting) hidden in a group, a sibling cycle through `super::`,
    // and paths that must not count: a comment and the inline test module.
    write(
        "install/store/mod.rs",
        "use crate::foundation::{\n    error::E,\n};\n// use crate::hosting::bridge;\n\
         fn f() { crate::hosting::bridge::g(); }\n#[cfg(test)]\nmod tests { use crate::hosting::bridge::x; }\n",
    );
    write("install/store/journal.rs", "use super::packs::P;\n");
    write(
        "install/store/packs.rs",
        "pub struct P;\nfn f() { super::journal::j(); }\n",
    );
    let e = edges(src);
    let up = upward_edges(&e);
    assert_eq!(up.len(), 1, "{up:?}");
    assert!(
        up[0].starts_with(
            "install/store/mod.rs: `crate::hosting::bridge::g` points from install to hosting"
        ),
        "{up:?}"
    );
    let cycles = cycle_edges(&e);
    assert_eq!(cycles.len(), 2, "{cycles:?}");
    assert!(
        cycles[0]
            .starts_with("install/store/journal.rs: `super::packs::P` uses install/store/packs.rs"),
        "{cycles:?}"
    );
    assert!(
        cycles[1].starts_with("install/store/packs.rs: `super::journal::j`"),
        "{cycles:?}"
    );
    // hosting/bridge.rs → install/store/mod.rs (Store) and → journal.rs, both allowed, no cycle.
    assert!(e
        .iter()
        .any(|x| x.from == "hosting/bridge.rs" && x.to == "install/store/journal.rs"));
}
