//! `apphost secrets set|list|unset` through the real binary: values from stdin (one trailing
//! newline dropped; empty, oversized and non-UTF-8 refused before anything is stored), only the
//! slots the manifest declares, readiness following the bindings, audited, and never a value on
//! stdout, stderr, in host.db or any file of the data directory. The secret store is the
//! encrypted file with its key in the test's own folder (no user keyring or config is touched).

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use common::{apphost_in, copy_dir, describe, files_under};
use serde_json::Value;
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_apphost");
const VALUE: &str = "tok-CANARY-0c4d7e-never-printed";

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

    fn run_with(&self, args: &[&str], stdin: &[u8]) -> Output {
        let mut child = apphost_in(self.tmp.path(), &self.data)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A refused command may exit before reading: a broken pipe is not the test's concern.
        let _ = child.stdin.take().unwrap().write_all(stdin);
        child.wait_with_output().unwrap()
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_with(args, b"")
    }

    /// Installs hello-app with a required and an optional secret slot, as `vault-app`.
    fn install_vault(&self) {
        let pkg = self.tmp.path().join("vault-app");
        copy_dir(
            &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/packages/good/hello-app"),
            &pkg,
        );
        let md = std::fs::read_to_string(pkg.join("APP.md"))
            .unwrap()
            .replacen("name: hello-app", "name: vault-app", 1)
            .replacen(
                "    lime.storage: \"^0.10.0\"\n",
                "    lime.storage: \"^0.10.0\"\n    lime.secrets: \"^0.10.0\"\n",
                1,
            )
            .replacen(
                "runtimePackage:",
                "secrets:\n  - {key: api_token, provider: example, required: true, scope: app}\n  - {key: backup_token, required: false}\nruntimePackage:",
                1,
            );
        std::fs::write(pkg.join("APP.md"), md).unwrap();
        let out = self.run(&["install", pkg.to_str().unwrap(), "--yes", "--sideload"]);
        assert!(out.status.success(), "{}", describe(&out));
    }
}

fn ok_json(out: &Output) -> Value {
    assert!(out.status.success(), "{}", describe(out));
    assert_value_not_in(out);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", describe(out)))
}

fn error_code(out: &Output) -> (String, i32) {
    assert!(!out.status.success(), "{}", describe(out));
    assert_value_not_in(out);
    let code = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("{\"error\""))
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| v["error"]["code"].as_str().unwrap().to_owned())
        .unwrap_or_else(|| panic!("no error JSON: {}", describe(out)));
    (code, out.status.code().unwrap())
}

fn assert_value_not_in(out: &Output) {
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains(VALUE), "the value was printed: {all}");
}

fn readiness(h: &Host) -> Value {
    ok_json(&h.run(&["readiness", "vault-app"]))
}

