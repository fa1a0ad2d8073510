//! `apphost tools` through the real binary against `fixtures/mcp/test_server.py`: add lists the
//! server's tools with annotations, grant/call/revoke per app, a destructive tool only with
//! `--yes`, refusals with their exit codes, and a server secret that reaches the server but
//! never stdout, stderr, `tools list`, host.db or any file of the data directory.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Output, Stdio};

use common::{apphost_in, describe, files_under};
use serde_json::Value;
use tempfile::TempDir;

const CANARY: &str = "mcp-CANARY-93ab1e-never-printed";

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
        let _ = child.stdin.take().unwrap().write_all(stdin);
        let out = child.wait_with_output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!text.contains(CANARY), "the secret was printed: {text}");
        out
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_with(args, b"")
    }

    fn ok(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(out.status.success(), "{}", describe(&out));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", describe(&out)))
    }

    fn err(&self, args: &[&str]) -> (i32, String) {
        let out = self.run(args);
        assert!(!out.status.success(), "{}", describe(&out));
        let v: Value =
            serde_json::from_slice(&out.stderr).unwrap_or_else(|_| panic!("{}", describe(&out)));
        (
            out.status.code().unwrap(),
            v["error"]["code"].as_str().unwrap().to_owned(),
        )
    }
}

fn server() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/mcp/test_server.py")
        .display()
        .to_string()
}

#[test]
fn tools_add_grant_call_revoke_and_a_secret_that_is_never_shown() {
    let h = Host::new();
    let notes = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/apps/notes");
    let out = h.run(&["install", notes.to_str().unwrap(), "--yes", "--sideload"]);
    assert!(out.status.success(), "{}", describe(&out));

    // The secret first, from stdin; then a server that needs it.
    let out = h.run_with(
        &["tools", "secret", "set", "token"],
        format!("{CANARY}\n").as_bytes(),
    );
    assert!(out.status.success(), "{}", describe(&out));
    let s = server();
    let added = h.ok(&[
        "tools",
        "add",
        "t",
        "--secret-env",
        "TOOL_TOKEN=token",
        "--",
        "/usr/bin/python3",
        &s,
    ]);
    let names: Vec<&str> = added["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"delete_note"),
        "{added}"
    );
    assert_eq!(
        h.err(&["tools", "add", "t", "--", "/usr/bin/python3", &s]),
        (6, "tools.server_exists".into())
    );
    assert_eq!(
        h.err(&["tools", "add", "u", "--url", "https://example.com/mcp"]),
        (2, "tools.invalid".into())
    );

    let listed = h.ok(&["tools", "list"]);
    let t = &listed["servers"][0];
    assert_eq!(t["server"], "t");
    assert_eq!(t["definition"]["secrets"]["TOOL_TOKEN"], "token");
    let del = t["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "delete_note")
        .unwrap();
    assert_eq!(del["destructiveHint"], true);

    assert_eq!(
        h.err(&["tools", "call", "notes", "t/echo", r#"{"text":"x"}"#]),
        (4, "tools.not_granted".into())
    );
    h.ok(&["tools", "grant", "notes", "t/echo"]);
    h.ok(&["tools", "grant", "notes", "t/delete_note"]);
    h.ok(&["tools", "grant", "notes", "t/secret_digest"]);
    let v = h.ok(&[
        "tools",
        "call",
        "notes",
        "t/echo",
        r#"{"text":"through the CLI"}"#,
    ]);
    assert_eq!(v["content"][0]["text"], "through the CLI");
    assert_eq!(
        h.err(&["tools", "call", "notes", "t/delete_note", r#"{"id":"1"}"#]),
        (5, "tools.denied".into())
    );
    let v = h.ok(&[
        "tools",
        "call",
        "notes",
        "t/delete_note",
        r#"{"id":"1"}"#,
        "--yes",
    ]);
    assert_eq!(v["content"][0]["text"], "deleted 1");
    assert_eq!(
        h.err(&["tools", "call", "notes", "t/echo", "[1]"]),
        (2, "tools.invalid".into())
    );
    let v = h.ok(&["tools", "call", "notes", "t/secret_digest"]);
    use sha2::Digest;
    assert_eq!(
        v["content"][0]["text"],
        hex::encode(sha2::Sha256::digest(CANARY.as_bytes()))
    );

    h.ok(&["tools", "revoke", "notes", "t/echo"]);
    assert_eq!(
        h.err(&["tools", "call", "notes", "t/echo", "{}"]),
        (4, "tools.not_granted".into())
    );
    let audit = h.ok(&["audit", "notes"]);
    assert!(audit.to_string().contains("tools.call"), "{audit}");
    h.ok(&["tools", "list", "--verbose", "--refresh"]);
    h.ok(&["tools", "remove", "t"]);
    assert_eq!(h.ok(&["tools", "list"])["servers"], serde_json::json!([]));
    for (name, bytes) in files_under(&h.data) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(CANARY),
            "{name} holds the secret"
        );
    }
}
