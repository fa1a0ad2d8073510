//! The author's loop, from the outside: `validate` finds what fails at run time (with file,
//! line and what to write instead), `apphost dev` ignores a stale lock and signature and says
//! so once, a signed release replaces the dev install (data kept), `dev` without a display
//! points to `--serve`, `--serve --no-open` is accepted, and the CLI's text says what went
//! wrong in words (hashes only with `--verbose`, no Rust type names).

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/packages")
        .join(rel)
}

struct Env {
    tmp: tempfile::TempDir,
    data: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        Env { tmp, data }
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }
    /// `apphost --json …`.
    fn json(&self, args: &[&str]) -> (Output, Value) {
        let out = common::apphost_in(self.tmp.path(), &self.data)
            .args(args)
            .output()
            .unwrap();
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out, v)
    }
    /// `apphost …` with text output (no `--json`).
    fn text(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_apphost"))
            .arg("--data-dir")
            .arg(&self.data)
            .args(args)
            .env("APPHOST_SECRET_STORE", "file")
            .env("APPHOST_SECRET_KEY_FILE", self.path("keys/secrets.key"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
    fn app_folder(&self) -> PathBuf {
        let folder = self.path("app");
        common::copy_dir(&fixture("good/hello-app"), &folder);
        folder
    }
    fn list(&self) -> Value {
        let (out, v) = self.json(&["list"]);
        assert!(out.status.success(), "{}", common::describe(&out));
        v
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const BROKEN_PAGE: &str = "<!doctype html>\n<html><head>\n<script>boot()</script>\n<link rel=\"stylesheet\" href=\"https://cdn.example/x.css\">\n</head><body>\n<form><button onclick=\"save()\">Save</button></form>\n</body></html>\n";

#[test]
fn validate_names_what_fails_at_run_time_with_file_line_and_fix() {
    let env = Env::new();
    let folder = env.app_folder();
    std::fs::write(folder.join("dist/ui/index.html"), BROKEN_PAGE).unwrap();
    // A permission whose capability is not declared.
    let md = std::fs::read_to_string(folder.join("APP.md")).unwrap();
    std::fs::write(
        folder.join("APP.md"),
        md.replace("    lime.storage: \"^0.10.0\"\n", ""),
    )
    .unwrap();
    let (out, v) = env.json(&["validate", s(&folder)]);
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
    assert_eq!(v["ok"], true);
    assert_eq!(v["status"], "needs-review");
    let found: Vec<(String, String, Option<u64>)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"].as_str().unwrap().starts_with("authoring."))
        .map(|f| {
            assert_eq!(f["severity"], "warning", "{f}");
            assert!(f["fix"].as_str().is_some_and(|x| !x.is_empty()), "{f}");
            (
                f["code"].as_str().unwrap().to_owned(),
                f["path"].as_str().unwrap().to_owned(),
                f["line"].as_u64(),
            )
        })
        .collect();
    let page = "dist/ui/index.html".to_owned();
    assert_eq!(
        found,
        vec![
            (
                "authoring.permission_capability_undeclared".into(),
                "APP.md#/permissions/0/scope".into(),
                None
            ),
            ("authoring.inline_script".into(), page.clone(), Some(3)),
            ("authoring.external_url".into(), page.clone(), Some(4)),
            ("authoring.form_without_forms".into(), page.clone(), Some(6)),
            ("authoring.inline_handler".into(), page.clone(), Some(6)),
        ]
    );
    // Text: the summary first, each finding at file:line with what to write instead, and no
    // hashes unless asked.
    let out = env.text(&["validate", s(&folder)]);
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("hello-app 1.0.0: needs-review (0 error(s), "),
        "{text}"
    );
    assert!(
        text.contains("authoring.inline_script dist/ui/index.html:3:"),
        "{text}"
    );
    assert!(
        text.contains("      instead: move the code to a file"),
        "{text}"
    );
    assert!(!text.contains("sha256:"), "{text}");
    let out = env.text(&["--verbose", "validate", s(&folder)]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("packageHash  sha256:"));
    // The untouched fixture has no authoring findings.
    let (_, v) = env.json(&["validate", s(&fixture("good/hello-app"))]);
    let codes: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["code"].as_str())
        .filter(|c| c.starts_with("authoring."))
        .collect();
    assert!(codes.is_empty(), "{codes:?}");
}

#[test]
fn a_page_without_ui_is_a_warning_that_says_what_to_add() {
    let env = Env::new();
    let folder = env.path("bare");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("APP.md"),
        "---\nname: bare-app\ndescription: d\nversion: 1.0.0\nstatus: ready\nappType: agent-app\nentries:\n  - key: main\n    kind: page\n    title: Main\n---\n# Bare\n",
    )
    .unwrap();
    let (out, v) = env.json(&["validate", s(&folder)]);
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "authoring.page_without_ui")
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(f["path"], "APP.md#/entries/0");
    assert!(f["fix"].as_str().unwrap().contains("runtimePackage"));
}

