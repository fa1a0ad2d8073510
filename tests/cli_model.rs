//! `apphost model set|show|test` through the real binary, against a stand-in provider (a small
//! HTTP/1.1 server on 127.0.0.1:0 written here that answers chat completions with SSE). The
//! secret store is the encrypted file (`APPHOST_SECRET_STORE=file`) with its key in the test's
//! own folder, so no test touches a user's keyring or config.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use common::{apphost_in, describe, files_under};
use serde_json::Value;
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_apphost");
const KEY: &str = "sk-test-CANARY-51d0e2-never-printed";

struct Host {
    tmp: TempDir,
    data: PathBuf,
}

impl Host {
    fn new() -> Host {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        Host { tmp, data }
    }
    fn run(&self, args: &[&str]) -> Output {
        apphost_in(self.tmp.path(), &self.data)
            .args(args)
            .env("TEST_PROVIDER_KEY", KEY)
            .output()
            .unwrap()
    }
}

fn stdout_json(out: &Output) -> Value {
    assert!(out.status.success(), "{}", describe(out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", describe(out)))
}

fn error_json(out: &Output) -> Value {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("{\"error\""))
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| v["error"].clone())
        .unwrap_or_else(|| panic!("no error JSON: {}", describe(out)))
}

fn assert_key_not_in(out: &Output) {
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains(KEY), "the API key was printed: {all}");
}

/// One request as the stand-in saw it.
#[derive(Debug, Clone)]
struct Seen {
    head: String,
    body: Value,
}

/// A stand-in provider: answers every request with `reply(n)` (a full HTTP response).
fn stand_in(reply: impl Fn(usize) -> String + Send + 'static) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for (n, conn) in listener.incoming().enumerate() {
            let Ok(conn) = conn else { return };
            if let Some(req) = read_request(&conn) {
                log.lock().unwrap().push(req);
            }
            let _ = (&conn).write_all(reply(n).as_bytes());
        }
    });
    (base, seen)
}

