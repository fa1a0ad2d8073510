//! Helpers shared by the root package's integration tests.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

pub mod services_cli;
pub mod workflow_cli;

/// Every regular file under `dir`: relative path → contents (empty if `dir` is absent).
pub fn files_under(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                walk(base, &path, out);
            } else {
                let rel = path
                    .strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out
}

/// Copies a folder tree (regular files and folders).
pub fn copy_dir(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    for entry in fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            fs::copy(entry.path(), &to).unwrap();
        }
    }
}

/// The entries of a zip and their contents, read with Python's zipfile after checking every
/// member's CRC (an independent reader, not the one AppHost uses).
pub fn zip_contents(path: &Path) -> BTreeMap<String, Vec<u8>> {
    let out = Command::new("python3")
        .arg("-c")
        .arg(
            "import json, sys, zipfile\n\
             z = zipfile.ZipFile(sys.argv[1])\n\
             bad = z.testzip()\n\
             assert bad is None, bad\n\
             print(json.dumps({n: list(z.read(n)) for n in z.namelist()}))",
        )
        .arg(path)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "{} is not a complete zip: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `apphost --json --data-dir <data>` with the secret store pinned to the encrypted file, its
/// key and any config under `tmp` (no user keyring or config is touched), and no crash point.
pub fn apphost_in(tmp: &Path, data: &Path) -> Command {
    let mut cmd = apphost_text_in(tmp, data);
    cmd.arg("--json");
    cmd
}

/// [`apphost_in`] with text output (what a person sees).
pub fn apphost_text_in(tmp: &Path, data: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_apphost"));
    cmd.arg("--data-dir")
        .arg(data)
        .env("APPHOST_SECRET_STORE", "file")
        .env("APPHOST_SECRET_KEY_FILE", tmp.join("keys/secrets.key"))
        .env("XDG_CONFIG_HOME", tmp.join("config"))
        .env_remove("APPHOST_CRASH_AT");
    cmd
}

/// A command's status, stdout and stderr, for assertion messages.
pub fn describe(out: &std::process::Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A running `apphost serve`, killed and reaped when dropped.
pub struct Serving {
    pub child: Child,
    /// The first line it printed (its URL, port and pid as JSON): by then the door is open.
    pub first_line: String,
}

impl Serving {
    /// Runs `cmd` (`apphost_in(..)`, with any env) with `serve` and waits for its first line.
    pub fn start(mut cmd: Command) -> Serving {
        let mut child = cmd
            .arg("serve")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut first_line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first_line)
            .unwrap();
        let serving = Serving { child, first_line };
        assert!(
            serving.first_line.contains("\"url\""),
            "{:?}",
            serving.first_line
        );
        serving
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
