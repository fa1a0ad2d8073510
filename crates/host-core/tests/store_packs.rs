//! The pack store through the public API: every installed file reads back byte for byte,
//! identical content is stored once, a tampered pack is caught on read, and packs left mostly
//! garbage by an update are compacted without losing anything.

mod support;

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use host_core::foundation::paths::DataDir;
use host_core::install::store::{DataMode, InstallMode, Store};
use host_core::ErrorCode;
use support::{fixture, install_with};

fn packs(dir: &DataDir) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir.packs())
        .map(|rd| rd.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// Every file of `pkg` (a folder), relative paths.
fn files_of(pkg: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![pkg.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(pkg).unwrap().to_str().unwrap().to_owned());
            }
        }
    }
    out.sort();
    out
}

fn assert_reads_back(store: &Store, app: &str, version: &str, pkg: &Path) {
    for rel in files_of(pkg) {
        let got = store
            .read_file(app, version, &rel)
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(
            got,
            std::fs::read(pkg.join(&rel)).unwrap(),
            "{app}@{version}:{rel}"
        );
    }
}

#[test]
fn files_read_back_exactly_and_shared_content_is_stored_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install_with(&dir, &fixture("good/hello-app"), InstallMode::Install);
    let one = packs(&dir);
    assert_eq!(one.len(), 1, "one install, one pack");
    let first_size = std::fs::metadata(&one[0]).unwrap().len();
    assert_eq!(
        first_size, 2243,
        "the pack holds the package's bytes once (6 files, 2243 bytes)"
    );
    assert_eq!(
        std::fs::metadata(&one[0]).unwrap().permissions().mode() & 0o777,
        0o444
    );

    // notes-viewer shares 4 of its 6 files with hello-app: only 2 new blobs are written.
    install_with(&dir, &fixture("good/notes-viewer"), InstallMode::Install);
    let two = packs(&dir);
    assert_eq!(two.len(), 2);
    let second = two.iter().find(|p| **p != one[0]).unwrap();
    let size = |f: &str| {
        std::fs::metadata(fixture("good/notes-viewer").join(f))
            .unwrap()
            .len()
    };
    let shared: u64 = [
        "app.permissions.yaml",
        "dist/ui/index.html",
        "evals/readiness.yaml",
        "storage/migrations/001_init.sql",
    ]
    .iter()
    .map(|f| size(f))
    .sum();
    let total: u64 = files_of(&fixture("good/notes-viewer"))
        .iter()
        .map(|f| size(f))
        .sum();
    assert_eq!(std::fs::metadata(second).unwrap().len(), total - shared);

    let store = Store::open(&dir).unwrap();
    assert_reads_back(&store, "hello-app", "1.0.0", &fixture("good/hello-app"));
    assert_reads_back(
        &store,
        "notes-viewer",
        "1.0.0",
        &fixture("good/notes-viewer"),
    );
    let e = store
        .read_file("hello-app", "1.0.0", "no/such/file")
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::AppNotInstalled);
}

#[test]
fn a_tampered_pack_is_caught_when_a_file_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install_with(&dir, &fixture("good/hello-app"), InstallMode::Install);
    let pack = packs(&dir).remove(0);
    let mut bytes = std::fs::read(&pack).unwrap();
    let html = std::fs::read(fixture("good/hello-app/dist/ui/index.html")).unwrap();
    let at = bytes
        .windows(html.len())
        .position(|w| w == html.as_slice())
        .unwrap();
    bytes[at + 3] ^= 1;
    std::fs::set_permissions(&pack, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(&pack, &bytes).unwrap();
    let store = Store::open(&dir).unwrap();
    let e = store
        .read_file("hello-app", "1.0.0", "dist/ui/index.html")
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::StoreCorrupt);
    // Other files of the same pack still read.
    assert!(store.read_file("hello-app", "1.0.0", "APP.md").is_ok());
}