fn read_request(conn: &TcpStream) -> Option<Seen> {
    let mut r = BufReader::new(conn);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let len = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    Some(Seen {
        head,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

fn sse_ok() -> String {
    let body = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"OK\"},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}\n\n",
        "data: [DONE]\n\n"
    );
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn status(code: u16, reason: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {code} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[test]
fn set_show_and_test_keep_the_key_secret_and_use_it() {
    let host = Host::new();
    let (base, seen) = stand_in(|_| sse_ok());

    let out = host.run(&[
        "model",
        "set",
        "--base-url",
        &base,
        "--model",
        "tiny",
        "--api-key-env",
        "TEST_PROVIDER_KEY",
    ]);
    assert_key_not_in(&out);
    let v = stdout_json(&out);
    assert_eq!(v["apiKey"], "stored");
    assert_eq!(v["settings"]["apiKeyRef"], "encrypted-file:model.apiKey");

    let out = host.run(&["model", "show"]);
    assert_key_not_in(&out);
    let v = stdout_json(&out);
    assert_eq!(v["status"], "ready");
    assert_eq!(v["baseUrl"], base);
    assert_eq!(v["model"], "tiny");
    assert_eq!(v["apiKey"]["set"], true);
    assert_eq!(v["apiKey"]["store"], "encrypted-file");
    assert_eq!(v["apiKey"]["present"], true);
    assert!(v["apiKey"]["location"]
        .as_str()
        .unwrap()
        .contains("secrets.enc"));

    // Text output too.
    let out = Command::new(BIN)
        .args(["--data-dir"])
        .arg(&host.data)
        .args(["model", "show"])
        .env("APPHOST_SECRET_STORE", "file")
        .env(
            "APPHOST_SECRET_KEY_FILE",
            host.tmp.path().join("keys/secrets.key"),
        )
        .output()
        .unwrap();
    assert_key_not_in(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("API key:  set, kept in the encrypted file"),
        "{text}"
    );

    let out = host.run(&["model", "test"]);
    assert_key_not_in(&out);
    let v = stdout_json(&out);
    assert_eq!(v["ok"], true);
    assert_eq!(v["model"], "tiny");
    assert_eq!(v["finishReason"], "length");
    assert!(v["latencyMs"].as_u64().is_some());

    // The stand-in received the key as a bearer token, and a tiny request.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert!(
        seen[0].head.starts_with("POST /v1/chat/completions "),
        "{}",
        seen[0].head
    );
    assert!(
        seen[0]
            .head
            .lines()
            .any(|l| l.eq_ignore_ascii_case(&format!("authorization: Bearer {KEY}"))),
        "{}",
        seen[0].head
    );
    assert_eq!(seen[0].body["model"], "tiny");
    assert_eq!(seen[0].body["max_tokens"], 1);
    assert_eq!(seen[0].body["stream"], true);

    // The key is nowhere in the data directory in plaintext (host.db, its WAL, secrets.enc).
    for (path, bytes) in files_under(&host.data) {
        assert!(
            !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
            "{path} holds the key in plaintext"
        );
    }
}

#[test]
fn test_reports_the_provider_error_with_its_exit_class() {
    let host = Host::new();
    let (base, _) = stand_in(|_| {
        status(
            401,
            "Unauthorized",
            r#"{"error":{"message":"Invalid API key: check your settings","type":"auth"}}"#,
        )
    });
    let out = host.run(&[
        "model",
        "set",
        "--base-url",
        &base,
        "--model",
        "m",
        "--api-key-env",
        "TEST_PROVIDER_KEY",
    ]);
    stdout_json(&out);
    let out = host.run(&["model", "test"]);
    assert_eq!(out.status.code(), Some(9), "{}", describe(&out));
    assert_key_not_in(&out);
    let e = error_json(&out);
    assert_eq!(e["code"], "provider.auth");
    assert_eq!(e["message"], "Invalid API key: check your settings");
    assert_eq!(e["details"]["status"], 401);
}

#[test]
fn test_of_an_unreachable_provider_exits_8() {
    let host = Host::new();
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let base = format!("http://127.0.0.1:{port}/v1");
    stdout_json(&host.run(&["model", "set", "--base-url", &base, "--model", "m"]));
    let out = host.run(&["model", "test"]);
    assert_eq!(out.status.code(), Some(8), "{}", describe(&out));
    assert_eq!(error_json(&out)["code"], "provider.unreachable");
}

#[test]
fn nothing_configured_and_bad_input_are_clear_errors_that_change_nothing() {
    let host = Host::new();
    // show on a fresh host: needs-setup, and it creates no data directory.
    let v = stdout_json(&host.run(&["model", "show"]));
    assert_eq!(v["status"], "needs-setup");
    assert_eq!(v["apiKey"]["set"], false);
    assert!(!host.data.exists());

    let out = host.run(&["model", "test"]);
    assert_eq!(out.status.code(), Some(7), "{}", describe(&out));
    assert_eq!(error_json(&out)["code"], "model.not_configured");

    for (args, code) in [
        (
            vec!["--base-url", "ftp://x/v1", "--model", "m"],
            "model.invalid_base_url",
        ),
        (
            vec!["--base-url", "localhost:8080", "--model", "m"],
            "model.invalid_base_url",
        ),
        (
            vec!["--base-url", "http://h/v1", "--model", " "],
            "model.invalid_name",
        ),
        (
            vec![
                "--base-url",
                "http://h/v1",
                "--model",
                "m",
                "--api-key-env",
                "APPHOST_TEST_UNSET_VAR",
            ],
            "model.api_key_env_unset",
        ),
    ] {
        let mut full = vec!["model", "set"];
        full.extend(args);
        let out = host.run(&full);
        assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
        assert_eq!(error_json(&out)["code"], code);
        assert!(
            !host.data.exists(),
            "a rejected set created the data directory"
        );
    }

    // With a configured host, a rejected set leaves it byte-identical.
    stdout_json(&host.run(&[
        "model",
        "set",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--api-key-env",
        "TEST_PROVIDER_KEY",
    ]));
    let before = files_under(&host.data);
    let out = host.run(&[
        "model",
        "set",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--api-key-env",
        "APPHOST_TEST_UNSET_VAR",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        before == files_under(&host.data),
        "a rejected set changed the data directory"
    );
}

#[test]
fn a_new_base_url_does_not_inherit_the_old_key() {
    let host = Host::new();
    stdout_json(&host.run(&[
        "model",
        "set",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--api-key-env",
        "TEST_PROVIDER_KEY",
    ]));
    let v = stdout_json(&host.run(&[
        "model",
        "set",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "other",
    ]));
    assert_eq!(v["apiKey"], "kept");
    let v = stdout_json(&host.run(&[
        "model",
        "set",
        "--base-url",
        "https://elsewhere.example/v1",
        "--model",
        "other",
    ]));
    assert_eq!(v["apiKey"], "dropped-for-new-url");
    let v = stdout_json(&host.run(&["model", "show"]));
    assert_eq!(v["apiKey"]["set"], false);
    assert_eq!(v["baseUrl"], "https://elsewhere.example/v1");
}

/// Drives `apphost app-server --stdio` with JSON-RPC lines; returns every line it printed.
fn app_server(host: &Host, requests: &[Value], until: impl Fn(&Value) -> bool) -> Vec<Value> {
    use std::process::Stdio;
    let mut child = Command::new(BIN)
        .arg("--data-dir")
        .arg(&host.data)
        .args(["app-server", "--stdio"])
        .env("APPHOST_SECRET_STORE", "file")
        .env(
            "APPHOST_SECRET_KEY_FILE",
            host.tmp.path().join("keys/secrets.key"),
        )
        .env("XDG_CONFIG_HOME", host.tmp.path().join("config"))
        .env_remove("APPHOST_CRASH_AT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for r in requests {
        writeln!(stdin, "{r}").unwrap();
    }
    let reader = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in reader.lines() {
            let Ok(line) = line else { return };
            let v: Value = serde_json::from_str(&line).expect("stdout carries only JSON-RPC lines");
            if tx.send(v).is_err() {
                return;
            }
        }
    });
    let mut out = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while let Ok(v) = rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
    {
        let done = until(&v);
        out.push(v);
        if done {
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    out
}

fn handshake() -> Vec<Value> {
    vec![
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "cli-test"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "agentSession/start", "params": {"appId": "hello-app", "sessionId": "s1"}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "agentSession/turn/start", "params": {"sessionId": "s1", "input": {"text": "Say OK"}}}),
    ]
}

#[test]
fn app_server_without_a_model_needs_setup_and_never_answers_for_the_model() {
    let host = Host::new();
    let out = app_server(&host, &handshake(), |v| v["id"] == 3);
    let init = out
        .iter()
        .find(|v| v["id"] == 1)
        .expect("initialize answered");
    assert_eq!(init["result"]["runtime"]["status"], "needs-setup");
    let turn = out
        .iter()
        .find(|v| v["id"] == 3)
        .expect("turn/start answered");
    assert_eq!(turn["error"]["code"], -32030, "{turn}");
}

#[test]
fn app_server_runs_a_turn_through_the_configured_provider() {
    let host = Host::new();
    let (base, seen) = stand_in(|_| sse_ok());
    let set = host.run(&[
        "model",
        "set",
        "--base-url",
        &base,
        "--model",
        "stand-in-1",
        "--api-key-env",
        "TEST_PROVIDER_KEY",
    ]);
    assert!(set.status.success(), "{}", describe(&set));
    let out = app_server(&host, &handshake(), |v| {
        v["method"] == "agentSession/event" && v["params"]["event"]["type"] == "turn.completed"
    });
    let init = out.iter().find(|v| v["id"] == 1).unwrap();
    assert_eq!(init["result"]["runtime"]["status"], "ready");
    assert_eq!(init["result"]["runtime"]["modelName"], "stand-in-1");
    let turn = out.iter().find(|v| v["id"] == 3).unwrap();
    assert!(turn["result"]["turn"]["turnId"].is_string(), "{turn}");
    let events: Vec<&Value> = out
        .iter()
        .filter(|v| v["method"] == "agentSession/event")
        .map(|v| &v["params"]["event"])
        .collect();
    assert!(
        events.iter().any(|e| e["type"] == "turn.completed"),
        "{events:?}"
    );
    let seqs: Vec<u64> = events
        .iter()
        .filter_map(|e| e["sequence"].as_u64())
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "gap-free: {seqs:?}"
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "one provider request");
    assert!(seen[0].head.contains(&format!("Bearer {KEY}")));
    assert_eq!(seen[0].body["model"], "stand-in-1");
    assert_eq!(seen[0].body["stream"], true);
}

#[test]
fn a_second_app_server_on_one_data_directory_is_refused_with_runtime_busy() {
    // Two runtimes on one `runtime/` would each recover the other's live turns as crashed and
    // race for sequence numbers: the second process is refused until the first one exits.
    use std::process::Stdio;
    let host = Host::new();
    let mut first = apphost_in(host.tmp.path(), &host.data)
        .args(["app-server", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = first.stdin.take().unwrap();
    writeln!(
        stdin,
        "{}",
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "cli-test"}}})
    )
    .unwrap();
    let mut line = String::new();
    BufReader::new(first.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(
        line.contains("\"id\":1"),
        "the first server answered: {line}"
    );

    let second = apphost_in(host.tmp.path(), &host.data)
        .args(["app-server", "--stdio"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(6), "{}", describe(&second));
    assert_eq!(error_json(&second)["code"], "runtime.busy");

    drop(stdin);
    let _ = first.kill();
    let _ = first.wait();
    // Once the first is gone the directory is free again.
    let out = app_server(&host, &handshake()[..1], |v| v["id"] == 1);
    assert!(
        out.iter().any(|v| v["id"] == 1 && v["result"].is_object()),
        "{out:?}"
    );
}
