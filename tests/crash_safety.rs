//! Crash safety of the install store, through the real binary.
//!
//! `APPHOST_CRASH_AT=N` makes `apphost` SIGKILL itself the N-th time it reaches a crash point
//! (`crates/host-core/src/install/store/failpoint.rs`). For every scenario below the test runs the
//! command with N = 1, 2, 3, … on a fresh copy of a prepared data directory until the command
//! finishes normally (that N is past the last crash point). After every kill it runs
//! `apphost --json verify` (which recovers the interrupted operation first) and checks that the
//! store is in exactly one of two states: the state before the command (rolled back) or the
//! state a crash-free run of the command produces (rolled forward), with nothing in between:
//!
//! * `verify` reports `ok: true` and no problems (database, every blob deep-hashed, no orphan
//!   or stray blobs, nothing in `staging/`);
//! * `list` shows exactly the expected apps and versions (active, rollback target, versions);
//! * the blob files on disk are exactly those of the before or the after state;
//! * the app's data directory is either intact (byte for byte) or gone, never partial;
//! * no `*.partial`, `tmp-*` or `*.tmp` file anywhere in the data dir or next to an export;
//! * an export, when present, is a complete zip of the data; data is never deleted without it;
//! * the outcome agrees with what recovery reported, and once a crash point rolls forward
//!   every later one does too (one commit point per operation).
//!
//! Two more tests kill the recovery itself, and recover an operation that was started with a
//! relative `--data-dir` from another working directory.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use common::{copy_dir, files_under, zip_contents};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_apphost");
/// No scenario comes near this many crash points; a guard against looping forever.
const MAX_CRASH_POINTS: u64 = 200;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/packages/good")
        .join(name)
}

fn apphost(data: &Path, args: &[OsString], crash_at: Option<u64>) -> Output {
    apphost_in(None, data, args, crash_at)
}