/// A hostile page: a huge file of handlers costs a bounded scan and a bounded finding list.
#[test]
fn a_hostile_page_costs_a_bounded_scan() {
    let env = Env::new();
    let folder = env.app_folder();
    std::fs::write(
        folder.join("dist/ui/index.html"),
        "<b onclick=x>".repeat(400_000),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let (out, v) = env.json(&["validate", s(&folder)]);
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
    let authoring: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"].as_str().unwrap().starts_with("authoring."))
        .collect();
    assert_eq!(authoring.len(), 51, "50 findings and the truncation note");
    assert_eq!(authoring[50]["code"], "authoring.scan_truncated");
    assert!(started.elapsed() < Duration::from_secs(20));
}

fn keygen(env: &Env) -> (PathBuf, PathBuf) {
    let key = env.path("publisher.key.json");
    let (out, _) = env.json(&["keygen", "--out", s(&key), "--name", "Author"]);
    assert!(out.status.success(), "{}", common::describe(&out));
    (key.clone(), key.with_extension("pub.json"))
}

#[test]
fn a_stale_lock_is_named_by_file_and_app_in_validate() {
    let env = Env::new();
    let folder = env.app_folder();
    let (key, _) = keygen(&env);
    let (out, _) = env.json(&["sign", s(&folder), "--key", s(&key)]);
    assert!(out.status.success(), "{}", common::describe(&out));
    std::fs::write(folder.join("dist/ui/index.html"), "<p>edited</p>").unwrap();
    std::fs::write(folder.join("dist/ui/new.css"), "p{}").unwrap();
    let out = env.text(&["validate", s(&folder)]);
    assert_eq!(out.status.code(), Some(1), "{}", common::describe(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("hello-app: failed"), "{text}");
    assert!(text.contains("changed: dist/ui/index.html"), "{text}");
    assert!(text.contains("not listed: dist/ui/new.css"), "{text}");
    let (_, v) = env.json(&["validate", s(&folder)]);
    assert_eq!(v["error"]["code"], "verify.lock_mismatch");
    assert_eq!(v["error"]["details"]["app"], "hello-app");
}

/// Reads `apphost dev --json` events (stdout) until the one with `event == want`.
fn dev_events(env: &Env, folder: &Path) -> (std::process::Child, mpsc::Receiver<Value>) {
    let mut child = common::apphost_in(env.tmp.path(), &env.data)
        .args(["dev", "--no-open"])
        .arg(folder)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                if tx.send(v).is_err() {
                    break;
                }
            }
        }
    });
    (child, rx)
}

fn next(rx: &mpsc::Receiver<Value>) -> Value {
    rx.recv_timeout(Duration::from_secs(30))
        .expect("apphost dev printed an event")
}