#[test]
fn secrets_set_list_unset_bind_declared_slots_from_stdin_and_never_print_values() {
    let h = Host::new();
    h.install_vault();
    let r = readiness(&h);
    assert_eq!(r["status"], "needs-setup");
    let action = r["setupActions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "configure-secret")
        .unwrap();
    assert_eq!(action["key"], "api_token");
    assert_eq!(
        action["description"],
        "apphost secrets set vault-app api_token"
    );
    let text = Command::new(BIN)
        .arg("--data-dir")
        .arg(&h.data)
        .args(["readiness", "vault-app"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(
            "setup: Bind secret api_token (configure-secret): apphost secrets set vault-app api_token"
        ),
        "{text}"
    );

    let list = ok_json(&h.run(&["secrets", "list", "vault-app"]));
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert_eq!(list[0]["slot"], "api_token");
    assert_eq!(list[0]["required"], true);
    assert_eq!(list[0]["bound"], false);
    assert_eq!(list[1]["required"], false);

    // Refusals change nothing in the data directory.
    let before = files_under(&h.data);
    for (args, stdin, code, exit) in [
        (
            vec!["secrets", "set", "vault-app", "nope"],
            VALUE.as_bytes().to_vec(),
            "secret.slot_unknown",
            7,
        ),
        (
            vec!["secrets", "set", "vault-app", "api_token"],
            b"".to_vec(),
            "secret.invalid_value",
            2,
        ),
        (
            vec!["secrets", "set", "vault-app", "api_token"],
            b"\n".to_vec(),
            "secret.invalid_value",
            2,
        ),
        (
            vec!["secrets", "set", "vault-app", "api_token"],
            vec![b'x'; 64 * 1024 + 2],
            "secret.invalid_value",
            2,
        ),
        (
            vec!["secrets", "set", "vault-app", "api_token"],
            vec![0xff, 0xfe, b'\n'],
            "secret.invalid_value",
            2,
        ),
        (
            vec!["secrets", "set", "no-such-app", "api_token"],
            VALUE.as_bytes().to_vec(),
            "app.not_installed",
            7,
        ),
        (
            vec!["secrets", "unset", "vault-app", "nope"],
            Vec::new(),
            "secret.slot_unknown",
            7,
        ),
    ] {
        let out = h.run_with(&args, &stdin);
        assert_eq!(error_code(&out), (code.to_owned(), exit), "{args:?}");
        assert_eq!(
            files_under(&h.data),
            before,
            "{args:?} changed the data directory"
        );
    }

    // One trailing newline is dropped; the value is bound, in the encrypted file only.
    let out = h.run_with(
        &["secrets", "set", "vault-app", "api_token"],
        format!("{VALUE}\n").as_bytes(),
    );
    let v = ok_json(&out);
    assert_eq!(v["bound"], true);
    assert_eq!(v["store"], "encrypted-file");
    let list = ok_json(&h.run(&["secrets", "list", "vault-app"]));
    assert_eq!(list[0]["bound"], true);
    assert_eq!(list[0]["store"], "encrypted-file");
    assert!(list[0].get("ref").is_none());
    assert_eq!(readiness(&h)["status"], "ready-degraded");

    // Exactly the value without its newline was stored: host-core resolves the ref to it.
    let dir = host_core::foundation::paths::DataDir::at(&h.data);
    std::env::set_var("APPHOST_SECRET_STORE", "file");
    std::env::set_var(
        "APPHOST_SECRET_KEY_FILE",
        h.tmp.path().join("keys/secrets.key"),
    );
    {
        let store = host_core::install::store::Store::open(&dir).unwrap();
        let handle = host_core::hosting::app_secrets::get_ref(&store, "vault-app", "api_token")
            .unwrap()
            .unwrap();
        let v = host_core::hosting::app_secrets::resolve(&store, "vault-app", &handle)
            .unwrap()
            .unwrap();
        assert_eq!(v.expose(), VALUE);
    }

    let audit = h.run(&["audit", "vault-app"]);
    let text = String::from_utf8_lossy(&audit.stdout).into_owned();
    assert!(text.contains("secret.bind"), "{text}");
    for (path, bytes) in files_under(&h.data) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(VALUE),
            "the value is readable in {path}"
        );
    }

    // Unset: the required slot is unbound again, so the app needs setup.
    let v = ok_json(&h.run(&["secrets", "unset", "vault-app", "api_token"]));
    assert_eq!(v["unbound"], true);
    let v = ok_json(&h.run(&["secrets", "unset", "vault-app", "api_token"]));
    assert_eq!(v["unbound"], false);
    assert_eq!(readiness(&h)["status"], "needs-setup");
    let audit = h.run(&["audit", "vault-app"]);
    assert!(String::from_utf8_lossy(&audit.stdout).contains("secret.unbind"));

    // --delete-data removes bindings; --keep-data keeps them for a reinstall.
    ok_json(&h.run_with(
        &["secrets", "set", "vault-app", "api_token"],
        VALUE.as_bytes(),
    ));
    ok_json(&h.run(&["uninstall", "vault-app", "--keep-data", "--yes"]));
    h.install_vault();
    assert_eq!(
        ok_json(&h.run(&["secrets", "list", "vault-app"]))[0]["bound"],
        true
    );
    ok_json(&h.run(&["uninstall", "vault-app", "--delete-data", "--yes"]));
    h.install_vault();
    assert_eq!(
        ok_json(&h.run(&["secrets", "list", "vault-app"]))[0]["bound"],
        false
    );
}

/// On a terminal the value is typed without echo. The command runs on a pseudo-terminal made by
/// util-linux `script`; the value is sent only once the prompt is shown, so with echo on it
/// would come back in the terminal's output.
#[test]
fn on_a_terminal_the_value_is_not_echoed() {
    use std::io::Read;
    let h = Host::new();
    h.install_vault();
    let cmd = format!(
        "{BIN} --data-dir {} secrets set vault-app api_token",
        h.data.display()
    );
    let mut child = Command::new("script")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .env("APPHOST_SECRET_STORE", "file")
        .env(
            "APPHOST_SECRET_KEY_FILE",
            h.tmp.path().join("keys/secrets.key"),
        )
        .env("XDG_CONFIG_HOME", h.tmp.path().join("config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux `script` is needed for this test");
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("(not shown): ") {
        let n = stdout.read(&mut buf).unwrap();
        assert!(n > 0, "no prompt: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(format!("{VALUE}\n").as_bytes()).unwrap();
    stdout.read_to_end(&mut seen).unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    let shown = String::from_utf8_lossy(&seen);
    assert!(status.success(), "{shown}");
    assert!(shown.contains("bound secret api_token"), "{shown}");
    assert!(!shown.contains(VALUE), "the value was echoed: {shown}");
    let list = ok_json(&h.run(&["secrets", "list", "vault-app"]));
    assert_eq!(list[0]["bound"], true);
}
