//! `apphost workflow` through the real binary: the sample app `fixtures/apps/reply-workflow`
//! started against a stand-in model provider (a small HTTP/1.1 server on 127.0.0.1:0 answering
//! chat completions with SSE), waiting for review across processes, approved with `respond`,
//! ending with its storage write and artifact; refusals keep their documented codes.

mod common;

use common::workflow_cli::{
    assert_approved_and_ended, assert_waits_for_review, Host, APP, DRAFT, WORKFLOW,
};
use serde_json::Value;

#[test]
fn start_waits_for_review_then_respond_approve_ends_the_run() {
    let host = Host::with_sample();
    let v = host.start_run("cats");
    let run = v["runId"].as_str().unwrap().to_owned();
    assert_waits_for_review(&v);
    assert_eq!(host.model_requests(), 1);

    // Another process sees the same durable run, still waiting.
    let listed = host.ok(&["workflow", "list", APP]);
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["runId"], run.as_str());
    let shown = host.ok(&["workflow", "show", &run]);
    assert_eq!(shown["waiting"]["type"], "review");

    // Answering without --approve / --reject is refused and changes nothing.
    assert_eq!(
        host.refused_code(&["workflow", "respond", &run]),
        (6, "workflow.not_waiting_for_answer".into())
    );
    let done = host.ok(&["workflow", "respond", &run, "--approve"]);
    assert_approved_and_ended(&done);
    assert!(done["state"]["status"]["result"]["artifact"].is_object());
    assert_eq!(host.model_requests(), 1, "the agent step ran once");

    // The steps are audited with the run id as the caller's session.
    let audit = host.ok(&["audit", APP]);
    let calls: Vec<String> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["details"]["mountId"] == run.as_str())
        .map(|r| r["details"]["method"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(calls, ["create", "set", "startTask"], "newest first");

    // A finished run refuses answers and cancel; unknown runs are not found.
    assert_eq!(
        host.refused_code(&["workflow", "respond", &run, "--approve"]),
        (6, "workflow.run_finished".into())
    );
    assert_eq!(
        host.refused_code(&["workflow", "cancel", &run]),
        (6, "workflow.run_finished".into())
    );
    assert_eq!(
        host.refused_code(&["workflow", "show", "run_nope"]),
        (7, "workflow.run_not_found".into())
    );
}

#[test]
fn cancel_ends_a_waiting_run_and_bad_input_is_a_usage_error() {
    let host = Host::with_sample();
    assert_eq!(
        host.refused_code(&["workflow", "start", APP, WORKFLOW, "--input", "{not json"]),
        (2, "workflow.invalid_input".into())
    );
    assert_eq!(
        host.refused_code(&["workflow", "start", APP, "nope"]),
        (7, "workflow.not_declared".into())
    );
    assert_eq!(host.ok(&["workflow", "list"]), serde_json::json!([]));
    let keyed = [
        "workflow",
        "start",
        APP,
        WORKFLOW,
        "--input",
        r#"{"topic": "dogs"}"#,
        "--idempotency-key",
        "k1",
    ];
    let v = host.ok(&keyed);
    let run = v["runId"].as_str().unwrap();
    let again = host.ok(&keyed);
    assert_eq!(again["runId"], run);
    // Resuming a run that waits for the user changes nothing and calls no model again.
    let resumed = host.ok(&["workflow", "resume", run]);
    assert_eq!(resumed["state"], v["state"]);
    let c = host.ok(&["workflow", "cancel", run]);
    assert_eq!(c["state"]["status"]["status"], "cancelled");
    assert_eq!(c["finished"], true);
}

#[test]
fn while_a_host_process_drives_the_runs_the_cli_points_to_its_tasks_page() {
    let host = Host::with_sample();
    // This test process stands in for the window / `apphost serve`: it holds the runs.
    let dir = host_core::foundation::paths::DataDir::at(host.data.clone());
    let held = host_core::hosting::workflow::open_runs(&dir).unwrap();
    for args in [
        &["workflow", "start", APP, WORKFLOW][..],
        &["workflow", "respond", "run_x", "--approve"][..],
        &["workflow", "cancel", "run_x"][..],
    ] {
        let (code, err) = host.refused(args);
        assert_eq!(code, 6, "{args:?}");
        assert_eq!(err["code"], "runtime.busy", "{args:?}");
        let message = err["message"].as_str().unwrap();
        assert!(
            message.starts_with("AppHost is running: use its Tasks page"),
            "{message}"
        );
    }
    drop(held);
    assert_eq!(host.ok(&["workflow", "list"]), serde_json::json!([]));
}

/// Regression: the workflow template's review offers Edit, and an approved edit of the draft is
/// what is saved, published and returned (its `save` and `publish` read the agent's draft
/// before); without an edit the agent's draft is kept.
#[test]
fn the_workflow_template_keeps_the_reviewers_edit() {
    let made = tempfile::tempdir().unwrap();
    let new = common::apphost_in(made.path(), &made.path().join("unused"))
        .args(["new", "edit-desk", "--template", "workflow", "--dir"])
        .arg(made.path())
        .output()
        .unwrap();
    assert!(new.status.success(), "{}", common::describe(&new));
    let host = Host::with_package(&made.path().join("edit-desk/app"));
    let workflow = "draft-review-publish";
    let kept = |run: &str, answer: &[&str]| -> Value {
        let mut args = vec!["workflow", "respond", run, "--approve"];
        args.extend_from_slice(answer);
        let done = host.ok(&args);
        assert_approved_and_ended(&done);
        done["state"]["status"]["result"]["draft"].clone()
    };
    let edited = r#"{"topic": "owls", "draft": "Dear owls, edited"}"#;
    let v = host.ok(&[
        "workflow",
        "start",
        "edit-desk",
        workflow,
        "--input",
        r#"{"topic": "owls"}"#,
    ]);
    assert_waits_for_review(&v);
    assert_eq!(
        kept(v["runId"].as_str().unwrap(), &["--input", edited]),
        "Dear owls, edited"
    );
    let v = host.ok(&[
        "workflow",
        "start",
        "edit-desk",
        workflow,
        "--input",
        r#"{"topic": "bees"}"#,
    ]);
    assert_eq!(kept(v["runId"].as_str().unwrap(), &[]), DRAFT);
    // An edit without a `draft` field keeps the agent's draft.
    let v = host.ok(&[
        "workflow",
        "start",
        "edit-desk",
        workflow,
        "--input",
        r#"{"topic": "ants"}"#,
    ]);
    assert_eq!(
        kept(v["runId"].as_str().unwrap(), &["--input", r#""just text""#]),
        DRAFT
    );

    // The published artifacts hold the kept drafts, in order.
    let listed = host.ok(&["artifacts", "edit-desk"]);
    let mut texts: Vec<(String, String)> = listed["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let blob = host
                .data
                .join("apps/edit-desk/artifact-blobs")
                .join(a["sha256"].as_str().unwrap());
            let content: Value = serde_json::from_slice(&std::fs::read(blob).unwrap()).unwrap();
            (
                a["name"].as_str().unwrap().to_owned(),
                content["text"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    texts.sort();
    assert_eq!(
        texts,
        [
            ("Draft: ants".to_owned(), DRAFT.to_owned()),
            ("Draft: bees".to_owned(), DRAFT.to_owned()),
            ("Draft: owls".to_owned(), "Dear owls, edited".to_owned()),
        ]
    );
}

/// Without a model the agent step cannot run: the run waits for a retry decision, and the text
/// output says why (the entry's readiness, the setup to do) and how to answer.
#[test]
fn a_step_whose_entry_needs_setup_says_why_and_how_to_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let pkg = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/apps/reply-workflow");
    let out = common::apphost_in(tmp.path(), &data)
        .args(["install", pkg.to_str().unwrap(), "--yes", "--sideload"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::describe(&out));
    let out = common::apphost_text_in(tmp.path(), &data)
        .args([
            "workflow",
            "start",
            APP,
            WORKFLOW,
            "--input",
            r#"{"topic": "cats"}"#,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::describe(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("waiting for a retry decision (draft: entry.not_ready)"),
        "{text}"
    );
    assert!(text.contains("entry reply is needs-setup: "), "{text}");
    assert!(text.contains("(setup: Set up a model)"), "{text}");
    let run = text.split_whitespace().nth(1).unwrap();
    assert!(
        text.contains(&format!(
            "answer: apphost workflow respond {run} --approve (try the step again) | --reject (fail the run)"
        )),
        "{text}"
    );
    // --reject fails the run, as the hint says.
    let out = common::apphost_in(tmp.path(), &data)
        .args(["workflow", "respond", run, "--reject"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::describe(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["finished"], true, "{v}");
    assert_eq!(v["state"]["status"]["status"], "failed", "{v}");
}