fn stop(mut child: std::process::Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn dev_ignores_a_stale_lock_and_signature_says_so_once_and_a_signed_release_replaces_it() {
    let env = Env::new();
    let folder = env.app_folder();
    let (key, public) = keygen(&env);
    let (out, _) = env.json(&["sign", s(&folder), "--key", s(&key)]);
    assert!(out.status.success(), "{}", common::describe(&out));
    let (out, _) = env.json(&["trust", "add", s(&public)]);
    assert!(out.status.success(), "{}", common::describe(&out));
    // An edit after signing: lock and signature are stale.
    std::fs::write(folder.join("dist/ui/index.html"), "<p>edit 1</p>").unwrap();
    let (child, rx) = dev_events(&env, &folder);
    let note = next(&rx);
    assert_eq!(note["event"], "note", "{note}");
    assert_eq!(note["app"], "hello-app");
    let message = note["message"].as_str().unwrap();
    assert!(
        message.contains("never trusted") && message.contains("dist/ui/index.html"),
        "{message}"
    );
    let installed = next(&rx);
    assert_eq!(installed["event"], "installed", "{installed}");
    std::fs::write(folder.join("dist/ui/index.html"), "<p>edit 2</p>").unwrap();
    let updated = next(&rx);
    assert_eq!(updated["event"], "updated", "said once: {updated}");
    stop(child);
    // Never trusted, though the signature's key is.
    let apps = env.list();
    assert_eq!(apps[0]["dev"], true);
    assert_eq!(apps[0]["sideloaded"], true);
    assert_eq!(apps[0]["trust"], "unsigned");

    // The app's data, to be kept.
    let marker = env.data.join("apps/hello-app/files/kept.txt");
    std::fs::create_dir_all(marker.parent().unwrap()).unwrap();
    std::fs::write(&marker, "mine").unwrap();
    // Sign again and update: the signed 1.0.0 replaces 1.0.0+dev.<ms> after consent.
    let (out, _) = env.json(&["sign", s(&folder), "--key", s(&key)]);
    assert!(out.status.success(), "{}", common::describe(&out));
    let (out, _) = env.json(&["update", s(&folder)]);
    assert_eq!(
        out.status.code(),
        Some(5),
        "consent first: {}",
        common::describe(&out)
    );
    assert!(
        env.list()[0]["dev"] == true,
        "nothing changed without consent"
    );
    let (out, v) = env.json(&["update", s(&folder), "--yes"]);
    assert!(out.status.success(), "{}", common::describe(&out));
    assert_eq!(v["app"]["activeVersion"], "1.0.0");
    let apps = env.list();
    assert_eq!(apps[0]["activeVersion"], "1.0.0");
    assert_eq!(apps[0]["dev"], false, "no longer a dev install");
    assert_eq!(apps[0]["trust"], "trusted");
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "mine");
    // And apphost dev now refuses to turn the release back into a dev app.
    let (out, _) = env.json(&["dev", "--no-open", s(&folder)]);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("dev.not_a_dev_install"));
}

/// Only a real dev install is replaced by the release of its version: an app installed
/// normally with a `+dev.` build in its version is not (build metadata still orders it).
#[test]
fn a_normal_install_with_a_dev_looking_version_is_not_replaced_by_an_older_one() {
    let env = Env::new();
    let folder = env.app_folder();
    let md = std::fs::read_to_string(folder.join("APP.md")).unwrap();
    std::fs::write(
        folder.join("APP.md"),
        md.replace("version: 1.0.0", "version: 1.0.0+dev.5"),
    )
    .unwrap();
    let (out, _) = env.json(&["install", s(&folder), "--sideload", "--yes"]);
    assert!(out.status.success(), "{}", common::describe(&out));
    std::fs::write(folder.join("APP.md"), &md).unwrap();
    let (out, _) = env.json(&["update", s(&folder), "--sideload", "--yes"]);
    assert_eq!(out.status.code(), Some(6), "{}", common::describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("install.not_newer"));
    assert_eq!(env.list()[0]["activeVersion"], "1.0.0+dev.5");
}

