//! Test packages built from the doc-parser sample: its service swapped for another fixture's,
//! for a remote one, or for the egress client.

use std::path::{Path, PathBuf};

use super::doc_parser;
use crate::support::{copy_dir, repo_root};

/// The egress client service, shared with service-sandbox's `egress` test.
pub const EGRESS_CLIENT: &str = include_str!("../../../../fixtures/services/egress_client.py");

/// The doc-parser app (a page declaring lime.services) with its service replaced by the
/// fixture `fixture`'s service `key` (its manifest block and its files); with `timeout_ms`
/// the block's first `timeoutMs` is set to it.
pub fn app_with_service_of(
    tmp: &Path,
    name: &str,
    fixture: &str,
    key: &str,
    timeout_ms: Option<u64>,
) -> PathBuf {
    let pkg = tmp.join(format!("pkg-{name}"));
    copy_dir(&doc_parser(), &pkg);
    std::fs::remove_dir_all(pkg.join("services/parser")).unwrap();
    let src = repo_root().join("fixtures/apps").join(fixture);
    copy_dir(
        &src.join("services").join(key),
        &pkg.join("services").join(key),
    );
    let theirs = std::fs::read_to_string(src.join("APP.md")).unwrap();
    let start = theirs.find("services:\n").unwrap();
    let block = &theirs[start..];
    let block = &block[..block.find("\n---").unwrap() + 1];
    let mut block = block.replace("    network:", "    required: true\n    network:");
    if let Some(ms) = timeout_ms {
        let timeout = block.find("timeoutMs: ").unwrap();
        let end = timeout + block[timeout..].find('\n').unwrap();
        block = format!("{}timeoutMs: {ms}{}", &block[..timeout], &block[end..]);
    }
    let text = std::fs::read_to_string(pkg.join("APP.md")).unwrap();
    let (s, e) = (
        text.find("services:\n").unwrap(),
        text.find("storage:\n").unwrap(),
    );
    let text = format!("{}{}{}", &text[..s], block, &text[e..])
        .replace("name: doc-parser", &format!("name: {name}"));
    std::fs::write(pkg.join("APP.md"), text).unwrap();
    pkg
}

/// doc-parser renamed `name`, its `services:` block replaced by `block` (which may start with
/// other top-level keys, e.g. `secrets:`); with `server_assisted` the app also targets
/// `server-assisted`.
pub fn app_with_services_block(
    tmp: &Path,
    name: &str,
    block: &str,
    server_assisted: bool,
) -> PathBuf {
    let pkg = tmp.join(format!("pkg-{name}"));
    copy_dir(&doc_parser(), &pkg);
    let text = std::fs::read_to_string(pkg.join("APP.md")).unwrap();
    let (start, end) = (
        text.find("services:\n").unwrap(),
        text.find("storage:\n").unwrap(),
    );
    let mut text = format!("{}{block}{}", &text[..start], &text[end..])
        .replace("name: doc-parser", &format!("name: {name}"));
    if server_assisted {
        text = text.replace(
            "runtimeTargets: [local]",
            "runtimeTargets: [local, server-assisted]",
        );
    }
    std::fs::write(pkg.join("APP.md"), text).unwrap();
    pkg
}

/// The doc-parser app with its service replaced by the egress client, `remote-allowed` to
/// `domains` (YAML flow list text).
pub fn egress_client_app(tmp: &Path, name: &str, domains: &str) -> PathBuf {
    let pkg = tmp.join(format!("pkg-{name}"));
    copy_dir(&doc_parser(), &pkg);
    std::fs::write(pkg.join("services/parser/parser.py"), EGRESS_CLIENT).unwrap();
    let text = std::fs::read_to_string(pkg.join("APP.md"))
        .unwrap()
        .replace("name: doc-parser", &format!("name: {name}"))
        .replace(
            "    network: deny-by-default\n",
            &format!("    network: remote-allowed\n    allowedDomains: {domains}\n"),
        );
    std::fs::write(pkg.join("APP.md"), text).unwrap();
    pkg
}
