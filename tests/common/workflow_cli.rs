//! What the `apphost workflow` CLI tests share (`cli_workflow.rs`: no host process;
//! `cli_workflow_handoff.rs`: `apphost serve` running, the CLI hands its runs to it): a data
//! directory with the sample app `fixtures/apps/reply-workflow` installed and the model set to a
//! stand-in provider (a small HTTP/1.1 server on 127.0.0.1:0 answering every chat completion
//! with the SSE text "Dear cats", counting requests), the CLI run in it, its JSON answers and
//! refusals, and the checks both modes make of a run.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::Value;
use tempfile::TempDir;

use super::{apphost_in, describe, Serving};

pub const APP: &str = "reply-workflow";
pub const WORKFLOW: &str = "draft-review-publish";
/// What the stand-in model writes.
pub const DRAFT: &str = "Dear cats";

/// A data directory with the sample installed, and the `apphost serve` started on it (if any).
pub struct Host {
    pub tmp: TempDir,
    pub data: PathBuf,
    serve: Option<Serving>,
    seen: Arc<AtomicUsize>,
}

impl Drop for Host {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Host {
    /// A fresh data directory with the sample installed and the model set to a new stand-in.
    pub fn with_sample() -> Host {
        let pkg = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/apps/reply-workflow");
        Host::with_package(&pkg)
    }

    /// A fresh data directory with `pkg` installed (sideloaded) and the model set to a new
    /// stand-in.
    pub fn with_package(pkg: &Path) -> Host {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let (base, seen) = stand_in();
        let host = Host {
            tmp,
            data,
            serve: None,
            seen,
        };
        host.ok(&["install", pkg.to_str().unwrap(), "--yes", "--sideload"]);
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
        host
    }

    /// `apphost --json --data-dir <data> ARGS`.
    pub fn run(&self, args: &[&str]) -> Output {
        apphost_in(self.tmp.path(), &self.data)
            .args(args)
            .env("TEST_PROVIDER_KEY", "sk-test-workflow")
            .output()
            .unwrap()
    }

    /// A command that must succeed: its JSON answer.
    pub fn ok(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?}: {}", describe(&out));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", describe(&out)))
    }

    /// A command that must fail: its exit code and the `error` object of its stderr JSON.
    pub fn refused(&self, args: &[&str]) -> (i32, Value) {
        let out = self.run(args);
        let err = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.starts_with("{\"error\""))
            .find_map(|l| serde_json::from_str::<Value>(l).ok())
            .unwrap_or_else(|| panic!("no error JSON: {}", describe(&out)));
        (out.status.code().unwrap(), err["error"].clone())
    }

    /// A command that must fail: its exit code and error code.
    pub fn refused_code(&self, args: &[&str]) -> (i32, String) {
        let (code, err) = self.refused(args);
        (code, err["code"].as_str().unwrap().to_owned())
    }

    /// `workflow start` of the sample's workflow with `{"topic": topic}`.
    pub fn start_run(&self, topic: &str) -> Value {
        let input = serde_json::json!({ "topic": topic }).to_string();
        self.ok(&["workflow", "start", APP, WORKFLOW, "--input", &input])
    }

    /// Chat requests the stand-in model answered so far.
    pub fn model_requests(&self) -> usize {
        self.seen.load(Ordering::SeqCst)
    }

    pub fn runtime_dir(&self) -> PathBuf {
        self.data.join("runtime")
    }

    /// Starts `apphost serve` (its door is open once its first line is out).
    pub fn serve(&mut self) {
        let mut cmd = apphost_in(self.tmp.path(), &self.data);
        cmd.env("TEST_PROVIDER_KEY", "sk-test-workflow");
        self.serve = Some(Serving::start(cmd));
        assert!(self.runtime_dir().join("app-server.sock").exists());
    }

    /// Stops `apphost serve` if it runs.
    pub fn stop(&mut self) {
        self.serve = None;
    }
}

/// A started run waits for its review, showing the stand-in's draft.
pub fn assert_waits_for_review(v: &Value) {
    assert_eq!(v["waiting"]["type"], "review", "{v}");
    assert_eq!(v["waiting"]["show"]["draft"], DRAFT);
    assert_eq!(v["finished"], false);
}

/// An approved run ended with its result.
pub fn assert_approved_and_ended(done: &Value) {
    assert_eq!(done["finished"], true, "{done}");
    assert_eq!(done["state"]["status"]["status"], "succeeded");
    assert_eq!(done["state"]["status"]["result"]["approved"], true);
}

/// A stand-in provider answering every request with the text [`DRAFT`]; counts requests.
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
