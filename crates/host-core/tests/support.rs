//! Shared helpers for host-core integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use host_core::inspect::{inspect, InspectOptions, Inspection};
use host_core::limits::Limits;
use host_core::package::catalog::CatalogSelect;
use host_core::package::source::resolve;
use host_core::profile::HostProfile;
use host_core::readiness::HostState;

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

pub fn fixture(rel: &str) -> PathBuf {
    repo_root().join("fixtures/packages").join(rel)
}

/// The standards' published schemas: `../shared/standards` beside the repository.
pub fn standards_dir() -> PathBuf {
    repo_root().join("../shared/standards")
}

pub fn now() -> jiff::Timestamp {
    "2026-11-22T00:00:00Z".parse().unwrap()
}

pub fn inspect_path(path: &Path) -> Inspection {
    let profile = HostProfile::current();
    let opts = InspectOptions {
        limits: Limits::default(),
        profile: &profile,
        trusted_keys: &[],
        state: HostState::preview(now()),
    };
    let source = resolve(path, &CatalogSelect::default()).unwrap();
    inspect(&source, &opts, None, &mut |_, _| {}).unwrap()
}

/// Zips `dir` (every file, under a top-level folder named `top` when given).
pub fn zip_dir(dir: &Path, dest: &Path, top: Option<&str>) {
    use std::io::Write;
    let file = std::fs::File::create(dest).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((d, prefix)) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            let rel = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            if e.file_type().unwrap().is_dir() {
                stack.push((e.path(), rel));
            } else {
                let full = match top {
                    Some(t) => format!("{t}/{rel}"),
                    None => rel,
                };
                zip.start_file(full, opts).unwrap();
                zip.write_all(&std::fs::read(e.path()).unwrap()).unwrap();
            }
        }
    }
    zip.finish().unwrap();
}
