//! `apphost workflow` handed to the running host (`apphost serve`) over its App Server door
//! (`apphost/workflow.*`, docs/app-server.md "Host methods"): `start` returns with the run
//! waiting at review (the host drove it), `show`/`list` match what the CLI reads itself once the
//! host is gone (`--json` identical in both modes), `respond --approve` continues the run in the
//! host, `cancel` works, no `runtime.busy`; a door with a wrong token is reported clearly and
//! changes nothing; a stale socket (no host) leaves the CLI driving itself.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{apphost_in, describe};
use serde_json::Value;
use tempfile::TempDir;

struct Host {
    tmp: TempDir,
    data: PathBuf,
    serve: Option<Child>,
}

impl Drop for Host {
    fn drop(&mut self) {
        self.stop();
    }
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
    fn refused(&self, args: &[&str]) -> (i32, Value) {
        let out = self.run(args);
        let err = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.starts_with("{\"error\""))
            .find_map(|l| serde_json::from_str::<Value>(l).ok())
            .unwrap_or_else(|| panic!("no error JSON: {}", describe(&out)));
        (out.status.code().unwrap(), err["error"].clone())
    }
    fn runtime_dir(&self) -> PathBuf {
        self.data.join("runtime")
    }
    /// Starts `apphost serve` (its door is open once its first line is out).
    fn serve(&mut self) {
        let mut child = apphost_in(self.tmp.path(), &self.data)
            .arg("serve")
            .env("TEST_PROVIDER_KEY", "sk-test-workflow")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.contains("\"url\""), "{line:?}");
        self.serve = Some(child);
        assert!(self.runtime_dir().join("app-server.sock").exists());
    }
    fn stop(&mut self) {
        if let Some(mut c) = self.serve.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
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
    let host = Host {
        tmp,
        data,
        serve: None,
    };
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

fn start_run(host: &Host) -> Value {
    host.ok(&[
        "workflow",
        "start",
        "reply-workflow",
        "draft-review-publish",
        "--input",
        r#"{"topic": "cats"}"#,
    ])
}

#[test]
fn with_serve_running_the_cli_hands_runs_to_the_host() {
    let (mut host, seen) = host_with_sample();
    host.serve();

    let t = Instant::now();
    let v = start_run(&host);
    let run = v["runId"].as_str().unwrap().to_owned();
    assert_eq!(v["waiting"]["type"], "review", "the host drove it: {v}");
    assert_eq!(v["waiting"]["show"]["draft"], "Dear cats");
    assert_eq!(v["finished"], false);
    assert_eq!(seen.load(Ordering::SeqCst), 1);
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());

    // The host holds the runs' lock, yet nothing is runtime.busy: show and list go over the door.
    let shown = host.ok(&["workflow", "show", &run]);
    assert_eq!(shown, v, "show is the view start answered");
    let listed = host.ok(&["workflow", "list", "reply-workflow"]);
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
        "reply-workflow",
        "draft-review-publish",
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
    assert_eq!(done["finished"], true, "{done}");
    assert_eq!(done["state"]["status"]["status"], "succeeded");
    assert_eq!(done["state"]["status"]["result"]["approved"], true);
    assert_eq!(
        seen.load(Ordering::SeqCst),
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
    let (mut host, seen) = host_with_sample();
    host.serve();
    let token_file = host.runtime_dir().join("app-server.token");
    let token = std::fs::read(&token_file).unwrap();
    // The host holds the runs once it drives one.
    let v = start_run(&host);
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
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[test]
fn before_the_host_holds_any_run_a_refused_door_is_still_reported() {
    let (mut host, seen) = host_with_sample();
    host.serve();
    let token_file = host.runtime_dir().join("app-server.token");
    std::fs::write(&token_file, "0".repeat(64)).unwrap();
    let (code, err) = host.refused(&[
        "workflow",
        "start",
        "reply-workflow",
        "draft-review-publish",
    ]);
    assert_eq!((code, err["code"].as_str().unwrap()), (6, "runtime.busy"));
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("appserver.bad_token"),
        "{err}"
    );
    assert_eq!(seen.load(Ordering::SeqCst), 0);
    host.stop();
    assert_eq!(
        host.ok(&["workflow", "list"]),
        serde_json::json!([]),
        "no run was made"
    );
}

#[test]
fn a_stale_door_without_a_host_leaves_the_cli_driving_itself() {
    let (host, seen) = host_with_sample();
    std::fs::create_dir_all(host.runtime_dir()).unwrap();
    let socket = host.runtime_dir().join("app-server.sock");
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    assert!(socket.exists());
    let v = start_run(&host);
    assert_eq!(v["waiting"]["type"], "review", "{v}");
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[test]
fn host_methods_answer_nobody_before_the_token_handshake() {
    let (mut host, seen) = host_with_sample();
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
    assert_eq!(seen.load(Ordering::SeqCst), 0);
    assert_eq!(
        host.ok(&["workflow", "list"]),
        serde_json::json!([]),
        "nothing started"
    );
}
