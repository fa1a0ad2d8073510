//! Readiness says only what is true: declared services and workflows this host cannot run
//! block what needs them (the app, or only the entry), end to end through install, the
//! stored readiness and the mount check that enforces it.

mod support;

use std::path::{Path, PathBuf};

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::mounting::mount_entry;
use host_core::hosting::bridge::mounts::MountTable;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::install::readiness::{Outcome, Report, Status};
use host_core::install::store::Store;
use host_core::ErrorCode;
use support::{copy_dir, install, repo_root};

/// The notes sample with `extra` added to its frontmatter (top-level keys) and `entries` added
/// to its entries, installed into a fresh data directory.
fn installed(tmp: &Path, entries: &str, extra: &str) -> DataDir {
    let pkg: PathBuf = tmp.join("notes");
    copy_dir(&repo_root().join("fixtures/apps/notes"), &pkg);
    let app_md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&app_md).unwrap();
    let text = text
        .replacen("entries:\n", &format!("entries:\n{entries}"), 1)
        .replacen("storage:\n", &format!("{extra}storage:\n"), 1);
    std::fs::write(&app_md, text).unwrap();
    let dir = DataDir::at(tmp.join("data"));
    install(&dir, &pkg);
    dir
}

fn readiness(dir: &DataDir) -> Report {
    Store::open(dir)
        .unwrap()
        .readiness("notes", &HostProfile::all_available())
        .unwrap()
}

fn mount(dir: &DataDir, entry: &str) -> Result<(), ErrorCode> {
    let store = Store::open(dir).unwrap();
    mount_entry(
        &store,
        &HostProfile::all_available(),
        &mut MountTable::new(),
        &OriginStyle::Scheme,
        "notes",
        entry,
    )
    .map(|_| ())
    .map_err(|e| e.code)
}

fn entry_status(r: &Report, key: &str) -> Status {
    r.entries
        .iter()
        .find(|e| e.entry_key == key)
        .unwrap()
        .status
}

#[test]
fn a_required_service_blocks_the_app_and_its_page_cannot_mount() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = installed(
        tmp.path(),
        "",
        "services:\n  - {key: backend, kind: app-backend, protocol: stdio-jsonrpc, required: true}\n",
    );
    let r = readiness(&dir);
    assert_eq!(r.status, Status::Blocked);
    let c = r.checks.iter().find(|c| c.kind == "service").unwrap();
    assert_eq!(c.code, Some("service.invalid_spec"));
    assert!(
        r.blockers.iter().any(|b| b.contains("backend")),
        "{:?}",
        r.blockers
    );
    assert_eq!(mount(&dir, "notes"), Err(ErrorCode::MountNotReady));
}

#[test]
fn a_valid_workflow_entry_is_no_longer_blocked() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = installed(
        tmp.path(),
        "  - {key: triage, kind: workflow, title: Triage, workflow: triage}\n",
        "workflows:\n  - {key: triage, states: [{key: start, kind: start, next: done}, {key: done, kind: end}]}\nservices:\n  - {key: indexer, kind: worker}\n",
    );
    let r = readiness(&dir);
    // The optional service degrades the whole app; the workflow itself passes (below).
    assert_eq!(entry_status(&r, "triage"), Status::ReadyDegraded);
    assert_eq!(entry_status(&r, "notes"), Status::ReadyDegraded);
    assert_eq!(r.status, Status::ReadyDegraded);
    let wf = r
        .checks
        .iter()
        .find(|c| c.kind == "workflow" && c.entry.as_deref() == Some("triage"))
        .unwrap();
    assert_eq!(wf.code, None);
    assert_eq!(wf.outcome, Outcome::Pass);
    assert_eq!(mount(&dir, "notes"), Ok(()));
}
