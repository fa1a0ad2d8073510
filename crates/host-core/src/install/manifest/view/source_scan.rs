//! Keeps the typed view the only reader of manifest keys: a scan of `src/` for string-keyed
//! reads outside `install/manifest/view.rs` and `install/manifest/view/`.
//!
//! Two kinds of pattern. String-keyed accessors (`.array("`, `.str("`, `.object("`) and reads
//! of the manifest's map (`data.get(`) are refused everywhere outside the view. `.get("` /
//! `.pointer("` also read other JSON documents (call arguments, a bridge message, a signature,
//! a lock file, a stored projection, an event), so they are refused except in the files listed
//! in [`OTHER_JSON`], each with the most reads it may hold and what it reads.

use std::path::{Path, PathBuf};

/// The view itself: the one place that knows the manifest's key names.
const VIEW: &[&str] = &["install/manifest/view.rs", "install/manifest/view/"];

/// Files that read JSON documents other than the manifest by string key: (path under `src/`,
/// most `.get("`/`.pointer("` reads, what they read).
const OTHER_JSON: &[(&str, usize, &str)] = &[
    (
        "hosting/capability/dispatch.rs",
        1,
        "the call's options.idempotencyKey",
    ),
    (
        "hosting/capability/contract/emit.rs",
        2,
        "the emitted JSON Schemas (description fields)",
    ),
    ("hosting/capability/services/agent.rs", 9, "call arguments"),
    (
        "hosting/capability/services/agent_tool_refs.rs",
        3,
        "startTask tools[] items (call arguments)",
    ),
    ("hosting/agent_tool_source.rs", 3, "an MCP tool result"),
    (
        "center/catalog.rs",
        2,
        "a catalog release's compatibility object",
    ),
    (
        "hosting/capability/services/artifacts.rs",
        1,
        "call arguments",
    ),
    ("hosting/capability/services/events.rs", 2, "call arguments"),
    ("hosting/capability/services/files.rs", 1, "call arguments"),
    (
        "hosting/capability/services/attachments.rs",
        2,
        "call arguments (startTask's files)",
    ),
    (
        "hosting/capability/services/evidence.rs",
        4,
        "call arguments and the pack's artifact records",
    ),
    ("hosting/capability/services/policy.rs", 1, "call arguments"),
    (
        "hosting/capability/services/workflow.rs",
        3,
        "call arguments",
    ),
    (
        "hosting/capability/services/knowledge.rs",
        4,
        "call arguments",
    ),
    (
        "hosting/capability/services/secrets.rs",
        1,
        "call arguments",
    ),
    (
        "hosting/capability/services/storage.rs",
        8,
        "call arguments",
    ),
    (
        "hosting/bridge/message.rs",
        9,
        "the bridge message envelope",
    ),
    ("hosting/bridge/host.rs", 1, "a refused message's type"),
    (
        "install/manifest/mod.rs",
        1,
        "the package's file map (APP.md)",
    ),
    (
        "install/manifest/layered.rs",
        7,
        "the layered files, each by its own top key",
    ),
    ("api/tasks.rs", 6, "runtime event messages"),
    ("install/lockfile.rs", 7, "app.lock"),
    ("install/inspect.rs", 1, "the captured file map (APP.md)"),
    ("center/dev.rs", 1, "error details"),
    ("api/dev_console.rs", 1, "a frame's diagnostic report"),
    (
        "hosting/workflow/timeline.rs",
        11,
        "a run's recorded facts (payloads, the pinned definition's state kinds)",
    ),
    (
        "install/schedules.rs",
        1,
        "the entry's `schedule` value the view hands over (`every`)",
    ),
    (
        "hosting/capability/services/shapes.rs",
        3,
        "call arguments (the standard's shapes)",
    ),
    (
        "hosting/capability/services/start_task_shape.rs",
        7,
        "call arguments (startTask)",
    ),
    (
        "hosting/workflow/executor.rs",
        2,
        "a workflow step's call arguments",
    ),
    (
        "hosting/workflow/step_args.rs",
        4,
        "a workflow step's call arguments",
    ),
    ("center/review.rs", 7, "the stored projection"),
    ("install/package/catalog.rs", 2, "catalog documents"),
    (
        "install/store/storage_plan.rs",
        7,
        "the stored projection and storage/schema.json",
    ),
    ("install/store/mod.rs", 4, "the stored manifest envelope"),
    ("install/store/schema.rs", 1, "the stored manifest envelope"),
    // lime.tools (hosting/tools/): MCP listings, call arguments and results, never manifests.
    (
        "foundation/setting_keys.rs",
        2,
        "tools.listed settings rows",
    ),
    ("hosting/capability/services/tools.rs", 4, "call arguments"),
    (
        "hosting/capability/services/app_services.rs",
        3,
        "call arguments",
    ),
    ("hosting/tools/broker.rs", 1, "an MCP call result"),
    ("hosting/tools/registry.rs", 1, "tools.listed settings rows"),
    (
        "install/signature.rs",
        7,
        "app.signature.yaml and key files",
    ),
    (
        "foundation/typescript.rs",
        12,
        "JSON Schemas rendered as TypeScript",
    ),
];

