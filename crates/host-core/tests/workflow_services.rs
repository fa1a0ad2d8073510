//! A workflow step calls the app's own backend service (`tool-call` with
//! `uses: lime.services.call`): the sample `fixtures/apps/doc-parser` with a workflow added,
//! driven through the choke point; the service's own `lime.storage.set` passes it too.
//!
//! A run's cancel interrupts its in-flight `lime.services.call` step: the service gets
//! `$/cancelRequest` and the step ends at once, not at the service's `timeoutMs`.
//!
//! Needs `cargo build -p service-sandbox --bin apphost-service-shim` (the workspace test builds it).

mod services_support;
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

const RELAY: &str = "relay-wf";

const HANG_WORKFLOW: &str = r#"  - key: wait
    kind: workflow
    title: Wait on the service
    workflow: wait-service
    requiredCapabilities: [lime.services]
services:"#;

const HANG_WORKFLOWS: &str = r#"workflows:
  - key: wait-service
    title: A service call that only a cancel ends
    recovery: {onError: show_error_and_allow_retry, maxRetries: 0}
    states:
      - {key: start, kind: start, next: wait}
      - key: wait
        kind: tool-call
        uses: lime.services.call
        arguments: {service: "'relay'", method: "'hang-noted'", params: {}}
        output: waited
        next: done
      - {key: done, kind: end, result: {waited: "outputs.waited"}}
storage:"#;

#[test]
fn cancelling_a_run_interrupts_its_service_call_and_the_service_gets_the_cancel() {
    services_support::require_shim();
    let tmp = tempfile::tempdir().unwrap();
    let pkg = services_support::relay_app(tmp.path(), RELAY, false);
    let md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&md)
        .unwrap()
        .replace("timeoutMs: 800", "timeoutMs: 30000")
        .replacen("\nservices:", &format!("\n{HANG_WORKFLOW}"), 1)
        .replacen("\nstorage:", &format!("\n{HANG_WORKFLOWS}"), 1);
    std::fs::write(&md, text).unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &pkg);
    let store = Store::open(&dir).unwrap();
    // The process's service host outlives the driving thread's services (as in a host session,
    // where the driver's services live on): the service keeps running after the step.
    let _services = host_core::hosting::capability::services::service_host(&store);
    let runs = std::sync::Arc::new(workflow::open_runs(&dir).unwrap());
    let v = workflow::start(&store, &runs, RELAY, "wait-service", json!({}), None).unwrap();

    // The driver's thread: the step waits on the service; its interrupt is "the run ended"
    // (the host driver's, minus app closing).
    let driving = services_support::drive_on_a_thread(&dir, &runs, &v.run_id);
    let service_dir = dir.apps_data().join(RELAY).join("services/relay");
    // The id of the call the service is working on, once it noted it.
    let noted = || -> Option<serde_json::Value> {
        let text = std::fs::read_to_string(service_dir.join("hanging")).ok()?;
        serde_json::from_str(text.lines().next()?).ok()
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let hanging = loop {
        if let Some(id) = noted() {
            break id;
        }
        assert!(
            std::time::Instant::now() < until,
            "the call never reached the service"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let cancelled_at = std::time::Instant::now();
    runs.cancel(&v.run_id).unwrap();
    let (view, ended_at) = driving.join().unwrap();
    let took = ended_at - cancelled_at;
    eprintln!("a run's cancel ended its service call step after {took:?} (timeout 30 s)");
    assert!(took < std::time::Duration::from_secs(1), "{took:?}");
    assert!(
        matches!(view.state.status, RunStatus::Cancelled { .. }),
        "{view:#?}"
    );

    // The service read `$/cancelRequest` for the id it was working on.
    let cancels = service_dir.join("cancelled");
    let seen = || -> Vec<serde_json::Value> {
        std::fs::read_to_string(&cancels)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while seen().is_empty() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(seen(), vec![json!({"id": hanging})]);
    // Not a crash: the service keeps running.
    let audit = store.audit_log(Some(RELAY), 200).unwrap();
    assert!(
        !audit.iter().any(|r| r["action"] == "service.crash"),
        "{audit:?}"
    );
}
