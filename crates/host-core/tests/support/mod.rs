//! Shared helpers for host-core integration tests (`agent`: apps, sessions and a scripted model
//! for the agent tests).
#![allow(dead_code)]

pub mod agent;

use std::path::{Path, PathBuf};

use host_core::foundation::limits::Limits;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::install::inspect::{inspect, InspectOptions, Inspection};
use host_core::install::package::catalog::CatalogSelect;
use host_core::install::package::source::resolve;
use host_core::install::readiness::HostState;
use host_core::install::store::{InstallMode, Store};

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

/// Installs (or updates, by `mode`) a package as `apphost install --yes --sideload` does,
/// consenting to every permission the plan asks for.
pub fn install_with(dir: &DataDir, pkg: &Path, mode: InstallMode) {
    let (store, _) = Store::open_locked(dir).unwrap();
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(Limits::default(), &profile, &[]);
    let source = resolve(pkg, &CatalogSelect::default()).unwrap();
    let staged = store.stage(&source, &opts, &mut |_, _| {}).unwrap();
    let plan = store.plan(&staged, mode, true).unwrap();
    let consent: std::collections::BTreeSet<String> =
        plan.needs_consent().iter().cloned().collect();
    store.commit(staged, &plan, &consent).unwrap();
}

/// A first install of `pkg`.
pub fn install(dir: &DataDir, pkg: &Path) {
    install_with(dir, pkg, InstallMode::Install);
}

/// Copies a folder tree (files and folders only).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// hello-app copied to `<tmp>/pkg-<name>` and renamed `name`, with each `(from, to)` then
/// replaced in its `APP.md`.
pub fn hello_app_as(tmp: &Path, name: &str, app_md_edits: &[(&str, &str)]) -> PathBuf {
    let pkg = tmp.join(format!("pkg-{name}"));
    copy_dir(&fixture("good/hello-app"), &pkg);
    let app_md = pkg.join("APP.md");
    let mut text = std::fs::read_to_string(&app_md)
        .unwrap()
        .replace("hello-app", name);
    for (from, to) in app_md_edits {
        text = text.replace(from, to);
    }
    std::fs::write(&app_md, text).unwrap();
    pkg
}

/// hello-app copied to `<tmp>/pkg` with its storage permission made optional: nothing is
/// granted at install.
pub fn optional_storage_app(tmp: &Path) -> PathBuf {
    let pkg = tmp.join("pkg");
    copy_dir(&fixture("good/hello-app"), &pkg);
    let perms = pkg.join("app.permissions.yaml");
    let text = std::fs::read_to_string(&perms).unwrap();
    std::fs::write(
        &perms,
        text.replacen("required: true", "required: false", 1),
    )
    .unwrap();
    pkg
}