const ALWAYS_REFUSED: &[&str] = &[".array(\"", ".str(\"", ".object(\"", "data.get("];
const OTHER_JSON_READS: &[&str] = &[".get(\"", ".pointer(\""];

/// Occurrences of `patterns` in `text`, outside `//` comments.
fn count(text: &str, patterns: &[&str]) -> usize {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .map(|l| patterns.iter().map(|p| l.matches(p).count()).sum::<usize>())
        .sum()
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

/// Every violation in the files under `src`, as `path: message`.
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut out = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        if VIEW.iter().any(|v| rel.starts_with(v)) {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("read source");
        let refused = count(&text, ALWAYS_REFUSED);
        if refused > 0 {
            out.push(format!(
                "{rel}: {refused} string-keyed manifest read(s): use manifest.view()"
            ));
        }
        let reads = count(&text, OTHER_JSON_READS);
        let allowed = OTHER_JSON
            .iter()
            .find(|(p, _, _)| *p == rel)
            .map_or(0, |(_, n, _)| *n);
        if reads > allowed {
            out.push(format!(
                "{rel}: {reads} `.get(\"`/`.pointer(\"` read(s), at most {allowed} allowed: \
                 read manifest fields through manifest.view()"
            ));
        }
    }
    out.sort();
    out
}

#[test]
fn no_file_outside_manifest_reads_manifest_keys_by_string() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let v = violations(&src);
    assert!(
        v.is_empty(),
        "string-keyed manifest reads:\n{}",
        v.join("\n")
    );
}

#[test]
fn the_scan_finds_string_keyed_reads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path();
    std::fs::create_dir_all(src.join("install/manifest/view")).expect("mkdir");
    let bad = "fn f(m: &Manifest) { m.array(\"entries\"); m.data.get(\"x\"); }\n";
    std::fs::write(src.join("readiness.rs"), bad).expect("write");
    std::fs::write(src.join("install/manifest/view.rs"), bad).expect("write");
    std::fs::write(src.join("install/manifest/view/raw.rs"), bad).expect("write");
    std::fs::write(
        src.join("install/manifest/validate.rs"),
        "fn f() { m.str(\"name\"); }\n",
    )
    .expect("write");
    std::fs::write(
        src.join("install/lockfile.rs"),
        "// doc.get(\"a\") in a comment\nfn f() { a.get(\"x\"); }\n",
    )
    .expect("write");
    std::fs::write(src.join("center.rs"), "fn f() { p.get(\"key\"); }\n").expect("write");
    let v = violations(src);
    // The view is skipped, the rest of install/manifest/ is not; lockfile.rs is within its allowance;
    // the comment does not count; `m.data.get("x")` is both a map read and a `.get("`.
    assert_eq!(v.len(), 4, "{v:?}");
    assert!(v[0].starts_with("center.rs: 1 `.get"), "{v:?}");
    assert!(
        v[1].starts_with("install/manifest/validate.rs: 1 string-keyed"),
        "{v:?}"
    );
    assert!(v[2].starts_with("readiness.rs: 1 `.get"), "{v:?}");
    assert!(v[3].starts_with("readiness.rs: 2 string-keyed"), "{v:?}");
}
