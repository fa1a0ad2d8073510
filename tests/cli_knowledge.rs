//! `apphost knowledge bind|search|status|reindex|unbind` through the real binary: a declared
//! template bound to a folder makes the app ready and searchable with citations; a link out of
//! the folder is skipped and reported; refusals have stable codes and bind nothing; uninstall
//! removes the binding.

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
        let pkg = h.tmp.path().join("kb-app");
        copy_dir(
            &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/packages/good/hello-app"),
            &pkg,
        );
        let md = std::fs::read_to_string(pkg.join("APP.md"))
            .unwrap()
            .replacen("name: hello-app", "name: kb-app", 1)
            .replacen(
                "    lime.storage: \"^0.10.0\"\n",
                "    lime.storage: \"^0.10.0\"\n    lime.knowledge: \"^0.10.0\"\n",
                1,
            )
            .replacen(
                "runtimePackage:",
                "knowledgeTemplates:\n  - {key: handbook, standard: agentknowledge, type: pack, required: true}\nruntimePackage:",
                1,
            );
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

    fn docs(&self) -> PathBuf {
        let d = self.tmp.path().join("docs");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("faq.md"), "# Refunds\nRefunds take five days.\n").unwrap();
        std::fs::write(d.join("faq.pdf"), "%PDF-1.4").unwrap();
        let outside = self.tmp.path().join("outside.md");
        std::fs::write(&outside, "# Secret\nexfiltrated\n").unwrap();
        std::os::unix::fs::symlink(&outside, d.join("link.md")).unwrap();
        d
    }
}

fn ok_json(out: &Output) -> Value {
    assert!(out.status.success(), "{}", describe(out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", describe(out)))
}

fn error_code(out: &Output) -> String {
    assert!(!out.status.success(), "{}", describe(out));
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("{\"error\""))
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| v["error"]["code"].as_str().unwrap().to_owned())
        .unwrap_or_else(|| panic!("no error JSON: {}", describe(out)))
}

#[test]
fn bind_search_status_reindex_unbind_through_the_cli() {
    let h = Host::new();
    let r = ok_json(&h.run(&["readiness", "kb-app"]));
    assert_eq!(r["status"], "needs-setup", "{r}");
    assert!(r["setupActions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["kind"] == "bind-knowledge"));
    let docs = h.docs();
    let docs_s = docs.to_str().unwrap();

    // Refusals bind nothing.
    assert_eq!(
        error_code(&h.run(&["knowledge", "bind", "kb-app", "nope", docs_s])),
        "knowledge.template_not_declared"
    );
    assert_eq!(
        error_code(&h.run(&["knowledge", "bind", "kb-app", "handbook", "/no/such/dir"])),
        "knowledge.folder_invalid"
    );
    assert_eq!(
        error_code(&h.run(&["knowledge", "search", "kb-app", "handbook", "refunds"])),
        "knowledge.not_bound"
    );
    assert_eq!(
        ok_json(&h.run(&["knowledge", "status"]))
            .as_array()
            .unwrap()
            .len(),
        0
    );

    let b = ok_json(&h.run(&["knowledge", "bind", "kb-app", "handbook", docs_s]));
    assert_eq!(b["report"]["files"], 1, "{b}");
    let r = ok_json(&h.run(&["readiness", "kb-app"]));
    assert!(r["status"].as_str().unwrap().starts_with("ready"), "{r}");
    let check = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "knowledge")
        .unwrap();
    assert_eq!(check["outcome"], "pass", "{r}");
    let s = ok_json(&h.run(&[
        "knowledge",
        "search",
        "kb-app",
        "handbook",
        "refunds",
        "--top-k",
        "3",
        "--json",
    ]));
    assert_eq!(s["hits"][0]["document"], "faq.md");
    assert_eq!(s["hits"][0]["section"], "Refunds");
    assert_eq!(s["hits"][0]["start"], 0);
    assert_eq!(
        error_code(&h.run(&["knowledge", "search", "kb-app", "handbook", "\"*\":^"])),
        "knowledge.query_invalid"
    );
    assert!(
        ok_json(&h.run(&["knowledge", "search", "kb-app", "handbook", "exfiltrated"]))["hits"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    let st = ok_json(&h.run(&["knowledge", "status", "--json"]));
    let row = &st[0];
    assert_eq!(
        (row["app"].as_str(), row["template"].as_str()),
        (Some("kb-app"), Some("handbook"))
    );
    assert_eq!(
        (row["files"].as_u64(), row["chunks"].as_u64()),
        (Some(1), Some(1))
    );
    assert!(row["lastIndexed"].is_string());
    let codes: Vec<&str> = row["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["code"].as_str().unwrap())
        .collect();
    assert!(
        codes.contains(&"knowledge.link_skipped")
            && codes.contains(&"knowledge.unsupported_format"),
        "{codes:?}"
    );

    std::fs::write(docs.join("more.txt"), "shipping is free\n").unwrap();
    let r = ok_json(&h.run(&["knowledge", "reindex", "kb-app", "handbook"]));
    assert_eq!(
        (
            r["report"]["indexed"].as_u64(),
            r["report"]["unchanged"].as_u64()
        ),
        (Some(1), Some(1))
    );
    assert_eq!(
        ok_json(&h.run(&["knowledge", "search", "kb-app", "handbook", "shipping"]))["hits"][0]
            ["document"],
        "more.txt"
    );

    ok_json(&h.run(&["knowledge", "unbind", "kb-app", "handbook"]));
    assert_eq!(
        ok_json(&h.run(&["readiness", "kb-app"]))["status"],
        "needs-setup"
    );
    assert_eq!(
        error_code(&h.run(&["knowledge", "unbind", "kb-app", "handbook"])),
        "knowledge.not_bound"
    );

    ok_json(&h.run(&["knowledge", "bind", "kb-app", "handbook", docs_s]));
    let out = h.run(&["uninstall", "kb-app", "--delete-data", "--yes"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        ok_json(&h.run(&["knowledge", "status"]))
            .as_array()
            .unwrap()
            .len(),
        0
    );
}
