//! `apphost files grant|list|revoke` through the real binary: refs printed, exit codes by class
//! (docs/cli.md), refusals that change nothing, and uninstall removing the refs.

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::{apphost_in, copy_dir, describe};
use serde_json::Value;
use tempfile::TempDir;

struct Host {
    tmp: TempDir,
    data: PathBuf,
}

impl Host {
    fn new() -> Host {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let h = Host { tmp, data };
        let pkg = h.tmp.path().join("files-cli-app");
        copy_dir(
            &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/packages/good/hello-app"),
            &pkg,
        );
        let md = std::fs::read_to_string(pkg.join("APP.md"))
            .unwrap()
            .replacen("name: hello-app", "name: files-cli-app", 1);
        std::fs::write(pkg.join("APP.md"), md).unwrap();
        let out = h.run(&["install", pkg.to_str().unwrap(), "--yes", "--sideload"]);
        assert!(out.status.success(), "{}", describe(&out));
        h
    }

    fn run(&self, args: &[&str]) -> Output {
        apphost_in(self.tmp.path(), &self.data)
            .args(args)
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(out.status.success(), "{}", describe(&out));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", describe(&out)))
    }

    fn fails(&self, args: &[&str], code: &str, exit: i32) {
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(exit), "{}", describe(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(&format!("\"code\":\"{code}\"")),
            "{}",
            describe(&out)
        );
    }
}

#[test]
fn grant_list_revoke_and_the_refusals() {
    let h = Host::new();
    let doc = h.tmp.path().join("doc.txt");
    std::fs::write(&doc, "hello").unwrap();
    let granted = h.ok(&["files", "grant", "files-cli-app", doc.to_str().unwrap()]);
    let r = granted["ref"].as_str().unwrap().to_owned();
    assert!(r.starts_with("fref_"), "{granted}");
    assert_eq!(granted["kind"], "file");
    assert_eq!(granted["size"], 5);
    let list = h.ok(&["files", "list", "files-cli-app"]);
    assert_eq!(list.as_array().unwrap().len(), 1);

    let missing = h.tmp.path().join("missing.txt");
    h.fails(
        &["files", "grant", "files-cli-app", missing.to_str().unwrap()],
        "files.path_not_found",
        7,
    );
    h.fails(
        &["files", "grant", "files-cli-app", h.data.to_str().unwrap()],
        "files.path_not_allowed",
        4,
    );
    h.fails(
        &["files", "grant", "nope", doc.to_str().unwrap()],
        "app.not_installed",
        7,
    );
    h.fails(
        &["files", "revoke", "files-cli-app", "/etc/passwd"],
        "files.ref_not_found",
        7,
    );
    h.fails(&["files", "list", "nope"], "app.not_installed", 7);
    assert_eq!(
        h.ok(&["files", "list", "files-cli-app"])
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let revoked = h.ok(&["files", "revoke", "files-cli-app", &r]);
    assert_eq!(revoked["revoked"], true);
    h.fails(
        &["files", "revoke", "files-cli-app", &r],
        "files.ref_not_found",
        7,
    );
    assert_eq!(
        h.ok(&["files", "list", "files-cli-app"]),
        Value::Array(vec![])
    );

    h.ok(&[
        "files",
        "grant",
        "files-cli-app",
        h.tmp.path().join("doc.txt").to_str().unwrap(),
    ]);
    let out = h.run(&["uninstall", "files-cli-app", "--keep-data", "--yes"]);
    assert!(out.status.success(), "{}", describe(&out));
    let audit = h.ok(&["audit", "files-cli-app"]);
    assert!(audit.to_string().contains("files.remove_all"), "{audit}");
    // The grant, revoke and removal records name refs and file names, never a path.
    let files_rows: Vec<&Value> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["action"].as_str().unwrap_or("").starts_with("files."))
        .collect();
    assert_eq!(files_rows.len(), 4, "{audit}");
    for row in files_rows {
        assert!(
            !row.to_string().contains(h.tmp.path().to_str().unwrap()),
            "{row}"
        );
    }
}