#[test]
fn updates_compact_packs_that_became_mostly_garbage() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install_with(&dir, &fixture("good/hello-app"), InstallMode::Install);
    install_with(&dir, &fixture("good/hello-app-v2"), InstallMode::Update);
    assert_eq!(packs(&dir).len(), 2);
    // 1.2.0 prunes 1.0.0: the first pack keeps only what 1.1.0 and 1.2.0 still share with it.
    install_with(&dir, &fixture("good/hello-app-v3"), InstallMode::Update);
    let (store, recovered) = Store::open_locked(&dir).unwrap();
    assert!(recovered.is_empty());
    let report = store.verify(None, true, Vec::new()).unwrap();
    assert!(report.ok, "{:?}", report.problems);
    assert_reads_back(&store, "hello-app", "1.1.0", &fixture("good/hello-app-v2"));
    assert_reads_back(&store, "hello-app", "1.2.0", &fixture("good/hello-app-v3"));
    let audit = store.audit_log(None, 50).unwrap();
    assert!(
        audit.iter().any(|a| a["action"] == "compact"),
        "a compaction ran: {audit:#?}"
    );
    // No pack is more than half garbage: the bytes on disk are at most twice the distinct
    // content of the two installed versions.
    let stored: u64 = packs(&dir)
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    let mut distinct = std::collections::BTreeMap::new();
    for v in ["good/hello-app-v2", "good/hello-app-v3"] {
        for rel in files_of(&fixture(v)) {
            let bytes = std::fs::read(fixture(v).join(&rel)).unwrap();
            distinct.insert(
                host_core::foundation::hashing::sha256(&bytes),
                bytes.len() as u64,
            );
        }
    }
    let live: u64 = distinct.values().sum();
    assert_eq!(report.stored_blobs.len(), distinct.len());
    assert!(
        stored <= 2 * live,
        "{stored} bytes of packs for {live} live bytes"
    );

    store
        .uninstall("hello-app", DataMode::DeleteData, None)
        .unwrap();
    assert!(packs(&dir).is_empty(), "{:?}", packs(&dir));
    let report = store.verify(None, true, Vec::new()).unwrap();
    assert!(report.ok && report.stored_blobs.is_empty(), "{report:?}");
}

/// Copies a fixture package and adds files to it.
fn variant(base: &str, dest: &Path, extra: &[(&str, Vec<u8>)]) {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                copy(&e.path(), &to.join(e.file_name()));
            } else {
                std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
            }
        }
    }
    copy(&fixture(base), dest);
    for (name, bytes) in extra {
        std::fs::write(dest.join(name), bytes).unwrap();
    }
}

/// One uninstall leaves two packs mostly garbage: both are compacted in the same run (same
/// process, same second). Each compacted pack gets its own id, and neither replaces the other.
#[test]
fn two_compactions_in_one_run_keep_every_blob() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let noise = |seed: u32| -> Vec<u8> {
        (0..40_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 13) as u8)
            .collect()
    };
    let (a1, a2, b) = (
        tmp.path().join("a1"),
        tmp.path().join("a2"),
        tmp.path().join("b"),
    );
    variant(
        "good/hello-app",
        &a1,
        &[
            ("big1.bin", noise(1)),
            ("common1.txt", b"shared one".to_vec()),
        ],
    );
    variant(
        "good/hello-app-v2",
        &a2,
        &[
            ("big2.bin", noise(2)),
            ("common2.txt", b"shared two".to_vec()),
        ],
    );
    variant(
        "good/notes-viewer",
        &b,
        &[
            ("common1.txt", b"shared one".to_vec()),
            ("common2.txt", b"shared two".to_vec()),
        ],
    );
    install_with(&dir, &a1, InstallMode::Install);
    install_with(&dir, &a2, InstallMode::Update);
    install_with(&dir, &b, InstallMode::Install);
    assert_eq!(packs(&dir).len(), 3);

    let (store, _) = Store::open_locked(&dir).unwrap();
    let outcome = store
        .uninstall("hello-app", DataMode::DeleteData, None)
        .unwrap();
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    let audit = store.audit_log(None, 50).unwrap();
    let into: BTreeSet<String> = audit
        .iter()
        .filter(|a| a["action"] == "compact")
        .map(|a| a["details"]["into"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(into.len(), 2, "two compactions, two new packs: {audit:#?}");
    // notes-viewer's pack and the two compacted ones.
    assert_eq!(packs(&dir).len(), 3, "{:?}", packs(&dir));
    let report = store.verify(None, true, Vec::new()).unwrap();
    assert!(report.ok, "{:?}", report.problems);
    assert_reads_back(&store, "notes-viewer", "1.0.0", &b);
}
