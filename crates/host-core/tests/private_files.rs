//! The data directory is private whatever the umask (attack review): under umask 022 the data
//! directory and `runtime/` are 0700, and `host.db`, `runtime/events.db`,
//! `runtime/agent-tasks.sqlite` and their `-wal` / `-shm` are 0600; the packs and staging
//! folders are 0700. A data directory made with loose modes before is tightened when it is opened.
//!
//! The umask is process-wide, so the checks run in a child process of this test binary started
//! by `sh -c 'umask 022; exec …'` (the parent test only spawns it and waits).

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use host_core::foundation::paths::DataDir;
use host_core::install::store::{InstallMode, Store};
use runtime_core::agent_task::AgentTasks;
use runtime_core::ids::AppId;
use runtime_core::runtime::{Runtime, RuntimeConfig};

const CHILD_ENV: &str = "APPHOST_PRIVATE_FILES_CHILD_DIR";

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

fn assert_mode(p: &Path, want: u32) {
    assert_eq!(mode(p), want, "{} is {:o}", p.display(), mode(p));
}

/// The umask of this process, from `/proc/self/status`.
fn current_umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
    u32::from_str_radix(line["Umask:".len()..].trim(), 8).unwrap()
}

fn with_suffix(p: &Path, suffix: &str) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Runs [`child_checks_modes_under_umask_022`] in a child process under umask 022.
fn run_child(data: &Path) {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg("umask 022 && exec \"$0\" child_checks_modes_under_umask_022 --exact --nocapture --test-threads=1")
        .arg(&exe)
        .env(CHILD_ENV, data)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "child failed:\n{text}");
    assert!(text.contains("checked private modes"), "child ran:\n{text}");
}

#[test]
fn a_new_data_directory_is_private_under_umask_022() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    run_child(&data);
    // After the processes closed them, the files keep their modes.
    assert_mode(&data, 0o700);
    assert_mode(&data.join("host.db"), 0o600);
    assert_mode(&data.join("runtime/events.db"), 0o600);
}

#[test]
fn an_existing_loose_data_directory_is_tightened_when_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let runtime = data.join("runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    // What an earlier version left under umask 022 (empty files are valid SQLite databases).
    for d in [&data, &runtime] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for f in [
        data.join("host.db"),
        runtime.join("events.db"),
        runtime.join("agent-tasks.sqlite"),
    ] {
        std::fs::write(&f, b"").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    run_child(&data);
}

/// The child: only does something when started by [`run_child`].
#[test]
fn child_checks_modes_under_umask_022() {
    let Some(data) = std::env::var_os(CHILD_ENV).map(PathBuf::from) else {
        return;
    };
    assert_eq!(current_umask(), 0o022, "the child runs under umask 022");
    // A control: a file made without the helper is group/world readable under this umask.
    let control =
        std::env::temp_dir().join(format!("apphost-umask-control-{}", std::process::id()));
    std::fs::write(&control, b"x").unwrap();
    assert_mode(&control, 0o644);
    std::fs::remove_file(&control).unwrap();

    let dir = DataDir::at(&data);
    // An install writes host.db, packs and a staging folder (journal).
    support::install_with(
        &dir,
        &support::fixture("good/hello-app"),
        InstallMode::Install,
    );
    let (store, _) = Store::open_locked(&dir).unwrap();
    store.set_setting("limits.maxFiles", Some("1000")).unwrap();
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let _enter = tokio.enter();
    let runtime_dir = data.join("runtime");
    let rt = Runtime::open(RuntimeConfig::new(&runtime_dir), None).unwrap();
    rt.start_session(AppId::new("demo").unwrap(), None, None)
        .unwrap();
    let tasks = AgentTasks::open(rt.clone()).unwrap();
    let _ = tasks.list(&AppId::new("demo").unwrap(), None, 1).unwrap();

    // Checked while every database is open, so the -wal / -shm files exist.
    assert_mode(&data, 0o700);
    assert_mode(&runtime_dir, 0o700);
    for db in [
        data.join("host.db"),
        runtime_dir.join("events.db"),
        runtime_dir.join("agent-tasks.sqlite"),
    ] {
        assert_mode(&db, 0o600);
        for suffix in ["-wal", "-shm"] {
            assert_mode(&with_suffix(&db, suffix), 0o600);
        }
    }
    assert_mode(&runtime_dir.join("runtime.lock"), 0o600);
    assert_mode(&dir.lock_path(), 0o600);
    // Packs hold package bytes, sealed read-only (0444) once written; their folder (and the data
    // directory) keeps other users out.
    assert_mode(&dir.packs(), 0o700);
    if dir.staging().exists() {
        assert_mode(&dir.staging(), 0o700);
    }
    drop(tasks);
    drop(rt);
    drop(store);
    println!("checked private modes");
}
