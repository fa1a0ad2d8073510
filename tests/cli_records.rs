//! `apphost artifacts` and `apphost evidence` through the real binary, and what uninstall does
//! with an app's artifacts and evidence (keep, export, delete). The records are written with
//! RuntimeCore's stores, as the host's `lime.artifacts` / `lime.evidence` services write them.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{files_under, zip_contents};
use runtime_core::app_artifacts::{AppArtifacts, ArtifactLimits, Provenance};
use runtime_core::app_evidence::{AppEvidence, EvidenceInput, EvidenceLimits};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_apphost");

fn hello() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/packages/good/hello-app")
        .to_str()
        .unwrap()
        .to_owned()
}

fn run(data: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env_remove("APPHOST_DATA_DIR")
        .env_remove("APPHOST_CRASH_AT")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn ok(data: &Path, args: &[&str]) -> Value {
    let mut a = vec!["--json"];
    a.extend_from_slice(args);
    let out = run(data, &a);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn fails(data: &Path, args: &[&str], code: &str, exit: i32) {
    let mut a = vec!["--json"];
    a.extend_from_slice(args);
    let out = run(data, &a);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(exit), "{args:?}: {stderr}");
    assert!(
        stderr.contains(&format!("\"code\":\"{code}\"")),
        "{args:?}: {stderr}"
    );
    assert!(out.stdout.is_empty());
}

fn prov() -> Provenance {
    Provenance {
        app_id: "hello-app".into(),
        app_version: "1.0.0".into(),
        package_hash: "sha256:p".into(),
        manifest_hash: "sha256:m".into(),
        entry_key: "notes".into(),
        trace_id: "trace-cli".into(),
        agent: None,
    }
}

/// Two artifacts and two evidence records (one pointing at an artifact), as the services write.
fn write_records(app_dir: &Path) -> (String, String) {
    let mut arts = AppArtifacts::open(app_dir, ArtifactLimits::default()).unwrap();
    let a = arts
        .create("summary.md", Some("text/markdown"), b"# Notes", &prov())
        .unwrap();
    arts.create("data.bin", None, &[0, 1, 2, 255], &prov())
        .unwrap();
    let mut ev = AppEvidence::open(app_dir, EvidenceLimits::default()).unwrap();
    let input = |kind: &str, ids: Vec<String>| EvidenceInput {
        kind: kind.into(),
        summary: format!("{kind} summary"),
        data: json!({"k": kind}),
        artifact_ids: ids,
    };
    ev.record(
        &input("eval.result", vec![a.id.clone()]),
        Some(&arts),
        &prov(),
    )
    .unwrap();
    ev.record(&input("source", vec![]), Some(&arts), &prov())
        .unwrap();
    (a.id, a.sha256)
}

/// Data files without SQLite's WAL side files (a reader may leave an empty `-shm`/`-wal`).
fn data_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files_under(dir)
        .into_iter()
        .filter(|(k, _)| !k.ends_with("-shm") && !k.ends_with("-wal"))
        .collect()
}

