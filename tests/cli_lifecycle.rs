//! The app lifecycle end to end through the real `apphost` binary: install, list, update,
//! rollback, disable/enable, cleanup plans, uninstall (keep / delete / export data), signatures
//! and trust, catalogs, and command-line errors. Outputs are read with `--json`; exit codes are
//! those of `ErrorClass::exit_code` (docs/cli.md). Every test uses its own data directories.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{copy_dir, files_under, zip_contents};
use serde_json::{json, Value};
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_apphost");

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/packages/good")
        .join(name)
}

fn fx(name: &str) -> String {
    fixture(name).to_str().unwrap().to_owned()
}

fn describe(out: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The `{"error": {...}}` line `--json` prints on stderr.
fn error_json(out: &Output) -> Value {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("{\"error\""))
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| v["error"].clone())
        .unwrap_or_else(|| panic!("no error JSON on stderr: {}", describe(out)))
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

/// One data directory (and a scratch folder beside it) and the commands run against it.
struct Host {
    tmp: TempDir,
    data: PathBuf,
}

impl Host {
    fn new() -> Host {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        Host { tmp, data }
    }

    /// A scratch path outside the data directory.
    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .arg("--json")
            .arg("--data-dir")
            .arg(&self.data)
            .args(args)
            .env_remove("APPHOST_CRASH_AT")
            .env_remove("APPHOST_DATA_DIR")
            .stdin(Stdio::null())
            .output()
            .expect("run apphost")
    }

    /// Runs a command that must succeed; returns its JSON output.
    fn ok(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "apphost {args:?}: {}",
            describe(&out)
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("apphost {args:?}: bad JSON ({e}): {}", describe(&out)))
    }

    /// Runs a command that must fail with `code` and `exit`; returns the error object.
    fn fails(&self, args: &[&str], code: &str, exit: i32) -> Value {
        let out = self.run(args);
        let err = error_json(&out);
        assert_eq!(err["code"], code, "apphost {args:?}: {}", describe(&out));
        assert_eq!(
            out.status.code(),
            Some(exit),
            "apphost {args:?}: {}",
            describe(&out)
        );
        assert!(
            out.stdout.is_empty(),
            "apphost {args:?} printed on stdout: {}",
            describe(&out)
        );
        err
    }

    fn install(&self, pkg: &str) -> Value {
        self.ok(&["install", pkg, "--yes", "--sideload"])
    }

    fn list(&self) -> Vec<Value> {
        self.ok(&["list"])
            .as_array()
            .expect("list prints an array")
            .clone()
    }

    fn app(&self, name: &str) -> Value {
        self.list()
            .into_iter()
            .find(|a| a["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not listed"))
    }

    fn names(&self) -> Vec<String> {
        self.list()
            .iter()
            .map(|a| a["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// `verify` must be clean; returns its report.
    fn verify_clean(&self, app: Option<&str>) -> Value {
        let mut args = vec!["verify"];
        args.extend(app);
        let v = self.ok(&args);
        assert_eq!(v["ok"], true, "verify: {v:#}");
        assert_eq!(v["problems"], json!([]), "verify: {v:#}");
        v
    }

    /// The blobs the store holds (as a clean `verify` reports them: no orphans on disk).
    fn blobs(&self) -> BTreeSet<String> {
        let v = self.verify_clean(None);
        v["storedBlobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b.as_str().unwrap().to_owned())
            .collect()
    }

    /// Pack files on disk.
    fn pack_files(&self) -> BTreeSet<String> {
        files_under(&self.data.join("packs")).into_keys().collect()
    }

    fn app_data_dir(&self, app: &str) -> PathBuf {
        self.data.join("apps").join(app)
    }

    /// Files an app might have written into its data directory.
    fn write_app_data(&self, app: &str) -> BTreeMap<String, Vec<u8>> {
        let dir = self.app_data_dir(app);
        fs::create_dir_all(dir.join("attachments")).unwrap();
        fs::write(
            dir.join("notes.db"),
            b"SQLite format 3\0 pretend".repeat(100),
        )
        .unwrap();
        fs::write(dir.join("settings.json"), br#"{"theme":"dark"}"#).unwrap();
        fs::write(
            dir.join("attachments/photo.bin"),
            (0..=255u8).collect::<Vec<_>>(),
        )
        .unwrap();
        files_under(&dir)
    }
}

/// A copy of a fixture in `dir`, with `edit` applied.
fn variant(dir: &Path, from: &str, edit: impl FnOnce(&Path)) -> String {
    copy_dir(&fixture(from), dir);
    edit(dir);
    dir.to_str().unwrap().to_owned()
}

fn set_version(pkg: &Path, version: &str) {
    let app_md = pkg.join("APP.md");
    let text = fs::read_to_string(&app_md).unwrap();
    let line = text.lines().find(|l| l.starts_with("version: ")).unwrap();
    fs::write(
        &app_md,
        text.replacen(line, &format!("version: {version}"), 1),
    )
    .unwrap();
}

fn append(path: &Path, text: &str) {
    let mut s = fs::read_to_string(path).unwrap();
    s.push_str(text);
    fs::write(path, s).unwrap();
}

fn permission<'a>(plan: &'a Value, key: &str) -> &'a Value {
    plan["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["key"] == key)
        .unwrap_or_else(|| panic!("no permission {key} in {plan:#}"))
}

#[test]
fn install_lists_the_app_and_refuses_duplicates_and_missing_consent() {
    let h = Host::new();
    let out = h.install(&fx("hello-app"));
    assert_eq!(out["app"]["name"], "hello-app");
    assert_eq!(out["app"]["activeVersion"], "1.0.0");
    assert_eq!(out["plan"]["mode"], "install");
    assert_eq!(strs(&out["plan"]["needsConsent"]), ["notes_storage"]);
    assert_eq!(out["plan"]["existingData"], false);

    let list = h.list();
    assert_eq!(list.len(), 1, "{list:#?}");
    let a = &list[0];
    assert_eq!(a["name"], "hello-app");
    assert_eq!(a["activeVersion"], "1.0.0");
    assert_eq!(a["previousVersion"], Value::Null);
    assert_eq!(strs(&a["versions"]), ["1.0.0"]);
    assert_eq!(a["enabled"], true);
    assert_eq!(a["trust"], "unsigned");
    assert_eq!(a["sideloaded"], true);

    let err = h.fails(
        &["install", &fx("hello-app"), "--yes", "--sideload"],
        "install.already_installed",
        6,
    );
    assert_eq!(err["details"]["installedVersion"], "1.0.0");
    assert_eq!(h.list(), list, "a refused install changed the list");

    // Without --yes and without a terminal: refused, and nothing is installed.
    let fresh = Host::new();
    let err = fresh.fails(
        &["install", &fx("hello-app"), "--sideload"],
        "install.consent_required",
        5,
    );
    assert_eq!(
        err["details"]["plan"]["app"], "hello-app",
        "the plan is in the error"
    );
    assert_eq!(fresh.list(), Vec::<Value>::new());
    assert!(fresh.blobs().is_empty(), "blobs left: {:?}", fresh.blobs());
    let v = fresh.verify_clean(None);
    assert_eq!(v["apps"], 0);
    assert_eq!(fs::read_dir(fresh.data.join("staging")).unwrap().count(), 0);
}

#[test]
fn update_shows_the_permission_diff_and_enforces_versions() {
    let h = Host::new();
    h.install(&fx("hello-app"));

    // Without consent: the plan with the permission diff, and nothing changes.
    let err = h.fails(
        &["update", &fx("hello-app-v2"), "--sideload"],
        "install.consent_required",
        5,
    );
    let plan = &err["details"]["plan"];
    assert_eq!(plan["mode"], "update");
    assert_eq!(plan["fromVersion"], "1.0.0");
    assert_eq!(plan["version"], "1.1.0");
    assert_eq!(permission(plan, "notes_files")["change"], "added");
    assert_eq!(permission(plan, "notes_files")["required"], true);
    assert_eq!(permission(plan, "notes_storage")["change"], "unchanged");
    assert_eq!(permission(plan, "sync_notes")["change"], "unchanged");
    assert_eq!(strs(&plan["needsConsent"]), ["notes_files"]);
    assert_eq!(h.app("hello-app")["activeVersion"], "1.0.0");

    let out = h.ok(&["update", &fx("hello-app-v2"), "--yes", "--sideload"]);
    assert_eq!(out["plan"], *plan, "the plan consented to is the one shown");
    assert_eq!(out["app"]["activeVersion"], "1.1.0");
    let a = h.app("hello-app");
    assert_eq!(a["activeVersion"], "1.1.0");
    assert_eq!(a["previousVersion"], "1.0.0");
    assert_eq!(strs(&a["versions"]), ["1.0.0", "1.1.0"]);
    let list = h.list();

    h.fails(
        &["update", &fx("hello-app-v2"), "--yes", "--sideload"],
        "install.already_installed",
        6,
    );
    h.fails(
        &["update", &fx("hello-app"), "--yes", "--sideload"],
        "install.already_installed",
        6,
    );
    // Different contents under the same version number.
    let other = variant(&h.path("other-1.1.0"), "hello-app-v2", |p| {
        append(&p.join("dist/ui/index.html"), "<!-- rebuilt -->\n")
    });
    let err = h.fails(
        &["update", &other, "--yes", "--sideload"],
        "install.version_conflict",
        6,
    );
    assert_ne!(
        err["details"]["installedPackageHash"],
        err["details"]["newPackageHash"]
    );
    let older = variant(&h.path("older"), "hello-app", |p| set_version(p, "0.9.0"));
    h.fails(
        &["update", &older, "--yes", "--sideload"],
        "install.not_newer",
        6,
    );
    let nv = fx("notes-viewer");
    h.fails(
        &["update", &nv, "--yes", "--sideload"],
        "app.not_installed",
        7,
    );

    assert_eq!(h.list(), list, "a refused update changed the list");
    h.verify_clean(None);
}

#[test]
fn rollback_switches_between_the_two_versions() {
    let h = Host::new();
    h.install(&fx("hello-app"));
    h.ok(&["update", &fx("hello-app-v2"), "--yes", "--sideload"]);

    let out = h.ok(&["rollback", "hello-app"]);
    assert_eq!(out["activeVersion"], "1.0.0");
    assert_eq!(out["previousVersion"], "1.1.0");
    let a = h.app("hello-app");
    assert_eq!(a["activeVersion"], "1.0.0");
    assert_eq!(a["previousVersion"], "1.1.0");
    assert_eq!(strs(&a["versions"]), ["1.0.0", "1.1.0"]);

    let out = h.ok(&["rollback", "hello-app"]);
    assert_eq!(out["activeVersion"], "1.1.0");
    assert_eq!(out["previousVersion"], "1.0.0");
    let a = h.app("hello-app");
    assert_eq!(a["activeVersion"], "1.1.0");
    assert_eq!(a["previousVersion"], "1.0.0");

    h.install(&fx("notes-viewer"));
    let err = h.fails(&["rollback", "notes-viewer"], "app.no_rollback_target", 6);
    assert_eq!(err["details"]["app"], "notes-viewer");
    assert_eq!(h.app("notes-viewer")["activeVersion"], "1.0.0");
    h.verify_clean(None);
}

#[test]
fn disable_and_enable() {
    let h = Host::new();
    h.install(&fx("hello-app"));
    let readiness = h.app("hello-app")["readiness"].clone();
    assert_ne!(readiness, "disabled");

    let out = h.ok(&["disable", "hello-app"]);
    assert_eq!(out["enabled"], false);
    let a = h.app("hello-app");
    assert_eq!(a["enabled"], false);
    assert_eq!(a["readiness"], "disabled");

    let out = h.ok(&["enable", "hello-app"]);
    assert_eq!(out["enabled"], true);
    let a = h.app("hello-app");
    assert_eq!(a["enabled"], true);
    assert_eq!(a["readiness"], readiness);
}

/// The blobs of a cleanup plan: `version:path` → blob id.
fn planned_blobs(plan: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for b in plan["blobsRemoved"].as_array().unwrap() {
        let blob = b["blob"].as_str().unwrap().to_owned();
        assert!(!b["paths"].as_array().unwrap().is_empty(), "{b}");
        for p in strs(&b["paths"]) {
            assert!(
                out.insert(p, blob.clone()).is_none(),
                "path listed twice: {plan:#}"
            );
        }
    }
    out
}

fn rows(plan: &Value) -> BTreeMap<String, i64> {
    plan["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["table"].as_str().unwrap().to_owned(),
                r["rows"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn data_file_paths(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn cleanup_plan_lists_everything_and_shared_blobs_survive_uninstall() {
    let h = Host::new();
    h.install(&fx("hello-app"));
    h.install(&fx("notes-viewer"));
    let data = h.write_app_data("hello-app");
    let data_paths: Vec<String> = data.keys().cloned().collect();
    let list = h.list();
    let blobs_before = h.blobs();
    assert_eq!(
        blobs_before.len(),
        8,
        "6 + 6 package files, 4 of them identical"
    );

    let keep = h.ok(&["cleanup-plan", "hello-app"]);
    assert_eq!(keep["app"], "hello-app");
    assert_eq!(keep["mode"], "keep-data");
    assert_eq!(strs(&keep["versions"]), ["1.0.0"]);
    let expected_rows: BTreeMap<String, i64> = [
        ("apps", 1),
        ("app_versions", 1),
        ("version_files", 6),
        ("grants", 1),
    ]
    .into_iter()
    .map(|(t, n)| (t.to_owned(), n))
    .collect();
    assert_eq!(rows(&keep), expected_rows);
    // Only the files hello-app does not share with notes-viewer go.
    let removed = planned_blobs(&keep);
    assert_eq!(
        removed.keys().collect::<Vec<_>>(),
        ["1.0.0:APP.md", "1.0.0:storage/schema.json"]
    );
    assert_eq!(keep["blobsShared"], 4);
    for b in keep["blobsRemoved"].as_array().unwrap() {
        assert!(blobs_before.contains(b["blob"].as_str().unwrap()), "{b}");
    }
    // hello-app's pack also holds the files notes-viewer shares: it stays.
    assert_eq!(keep["packFilesRemoved"], json!([]));
    let bytes: u64 = keep["blobsRemoved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["size"].as_u64().unwrap())
        .sum();
    assert_eq!(keep["blobBytesRemoved"], bytes);
    assert_eq!(
        keep["dataDir"],
        h.app_data_dir("hello-app").to_str().unwrap()
    );
    assert_eq!(keep["dataFilesRemoved"], json!([]));
    assert_eq!(data_file_paths(&keep["dataFilesKept"]), data_paths);

    let delete = h.ok(&["cleanup-plan", "hello-app", "--delete-data"]);
    assert_eq!(delete["mode"], "delete-data");
    let mut delete_rows = expected_rows.clone();
    delete_rows.insert("publishers".to_owned(), 1);
    assert_eq!(rows(&delete), delete_rows);
    assert_eq!(planned_blobs(&delete), removed);
    assert_eq!(delete["dataFilesKept"], json!([]));
    assert_eq!(data_file_paths(&delete["dataFilesRemoved"]), data_paths);
    for f in delete["dataFilesRemoved"].as_array().unwrap() {
        let content = &data[f["path"].as_str().unwrap()];
        assert_eq!(f["size"], content.len() as u64, "{f}");
    }

    let viewer = h.ok(&["cleanup-plan", "notes-viewer"]);
    assert_eq!(
        planned_blobs(&viewer).keys().collect::<Vec<_>>(),
        ["1.0.0:APP.md", "1.0.0:storage/schema.json"]
    );
    assert_eq!(viewer["blobsShared"], 4);

    // Planning changes nothing.
    assert_eq!(h.list(), list);
    assert_eq!(h.blobs(), blobs_before);
    assert_eq!(files_under(&h.app_data_dir("hello-app")), data);

    let out = h.ok(&["uninstall", "hello-app", "--delete-data", "--yes"]);
    assert_eq!(planned_blobs(&out["plan"]), removed);
    assert_eq!(h.names(), ["notes-viewer"]);
    let removed_ids: BTreeSet<String> = removed.values().cloned().collect();
    let expected: BTreeSet<String> = blobs_before.difference(&removed_ids).cloned().collect();
    assert_eq!(
        h.blobs(),
        expected,
        "exactly the unshared blobs were removed"
    );
    assert!(!h.app_data_dir("hello-app").exists());
    let v = h.verify_clean(Some("notes-viewer"));
    assert_eq!(v["blobs"], 6);
    h.verify_clean(None);
}

/// Files named like interrupted writes in `dir` (not recursive).
fn partials(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".partial") || n.starts_with("tmp-"))
        .collect()
}

#[test]
fn uninstall_keeps_deletes_or_exports_the_data() {
    let h = Host::new();
    h.install(&fx("hello-app"));
    let data = h.write_app_data("hello-app");

    // Without another app every package file goes, each listed with its path.
    let plan = h.ok(&["cleanup-plan", "hello-app"]);
    assert_eq!(
        planned_blobs(&plan).keys().collect::<Vec<_>>(),
        [
            "1.0.0:APP.md",
            "1.0.0:app.permissions.yaml",
            "1.0.0:dist/ui/index.html",
            "1.0.0:evals/readiness.yaml",
            "1.0.0:storage/migrations/001_init.sql",
            "1.0.0:storage/schema.json",
        ]
    );
    assert_eq!(plan["blobsShared"], 0);
    let packs_before = h.pack_files();
    assert_eq!(packs_before.len(), 1, "one install writes one pack");
    let planned_packs: BTreeSet<String> = plan["packFilesRemoved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            Path::new(p["file"].as_str().unwrap())
                .strip_prefix(h.data.join("packs"))
                .unwrap()
                .to_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        planned_packs, packs_before,
        "the plan names the pack file it deletes"
    );

    // No --yes and no terminal: nothing is removed.
    let err = h.fails(
        &["uninstall", "hello-app", "--keep-data"],
        "install.consent_required",
        5,
    );
    assert_eq!(err["details"]["plan"]["app"], "hello-app");
    assert_eq!(h.names(), ["hello-app"]);

    let out = h.ok(&["uninstall", "hello-app", "--keep-data", "--yes"]);
    assert_eq!(out["plan"]["mode"], "keep-data");
    assert_eq!(h.list(), Vec::<Value>::new());
    assert!(h.blobs().is_empty(), "{:?}", h.blobs());
    assert!(h.pack_files().is_empty(), "{:?}", h.pack_files());
    assert_eq!(files_under(&h.app_data_dir("hello-app")), data, "data kept");
    h.verify_clean(None);

    let out = h.install(&fx("hello-app"));
    assert_eq!(out["plan"]["existingData"], true);
    assert_eq!(files_under(&h.app_data_dir("hello-app")), data);

    h.ok(&["uninstall", "hello-app", "--delete-data", "--yes"]);
    assert_eq!(h.list(), Vec::<Value>::new());
    assert!(!h.app_data_dir("hello-app").exists(), "data deleted");
    h.verify_clean(None);

    let out = h.install(&fx("hello-app"));
    assert_eq!(out["plan"]["existingData"], false);
    let data = h.write_app_data("hello-app");

    // Exporting onto an existing file fails and removes nothing.
    let exports = h.path("exports");
    fs::create_dir_all(&exports).unwrap();
    let taken = exports.join("taken.zip");
    fs::write(&taken, b"someone else's file").unwrap();
    let err = h.fails(
        &[
            "uninstall",
            "hello-app",
            "--export",
            taken.to_str().unwrap(),
            "--yes",
        ],
        "export.failed",
        10,
    );
    assert_eq!(err["details"]["path"], taken.to_str().unwrap());
    assert_eq!(fs::read(&taken).unwrap(), b"someone else's file");
    assert_eq!(h.names(), ["hello-app"]);
    assert_eq!(files_under(&h.app_data_dir("hello-app")), data);
    assert!(partials(&exports).is_empty(), "{:?}", partials(&exports));
    h.verify_clean(None);

    let zip = exports.join("hello-app-data.zip");
    let out = h.ok(&[
        "uninstall",
        "hello-app",
        "--export",
        zip.to_str().unwrap(),
        "--yes",
    ]);
    assert_eq!(out["exportedTo"], zip.to_str().unwrap());
    assert_eq!(out["plan"]["mode"], "export-then-delete");
    let expected: BTreeMap<String, Vec<u8>> = data
        .iter()
        .map(|(p, c)| (format!("hello-app/{p}"), c.clone()))
        .collect();
    assert_eq!(zip_contents(&zip), expected);
    assert!(
        !h.app_data_dir("hello-app").exists(),
        "data deleted after the export"
    );
    assert_eq!(h.list(), Vec::<Value>::new());
    assert!(partials(&exports).is_empty(), "{:?}", partials(&exports));
    h.verify_clean(None);
}

#[test]
fn export_writes_the_uninstall_archive_and_changes_nothing() {
    let h = Host::new();
    h.install(&fx("hello-app"));
    let data = h.write_app_data("hello-app");
    let exports = h.path("exports");
    fs::create_dir_all(&exports).unwrap();
    let state = |h: &Host| {
        (
            h.list(),
            h.blobs(),
            h.pack_files(),
            files_under(&h.app_data_dir("hello-app")),
            h.ok(&["audit", "--limit", "1000"]),
        )
    };
    let before = state(&h);

    // An unknown app: refused with a stable code, no file written.
    let nope = exports.join("nope.zip");
    h.fails(
        &["export", "nope", "--out", nope.to_str().unwrap()],
        "app.not_installed",
        7,
    );
    h.fails(
        &["export", "../hello-app", "--out", nope.to_str().unwrap()],
        "app.not_installed",
        7,
    );
    assert!(!nope.exists());
    // An existing file is never replaced.
    let taken = exports.join("taken.zip");
    fs::write(&taken, b"someone else's file").unwrap();
    let err = h.fails(
        &["export", "hello-app", "--out", taken.to_str().unwrap()],
        "export.failed",
        10,
    );
    assert_eq!(err["details"]["path"], taken.to_str().unwrap());
    assert_eq!(fs::read(&taken).unwrap(), b"someone else's file");

    let zip = exports.join("hello-app-data.zip");
    let out = h.ok(&["export", "hello-app", "--out", zip.to_str().unwrap()]);
    assert_eq!(out["exportedTo"], zip.to_str().unwrap());
    assert_eq!(out["files"], data.len());
    let expected: BTreeMap<String, Vec<u8>> = data
        .iter()
        .map(|(p, c)| (format!("hello-app/{p}"), c.clone()))
        .collect();
    assert_eq!(zip_contents(&zip), expected);
    assert!(partials(&exports).is_empty(), "{:?}", partials(&exports));
    assert_eq!(state(&h), before, "export changes nothing");
    h.verify_clean(None);

    // The same archive as uninstall's export-then-delete writes.
    let at_uninstall = exports.join("at-uninstall.zip");
    h.ok(&[
        "uninstall",
        "hello-app",
        "--export",
        at_uninstall.to_str().unwrap(),
        "--yes",
    ]);
    assert_eq!(zip_contents(&at_uninstall), zip_contents(&zip));
    // Uninstalled: nothing left to export.
    h.fails(
        &["export", "hello-app", "--out", nope.to_str().unwrap()],
        "app.not_installed",
        7,
    );
}

#[test]
fn signatures_and_trusted_keys() {
    let h = Host::new();
    let key = h.path("k.json");
    let out = h.ok(&["keygen", "--out", key.to_str().unwrap()]);
    let key_id = out["keyId"].as_str().unwrap().to_owned();
    let public = h.path("k.pub.json");
    assert_eq!(out["publicKeyFile"], public.to_str().unwrap());
    assert!(public.exists());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o600
    );

    let pkg = h.path("signed-hello-app");
    copy_dir(&fixture("hello-app"), &pkg);
    let pkg_s = pkg.to_str().unwrap();
    let out = h.ok(&["sign", pkg_s, "--key", key.to_str().unwrap()]);
    assert_eq!(out["keyId"], key_id);
    assert!(pkg.join("app.signature.yaml").exists() && pkg.join("app.lock.json").exists());

    // Signed by a key this host does not trust: only in sideload mode.
    let err = h.fails(&["install", pkg_s, "--yes"], "verify.untrusted_key", 4);
    assert_eq!(err["details"]["keyId"], key_id);
    assert_eq!(h.list(), Vec::<Value>::new());
    let other = Host::new();
    let out = other.ok(&["install", pkg_s, "--yes", "--sideload"]);
    assert_eq!(out["app"]["trust"], "unknown-key");
    assert_eq!(out["app"]["sideloaded"], true);
    // Unsigned: only in sideload mode.
    other.fails(
        &["install", &fx("notes-viewer"), "--yes"],
        "verify.unsigned",
        4,
    );

    let out = h.ok(&["trust", "add", public.to_str().unwrap()]);
    assert_eq!(out["keyId"], key_id);
    let keys = h.ok(&["trust", "list"]);
    assert_eq!(keys.as_array().unwrap().len(), 1);
    assert_eq!(keys[0]["keyId"], key_id);

    let out = h.ok(&["install", pkg_s, "--yes"]);
    assert_eq!(out["app"]["trust"], "trusted");
    assert_eq!(out["app"]["sideloaded"], false);
    let a = h.app("hello-app");
    assert_eq!(a["trust"], "trusted");
    assert_eq!(a["sideloaded"], false);

    // Tampering with a signed package is refused even with --sideload and a trusted key.
    // One changed file no longer matches app.lock.json (checked before the signature)…
    let tampered = h.path("tampered");
    copy_dir(&pkg, &tampered);
    append(
        &tampered.join("dist/ui/index.html"),
        "<script>steal()</script>\n",
    );
    let t = tampered.to_str().unwrap();
    let err = other.fails(
        &["install", t, "--yes", "--sideload"],
        "verify.lock_mismatch",
        4,
    );
    assert_eq!(strs(&err["details"]["changed"]), ["dist/ui/index.html"]);
    // …and with the lock rewritten to match, the signature no longer does.
    other.ok(&["lock", t]);
    other.fails(
        &["install", t, "--yes", "--sideload"],
        "verify.signature_invalid",
        4,
    );
    h.fails(
        &["install", t, "--yes", "--sideload"],
        "verify.signature_invalid",
        4,
    );
    // An edited APP.md (lock rewritten too): the signature covers the manifest.
    let forged = h.path("forged");
    copy_dir(&pkg, &forged);
    append(&forged.join("APP.md"), "\nInstall me.\n");
    let f = forged.to_str().unwrap();
    other.ok(&["lock", f]);
    let err = other.fails(
        &["install", f, "--yes", "--sideload"],
        "verify.signature_invalid",
        4,
    );
    assert!(
        err["message"].as_str().unwrap().contains("manifestHash"),
        "{err}"
    );

    assert_eq!(h.list().len(), 1);
    assert_eq!(h.app("hello-app")["trust"], "trusted");
    assert_eq!(other.names(), ["hello-app"]);
    assert_eq!(other.app("hello-app")["trust"], "unknown-key");
    h.verify_clean(None);
    other.verify_clean(None);
}

#[test]
fn catalog_picks_a_release() {
    let h = Host::new();
    let hash = |pkg: &str| -> String {
        let v = h.ok(&["validate", &fx(pkg)]);
        assert_eq!(v["ok"], true, "{v:#}");
        v["packageHash"].as_str().unwrap().to_owned()
    };
    let releases = json!({"releases": [
        {"appId": "hello-app", "version": "1.0.0", "packageUrl": fx("hello-app"),
         "packageHash": hash("hello-app")},
        {"appId": "hello-app", "version": "1.1.0", "packageUrl": fx("hello-app-v2"),
         "packageHash": hash("hello-app-v2")},
    ]});
    let catalog = h.path("catalog.json");
    fs::write(&catalog, serde_json::to_vec_pretty(&releases).unwrap()).unwrap();
    let c = catalog.to_str().unwrap();

    let out = h.ok(&["install", c, "--yes", "--sideload"]);
    assert_eq!(out["app"]["activeVersion"], "1.1.0");
    assert_eq!(h.app("hello-app")["activeVersion"], "1.1.0");

    let pinned = Host::new();
    let out = pinned.ok(&["install", c, "--release", "1.0.0", "--yes", "--sideload"]);
    assert_eq!(out["app"]["activeVersion"], "1.0.0");
    assert_eq!(strs(&pinned.app("hello-app")["versions"]), ["1.0.0"]);

    let none = Host::new();
    none.fails(
        &["install", c, "--app", "nope", "--yes", "--sideload"],
        "catalog.release_not_found",
        7,
    );
    none.fails(
        &["install", c, "--release", "9.9.9", "--yes", "--sideload"],
        "catalog.release_not_found",
        7,
    );
    // The catalog pins the package: a package that does not match its hash is refused.
    let wrong = json!([{"appId": "hello-app", "version": "1.0.0", "packageUrl": fx("hello-app"),
                        "packageHash": hash("hello-app-v2")}]);
    let wrong_path = h.path("wrong.json");
    fs::write(&wrong_path, serde_json::to_vec(&wrong).unwrap()).unwrap();
    none.fails(
        &[
            "install",
            wrong_path.to_str().unwrap(),
            "--yes",
            "--sideload",
        ],
        "verify.package_hash_mismatch",
        4,
    );
    assert_eq!(none.list(), Vec::<Value>::new());
}

#[test]
fn usage_errors_and_an_empty_store() {
    let h = Host::new();
    assert_eq!(h.ok(&["list"]), json!([]));
    h.fails(&["rollback", "nope"], "app.not_installed", 7);
    // `open <app>` checks the app before starting the window.
    h.fails(&["open", "nope"], "app.not_installed", 7);
    h.fails(
        &["open", "nope", "--entry", "notes"],
        "app.not_installed",
        7,
    );
    h.fails(&["open", "--entry", "notes"], "cli.usage", 2);

    let err = h.fails(&["uninstall", "x"], "cli.usage", 2);
    assert!(
        err["message"].as_str().unwrap().contains("--keep-data"),
        "{err}"
    );
    h.fails(&["frobnicate"], "cli.usage", 2);
    h.fails(
        &["uninstall", "x", "--keep-data", "--delete-data"],
        "cli.usage",
        2,
    );

    // Without --json the usage error is clap's text, still exit 2.
    let out = Command::new(BIN)
        .arg("--data-dir")
        .arg(&h.data)
        .args(["uninstall", "x"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Usage:") && !stderr.contains("\"error\""),
        "{stderr}"
    );
}

/// A signing key made with `apphost keygen`: (secret key file, public key file, keyId, publicKey).
fn keygen(h: &Host, name: &str) -> (String, String, String, String) {
    let secret = h.path(&format!("{name}.json"));
    let out = h.ok(&["keygen", "--out", secret.to_str().unwrap(), "--name", name]);
    (
        secret.to_str().unwrap().to_owned(),
        out["publicKeyFile"].as_str().unwrap().to_owned(),
        out["keyId"].as_str().unwrap().to_owned(),
        out["publicKey"].as_str().unwrap().to_owned(),
    )
}

/// A copy of a fixture in scratch folder `dir`, signed with the secret key file `key`.
fn signed(h: &Host, dir: &str, from: &str, key: &str) -> String {
    let pkg = variant(&h.path(dir), from, |_| {});
    h.ok(&["sign", &pkg, "--key", key]);
    pkg
}

/// Runs without `--json` (the text a person reads); returns (exit code, stdout + stderr).
fn run_text(h: &Host, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(BIN)
        .arg("--data-dir")
        .arg(&h.data)
        .args(args)
        .env_remove("APPHOST_DATA_DIR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn audit_actions(h: &Host, app: &str) -> Vec<String> {
    h.ok(&["audit", app])
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_owned())
        .collect()
}

/// The reproduced hole: an update signed by another trusted key was accepted without a word.
#[test]
fn an_update_signed_by_another_trusted_key_is_refused_unless_the_new_publisher_is_accepted() {
    let h = Host::new();
    let (k1, k1_pub, k1_id, k1_pk) = keygen(&h, "Acme");
    let (k2, k2_pub, k2_id, k2_pk) = keygen(&h, "Other");
    h.ok(&["trust", "add", &k1_pub]);
    h.ok(&["trust", "add", &k2_pub]);
    let v1 = signed(&h, "v1", "hello-app", &k1);
    let out = h.ok(&["install", &v1, "--yes"]);
    assert_eq!(out["plan"]["publisher"]["status"], "new");
    assert_eq!(out["plan"]["publisher"]["new"]["publicKey"], k1_pk);
    let v2 = signed(&h, "v2", "hello-app-v2", &k2);
    let list = h.list();
    let audit = h.ok(&["audit"]);

    for extra in [&[][..], &["--sideload"][..]] {
        let mut args = vec!["update", v2.as_str(), "--yes"];
        args.extend(extra);
        let err = h.fails(&args, "install.publisher_changed", 6);
        let p = &err["details"]["publisher"];
        assert_eq!(p["status"], "changed");
        assert_eq!(p["accepted"], false);
        assert_eq!(p["old"]["keyId"], k1_id);
        assert_eq!(p["old"]["publicKey"], k1_pk);
        assert_eq!(p["old"]["name"], "Acme");
        assert_eq!(p["new"]["keyId"], k2_id);
        assert_eq!(p["new"]["publicKey"], k2_pk);
        assert!(
            err["message"]
                .as_str()
                .unwrap()
                .contains("--accept-new-publisher"),
            "{err}"
        );
    }
    assert_eq!(h.list(), list, "a refused update changed the list");
    assert_eq!(h.ok(&["audit"]), audit, "a refused update was audited");

    // A person sees both signers, old and new, before being asked.
    let (code, text) = run_text(&h, &["update", &v2, "--accept-new-publisher"]);
    assert_eq!(code, Some(5), "{text}");
    assert!(text.contains("publisher changed"), "{text}");
    for s in [&k1_id, &k1_pk, &k2_id, &k2_pk] {
        assert!(text.contains(s.as_str()), "{s} not shown:\n{text}");
    }

    let out = h.ok(&["update", &v2, "--yes", "--accept-new-publisher"]);
    assert_eq!(out["plan"]["publisher"]["status"], "changed");
    assert_eq!(out["plan"]["publisher"]["accepted"], true);
    assert_eq!(h.app("hello-app")["activeVersion"], "1.1.0");
    let actions = audit_actions(&h, "hello-app");
    assert_eq!(actions[..2], ["update", "publisher.change"]);
    let entry = &h.ok(&["audit", "hello-app"])[1];
    assert_eq!(entry["details"]["old"]["publicKey"], k1_pk);
    assert_eq!(entry["details"]["new"]["publicKey"], k2_pk);
    // From now on the new key is the publisher.
    let v3 = variant(&h.path("v3"), "hello-app-v2", |p| set_version(p, "1.2.0"));
    h.ok(&["sign", &v3, "--key", &k2]);
    let out = h.ok(&["update", &v3, "--yes"]);
    assert_eq!(out["plan"]["publisher"]["status"], "same");
    h.verify_clean(None);
}

/// The reproduced hole: an unsigned `--sideload` update over a signed app was accepted.
#[test]
fn an_unsigned_update_over_a_signed_app_is_refused_even_with_sideload() {
    let h = Host::new();
    let (k1, k1_pub, _, k1_pk) = keygen(&h, "Acme");
    h.ok(&["trust", "add", &k1_pub]);
    h.ok(&["install", &signed(&h, "v1", "hello-app", &k1), "--yes"]);
    let list = h.list();
    let err = h.fails(
        &["update", &fx("hello-app-v2"), "--yes", "--sideload"],
        "install.publisher_changed",
        6,
    );
    let p = &err["details"]["publisher"];
    assert_eq!(p["old"]["publicKey"], k1_pk);
    assert_eq!(p["new"]["keyId"], Value::Null);
    assert_eq!(p["new"]["publicKey"], Value::Null);
    assert_eq!(h.list(), list);
    // The flag does not replace --sideload: an unsigned package still needs it.
    h.fails(
        &[
            "update",
            &fx("hello-app-v2"),
            "--yes",
            "--accept-new-publisher",
        ],
        "verify.unsigned",
        4,
    );
    let out = h.ok(&[
        "update",
        &fx("hello-app-v2"),
        "--yes",
        "--sideload",
        "--accept-new-publisher",
    ]);
    assert_eq!(out["app"]["trust"], "unsigned");
    assert_eq!(out["app"]["sideloaded"], true);
    // Unsigned to signed is not a change of publisher (there was none to keep): it is shown.
    let v3 = variant(&h.path("v3"), "hello-app-v2", |p| set_version(p, "1.2.0"));
    h.ok(&["sign", &v3, "--key", &k1]);
    let out = h.ok(&["update", &v3, "--yes"]);
    assert_eq!(out["plan"]["publisher"]["status"], "signed");
    h.verify_clean(None);
}

#[test]
fn kept_data_goes_back_only_to_the_same_publisher() {
    let h = Host::new();
    let (k1, k1_pub, _, k1_pk) = keygen(&h, "Acme");
    let (k2, k2_pub, _, _) = keygen(&h, "Other");
    h.ok(&["trust", "add", &k1_pub]);
    h.ok(&["trust", "add", &k2_pub]);
    let by_k1 = signed(&h, "k1", "hello-app", &k1);
    let by_k2 = signed(&h, "k2", "hello-app", &k2);
    h.ok(&["install", &by_k1, "--yes"]);
    let data = h.write_app_data("hello-app");
    let plan = h.ok(&["cleanup-plan", "hello-app"]);
    assert!(
        plan["retained"].to_string().contains("publisher pin"),
        "{plan:#}"
    );
    h.ok(&["uninstall", "hello-app", "--keep-data", "--yes"]);

    // Another key, or no signature: refused, the kept data untouched.
    for (pkg, extra) in [(&by_k2, None), (&fx("hello-app"), Some("--sideload"))] {
        let mut args = vec!["install", pkg.as_str(), "--yes"];
        args.extend(extra);
        let err = h.fails(&args, "install.publisher_changed", 6);
        assert_eq!(err["details"]["publisher"]["old"]["publicKey"], k1_pk);
        assert_eq!(h.list(), Vec::<Value>::new());
        assert_eq!(files_under(&h.app_data_dir("hello-app")), data);
    }
    // The same publisher gets its data back, and the --yes path says so.
    let (code, text) = run_text(&h, &["install", &by_k1, "--yes"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains(
            "Data from an earlier install of hello-app will be used again (same publisher)"
        ),
        "{text}"
    );
    assert_eq!(files_under(&h.app_data_dir("hello-app")), data);
    h.ok(&["uninstall", "hello-app", "--keep-data", "--yes"]);
    let out = h.ok(&["install", &by_k1, "--yes"]);
    assert_eq!(out["plan"]["existingData"], true);
    assert_eq!(out["plan"]["publisher"]["status"], "same");

    // Accepting the new publisher hands it the data, and the audit log records it.
    h.ok(&["uninstall", "hello-app", "--keep-data", "--yes"]);
    let out = h.ok(&["install", &by_k2, "--yes", "--accept-new-publisher"]);
    assert_eq!(out["plan"]["existingData"], true);
    assert_eq!(out["plan"]["publisher"]["accepted"], true);
    let log = h.ok(&["audit", "hello-app"]);
    assert_eq!(log[1]["action"], "publisher.change");
    assert_eq!(log[1]["details"]["reattachedData"], true);
    assert_eq!(files_under(&h.app_data_dir("hello-app")), data);

    // Deleting the data forgets the publisher: anyone may install afresh.
    h.ok(&["uninstall", "hello-app", "--delete-data", "--yes"]);
    let out = h.ok(&["install", &fx("hello-app"), "--yes", "--sideload"]);
    assert_eq!(out["plan"]["publisher"]["status"], "new");
    h.verify_clean(None);
}

#[test]
fn a_changed_permission_shows_each_field_and_loses_its_grant() {
    let h = Host::new();
    h.install(&fx("hello-app"));
    let v2 = variant(&h.path("v2"), "hello-app", |p| {
        set_version(p, "1.1.0");
        let f = p.join("app.permissions.yaml");
        let text = fs::read_to_string(&f).unwrap();
        let text = text
            .replacen(
                "access: read-write\n    required: true",
                "access: read-write\n    required: false",
                1,
            )
            .replace(
                "domains: [notes.example.com]",
                "domains: [notes.example.com, evil.example]",
            );
        fs::write(&f, text).unwrap();
    });
    let err = h.fails(
        &["update", &v2, "--sideload"],
        "install.consent_required",
        5,
    );
    let plan = &err["details"]["plan"];
    let storage = permission(plan, "notes_storage");
    assert_eq!(storage["change"], "changed");
    assert_eq!(
        storage["fields"],
        json!([{"field": "required", "old": true, "new": false}])
    );
    assert_eq!(
        storage["grant"], "at-first-use",
        "required -> optional drops the grant"
    );
    let sync = permission(plan, "sync_notes");
    assert_eq!(sync["change"], "changed");
    assert_eq!(
        sync["fields"],
        json!([{"field": "domains", "old": ["notes.example.com"], "new": ["notes.example.com", "evil.example"]}])
    );
    assert_eq!(sync["grant"], "at-first-use");
    assert_eq!(plan["needsConsent"], json!([]));
    let (_, text) = run_text(&h, &["update", &v2, "--sideload"]);
    assert!(
        text.contains(r#"domains: ["notes.example.com"] -> ["notes.example.com","evil.example"]"#),
        "{text}"
    );
    h.ok(&["update", &v2, "--yes", "--sideload"]);
    // The grant of notes_storage went with the change: in the next version, where nothing
    // changes, it is not kept.
    let v3 = h.path("v3");
    copy_dir(Path::new(&v2), &v3);
    set_version(&v3, "1.2.0");
    let err = h.fails(
        &["update", v3.to_str().unwrap(), "--sideload"],
        "install.consent_required",
        5,
    );
    let storage = permission(&err["details"]["plan"], "notes_storage");
    assert_eq!(storage["change"], "unchanged");
    assert_eq!(storage["grant"], "at-first-use", "{storage}");
}

/// `inspect` and `validate` read the trusted keys and the limit settings from the store in one
/// open; both must still take effect, and a flag still overrides a stored limit.
#[test]
fn inspect_and_validate_use_the_stored_trusted_keys_and_limits() {
    let h = Host::new();
    let key = h.path("k.json");
    h.ok(&["keygen", "--out", key.to_str().unwrap()]);
    let pkg = h.path("signed-hello-app");
    copy_dir(&fixture("hello-app"), &pkg);
    let pkg_s = pkg.to_str().unwrap();
    h.ok(&["sign", pkg_s, "--key", key.to_str().unwrap()]);

    assert_eq!(h.ok(&["inspect", pkg_s])["trust"]["trust"], "unknown-key");
    h.ok(&["trust", "add", h.path("k.pub.json").to_str().unwrap()]);
    assert_eq!(h.ok(&["inspect", pkg_s])["trust"]["trust"], "trusted");
    assert_eq!(h.ok(&["validate", pkg_s])["trust"]["trust"], "trusted");

    h.ok(&["config", "limits.maxFiles", "2"]);
    let err = h.fails(&["inspect", pkg_s], "archive.too_many_files", 4);
    assert_eq!(err["details"]["limit"], 2);
    // validate reports a rejection as its result (exit 1), not as an error.
    let out = h.run(&["validate", pkg_s]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["error"]["code"], "archive.too_many_files");
    for command in ["inspect", "validate"] {
        let out = h.ok(&[command, pkg_s, "--max-files", "100"]);
        assert_eq!(out["trust"]["trust"], "trusted", "{command}");
    }
}

/// `grants`, `grant` and `revoke`: what the choke point reads on every call.
#[test]
fn grants_can_be_listed_revoked_and_granted_again() {
    let h = Host::new();
    h.install(&fx("hello-app"));
    let grants = h.ok(&["grants", "hello-app"]);
    let row = |v: &Value, k: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|r| r["permission"] == k)
            .cloned()
            .unwrap()
    };
    assert_eq!(
        row(&grants, "notes_storage")["granted"],
        true,
        "required: granted by consent"
    );
    assert_eq!(
        row(&grants, "sync_notes")["granted"],
        false,
        "optional: asked at first use"
    );
    assert_eq!(row(&grants, "sync_notes")["required"], false);

    assert_eq!(
        h.ok(&["revoke", "hello-app", "notes_storage"])["revoked"],
        true
    );
    assert_eq!(
        row(&h.ok(&["grants", "hello-app"]), "notes_storage")["granted"],
        false
    );
    assert_eq!(
        h.ok(&["revoke", "hello-app", "notes_storage"])["revoked"],
        false
    );
    h.ok(&["grant", "hello-app", "sync_notes"]);
    assert_eq!(
        row(&h.ok(&["grants", "hello-app"]), "sync_notes")["granted"],
        true
    );
    h.fails(&["revoke", "hello-app", "no_such"], "permission.unknown", 7);
    h.fails(&["grant", "hello-app", "no_such"], "permission.unknown", 7);
    h.fails(&["grants", "other-app"], "app.not_installed", 7);
    let actions: Vec<Value> = h.ok(&["audit", "hello-app"]).as_array().unwrap().clone();
    assert!(actions.iter().any(|a| a["action"] == "permission.revoke"));
    assert!(actions.iter().any(|a| a["action"] == "permission.grant"));
}

/// Runs one `lime.storage` call for `notes` as the window would (mount, choke point, service),
/// against the data directory the CLI manages.
fn notes_storage_call(data: &Path, method: &str, args: Value) -> Result<Value, String> {
    use host_core::hosting::capability::call::Call;
    use host_core::hosting::capability::dispatch::{dispatch, SessionAnswers, Verdict};
    let dir = host_core::foundation::paths::DataDir::at(data.to_owned());
    let store = host_core::install::store::Store::open(&dir).unwrap();
    let profile = host_core::foundation::profile::HostProfile::all_available();
    let mut table = host_core::hosting::bridge::mounts::MountTable::new();
    let mount = host_core::hosting::bridge::mounting::mount_entry(
        &store,
        &profile,
        &mut table,
        &host_core::hosting::surface::origin::OriginStyle::Scheme,
        "notes",
        "notes",
    )
    .map_err(|e| e.code.as_str().to_owned())?;
    let call = Call {
        request_id: "r".into(),
        capability: "lime.storage".into(),
        method: method.into(),
        args,
        options: Default::default(),
    };
    let mut services = host_core::hosting::capability::services::Services::new(dir.apps_data());
    match dispatch(
        &store,
        &profile,
        &mount.caller(),
        &call,
        "t",
        &mut SessionAnswers::default(),
    ) {
        Verdict::Allowed(proof) => services
            .call(&store, &proof, &call.args)
            .map_err(|e| format!("{} {:?}", e.code, e.cause_code)),
        Verdict::Denied(e) => Err(format!("{} {:?}", e.code, e.cause_code)),
        Verdict::Ask(q) => Err(format!("ask {q:?}")),
    }
}

/// The notes sample's tables and migrations across the lifecycle: rows survive
/// `uninstall --keep-data` and a reinstall (its migrations are not applied twice);
/// `--delete-data` removes the storage file, and a reinstall starts from empty tables.
#[test]
fn app_storage_tables_survive_keep_data_and_go_with_delete_data() {
    let h = Host::new();
    let notes = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/apps/notes");
    let notes = notes.to_str().unwrap();
    h.install(notes);
    let row = json!({"table": "notes", "row": {"id": "n1", "body": "keep me", "created_at": "t"}});
    notes_storage_call(&h.data, "tableInsert", row).unwrap();
    let get = json!({"table": "notes", "id": "n1"});
    assert_eq!(
        notes_storage_call(&h.data, "tableGet", get.clone()).unwrap()["body"],
        "keep me"
    );
    let storage = h.app_data_dir("notes").join("storage.sqlite");
    assert!(storage.is_file());

    h.ok(&["uninstall", "notes", "--keep-data", "--yes"]);
    assert!(storage.is_file(), "--keep-data keeps the storage file");
    h.install(notes);
    assert_eq!(
        notes_storage_call(&h.data, "tableGet", get.clone()).unwrap()["body"],
        "keep me"
    );

    h.ok(&["uninstall", "notes", "--delete-data", "--yes"]);
    assert!(
        !h.app_data_dir("notes").exists(),
        "--delete-data removes it"
    );
    h.install(notes);
    assert_eq!(
        notes_storage_call(&h.data, "tableGet", get).unwrap(),
        Value::Null
    );
}
