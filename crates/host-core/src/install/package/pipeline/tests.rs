//! Which files are kept in memory, and how they are found.

use std::path::Path;

use super::*;
use crate::install::package::catalog::CatalogSelect;
use crate::install::package::source::resolve;

const APP_MD: &str = "---\nname: demo\ndescription: A demo.\nversion: 1.0.0\nstatus: ready\nappType: agent-app\nmanifestVersion: \"0.10.0\"\n---\n# Demo\n";

fn folder(files: &[(&str, Vec<u8>)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for (rel, data) in files {
        let p = tmp.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, data).unwrap();
    }
    tmp
}

fn read(root: &Path, limits: &Limits) -> HostResult<ReadPackage> {
    let source = resolve(root, &CatalogSelect::default())?;
    let mut reader = PackageReader::open(&source, limits)?;
    read_package(&mut reader, None, limits, &mut |_| {})
}

#[test]
fn only_the_files_the_manifest_loader_reads_are_kept_in_memory() {
    let yaml = |n: usize| format!("# {}\nx: 1\n", "p".repeat(n)).into_bytes();
    let pkg = folder(&[
        ("APP.md", APP_MD.into()),
        ("app.permissions.yaml", b"permissions: []\n".to_vec()),
        ("app.extra.yaml", yaml(900_000)),
        ("app.other.yml", yaml(900_000)),
        ("app.manifest.json", b"{}".to_vec()),
        ("storage/schema.json", b"{}".to_vec()),
        ("evals/readiness.yaml", b"readiness: {}\n".to_vec()),
        ("evals/other.yaml", yaml(10)),
    ]);
    let read = read(pkg.path(), &Limits::default()).unwrap();
    let kept: Vec<&str> = read.captured.keys().map(String::as_str).collect();
    assert_eq!(
        kept,
        ["APP.md", "app.permissions.yaml", "evals/readiness.yaml"]
    );
    // The files not kept are still reported, from their names.
    let m = crate::install::manifest::load_with_files(
        &read.captured,
        read.files.iter().map(|f| f.path.as_str()),
        &Limits::default(),
    )
    .unwrap();
    let warned: Vec<(&str, &str)> = m
        .findings
        .iter()
        .map(|f| (f.code, f.path.as_str()))
        .collect();
    assert_eq!(
        warned,
        [
            ("manifest.unknown_layered_file", "app.extra.yaml"),
            ("manifest.machine_manifest_ignored", "app.manifest.json"),
            ("manifest.unknown_layered_file", "app.other.yml"),
        ]
    );
}

#[test]
fn the_kept_files_are_capped_in_total_before_anything_is_read() {
    let limits = Limits {
        max_manifest_bytes: 5_000,
        max_metadata_bytes: 10_000,
        ..Limits::default()
    };
    let big = |n: usize| format!("# {}\n", "p".repeat(n)).into_bytes();
    // Three layered files of ~4,000 bytes: each within its limit, 12,000+ together.
    let mut files = vec![
        ("APP.md", APP_MD.as_bytes().to_vec()),
        ("app.entries.yaml", big(4_000)),
        ("app.errors.yaml", big(4_000)),
    ];
    // Unread files do not count.
    files.push(("app.unread.yaml", big(4_000)));
    let pkg = folder(&files);
    assert!(read(pkg.path(), &limits).is_ok());
    files.push(("evals/health.yaml", big(4_000)));
    let pkg = folder(&files);
    let err = read(pkg.path(), &limits).unwrap_err();
    assert_eq!(err.code, ErrorCode::ManifestMetadataTooLarge, "{err:?}");
    assert_eq!(err.details["limit"], 10_000);
    // One file over its own limit keeps its own code.
    files.push(("app.i18n.yaml", big(6_000)));
    let pkg = folder(&files);
    assert_eq!(
        read(pkg.path(), &limits).unwrap_err().code,
        ErrorCode::ManifestTooLarge
    );
    // A raised per-file limit raises the total with it: one such file always fits.
    let raised = Limits {
        max_manifest_bytes: 20_000,
        max_metadata_bytes: 10_000,
        ..Limits::default()
    };
    let pkg = folder(&[("APP.md", APP_MD.into()), ("app.entries.yaml", big(15_000))]);
    assert!(read(pkg.path(), &raised).is_ok());
}

#[test]
fn files_are_found_by_path_in_the_listing_order() {
    let names = [
        "APP.md",
        "a/b.txt",
        "a-b.txt",
        "a/b/c.txt",
        "Z.txt",
        "é.txt",
        "dist/x/y/z.js",
    ];
    let pkg = folder(
        &names
            .iter()
            .map(|n| {
                let data = if *n == "APP.md" {
                    APP_MD.into()
                } else {
                    n.as_bytes().to_vec()
                };
                (*n, data)
            })
            .collect::<Vec<_>>(),
    );
    let read = read(pkg.path(), &Limits::default()).unwrap();
    for n in names {
        assert_eq!(read.file(n).map(|f| f.path.as_str()), Some(n));
    }
    for missing in ["a", "a/b", "b.txt", "dist/x", "app.md"] {
        assert!(read.file(missing).is_none(), "{missing}");
    }
}
