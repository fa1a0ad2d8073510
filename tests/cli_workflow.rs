//! `apphost workflow` through the real binary: the sample app `fixtures/apps/reply-workflow`
//! started against a stand-in model provider (a small HTTP/1.1 server on 127.0.0.1:0 answering
//! chat completions with SSE), waiting for review across processes, approved with `respond`,
//! ending with its storage write and artifact; refusals keep their documented codes.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{apphost_in, describe};
use serde_json::Value;
use tempfile::TempDir;

struct Host {
    tmp: TempDir,
    data: PathBuf,
}

impl Host {
    fn run(&self, args: &[&str]) -> Output {
        apphost_in(self.tmp.path(), &self.data)
            .args(args)
            .env("TEST_PROVIDER_KEY", "sk-test-workflow")
            .output()
            .unwrap()
    }
    fn ok(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?}: {}", describe(&out));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", describe(&out)))
    }
    fn refused(&self, args: &[&str]) -> (i32, String) {
        let out = self.run(args);
        let err = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.starts_with("{\"error\""))
            .find_map(|l| serde_json::from_str::<Value>(l).ok())
            .unwrap_or_else(|| panic!("no error JSON: {}", describe(&out)));
        (
            out.status.code().unwrap(),
            err["error"]["code"].as_str().unwrap().to_owned(),
        )
    }
}

/// A stand-in provider answering every request with the text "Dear cats"; counts requests.
fn stand_in() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            if read_request(&conn) {
                count.fetch_add(1, Ordering::SeqCst);
            }
            let body = concat!(
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Dear cats\"},\"finish_reason\":null}]}\n\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
                "data: [DONE]\n\n"
            );
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = (&conn).write_all(reply.as_bytes());
        }
    });
    (base, seen)
}

fn read_request(conn: &TcpStream) -> bool {
    let mut r = BufReader::new(conn);
    let mut len = 0;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return false;
        }
        if line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).is_ok()
}

fn host_with_sample() -> (Host, Arc<AtomicUsize>) {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let host = Host { tmp, data };
    let pkg = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/apps/reply-workflow");
    host.ok(&["install", pkg.to_str().unwrap(), "--yes", "--sideload"]);
    let (base, seen) = stand_in();
    host.ok(&[
        "model",
        "set",
        "--base-url",
        &base,
        "--model",
        "stand-in-1",
        "--api-key-env",
        "TEST_PROVIDER_KEY",
    ]);
    (host, seen)
}

#[test]
fn start_waits_for_review_then_respond_approve_ends_the_run() {
    let (host, seen) = host_with_sample();
    let v = host.ok(&[
        "workflow",
        "start",
        "reply-workflow",
        "draft-review-publish",
        "--input",
        r#"{"topic": "cats"}"#,
    ]);
    let run = v["runId"].as_str().unwrap().to_owned();
    assert_eq!(v["waiting"]["type"], "review", "{v}");
    assert_eq!(v["waiting"]["show"]["draft"], "Dear cats");
    assert_eq!(v["finished"], false);
    assert_eq!(seen.load(Ordering::SeqCst), 1);

    // Another process sees the same durable run, still waiting.
    let listed = host.ok(&["workflow", "list", "reply-workflow"]);
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["runId"], run.as_str());
    let shown = host.ok(&["workflow", "show", &run]);
    assert_eq!(shown["waiting"]["type"], "review");

    // Answering without --approve / --reject is refused and changes nothing.
    assert_eq!(
        host.refused(&["workflow", "respond", &run]),
        (6, "workflow.not_waiting_for_answer".into())
    );
    let done = host.ok(&["workflow", "respond", &run, "--approve"]);
    assert_eq!(done["finished"], true, "{done}");
    assert_eq!(done["state"]["status"]["status"], "succeeded");
    assert_eq!(done["state"]["status"]["result"]["approved"], true);
    assert!(done["state"]["status"]["result"]["artifact"].is_object());
    assert_eq!(seen.load(Ordering::SeqCst), 1, "the agent step ran once");

    // The steps are audited with the run id as the caller's session.
    let audit = host.ok(&["audit", "reply-workflow"]);
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
        host.refused(&["workflow", "respond", &run, "--approve"]),
        (6, "workflow.run_finished".into())
    );
    assert_eq!(
        host.refused(&["workflow", "cancel", &run]),
        (6, "workflow.run_finished".into())
    );
    assert_eq!(
        host.refused(&["workflow", "show", "run_nope"]),
        (7, "workflow.run_not_found".into())
    );
}

#[test]
fn cancel_ends_a_waiting_run_and_bad_input_is_a_usage_error() {
    let (host, _) = host_with_sample();
    assert_eq!(
        host.refused(&[
            "workflow",
            "start",
            "reply-workflow",
            "draft-review-publish",
            "--input",
            "{not json"
        ]),
        (2, "workflow.invalid_input".into())
    );
    assert_eq!(
        host.refused(&["workflow", "start", "reply-workflow", "nope"]),
        (7, "workflow.not_declared".into())
    );
    assert_eq!(host.ok(&["workflow", "list"]), serde_json::json!([]));
    let v = host.ok(&[
        "workflow",
        "start",
        "reply-workflow",
        "draft-review-publish",
        "--input",
        r#"{"topic": "dogs"}"#,
        "--idempotency-key",
        "k1",
    ]);
    let run = v["runId"].as_str().unwrap();
    let again = host.ok(&[
        "workflow",
        "start",
        "reply-workflow",
        "draft-review-publish",
        "--input",
        r#"{"topic": "dogs"}"#,
        "--idempotency-key",
        "k1",
    ]);
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
    let (host, _) = host_with_sample();
    // This test process stands in for the window / `apphost serve`: it holds the runs.
    let dir = host_core::foundation::paths::DataDir::at(host.data.clone());
    let held = host_core::hosting::workflow::open_runs(&dir).unwrap();
    for args in [
        &[
            "workflow",
            "start",
            "reply-workflow",
            "draft-review-publish",
        ][..],
        &["workflow", "respond", "run_x", "--approve"][..],
        &["workflow", "cancel", "run_x"][..],
    ] {
        let out = host.run(args);
        let err = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.starts_with("{\"error\""))
            .find_map(|l| serde_json::from_str::<Value>(l).ok())
            .unwrap_or_else(|| panic!("no error JSON: {}", describe(&out)));
        assert_eq!(out.status.code(), Some(6), "{args:?}");
        assert_eq!(err["error"]["code"], "runtime.busy", "{args:?}");
        let message = err["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("AppHost is running: use its Tasks page"),
            "{message}"
        );
    }
    drop(held);
    assert_eq!(host.ok(&["workflow", "list"]), serde_json::json!([]));
}
