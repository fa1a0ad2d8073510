//! The admin's `<data>/policy/services.json` through the real `apphost` binary: `services
//! allow-remote` / `grant-network` refused with `service.cannot_run` (cause
//! `service.policy_denied`, exit 6) and nothing written; `services list` and `services call`
//! show it, and an allowance given before the policy does not help (deny wins).

mod common;

use std::path::{Path, PathBuf};

use common::services_cli::{json_rpc_endpoint, ServicesHost as Host};
use common::{copy_dir, describe};

const CODE: &str = "service.policy_denied";

/// A loopback JSON-RPC endpoint answering `{"ok": true}`.
fn endpoint() -> std::net::SocketAddr {
    json_rpc_endpoint(|_| serde_json::json!({"ok": true}))
}

/// doc-parser renamed `name`, its service rewritten by `edit`.
fn package(h: &Host, name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let pkg = h.tmp.path().join(format!("pkg-{name}"));
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/apps/doc-parser");
    copy_dir(&src, &pkg);
    let md = std::fs::read_to_string(pkg.join("APP.md")).unwrap();
    let md = edit(md).replace("name: doc-parser", &format!("name: {name}"));
    std::fs::write(pkg.join("APP.md"), md).unwrap();
    let out = h.run(&["install", pkg.to_str().unwrap(), "--yes", "--sideload"]);
    assert!(out.status.success(), "{}", describe(&out));
    pkg
}

fn write_policy(data: &Path, text: &str) {
    std::fs::create_dir_all(data.join("policy")).unwrap();
    std::fs::write(data.join("policy/services.json"), text).unwrap();
}

fn refused_by_policy(h: &Host, args: &[&str]) -> String {
    let out = h.run(args);
    assert!(!out.status.success(), "{args:?}: {}", describe(&out));
    assert_eq!(out.status.code(), Some(6), "{args:?}: {}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err.contains(CODE), "{args:?}: {err}");
    assert!(err.contains("services.json"), "names the file: {err}");
    err
}

#[test]
fn the_policy_refuses_allow_remote_and_grant_network_and_beats_an_earlier_allowance() {
    let h = Host::installed(&[]);
    let addr = endpoint();
    package(&h, "remote", |md| {
        let (start, end) = (
            md.find("services:\n").unwrap(),
            md.find("storage:\n").unwrap(),
        );
        format!(
            "{}services:\n  - key: summarize\n    kind: app-backend\n    executionPlane: cloud-remote\n    protocol: remote-http\n    endpoint: \"http://{addr}/rpc\"\n    auth: {{kind: none}}\n    dataBoundary: \"Sends what you type.\"\n    required: true\n{}",
            &md[..start],
            &md[end..]
        )
        .replace("runtimeTargets: [local]", "runtimeTargets: [local, server-assisted]")
    });
    package(&h, "net", |md| {
        md.replace(
            "    network: deny-by-default\n",
            "    network: remote-allowed\n    allowedDomains: [api.example.com]\n",
        )
    });

    // Allowed before the policy: the call goes through.
    h.json(&["services", "allow-remote", "remote", "summarize"]);
    let got = h.json(&["services", "call", "remote", "summarize", "go", "{}"]);
    assert_eq!(got["ok"], true);

    write_policy(
        &h.data,
        r#"{"remote": {"allow": false, "allowOrigins": ["https://api.example.com"]},
            "network": {"denyApps": ["net"]}}"#,
    );
    let db = std::fs::read(h.data.join("host.db")).unwrap();
    refused_by_policy(&h, &["services", "grant-network", "net", "parser"]);
    assert_eq!(
        std::fs::read(h.data.join("host.db")).unwrap(),
        db,
        "nothing written"
    );
    // Deny wins over the allowance already given.
    refused_by_policy(&h, &["services", "call", "remote", "summarize", "go", "{}"]);
    let list = h.json(&["services", "list", "remote"]);
    assert_eq!(list[0]["state"], "blocked", "{list}");
    assert_eq!(list[0]["code"], CODE, "{list}");
    let list = h.json(&["services", "list", "net"]);
    assert_eq!(list[0]["code"], CODE, "{list}");
    // Revoking and allowing again is refused too; the revoke itself is always possible.
    h.json(&["services", "revoke-remote", "remote", "summarize"]);
    let db = std::fs::read(h.data.join("host.db")).unwrap();
    refused_by_policy(&h, &["services", "allow-remote", "remote", "summarize"]);
    assert_eq!(std::fs::read(h.data.join("host.db")).unwrap(), db);

    // A policy file that does not parse denies everything.
    write_policy(&h.data, "{\"remote\": ");
    let err = refused_by_policy(&h, &["services", "allow-remote", "remote", "summarize"]);
    assert!(err.contains("cannot be used"), "{err}");

    // Lifted: the user's choice decides again.
    std::fs::remove_file(h.data.join("policy/services.json")).unwrap();
    h.json(&["services", "allow-remote", "remote", "summarize"]);
    let got = h.json(&["services", "call", "remote", "summarize", "go", "{}"]);
    assert_eq!(got["ok"], true);
    let granted = h.json(&["services", "grant-network", "net", "parser"]);
    assert_eq!(granted["changed"], true, "{granted}");
}
