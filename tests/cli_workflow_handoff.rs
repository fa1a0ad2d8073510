//! `apphost workflow` handed to the running host (`apphost serve`) over its App Server door
//! (`apphost/workflow.*`, docs/app-server.md "Host methods"): `start` returns with the run
//! waiting at review (the host drove it), `show`/`list` match what the CLI reads itself once the
//! host is gone (`--json` identical in both modes), `respond --approve` continues the run in the
//! host, `cancel` works, no `runtime.busy`; a door with a wrong token is reported clearly and
//! changes nothing; a stale socket (no host) leaves the CLI driving itself.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::time::{Duration, Instant};

use common::workflow_cli::{
    assert_approved_and_ended, assert_waits_for_review, Host, APP, WORKFLOW,
};
use serde_json::Value;

#[test]
fn with_serve_running_the_cli_hands_runs_to_the_host() {
    let mut host = Host::with_sample();
    host.serve();

    let t = Instant::now();
    let v = host.start_run("cats");
    let run = v["runId"].as_str().unwrap().to_owned();
    assert_waits_for_review(&v); // the host drove it
    assert_eq!(host.model_requests(), 1);
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());

    // The host holds the runs' lock, yet nothing is runtime.busy: show and list go over the door.
    let shown = host.ok(&["workflow", "show", &run]);
    assert_eq!(shown, v, "show is the view start answered");
    let listed = host.ok(&["workflow", "list", APP]);
    assert_eq!(listed, Value::Array(vec![v.clone()]));

    // A refused answer keeps its stable code over the door and changes nothing.
    let (code, err) = host.refused(&["workflow", "respond", &run]);
    assert_eq!(
        (code, err["code"].as_str().unwrap()),
        (6, "workflow.not_waiting_for_answer")
    );
    assert_eq!(host.ok(&["workflow", "show", &run]), v);
    let (code, err) = host.refused(&["workflow", "show", "run_nope"]);
    assert_eq!(
        (code, err["code"].as_str().unwrap()),
        (7, "workflow.run_not_found")
    );

    // A second run, cancelled through the host.
    let other = host.ok(&[
        "workflow",
        "start",
        APP,
        WORKFLOW,
        "--input",
        r#"{"topic": "dogs"}"#,
        "--idempotency-key",
        "second",
    ]);
    let other_id = other["runId"].as_str().unwrap().to_owned();
    let c = host.ok(&["workflow", "cancel", &other_id]);
    assert_eq!(c["state"]["status"]["status"], "cancelled", "{c}");
    assert_eq!(c["finished"], true);

    // The user's answer continues the run in the host.
    let done = host.ok(&["workflow", "respond", &run, "--approve"]);
    assert_approved_and_ended(&done);
    assert_eq!(
        host.model_requests(),
        2,
        "one agent step per run that reached it"
    );

    // --json is the same whether the host answers or the CLI reads the runs itself.
    let via_door = (
        host.ok(&["workflow", "show", &run]),
        host.ok(&["workflow", "list"]),
    );
    let text_via_door = host.run(&["workflow", "show", &run]);
    host.stop();
    let itself = (
        host.ok(&["workflow", "show", &run]),
        host.ok(&["workflow", "list"]),
    );
    assert_eq!(via_door, itself);
    assert_eq!(via_door.1.as_array().unwrap().len(), 2);
    assert!(text_via_door.status.success());
}

#[test]
fn a_door_that_refuses_the_token_is_reported_and_changes_nothing() {
    let mut host = Host::with_sample();
    host.serve();
    let token_file = host.runtime_dir().join("app-server.token");
    let token = std::fs::read(&token_file).unwrap();
    // The host holds the runs once it drives one.
    let v = host.start_run("cats");
    let run = v["runId"].as_str().unwrap().to_owned();
    std::fs::write(&token_file, "0".repeat(64)).unwrap();
    for args in [
        &["workflow", "respond", &run, "--approve"][..],
        &["workflow", "cancel", &run][..],
        &["workflow", "list"][..],
    ] {
        let (code, err) = host.refused(args);
        assert_eq!(code, 6, "{args:?}");
        assert_eq!(err["code"], "runtime.busy", "{args:?}");
        let message = err["message"].as_str().unwrap();
        assert!(
            message.contains("door did not take this command")
                && message.contains("appserver.bad_token"),
            "{message}"
        );
    }
    std::fs::write(&token_file, token).unwrap();
    assert_eq!(host.ok(&["workflow", "show", &run]), v, "nothing changed");
    assert_eq!(host.model_requests(), 1);
}

#[test]
fn before_the_host_holds_any_run_a_refused_door_is_still_reported() {
    let mut host = Host::with_sample();
    host.serve();
    let token_file = host.runtime_dir().join("app-server.token");
    std::fs::write(&token_file, "0".repeat(64)).unwrap();
    let (code, err) = host.refused(&["workflow", "start", APP, WORKFLOW]);
    assert_eq!((code, err["code"].as_str().unwrap()), (6, "runtime.busy"));
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("appserver.bad_token"),
        "{err}"
    );
    assert_eq!(host.model_requests(), 0);
    host.stop();
    assert_eq!(
        host.ok(&["workflow", "list"]),
        serde_json::json!([]),
        "no run was made"
    );
}

#[test]
fn a_stale_door_without_a_host_leaves_the_cli_driving_itself() {
    let host = Host::with_sample();
    std::fs::create_dir_all(host.runtime_dir()).unwrap();
    let socket = host.runtime_dir().join("app-server.sock");
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    assert!(socket.exists());
    let v = host.start_run("cats");
    assert_eq!(v["waiting"]["type"], "review", "{v}");
    assert_eq!(host.model_requests(), 1);
}

#[test]
fn host_methods_answer_nobody_before_the_token_handshake() {
    let mut host = Host::with_sample();
    host.serve();
    let s = std::os::unix::net::UnixStream::connect(host.runtime_dir().join("app-server.sock"))
        .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let req = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "apphost/workflow.start",
        "params": {"app": "reply-workflow", "workflow": "draft-review-publish"}});
    (&s).write_all(format!("{req}\n").as_bytes()).unwrap();
    let mut line = String::new();
    BufReader::new(&s).read_line(&mut line).unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["error"]["code"], -32002, "{answer}");
    drop(s);
    assert_eq!(host.model_requests(), 0);
    assert_eq!(
        host.ok(&["workflow", "list"]),
        serde_json::json!([]),
        "nothing started"
    );
}