/// Runs apphost in `cwd` (default: the test's working directory).
fn apphost_in(cwd: Option<&Path>, data: &Path, args: &[OsString], crash_at: Option<u64>) -> Output {
    let mut cmd = Command::new(BIN);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    cmd.arg("--json")
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env_remove("APPHOST_CRASH_AT")
        .env_remove("APPHOST_DATA_DIR")
        .env_remove("APPHOST_LOG")
        .stdin(Stdio::null());
    if let Some(n) = crash_at {
        cmd.env("APPHOST_CRASH_AT", n.to_string());
    }
    cmd.output().expect("run apphost")
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

fn describe(out: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs a command that must succeed and returns its JSON output.
fn ok_json(data: &Path, args: &[&str]) -> Value {
    let out = apphost(data, &os(args), None);
    assert!(
        out.status.success(),
        "apphost {args:?} failed: {}",
        describe(&out)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("apphost {args:?}: bad JSON ({e}): {}", describe(&out)))
}

fn install(data: &Path, pkg: &str) {
    let p = fixture(pkg);
    ok_json(
        data,
        &["install", p.to_str().unwrap(), "--yes", "--sideload"],
    );
}

/// The blobs the store holds (SHA-256 ids), as `verify` reports them. Callers check `verify`
/// is clean first, so these are exactly the blobs on disk (no orphan, unrecorded or missing).
fn blob_names(data: &Path) -> BTreeSet<String> {
    let out = apphost(data, &os(&["verify", "--quick"]), None);
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("verify --json: {e}: {}", describe(&out)));
    v["storedBlobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap().to_owned())
        .collect()
}

/// Pack files on disk (recorded or not).
fn pack_files(data: &Path) -> usize {
    fs::read_dir(data.join("packs"))
        .map(|rd| rd.count())
        .unwrap_or(0)
}

/// Paths under `dir` that look like leftovers of an interrupted write.
fn temp_leftovers(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for entry in rd {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".partial") || name.starts_with("tmp-") || name.ends_with(".tmp") {
                out.push(entry.path());
            }
            if entry.file_type().unwrap().is_dir() {
                walk(&entry.path(), out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out
}

/// One installed app as `list` must show it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct AppState {
    name: String,
    active: String,
    previous: Option<String>,
    versions: Vec<String>,
}

fn app(name: &str, active: &str, previous: Option<&str>, versions: &[&str]) -> AppState {
    AppState {
        name: name.into(),
        active: active.into(),
        previous: previous.map(Into::into),
        versions: versions.iter().map(|v| v.to_string()).collect(),
    }
}

fn listed(data: &Path) -> Vec<AppState> {
    let list = ok_json(data, &["list"]);
    list.as_array()
        .expect("list prints an array")
        .iter()
        .map(|a| AppState {
            name: a["name"].as_str().unwrap().into(),
            active: a["activeVersion"].as_str().unwrap().into(),
            previous: a["previousVersion"].as_str().map(Into::into),
            versions: a["versions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect(),
        })
        .collect()
}

/// What a finished (or recovered) command must have done to the app's data directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DataAfter {
    Kept,
    Removed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    RolledBack,
    RolledForward,
}

struct Scenario {
    name: &'static str,
    /// Prepared data directory the command starts from (copied for every run); `None`: no data
    /// directory at all.
    template: Option<PathBuf>,
    args: Vec<OsString>,
    /// `--export` destination: a file name in the run's `export/` folder.
    export: Option<&'static str>,
    /// The app whose data directory is checked.
    data_app: &'static str,
    before: Vec<AppState>,
    after: Vec<AppState>,
    data_after: DataAfter,
}

struct Report {
    name: &'static str,
    crash_points: u64,
    rolled_back: u64,
    rolled_forward: u64,
}

/// A data directory's state, as far as the invariants care.
struct State {
    apps: Vec<AppState>,
    blobs: BTreeSet<String>,
    app_data: BTreeMap<String, Vec<u8>>,
}

fn state(data: &Path, data_app: &str) -> State {
    State {
        apps: listed(data),
        blobs: blob_names(data),
        app_data: files_under(&data.join("apps").join(data_app)),
    }
}

/// Runs `sc` once crash-free, then killed at every crash point in turn. With `relative`, the
/// command runs inside the run's folder with a relative `--data-dir` (and export path), while
/// recovery (`verify`) and the checks use absolute paths from another working directory, as a
/// later process (the desktop app, a script) would.
fn run_scenario(sc: &Scenario, work: &Path, relative: bool) -> Report {
    // The two states a run may end in: before (the template) and after (a crash-free run).
    let reference = work.join("reference");
    let ref_data = reference.join("data");
    if let Some(t) = &sc.template {
        copy_dir(t, &ref_data);
    }
    fs::create_dir_all(reference.join("export")).unwrap();
    let before = if sc.template.is_some() {
        state(&ref_data, sc.data_app)
    } else {
        State {
            apps: Vec::new(),
            blobs: BTreeSet::new(),
            app_data: BTreeMap::new(),
        }
    };
    assert_eq!(before.apps, sc.before, "{}: template state", sc.name);
    let args_for = |dir: &Path| -> Vec<OsString> {
        let mut a = sc.args.clone();
        if let Some(e) = sc.export {
            a.push("--export".into());
            let base = if relative { Path::new("") } else { dir };
            a.push(base.join("export").join(e).into_os_string());
        }
        a
    };
    let run = |dir: &Path, crash_at: Option<u64>| -> Output {
        if relative {
            apphost_in(Some(dir), Path::new("data"), &args_for(dir), crash_at)
        } else {
            apphost(&dir.join("data"), &args_for(dir), crash_at)
        }
    };
    let out = run(&reference, None);
    assert!(
        out.status.success(),
        "{}: crash-free run: {}",
        sc.name,
        describe(&out)
    );
    let after = state(&ref_data, sc.data_app);
    assert_eq!(
        after.apps, sc.after,
        "{}: state after a crash-free run",
        sc.name
    );
    match sc.data_after {
        DataAfter::Kept => assert_eq!(after.app_data, before.app_data, "{}: data kept", sc.name),
        DataAfter::Removed => {
            assert!(
                !ref_data.join("apps").join(sc.data_app).exists(),
                "{}: data removed",
                sc.name
            )
        }
    }
    if let Some(e) = sc.export {
        let expected: BTreeSet<String> = before
            .app_data
            .keys()
            .map(|p| format!("{}/{p}", sc.data_app))
            .collect();
        assert!(!expected.is_empty(), "{}: no data to export", sc.name);
        let zip = reference.join("export").join(e);
        assert_eq!(
            zip_contents(&zip).into_keys().collect::<BTreeSet<String>>(),
            expected,
            "{}: crash-free export",
            sc.name
        );
    }
    fs::remove_dir_all(&reference).unwrap();

    let mut report = Report {
        name: sc.name,
        crash_points: 0,
        rolled_back: 0,
        rolled_forward: 0,
    };
    let mut committed_at = None;
    for n in 1..=MAX_CRASH_POINTS {
        let ctx = format!(
            "scenario {} with APPHOST_CRASH_AT={n} (apphost {:?}{})",
            sc.name,
            sc.args,
            if relative {
                ", relative --data-dir"
            } else {
                ""
            }
        );
        let case = work.join(format!("n{n}"));
        let data = case.join("data");
        let export_dir = case.join("export");
        if let Some(t) = &sc.template {
            copy_dir(t, &data);
        }
        fs::create_dir_all(&export_dir).unwrap();

        let out = run(&case, Some(n));
        let killed = out.status.signal() == Some(9);
        if !killed {
            assert_eq!(
                out.status.code(),
                Some(0),
                "{ctx}: the command neither crashed nor succeeded: {}",
                describe(&out)
            );
            assert!(
                serde_json::from_slice::<Value>(&out.stdout).is_ok(),
                "{ctx}: the completed command printed no JSON: {}",
                describe(&out)
            );
        }

        // Recovery happens here.
        let verify = ok_json(&data, &["verify"]);
        assert_eq!(verify["ok"], Value::Bool(true), "{ctx}: verify: {verify:#}");
        assert_eq!(
            verify["problems"],
            serde_json::json!([]),
            "{ctx}: verify: {verify:#}"
        );

        let now = state(&data, sc.data_app);
        let outcome = if now.apps == sc.after {
            Outcome::RolledForward
        } else if now.apps == sc.before {
            Outcome::RolledBack
        } else {
            panic!(
                "{ctx}: list shows {:?}, neither the state before ({:?}) nor after ({:?})",
                now.apps, sc.before, sc.after
            )
        };
        let expected = if outcome == Outcome::RolledForward {
            &after
        } else {
            &before
        };
        assert_eq!(
            now.blobs, expected.blobs,
            "{ctx}: blob files on disk differ from the {outcome:?} state"
        );
        let staging = data.join("staging");
        if staging.exists() {
            let left: Vec<_> = fs::read_dir(&staging).unwrap().collect();
            assert!(left.is_empty(), "{ctx}: staging is not empty: {left:?}");
        }
        let mut left = temp_leftovers(&data);
        left.extend(temp_leftovers(&case.join("export")));
        assert!(
            left.is_empty(),
            "{ctx}: temporary files left behind: {left:?}"
        );

        // The app's data: intact, or (rolled forward with deletion) gone; never partial.
        let data_dir = data.join("apps").join(sc.data_app);
        if outcome == Outcome::RolledForward && sc.data_after == DataAfter::Removed {
            assert!(
                !data_dir.exists(),
                "{ctx}: data directory still exists after the uninstall"
            );
        } else {
            assert_eq!(
                now.app_data.keys().collect::<Vec<_>>(),
                before.app_data.keys().collect::<Vec<_>>(),
                "{ctx}: data files differ"
            );
            assert!(
                now.app_data == before.app_data,
                "{ctx}: data file contents differ"
            );
        }

        // The export: complete when present; present whenever the data is gone.
        if let Some(e) = sc.export {
            let names: Vec<_> = fs::read_dir(&export_dir)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            let zip = export_dir.join(e);
            assert!(
                names.iter().all(|n| *n == *zip.file_name().unwrap()),
                "{ctx}: unexpected files next to the export: {names:?}"
            );
            if zip.exists() {
                let expected: BTreeSet<String> = before
                    .app_data
                    .keys()
                    .map(|p| format!("{}/{p}", sc.data_app))
                    .collect();
                assert_eq!(
                    zip_contents(&zip).into_keys().collect::<BTreeSet<String>>(),
                    expected,
                    "{ctx}: export contents"
                );
            } else {
                assert_eq!(
                    outcome,
                    Outcome::RolledBack,
                    "{ctx}: the data was deleted but the export does not exist"
                );
            }
        }

        // Recovery and the outcome agree, and the commit point is one point in the sequence.
        // Compaction after the operation is an operation of its own; whatever happened to it,
        // the state checks above hold. The command's own operation is judged here.
        let recovered: Vec<&Value> = verify["recovered"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["kind"] != "compact")
            .collect();
        if killed {
            assert!(recovered.len() <= 1, "{ctx}: recovered {recovered:?}");
            if let Some(r) = recovered.first() {
                let action = match outcome {
                    Outcome::RolledBack => "rolled-back",
                    Outcome::RolledForward => "rolled-forward",
                };
                assert_eq!(r["action"], action, "{ctx}: recovery reported {r}");
            }
        } else {
            assert!(
                recovered.is_empty(),
                "{ctx}: a completed run left {recovered:?}"
            );
            assert_eq!(outcome, Outcome::RolledForward, "{ctx}: completed run");
        }
        match (committed_at, outcome) {
            (None, Outcome::RolledForward) => committed_at = Some(n),
            (Some(c), Outcome::RolledBack) => {
                panic!("{ctx}: rolled back although crash point {c} already rolled forward")
            }
            _ => {}
        }

        fs::remove_dir_all(&case).unwrap();
        if !killed {
            assert!(
                report.crash_points > 0,
                "{}: no crash point was hit",
                sc.name
            );
            assert!(
                report.rolled_back > 0,
                "{}: no crash point rolled back",
                sc.name
            );
            return report;
        }
        report.crash_points += 1;
        match outcome {
            Outcome::RolledBack => report.rolled_back += 1,
            Outcome::RolledForward => report.rolled_forward += 1,
        }
    }
    panic!(
        "{}: still crashing after {MAX_CRASH_POINTS} crash points",
        sc.name
    )
}

/// Files an app might have written into its data directory.
fn write_app_data(data: &Path, app: &str) {
    let dir = data.join("apps").join(app);
    fs::create_dir_all(dir.join("attachments/2024")).unwrap();
    fs::write(
        dir.join("notes.db"),
        b"SQLite format 3\0 (pretend)\n".repeat(300),
    )
    .unwrap();
    fs::write(dir.join("settings.json"), br#"{"theme": "dark"}"#).unwrap();
    let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
    fs::write(dir.join("attachments/2024/photo.bin"), bytes).unwrap();
}

fn hello_args(cmd: &str, pkg: &str) -> Vec<OsString> {
    let p = fixture(pkg);
    vec![
        cmd.into(),
        p.into_os_string(),
        "--yes".into(),
        "--sideload".into(),
    ]
}

#[test]
fn sigkill_at_every_crash_point_leaves_a_consistent_store() {
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("templates");

    // Prepared data directories, each made once and copied for every run.
    let v1 = t.join("v1");
    install(&v1, "hello-app");
    let v1_data = t.join("v1-data");
    copy_dir(&v1, &v1_data);
    write_app_data(&v1_data, "hello-app");
    let v2 = t.join("v2");
    copy_dir(&v1, &v2);
    let p2 = fixture("hello-app-v2");
    ok_json(
        &v2,
        &["update", p2.to_str().unwrap(), "--yes", "--sideload"],
    );
    let shared = t.join("shared");
    copy_dir(&v1_data, &shared);
    install(&shared, "notes-viewer");

    let v1_only = || vec![app("hello-app", "1.0.0", None, &["1.0.0"])];
    let viewer = || app("notes-viewer", "1.0.0", None, &["1.0.0"]);
    let scenarios = [
        Scenario {
            name: "install",
            template: None,
            args: hello_args("install", "hello-app"),
            export: None,
            data_app: "hello-app",
            before: vec![],
            after: v1_only(),
            data_after: DataAfter::Kept,
        },
        Scenario {
            name: "update 1.0.0 -> 1.1.0",
            template: Some(v1.clone()),
            args: hello_args("update", "hello-app-v2"),
            export: None,
            data_app: "hello-app",
            before: v1_only(),
            after: vec![app(
                "hello-app",
                "1.1.0",
                Some("1.0.0"),
                &["1.0.0", "1.1.0"],
            )],
            data_after: DataAfter::Kept,
        },
        Scenario {
            name: "update 1.1.0 -> 1.2.0 (prunes 1.0.0)",
            template: Some(v2.clone()),
            args: hello_args("update", "hello-app-v3"),
            export: None,
            data_app: "hello-app",
            before: vec![app(
                "hello-app",
                "1.1.0",
                Some("1.0.0"),
                &["1.0.0", "1.1.0"],
            )],
            after: vec![app(
                "hello-app",
                "1.2.0",
                Some("1.1.0"),
                &["1.1.0", "1.2.0"],
            )],
            data_after: DataAfter::Kept,
        },
        Scenario {
            name: "uninstall --keep-data",
            template: Some(v1_data.clone()),
            args: os(&["uninstall", "hello-app", "--keep-data", "--yes"]),
            export: None,
            data_app: "hello-app",
            before: v1_only(),
            after: vec![],
            data_after: DataAfter::Kept,
        },
        Scenario {
            name: "uninstall --delete-data",
            template: Some(v1_data.clone()),
            args: os(&["uninstall", "hello-app", "--delete-data", "--yes"]),
            export: None,
            data_app: "hello-app",
            before: v1_only(),
            after: vec![],
            data_after: DataAfter::Removed,
        },
        Scenario {
            name: "uninstall --export",
            template: Some(v1_data.clone()),
            args: os(&["uninstall", "hello-app", "--yes"]),
            export: Some("hello-app-data.zip"),
            data_app: "hello-app",
            before: v1_only(),
            after: vec![],
            data_after: DataAfter::Removed,
        },
        Scenario {
            name: "install a second app sharing blobs",
            template: Some(v1_data.clone()),
            args: hello_args("install", "notes-viewer"),
            export: None,
            data_app: "hello-app",
            before: v1_only(),
            after: vec![app("hello-app", "1.0.0", None, &["1.0.0"]), viewer()],
            data_after: DataAfter::Kept,
        },
        Scenario {
            name: "uninstall --delete-data of an app sharing blobs",
            template: Some(shared.clone()),
            args: os(&["uninstall", "hello-app", "--delete-data", "--yes"]),
            export: None,
            data_app: "hello-app",
            before: vec![app("hello-app", "1.0.0", None, &["1.0.0"]), viewer()],
            after: vec![viewer()],
            data_after: DataAfter::Removed,
        },
    ];

    let work = tmp.path().join("runs");
    let reports: Vec<Report> = std::thread::scope(|s| {
        let handles: Vec<_> = scenarios
            .iter()
            .enumerate()
            .map(|(i, sc)| {
                let dir = work.join(format!("s{i}"));
                s.spawn(move || run_scenario(sc, &dir, false))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });

    let mut total = 0;
    for r in &reports {
        println!(
            "{:<50} {:>3} crash points ({} rolled back, {} rolled forward)",
            r.name, r.crash_points, r.rolled_back, r.rolled_forward
        );
        total += r.crash_points;
    }
    println!(
        "{total} distinct crash points exercised in {:.1?}",
        started.elapsed()
    );
    // Every scenario that commits something also finishes after its commit.
    for r in &reports {
        assert!(
            r.rolled_forward > 0,
            "{}: no crash point rolled forward",
            r.name
        );
    }
    assert!(total >= 50, "only {total} crash points were exercised");
}

/// A crash while recovering from a crash must leave the store just as consistent: recovery runs
/// in the next process that opens the store, and it can be killed as well (its blob garbage
/// collection has crash points too).
#[test]
fn sigkill_during_recovery_leaves_a_consistent_store() {
    let tmp = tempfile::tempdir().unwrap();
    let v1 = tmp.path().join("v1");
    install(&v1, "hello-app");

    // Interrupted operations whose recovery has garbage to collect: an install killed after it
    // placed its pack but before its commit (rolls back), and an uninstall killed right after
    // its commit (rolls forward).
    let mut crashed = Vec::new();
    let install_args = hello_args("install", "hello-app");
    for n in 1..=MAX_CRASH_POINTS {
        let data = tmp.path().join(format!("install-n{n}"));
        let out = apphost(&data, &install_args, Some(n));
        assert_eq!(
            out.status.signal(),
            Some(9),
            "install never placed its pack"
        );
        let staged = fs::read_dir(data.join("staging")).unwrap().count();
        if staged == 1 && pack_files(&data) >= 1 {
            crashed.push(("install", data));
            break;
        }
        fs::remove_dir_all(&data).unwrap();
    }
    let uninstall_args = os(&["uninstall", "hello-app", "--keep-data", "--yes"]);
    for n in 1..=MAX_CRASH_POINTS {
        let data = tmp.path().join(format!("uninstall-n{n}"));
        copy_dir(&v1, &data);
        let out = apphost(&data, &uninstall_args, Some(n));
        assert_eq!(out.status.signal(), Some(9), "uninstall never committed");
        let staged = fs::read_dir(data.join("staging")).unwrap().count();
        if staged == 1 && listed(&data).is_empty() {
            crashed.push(("uninstall", data));
            break;
        }
        fs::remove_dir_all(&data).unwrap();
    }
    assert_eq!(crashed.len(), 2);

    let mut failures = Vec::new();
    for (what, crashed_data) in &crashed {
        for k in 1..=MAX_CRASH_POINTS {
            let data = tmp.path().join(format!("{what}-recovery-k{k}"));
            copy_dir(crashed_data, &data);
            let out = apphost(&data, &os(&["verify"]), Some(k));
            let killed = out.status.signal() == Some(9);
            let verify = if killed {
                ok_json_or_report(&data)
            } else {
                serde_json::from_slice(&out.stdout).unwrap()
            };
            if verify["ok"] != Value::Bool(true) || verify["problems"] != serde_json::json!([]) {
                failures.push(format!(
                    "interrupted {what}, recovery killed at APPHOST_CRASH_AT={k}; then `apphost --json verify` reports: {}",
                    verify["problems"]
                ));
            }
            // Both operations end with hello-app absent (install rolled back, uninstall forward).
            assert_eq!(
                listed(&data),
                vec![],
                "interrupted {what}, recovery killed at k={k}"
            );
            if !killed {
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `apphost --json verify` (exit 1 when it finds problems) and its report.
fn ok_json_or_report(data: &Path) -> Value {
    let out = apphost(data, &os(&["verify"]), None);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("verify: bad JSON ({e}): {}", describe(&out)))
}

/// The same invariants when the interrupted command was given a relative `--data-dir` and
/// recovery runs from another working directory with an absolute one: a script ran
/// `apphost --data-dir ./data uninstall …`, and the desktop app (or `verify`) recovers later.
#[test]
fn sigkill_with_a_relative_data_dir_recovers_from_another_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let v1_data = tmp.path().join("templates/v1-data");
    install(&v1_data, "hello-app");
    write_app_data(&v1_data, "hello-app");
    let scenario = Scenario {
        name: "uninstall --delete-data (relative --data-dir)",
        template: Some(v1_data),
        args: os(&["uninstall", "hello-app", "--delete-data", "--yes"]),
        export: None,
        data_app: "hello-app",
        before: vec![app("hello-app", "1.0.0", None, &["1.0.0"])],
        after: vec![],
        data_after: DataAfter::Removed,
    };
    let r = run_scenario(&scenario, &tmp.path().join("runs"), true);
    println!("{}: {} crash points", r.name, r.crash_points);
}

/// The crash points exist in this test build (the root package's dev-dependency enables
/// host-core's `failpoints` feature); without them every test above would prove nothing.
#[test]
fn crash_points_are_compiled_into_the_test_build() {
    let tmp = tempfile::tempdir().unwrap();
    let out = apphost(
        &tmp.path().join("data"),
        &hello_args("install", "hello-app"),
        Some(1),
    );
    assert_eq!(
        out.status.signal(),
        Some(9),
        "APPHOST_CRASH_AT=1 did not kill apphost: this build lacks host-core's `failpoints` \
         feature (enabled by the root package's dev-dependency): {}",
        describe(&out)
    );
}

/// An uninstall killed after it moved the app's data aside, then the app's folder recreated
/// before recovery (an app or a user wrote there): recovery cannot put the data back, so it
/// quarantines it and says so, and is itself killed at every one of its crash points on the
/// way. Neither copy of the data is ever lost.
#[test]
fn recovery_quarantines_set_aside_data_whose_place_is_taken() {
    let tmp = tempfile::tempdir().unwrap();
    let v1_data = tmp.path().join("v1-data");
    install(&v1_data, "hello-app");
    write_app_data(&v1_data, "hello-app");
    let original = files_under(&v1_data.join("apps/hello-app"));
    let args = os(&["uninstall", "hello-app", "--delete-data", "--yes"]);

    // The first crash point at which the data is set aside and the uninstall not committed.
    // Journals hold absolute paths, so every run recreates that state in its own folder
    // (a copy of a crashed folder would recover the original).
    let mut at = None;
    for n in 1..=MAX_CRASH_POINTS {
        let data = tmp.path().join(format!("uninstall-n{n}"));
        copy_dir(&v1_data, &data);
        let out = apphost(&data, &args, Some(n));
        assert_eq!(
            out.status.signal(),
            Some(9),
            "uninstall never set its data aside"
        );
        let set_aside = !data.join("apps/hello-app").exists() && listed(&data).len() == 1;
        fs::remove_dir_all(&data).unwrap();
        if set_aside {
            at = Some(n);
            break;
        }
    }
    let at = at.unwrap();
    let crashed_in = |data: &Path| {
        copy_dir(&v1_data, data);
        let out = apphost(data, &args, Some(at));
        assert_eq!(out.status.signal(), Some(9));
        let newer = data.join("apps/hello-app");
        fs::create_dir_all(&newer).unwrap();
        fs::write(newer.join("written-later.txt"), b"after the crash").unwrap();
    };
    let newer_files =
        BTreeMap::from([("written-later.txt".to_owned(), b"after the crash".to_vec())]);

    // Where the set-aside data is now, whichever folder it is in.
    let kept_copies = |data: &Path| -> usize {
        let mut n = 0;
        for root in [data.join("staging"), data.join("quarantine")] {
            for op in fs::read_dir(&root).into_iter().flatten() {
                let op = op.unwrap().path();
                for e in fs::read_dir(&op).into_iter().flatten() {
                    let p = e.unwrap().path();
                    if p.file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with("app-data")
                        && files_under(&p) == original
                    {
                        n += 1;
                    }
                }
            }
        }
        n
    };
    let mut points = 0;
    for k in 1..=MAX_CRASH_POINTS {
        let data = tmp.path().join(format!("recovery-k{k}"));
        crashed_in(&data);
        let out = apphost(&data, &os(&["verify"]), Some(k));
        let killed = out.status.signal() == Some(9);
        let ctx = format!("recovery killed at APPHOST_CRASH_AT={k}");
        if killed {
            points += 1;
            assert_eq!(
                kept_copies(&data),
                1,
                "{ctx}: the set-aside data is not intact"
            );
            assert_eq!(files_under(&newer_files_dir(&data)), newer_files, "{ctx}");
        }
        // The next recovery, uninterrupted, finishes: store consistent, both copies kept.
        let verify = ok_json_or_report(&data);
        assert_eq!(verify["ok"], Value::Bool(true), "{ctx}: {verify:#}");
        assert_eq!(listed(&data).len(), 1, "{ctx}: the uninstall rolled back");
        assert_eq!(files_under(&newer_files_dir(&data)), newer_files, "{ctx}");
        assert!(
            fs::read_dir(data.join("staging"))
                .map(|rd| rd.count() == 0)
                .unwrap_or(true),
            "{ctx}: staging not empty"
        );
        let quarantine = data.join("quarantine");
        assert_eq!(kept_copies(&data), 1, "{ctx}: quarantined copy missing");
        assert!(quarantine.exists(), "{ctx}");
        if !killed {
            // The uninterrupted recovery reports what it quarantined, in JSON and in text.
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            let q = &v["recovered"][0]["quarantined"];
            assert_eq!(q.as_array().map(Vec::len), Some(1), "{v:#}");
            assert!(q[0]["path"]
                .as_str()
                .unwrap()
                .starts_with(quarantine.to_str().unwrap()));
            break;
        }
    }
    assert!(points >= 2, "recovery hit only {points} crash points");

    // The text output names the quarantined folder.
    let data = tmp.path().join("text");
    crashed_in(&data);
    let out = Command::new(BIN)
        .arg("--data-dir")
        .arg(&data)
        .arg("verify")
        .env_remove("APPHOST_CRASH_AT")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("quarantined:") && text.contains("quarantine"),
        "{text}"
    );
}

fn newer_files_dir(data: &Path) -> PathBuf {
    data.join("apps/hello-app")
}