#[test]
fn dev_without_a_display_points_to_serve_and_installs_nothing() {
    let env = Env::new();
    let folder = env.app_folder();
    let out = common::apphost_in(env.tmp.path(), &env.data)
        .args(["dev"])
        .arg(&folder)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(10), "{}", common::describe(&out));
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["code"], "desktop.unavailable");
    let hint = err["error"]["details"]["remediation"].as_str().unwrap();
    assert!(
        hint.contains("--serve") && hint.contains("--no-open"),
        "{hint}"
    );
    assert!(!env.data.join("host.db").exists() || env.list() == Value::Array(vec![]));
}

#[test]
fn dev_serve_no_open_is_accepted() {
    let env = Env::new();
    let folder = env.app_folder();
    let mut child = common::apphost_in(env.tmp.path(), &env.data)
        .args(["dev", "--serve", "--no-open"])
        .arg(&folder)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let mut err = String::new();
    if first.trim().is_empty() {
        // Built without the host UI: the server refused to start (not a usage error).
        let _ = child.wait();
        use std::io::Read as _;
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(err.contains("server.ui_missing"), "{err}");
    } else {
        let line: Value = serde_json::from_str(first.trim()).unwrap();
        assert!(line["url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:"));
    }
    assert!(!err.contains("cli.usage"), "{err}");
    stop(child);
}

#[test]
fn uninstall_and_install_text_speak_in_words() {
    let env = Env::new();
    let (out, _) = env.json(&[
        "install",
        s(&fixture("good/hello-app")),
        "--sideload",
        "--yes",
    ]);
    assert!(out.status.success(), "{}", common::describe(&out));
    let out = env.text(&["cleanup-plan", "hello-app"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("Uninstalling hello-app, keeping its data, would remove:"),
        "{text}"
    );
    assert!(
        !text.contains("KeepData") && !text.contains("sha256:"),
        "{text}"
    );
    let out = env.text(&["--verbose", "cleanup-plan", "hello-app"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("sha256:"));
    // The install question says first when the app cannot run here yet.
    let folder = env.path("agent");
    common::copy_dir(&fixture("good/hello-app"), &folder);
    let md = std::fs::read_to_string(folder.join("APP.md")).unwrap();
    std::fs::write(
        folder.join("APP.md"),
        md.replace("name: hello-app", "name: needs-model-app")
            .replace(
                "    lime.storage: \"^0.10.0\"\n",
                "    lime.storage: \"^0.10.0\"\n    lime.agent: \"^0.10.0\"\n",
            ),
    )
    .unwrap();
    let out = env.text(&["install", s(&folder), "--sideload"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "Note: needs-model-app is not ready: it cannot run here yet (readiness needs-setup)"
        ),
        "{err}"
    );
    assert!(err.contains("install.consent_required"), "{err}");
    // An app that runs here (ready, or ready-degraded) gets no such note.
    let out = env.text(&["install", s(&fixture("good/notes-viewer")), "--sideload"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("not ready"));
}

/// Before its APP.md could be read, the dev app is named by its folder (never `?`), in JSON and
/// in text.
#[test]
fn dev_names_the_app_by_its_folder_before_its_manifest_reads() {
    let env = Env::new();
    let folder = env.path("my-folder");
    common::copy_dir(&fixture("good/hello-app"), &folder);
    std::fs::write(folder.join("APP.md"), "---\nname: [\n---\n").unwrap();
    let (child, rx) = dev_events(&env, &folder);
    let first = next(&rx);
    assert_eq!(first["event"], "invalid", "{first}");
    assert_eq!(first["app"], "my-folder");
    stop(child);
    let mut child = Command::new(env!("CARGO_BIN_EXE_apphost"))
        .arg("--data-dir")
        .arg(&env.data)
        .args(["dev", "--no-open"])
        .arg(&folder)
        .env("APPHOST_SECRET_STORE", "file")
        .env("APPHOST_SECRET_KEY_FILE", env.path("keys/secrets.key"))
        .env("XDG_CONFIG_HOME", env.path("config"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("dev: my-folder NOT updated"), "{line}");
    stop(child);
}
