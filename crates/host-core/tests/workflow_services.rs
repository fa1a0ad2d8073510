//! A workflow step calls the app's own backend service (`tool-call` with
//! `uses: lime.services.call`): the sample `fixtures/apps/doc-parser` with a workflow added,
//! driven through the choke point; the service's own `lime.storage.set` passes it too.
//!
//! Needs `cargo build -p service-sandbox --bin apphost-service-shim` (the workspace test builds it).

mod support;

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::capability::services::Services;
use host_core::hosting::workflow::{self, executor::HostSteps};
use host_core::install::store::Store;
use runtime_core::workflow::machine::RunStatus;
use serde_json::json;
use support::{copy_dir, install, repo_root};

const APP: &str = "doc-parser";

const WORKFLOW_ENTRY: &str = r#"  - key: outline
    kind: workflow
    title: Outline a document
    workflow: parse-outline
    requiredCapabilities: [lime.services]
services:"#;

const WORKFLOWS: &str = r#"workflows:
  - key: parse-outline
    title: Parse a document in the app's service
    recovery: {onError: show_error_and_allow_retry, maxRetries: 1}
    states:
      - {key: start, kind: start, next: parse}
      - key: parse
        kind: tool-call
        uses: lime.services.call
        arguments: {service: "'parser'", method: "'parse'", params: {text: "input.text"}}
        output: parsed
        next: done
      - {key: done, kind: end, result: {words: "outputs.parsed.words", headings: "outputs.parsed.headings", saved: "outputs.parsed.saved"}}
storage:"#;

/// doc-parser copied with a `workflow` entry and its workflow; `edit` changes the APP.md after.
fn package(tmp: &std::path::Path, edit: impl Fn(String) -> String) -> std::path::PathBuf {
    let pkg = tmp.join("pkg");
    copy_dir(&repo_root().join("fixtures/apps").join(APP), &pkg);
    let md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&md)
        .unwrap()
        .replacen("\nservices:", &format!("\n{WORKFLOW_ENTRY}"), 1)
        .replacen("\nstorage:", &format!("\n{WORKFLOWS}"), 1);
    std::fs::write(&md, edit(text)).unwrap();
    pkg
}

#[test]
fn a_workflow_step_calls_the_apps_own_service_through_the_choke_point() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &package(tmp.path(), |t| t));
    let store = Store::open(&dir).unwrap();
    let mut services = Services::new(dir.apps_data());
    let runs = workflow::open_runs(&dir).unwrap();
    let text = "# Title\nsome words here\n## Part\nmore words";
    let v = workflow::start(
        &store,
        &runs,
        APP,
        "parse-outline",
        json!({"text": text}),
        None,
    )
    .unwrap();
    let profile = HostProfile::current();
    let steps = HostSteps::new(&store, &profile, &mut services);
    let done = runs.drive(&v.run_id, &steps).unwrap();
    let RunStatus::Succeeded { result } = &done.state.status else {
        panic!("{done:#?}")
    };
    assert_eq!(result["words"], json!(5), "{result}");
    assert_eq!(result["headings"], json!(2), "{result}");
    assert_eq!(result["saved"], json!(true), "{result}");

    // Audited as the run's call, then the service's own storage write as the service.
    let audit = store.audit_log(Some(APP), 200).unwrap();
    let calls: Vec<_> = audit
        .iter()
        .filter(|r| r["action"] == "capability.call")
        .map(|r| {
            let d = &r["details"];
            (
                format!(
                    "{}.{}",
                    d["capability"].as_str().unwrap_or(""),
                    d["method"].as_str().unwrap_or("")
                ),
                d["mountId"].as_str().unwrap_or("").to_owned(),
                d["decision"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert!(
        calls.contains(&(
            "lime.services.call".into(),
            v.run_id.clone(),
            "allow".into()
        )),
        "{calls:?}"
    );
    assert!(
        calls
            .iter()
            .any(|(m, _, d)| m == "lime.storage.set" && d == "allow"),
        "{calls:?}"
    );
}
