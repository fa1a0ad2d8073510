//! `apphost open <file>`: a package file opens the window on its install review sheet
//! (docs/shipping.md, the desktop entry's `Exec=apphost-desktop %f` does the same). The path is
//! checked before the window starts; a bad one is refused with a stable code and the window
//! never runs.

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const APPHOST: &str = env!("CARGO_BIN_EXE_apphost");

/// `apphost` in a fresh folder beside a stand-in window that prints what it was asked to open.
fn apphost_with_fake_window() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("apphost");
    std::fs::copy(APPHOST, &copy).unwrap();
    let fake = dir.path().join("apphost-desktop");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho \"package=$APPHOST_OPEN_PACKAGE app=$APPHOST_OPEN_APP args=$#\"\nexit 7\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Exec of a file another test thread's fork still holds open for writing fails with
    // ETXTBSY for a moment: run it once first, retrying that error.
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

fn run(apphost: &Path, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(apphost);
    c.args(args)
        .current_dir(cwd)
        .env("APPHOST_DATA_DIR", cwd.join("data"))
        .env_remove("APPHOST_OPEN_PACKAGE")
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn a_package_file_is_handed_to_the_window_as_an_absolute_path() {
    let (dir, apphost) = apphost_with_fake_window();
    std::fs::write(dir.path().join("notes.agentapp"), b"PK\x03\x04").unwrap();
    std::fs::write(dir.path().join("other.ZIP"), b"PK\x03\x04").unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    for (arg, name) in [
        ("notes.agentapp", "notes.agentapp"),
        ("./other.ZIP", "other.ZIP"),
    ] {
        let out = run(&apphost, dir.path(), &["open", arg], &[]);
        assert_eq!(out.status.code(), Some(7), "{arg}: {out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            format!("package={} app= args=0", root.join(name).display())
        );
    }
}

#[test]
fn a_plain_open_does_not_pass_on_an_inherited_package() {
    let (dir, apphost) = apphost_with_fake_window();
    let out = run(
        &apphost,
        dir.path(),
        &["open"],
        &[("APPHOST_OPEN_PACKAGE", "/somewhere/evil.agentapp")],
    );
    assert_eq!(out.status.code(), Some(7), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "package= app= args=0"
    );
}

#[test]
fn bad_package_paths_are_refused_before_the_window_starts() {
    let (dir, apphost) = apphost_with_fake_window();
    std::fs::write(dir.path().join("notes.txt"), b"PK\x03\x04").unwrap();
    std::fs::create_dir(dir.path().join("folder.agentapp")).unwrap();
    std::fs::write(dir.path().join("ok.agentapp"), b"PK\x03\x04").unwrap();
    for (args, code) in [
        (&["open", "--json", "./notes.txt"][..], "source.unsupported"),
        (
            &["open", "--json", "folder.agentapp"][..],
            "source.unsupported",
        ),
        (
            &["open", "--json", "missing.agentapp"][..],
            "source.not_found",
        ),
        (
            &["open", "--json", "ok.agentapp", "--entry", "main"][..],
            "cli.usage",
        ),
    ] {
        let out = run(&apphost, dir.path(), args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(7), "{args:?}: the window ran");
        assert!(out.stdout.is_empty(), "{args:?}: the window ran");
        let value: serde_json::Value = serde_json::from_str(stderr.trim())
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {stderr}"));
        assert_eq!(value["error"]["code"], code, "{args:?}");
    }
    // Nothing was created: the launcher does not touch the data directory.
    assert!(!dir.path().join("data").exists());
}
