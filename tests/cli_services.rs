//! `apphost services list|start|stop|call|logs` through the real binary, in-process (no host
//! running): the doc-parser sample's Python service answers `call` (the host's own path), its
//! storage write goes back through the choke point, the calls and the service's lifecycle are
//! audited, and refusals have stable codes and start nothing. Needs the sandbox shim beside
//! the binary (`cargo build -p service-sandbox --bin apphost-service-shim`).

mod common;

use std::path::PathBuf;

use common::services_cli::{json_rpc_endpoint, ServicesHost as Host};
use common::{copy_dir, describe};

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

/// `allow-remote` / `revoke-remote`: host policy for a `server-assisted` remote service, and a
/// CLI call the host makes to its (loopback, debug-only) endpoint, audited.
#[test]
fn a_remote_service_is_called_only_once_allowed() {
    let h = Host::new();
    // A one-request-per-connection JSON-RPC echo on loopback.
    let addr = json_rpc_endpoint(|req| serde_json::json!({"got": req["params"]}));
    let pkg = h.tmp.path().join("pkg-remote");
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/apps/doc-parser");
    copy_dir(&src, &pkg);
    let md = std::fs::read_to_string(pkg.join("APP.md")).unwrap();
    let (start, end) = (
        md.find("services:\n").unwrap(),
        md.find("storage:\n").unwrap(),
    );
    let md = format!(
        "{}services:\n  - key: summarize\n    kind: app-backend\n    executionPlane: cloud-remote\n    protocol: remote-http\n    endpoint: \"http://{addr}/rpc\"\n    auth: {{kind: none}}\n    dataBoundary: \"Sends what you type.\"\n    required: true\n{}",
        &md[..start],
        &md[end..]
    )
    .replace("name: doc-parser", "name: remote")
    .replace("runtimeTargets: [local]", "runtimeTargets: [local, server-assisted]");
    std::fs::write(pkg.join("APP.md"), md).unwrap();
    let out = h.run(&["install", pkg.to_str().unwrap(), "--yes", "--sideload"]);
    assert!(out.status.success(), "{}", describe(&out));

    let list = h.json(&["services", "list", "remote"]);
    assert_eq!(list[0]["state"], "blocked", "{list}");
    assert_eq!(list[0]["code"], "service.remote_not_allowed");
    let out = h.run(&["services", "call", "remote", "summarize", "go", "{}"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("service.remote_not_allowed"));
    // Only a remote service can be allowed.
    let out = h.run(&["services", "allow-remote", "doc-parser", "parser"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("service.cannot_run") && err.contains("service.remote_not_declared"),
        "{err}"
    );

    let allowed = h.json(&["services", "allow-remote", "remote", "summarize"]);
    assert_eq!(allowed["origin"], format!("http://{addr}"));
    assert_eq!(allowed["changed"], true);
    assert_eq!(
        h.json(&["services", "list", "remote"])[0]["state"],
        "remote"
    );
    let got = h.json(&[
        "services",
        "call",
        "remote",
        "summarize",
        "go",
        r#"{"x": 1}"#,
    ]);
    assert_eq!(got, serde_json::json!({"got": {"x": 1}}));
    let audit = h.json(&["audit", "remote", "--limit", "50"]);
    let rows = audit.as_array().unwrap();
    assert!(
        rows.iter().any(|r| r["action"] == "service.remote_allow"),
        "{audit}"
    );
    assert!(
        rows.iter()
            .any(|r| r["action"] == "service.remote_call" && r["details"]["ok"] == true),
        "{audit}"
    );
    assert!(
        rows.iter()
            .any(|r| r["action"] == "service.call" && r["details"]["by"] == "cli"),
        "{audit}"
    );

    let revoked = h.json(&["services", "revoke-remote", "remote", "summarize"]);
    assert_eq!(revoked["changed"], true);
    let out = h.run(&["services", "call", "remote", "summarize", "go", "{}"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("service.remote_not_allowed"),
        "{}",
        describe(&out)
    );
}
