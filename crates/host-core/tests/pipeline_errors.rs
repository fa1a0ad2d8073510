//! A package that fails while it is being read (a zip that lies about a size, a corrupt deflate
//! stream) is rejected with its own code by `stage`, with every pipeline thread running, and the
//! data dir is byte-identical afterwards: no staging area, no pack, no row.

mod support;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use host_core::foundation::limits::Limits;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::install::inspect::InspectOptions;
use host_core::install::package::catalog::CatalogSelect;
use host_core::install::package::source::resolve;
use host_core::install::store::Store;
use host_core::ErrorCode;
use sha2::Digest;
use support::fixture;

/// Every file under `root` with the SHA-256 of its bytes (directories as `None`), the store's
/// database excluded: its shared-memory index changes on every read.
fn tree(root: &Path) -> BTreeMap<PathBuf, Option<String>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            if p.is_dir() {
                out.insert(rel, None);
                stack.push(p);
            } else {
                let name = rel.to_string_lossy();
                if !name.starts_with("host.db") {
                    let digest = sha2::Sha256::digest(std::fs::read(&p).unwrap());
                    out.insert(rel, Some(hex::encode(digest)));
                }
            }
        }
    }
    out
}

fn stage_error(pkg: &Path) -> ErrorCode {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let (store, _) = Store::open_locked(&dir).unwrap();
    let before = tree(dir.root());
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(Limits::default(), &profile, &[]);
    let source = resolve(pkg, &CatalogSelect::default()).unwrap();
    let err = match store.stage(&source, &opts, &mut |_, _| {}) {
        Ok(_) => panic!("{} was staged", pkg.display()),
        Err(e) => e,
    };
    let mut after = tree(dir.root());
    // The store keeps its (empty) staging folder once an operation has used it.
    if after.get(Path::new("staging")) == Some(&None) && !before.contains_key(Path::new("staging"))
    {
        after.remove(Path::new("staging"));
    }
    assert!(
        after == before,
        "{}: the data dir changed: {:?} became {:?}",
        pkg.display(),
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    // Nothing about the package reached the database either.
    drop(store);
    let (store, _) = Store::open_locked(&dir).unwrap();
    assert!(store.app_names().unwrap().is_empty());
    err.code
}

#[test]
fn a_zip_lying_about_a_size_is_a_size_mismatch_and_leaves_nothing() {
    for name in [
        "zip-size-header-too-small.zip",
        "zip-size-header-too-large.zip",
    ] {
        let code = stage_error(&fixture(&format!("malicious/{name}")));
        assert_eq!(code, ErrorCode::ArchiveSizeMismatch, "{name}");
    }
}

#[test]
fn a_corrupt_deflate_stream_is_archive_invalid_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let z = tmp.path().join("corrupt.zip");
    let hello = fixture("good/hello-app");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&z).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    // A large first entry (several pipeline chunks), then the real package.
    zip.start_file("aaa/big.js", opts).unwrap();
    // Source-like text (deflates a few times over, far from a zip bomb's ratio).
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..40_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let line = format!("export const v{i} = render({}, {:x});\n", x % 1000, x >> 40);
        zip.write_all(line.as_bytes()).unwrap();
    }
    for e in std::fs::read_dir(&hello).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            zip.start_file(e.file_name().to_str().unwrap(), opts)
                .unwrap();
            zip.write_all(&std::fs::read(e.path()).unwrap()).unwrap();
        }
    }
    zip.finish().unwrap();
    let mut bytes = std::fs::read(&z).unwrap();
    // The first entry's local header is at 0; its data follows the name and extra field.
    let le16 = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize;
    let data = 30 + le16(26) + le16(28);
    // Garble the middle of the compressed stream.
    for b in &mut bytes[data + 1000..data + 1100] {
        *b ^= 0xa5;
    }
    std::fs::write(&z, &bytes).unwrap();
    let code = stage_error(&z);
    assert!(
        matches!(
            code,
            ErrorCode::ArchiveInvalid | ErrorCode::ArchiveSizeMismatch
        ),
        "{code:?}"
    );
}
