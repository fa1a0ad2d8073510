use std::collections::BTreeMap;

use super::*;
use crate::foundation::limits::Limits;

fn manifest(front: &str) -> Manifest {
    let mut captured = BTreeMap::new();
    captured.insert(
        "APP.md".to_owned(),
        format!("---\nname: demo\ndescription: d\nversion: 1.0.0\nstatus: ready\nappType: agent-app\n{front}---\n# Demo\n").into_bytes(),
    );
    crate::install::manifest::load(&captured, &Limits::default()).expect("manifest")
}

const UI: &str = "runtimePackage:\n  ui:\n    path: ./ui\n    entry: index.html\nentries:\n  - key: main\n    kind: page\n    title: Main\n";

fn codes(f: &[Finding]) -> Vec<&str> {
    f.iter().map(|f| f.code).collect()
}

fn run(m: &Manifest, files: &[(&str, &str)], bounds: Bounds) -> Vec<Finding> {
    let list: Vec<(&str, u64)> = files.iter().map(|(p, t)| (*p, t.len() as u64)).collect();
    let mut reads = 0;
    let out = check(m, &list, bounds, &mut |path, limit| {
        reads += 1;
        let t = files.iter().find(|(p, _)| *p == path)?.1.as_bytes();
        Some(t[..t.len().min(limit)].to_vec())
    });
    assert!(reads <= bounds.max_files, "read {reads} files");
    out
}

#[test]
fn a_page_without_ui_is_reported_with_what_to_add() {
    let m = manifest("entries:\n  - key: main\n    kind: page\n    title: Main\n  - key: go\n    kind: command\n    title: Go\n");
    let f = manifest_findings(&m);
    assert_eq!(codes(&f), vec![PAGE_WITHOUT_UI]);
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(f[0].path, "APP.md#/entries/0");
    assert!(f[0].fix.as_deref().unwrap().contains("runtimePackage"));
    assert!(manifest_findings(&manifest(UI)).is_empty());
}

#[test]
fn a_permission_scope_needs_its_capability_declared() {
    let perms = "permissions:\n  - key: notes\n    scope: storage\n    access: read-write\n    reason: r\n  - key: out\n    scope: artifact\n    access: read-write\n    reason: r\n  - key: web\n    scope: network\n    access: read\n    reason: r\n";
    let m = manifest(&format!(
        "{UI}{perms}requires:\n  capabilities:\n    lime.artifacts: \"^0.10.0\"\n"
    ));
    let f = manifest_findings(&m);
    assert_eq!(codes(&f), vec![PERMISSION_CAPABILITY_UNDECLARED]);
    assert_eq!(f[0].path, "APP.md#/permissions/0/scope");
    assert!(f[0].message.contains("lime.storage"));
    assert!(f[0].fix.as_deref().unwrap().contains("lime.storage"));
    // Declared as a list works as well as a map.
    let m = manifest(&format!(
        "{UI}{perms}requires:\n  capabilities: [lime.storage, lime.artifacts]\n"
    ));
    assert!(manifest_findings(&m).is_empty());
}

#[test]
fn ui_files_report_what_the_csp_refuses_with_file_and_line() {
    let m = manifest(UI);
    let page = "<!doctype html>\n<script>boot()</script>\n<button onclick=\"x()\">x</button>\n<form></form>\n<img src=\"https://cdn.example/a.png\">\n<p style=\"color:red\">p</p>\n<style>p{}</style>\n";
    let f = run(
        &m,
        &[
            ("APP.md", ""),
            ("ui/index.html", page),
            (
                "ui/style.css",
                "body{background:url(https://x.example/b.png)}",
            ),
            ("docs/other.html", "<script>not scanned()</script>"),
        ],
        Bounds::default(),
    );
    let got: Vec<(&str, &str, Option<u32>)> = f
        .iter()
        .map(|f| (f.code, f.path.as_str(), f.line))
        .collect();
    assert_eq!(
        got,
        vec![
            (INLINE_SCRIPT, "ui/index.html", Some(2)),
            (INLINE_HANDLER, "ui/index.html", Some(3)),
            (FORM_WITHOUT_FORMS, "ui/index.html", Some(4)),
            (EXTERNAL_URL, "ui/index.html", Some(5)),
            (STYLE_ATTRIBUTE, "ui/index.html", Some(6)),
            (INLINE_STYLE, "ui/index.html", Some(7)),
            (EXTERNAL_URL, "ui/style.css", Some(1)),
        ]
    );
    assert!(f
        .iter()
        .all(|f| f.severity == Severity::Warning && f.fix.is_some()));
}

#[test]
fn declared_frame_flags_silence_forms_and_inline_styles() {
    let m = manifest(&format!(
        "{UI}ui:\n  frame:\n    forms: true\n    inlineStyles: true\n"
    ));
    let f = run(
        &m,
        &[(
            "ui/index.html",
            "<form></form><p style=\"x\"></p><style>p{}</style>",
        )],
        Bounds::default(),
    );
    assert!(f.is_empty(), "{f:?}");
    // What the app allowed does not use up the findings' bound and hide what follows.
    let page = format!(
        "{}\n<script>late()</script>",
        "<p style=\"x\"></p>".repeat(500)
    );
    let f = run(&m, &[("ui/index.html", &page)], Bounds::default());
    assert_eq!(codes(&f), vec![INLINE_SCRIPT]);
    assert_eq!(f[0].line, Some(2));
}

#[test]
fn hostile_packages_cost_bounded_reads_and_findings() {
    let m = manifest(UI);
    let many: Vec<(String, String)> = (0..500)
        .map(|i| (format!("ui/p{i}.html"), "<b onclick=x>".repeat(100)))
        .collect();
    let files: Vec<(&str, &str)> = many.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let bounds = Bounds {
        max_files: 8,
        max_file_bytes: 1024,
        max_findings: 20,
    };
    let f = run(&m, &files, bounds);
    assert_eq!(f.len(), 21);
    assert_eq!(f.last().unwrap().code, SCAN_TRUNCATED);
    // One file with more findings than the bound: also said.
    let f = run(&m, &files[..1], bounds);
    assert_eq!(f.len(), 21);
    assert_eq!(f.last().unwrap().code, SCAN_TRUNCATED);
    // A large file is cut at the byte bound: what lies beyond is not seen, and that is said.
    let big = format!("{}<script>late()</script>", " ".repeat(4096));
    let f = run(&m, &[("ui/index.html", &big)], bounds);
    assert_eq!(codes(&f), vec![SCAN_TRUNCATED]);
}

#[test]
fn every_code_is_documented() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/cli.md"))
        .expect("docs/cli.md");
    for code in CODES {
        assert!(
            doc.contains(&format!("`{code}`")),
            "{code} is not in docs/cli.md"
        );
    }
}