#[test]
fn artifacts_and_evidence_are_listed_exported_kept_and_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    ok(&data, &["install", &hello(), "--yes", "--sideload"]);
    let app_dir: PathBuf = data.join("apps/hello-app");

    // Nothing yet, and looking creates nothing.
    assert_eq!(
        ok(&data, &["artifacts", "hello-app"]),
        json!({"app": "hello-app", "artifacts": [], "totalBytes": 0})
    );
    assert_eq!(ok(&data, &["evidence", "hello-app"])["records"], json!([]));
    assert!(!app_dir.join("artifacts.sqlite").exists());
    assert!(!app_dir.join("evidence.sqlite").exists());

    let (art_id, sha) = write_records(&app_dir);
    let before = data_files(&app_dir);

    let listed = ok(&data, &["artifacts", "hello-app"]);
    let items = listed["artifacts"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["id"], art_id.as_str());
    assert_eq!(items[0]["sha256"], sha.as_str());
    assert_eq!(items[0]["provenance"]["traceId"], "trace-cli");
    assert_eq!(listed["totalBytes"], 7 + 4);
    let text = run(&data, &["artifacts", "hello-app"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("summary.md") && text.contains("text/markdown"),
        "{text}"
    );

    let ev = ok(&data, &["evidence", "hello-app"]);
    assert_eq!(ev["records"].as_array().unwrap().len(), 2);
    let only = ok(&data, &["evidence", "hello-app", "--kind", "source"]);
    assert_eq!(only["records"].as_array().unwrap().len(), 1);
    fails(
        &data,
        &["evidence", "hello-app", "--kind", "../x"],
        "cli.usage",
        2,
    );

    let pack_path = tmp.path().join("pack.json");
    let p = pack_path.to_str().unwrap();
    let out = ok(&data, &["evidence", "hello-app", "--export", p]);
    assert_eq!(out["records"], 2);
    let pack: Value = serde_json::from_slice(&std::fs::read(&pack_path).unwrap()).unwrap();
    assert_eq!(pack["schemaVersion"], "apphost.evidence-pack.v1");
    assert_eq!(pack["app"]["appId"], "hello-app");
    assert_eq!(pack["app"]["appVersion"], "1.0.0");
    assert!(pack["app"]["packageHash"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    assert_eq!(pack["records"][0]["provenance"]["entryKey"], "notes");
    assert_eq!(
        pack["artifacts"][0],
        json!({"artifactId": art_id, "sha256": sha, "present": true, "name": "summary.md",
               "mimeType": "text/markdown", "size": 7, "createdAt": items[0]["createdAt"],
               "provenance": items[0]["provenance"]})
    );
    // Never replaced.
    let first = std::fs::read(&pack_path).unwrap();
    fails(
        &data,
        &["evidence", "hello-app", "--export", p],
        "export.failed",
        10,
    );
    assert_eq!(std::fs::read(&pack_path).unwrap(), first);
    // Reading changed nothing in the app's data.
    assert_eq!(data_files(&app_dir), before);

    // Keep data: still listed (and the pack says the app is not installed), back on reinstall.
    ok(&data, &["uninstall", "hello-app", "--keep-data", "--yes"]);
    assert_eq!(
        ok(&data, &["artifacts", "hello-app"])["artifacts"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let kept_pack = tmp.path().join("kept.json");
    ok(
        &data,
        &[
            "evidence",
            "hello-app",
            "--export",
            kept_pack.to_str().unwrap(),
        ],
    );
    let kept: Value = serde_json::from_slice(&std::fs::read(&kept_pack).unwrap()).unwrap();
    assert_eq!(
        kept["app"],
        json!({"appId": "hello-app", "installed": false})
    );
    ok(&data, &["install", &hello(), "--yes", "--sideload"]);
    assert_eq!(
        ok(&data, &["evidence", "hello-app"])["records"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // Export: the zip holds the artifact database, the evidence and the blobs.
    let zip = tmp.path().join("hello.zip");
    ok(
        &data,
        &[
            "uninstall",
            "hello-app",
            "--export",
            zip.to_str().unwrap(),
            "--yes",
        ],
    );
    let entries = zip_contents(&zip);
    assert!(
        entries.contains_key("hello-app/artifacts.sqlite"),
        "{:?}",
        entries.keys()
    );
    assert!(entries.contains_key("hello-app/evidence.sqlite"));
    assert_eq!(
        entries[&format!("hello-app/artifact-blobs/{sha}")],
        b"# Notes"
    );
    assert!(!app_dir.exists());

    // Delete data: gone, and the app is unknown to both commands.
    ok(&data, &["install", &hello(), "--yes", "--sideload"]);
    write_records(&app_dir);
    ok(&data, &["uninstall", "hello-app", "--delete-data", "--yes"]);
    assert!(!app_dir.exists());
    fails(&data, &["artifacts", "hello-app"], "app.not_installed", 7);
    fails(&data, &["evidence", "hello-app"], "app.not_installed", 7);
    fails(
        &data,
        &["artifacts", "../hello-app"],
        "app.not_installed",
        7,
    );
}

#[test]
fn an_unreadable_artifact_database_is_a_documented_error() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    ok(&data, &["install", &hello(), "--yes", "--sideload"]);
    let app_dir = data.join("apps/hello-app");
    std::fs::create_dir_all(&app_dir).unwrap();
    std::fs::write(app_dir.join("artifacts.sqlite"), b"this is not a database").unwrap();
    std::fs::create_dir(app_dir.join("artifact-blobs")).unwrap();
    fails(
        &data,
        &["artifacts", "hello-app"],
        "app_data.unreadable",
        10,
    );
    // A link in place of the database is not followed.
    std::fs::remove_file(app_dir.join("artifacts.sqlite")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", app_dir.join("artifacts.sqlite")).unwrap();
    fails(
        &data,
        &["artifacts", "hello-app"],
        "app_data.unreadable",
        10,
    );
}
