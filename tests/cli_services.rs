//! `apphost services list|start|stop|call|logs` through the real binary, in-process (no host
//! running): the doc-parser sample's Python service answers `call` (the host's own path), its
//! storage write goes back through the choke point, the calls and the service's lifecycle are
//! audited, and refusals have stable codes and start nothing. Needs the sandbox shim beside
//! the binary (`cargo build -p service-sandbox --bin apphost-service-shim`).

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::{apphost_in, describe};
use serde_json::Value;
use tempfile::TempDir;

struct Host {
    tmp: TempDir,
    data: PathBuf,
}

impl Host {
    fn new() -> Host {
        let shim =
            PathBuf::from(env!("CARGO_BIN_EXE_apphost")).with_file_name("apphost-service-shim");
        assert!(
            shim.is_file(),
            "build the sandbox shim first: cargo build -p service-sandbox --bin apphost-service-shim"
        );
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let h = Host { tmp, data };
        let pkg = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/apps/doc-parser");
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

    fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(out.status.success(), "{}", describe(&out));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", describe(&out)))
    }
}

#[test]
fn call_reaches_the_python_service_which_writes_storage_through_the_host() {
    let h = Host::new();
    let list = h.json(&["services", "list", "doc-parser"]);
    assert_eq!(list[0]["key"], "parser");
    assert_eq!(list[0]["state"], "stopped");
    let out = h.json(&[
        "services",
        "call",
        "doc-parser",
        "parser",
        "parse",
        r##"{"text": "# Notes\nalpha beta\n## Next\ngamma"}"##,
    ]);
    assert_eq!(out["words"], 3, "{out}");
    assert_eq!(out["headings"], 2);
    assert_eq!(out["saved"], true);
    let logs = h.run(&["services", "logs", "doc-parser", "parser"]);
    assert!(logs.status.success(), "{}", describe(&logs));
    let audit = h.json(&["audit", "doc-parser", "--limit", "50"]);
    let rows = audit.as_array().unwrap();
    let has = |action: &str| rows.iter().any(|r| r["action"] == action);
    assert!(
        has("service.call") && has("service.start") && has("service.stop"),
        "{audit}"
    );
    let call = rows.iter().find(|r| r["action"] == "service.call").unwrap();
    assert_eq!(call["details"]["by"], "cli");
    assert!(
        rows.iter().any(|r| r["action"] == "capability.call"
            && r["details"]["entryKey"] == "service/parser"
            && r["details"]["capability"] == "lime.storage"),
        "the service's own storage call is audited: {audit}"
    );
    // No process outlives the command.
    let ps = std::process::Command::new("pgrep")
        .args(["-f", "services/parser/parser.py"])
        .output();
    if let Ok(ps) = ps {
        let mine: Vec<_> = String::from_utf8_lossy(&ps.stdout)
            .lines()
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                    .map(|c| c.contains(h.data.to_str().unwrap()))
                    .unwrap_or(false)
            })
            .map(str::to_owned)
            .collect();
        assert!(mine.is_empty(), "left running: {mine:?}");
    }
}

#[test]
fn refusals_have_stable_codes_and_start_nothing() {
    let h = Host::new();
    for (args, code) in [
        (
            vec!["services", "call", "doc-parser", "nope", "parse"],
            "service.not_declared",
        ),
        (
            vec!["services", "call", "doc-parser", "parser", "initialize"],
            "service.cannot_run",
        ),
        (
            vec!["services", "call", "doc-parser", "parser", "missing"],
            "service.call_failed",
        ),
        (
            vec![
                "services",
                "call",
                "doc-parser",
                "parser",
                "parse",
                "{not json",
            ],
            "service.call_failed",
        ),
        (
            vec!["services", "start", "no-such-app", "parser"],
            "service.cannot_run",
        ),
    ] {
        let out = h.run(&args);
        assert!(!out.status.success(), "{args:?}: {}", describe(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(code),
            "{args:?} wanted {code}: {}",
            describe(&out)
        );
    }
}
