//! The `apphost` command is lean: it links neither Tauri nor GTK/WebKit, and it starts the
//! window by exec'ing `apphost-desktop` from its own folder (same process, same environment).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const APPHOST: &str = env!("CARGO_BIN_EXE_apphost");

/// Shared libraries that only the desktop window may load.
const GUI_LIBRARIES: &[&str] = &[
    "libwebkit",
    "libjavascriptcoregtk",
    "libgtk",
    "libgdk",
    "libsoup",
    "libcairo",
];

#[test]
fn apphost_links_no_gui_library() {
    let output = match Command::new("ldd").arg(APPHOST).output() {
        Ok(output) => output,
        Err(e) => {
            eprintln!("skipped: ldd is not available here ({e})");
            return;
        }
    };
    let listing = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() || listing.contains("statically linked"),
        "ldd {APPHOST} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let offending: Vec<&str> = listing
        .lines()
        .filter(|line| GUI_LIBRARIES.iter().any(|lib| line.contains(lib)))
        .collect();
    assert!(
        offending.is_empty(),
        "the lean apphost binary links GUI libraries:\n{}",
        offending.join("\n")
    );
}

/// Every package the lockfile says each package depends on (by name).
fn lockfile_graph() -> BTreeMap<String, Vec<String>> {
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock");
    let text = std::fs::read_to_string(&lock).unwrap_or_else(|e| panic!("{lock:?}: {e}"));
    let mut graph: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for block in text.split("[[package]]").skip(1) {
        let mut name = None;
        let mut deps = Vec::new();
        let mut in_deps = false;
        for line in block.lines() {
            let line = line.trim();
            if let Some(value) = line.strip_prefix("name = ") {
                name = Some(value.trim_matches('"').to_owned());
            } else if line.starts_with("dependencies = [") {
                in_deps = !line.ends_with(']');
            } else if in_deps {
                if line == "]" {
                    in_deps = false;
                } else {
                    // ` "name",` or ` "name 1.2.3",` or ` "name 1.2.3 (registry+...)",`
                    let item = line.trim_end_matches(',').trim_matches('"');
                    let dep = item.split(' ').next().unwrap_or(item);
                    deps.push(dep.to_owned());
                }
            }
        }
        if let Some(name) = name {
            graph.entry(name).or_default().extend(deps);
        }
    }
    graph
}

fn reaches(graph: &BTreeMap<String, Vec<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_owned()];
    while let Some(name) = todo.pop() {
        for dep in graph.get(&name).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                todo.push(dep.clone());
            }
        }
    }
    seen
}

#[test]
fn only_the_desktop_package_depends_on_tauri() {
    let graph = lockfile_graph();
    let desktop = reaches(&graph, "apphost-desktop");
    assert!(
        desktop.contains("tauri") && desktop.contains("webkit2gtk"),
        "the lockfile parser lost the desktop package's dependencies: {desktop:?}"
    );
    for package in ["apphost", "host-core", "runtime-core"] {
        assert!(
            graph.contains_key(package),
            "{package} is not in Cargo.lock"
        );
        let deps = reaches(&graph, package);
        let gui: Vec<&String> = deps
            .iter()
            .filter(|d| {
                [
                    "tauri",
                    "wry",
                    "tao",
                    "webkit2gtk",
                    "gtk",
                    "gdk",
                    "apphost-desktop",
                ]
                .iter()
                .any(|g| *d == g || d.starts_with(&format!("{g}-")))
            })
            .collect();
        assert!(gui.is_empty(), "{package} depends on {gui:?}");
    }
}

/// A copy of `apphost` alone in a fresh folder (so no `apphost-desktop` is beside it).
fn lone_apphost() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("apphost");
    std::fs::copy(APPHOST, &copy).unwrap();
    // A child another test thread forks while the copy is open for writing inherits that
    // descriptor until it execs, and exec of the copy fails with ETXTBSY meanwhile: run it once,
    // retrying that error, before a test relies on it.
    for attempt in 0.. {
        match Command::new(&copy).arg("--version").output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && attempt < 250 => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            other => {
                other.unwrap();
                break;
            }
        }
    }
    (dir, copy)
}

#[test]
fn missing_desktop_binary_is_a_documented_error() {
    let (dir, apphost) = lone_apphost();
    for args in [&["open", "--json"][..], &[][..]] {
        let output = Command::new(&apphost)
            .args(args)
            .env("APPHOST_DATA_DIR", dir.path().join("data"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(10), "{args:?}: {stderr}");
        assert!(stderr.contains("desktop.unavailable"), "{args:?}: {stderr}");
        assert!(stderr.contains("apphost-desktop"), "{args:?}: {stderr}");
        if args.contains(&"--json") {
            let value: serde_json::Value = serde_json::from_str(stderr.trim()).unwrap();
            assert_eq!(value["error"]["code"], "desktop.unavailable");
            let expected = dir.path().join(apphost::launch::DESKTOP_BIN);
            assert_eq!(
                value["error"]["details"]["path"],
                expected.display().to_string()
            );
        }
    }
    // Nothing was created: the launcher never touches the data directory.
    assert!(!dir.path().join("data").exists());
}

#[cfg(unix)]
#[test]
fn open_execs_the_desktop_binary_in_the_same_process() {
    use std::os::unix::fs::PermissionsExt as _;
    let (dir, apphost) = lone_apphost();
    // A stand-in window that reports its pid, arguments and environment.
    let fake = dir.path().join("apphost-desktop");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho \"pid=$$ args=$# marker=$APPHOST_TEST_MARKER data=$APPHOST_DATA_DIR\"\nexit 7\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();

    for (args, data) in [
        (vec![], "/from/env".to_owned()),
        (vec!["open"], "/from/env".to_owned()),
        (
            vec!["open", "--data-dir", "/from/flag"],
            "/from/flag".to_owned(),
        ),
    ] {
        let child = Command::new(&apphost)
            .args(&args)
            .env("APPHOST_TEST_MARKER", "kept")
            .env("APPHOST_DATA_DIR", "/from/env")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let output = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            stdout.trim(),
            format!("pid={pid} args=0 marker=kept data={data}"),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(output.status.code(), Some(7), "{args:?}");
    }
}

#[cfg(unix)]
#[test]
fn a_desktop_binary_that_cannot_run_is_reported() {
    let (dir, apphost) = lone_apphost();
    // Present but not executable.
    std::fs::write(dir.path().join("apphost-desktop"), "not a program").unwrap();
    let output = Command::new(&apphost)
        .args(["open", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(10), "{stderr}");
    let value: serde_json::Value = serde_json::from_str(stderr.trim()).unwrap();
    assert_eq!(value["error"]["code"], "desktop.unavailable");
}
