//! Crash safety of workflow runs, through the real binary.
//!
//! The fixture `fixtures/apps/crash-workflow` runs one workflow of ten steps with every
//! side-effecting step kind: an agent task (against a stand-in model provider that counts its
//! requests), two storage writes, two artifacts and two evidence records. For each scenario the
//! CLI process is killed with SIGKILL while it drives the run, either at a named crash point
//! (`APPHOST_FAILPOINT=<point>:<n>`, `crates/host-core/src/hosting/workflow/failpoint.rs`: before
//! or after the n-th step's capability call) or after a real timer, then `apphost workflow resume`
//! (itself killed again in the chained scenario) finishes it. Every scenario must end exactly as
//! an uninterrupted run does:
//!
//! * the run succeeded with the same result shape, its outputs naming the app's records;
//! * the app's data holds exactly 2 artifacts, 2 evidence records and the 2 storage keys with the
//!   uninterrupted run's values (0 repeated side effects: a re-issued step found its first
//!   effect by its idempotency key);
//! * each evidence record was recorded once and points at the run's own artifact;
//! * the model provider was asked exactly once (the agent step's task is found by its key).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{apphost_in, describe};
use runtime_core::app_artifacts::AppArtifacts;
use runtime_core::app_evidence::AppEvidence;
use runtime_core::app_storage::AppStorage;
use serde_json::{json, Value};
use tempfile::TempDir;

const APP: &str = "crash-workflow";
const WF: &str = "publish-twice";
/// The workflow's capability calls (draft, save-draft, publish, note, save-ref, summarize,
/// note-done): crash points 1..=7 each land in a different step.
const STEP_CALLS: u64 = 7;

struct Host {
    tmp: TempDir,
    data: PathBuf,
}

impl Host {
    fn cmd(&self, args: &[&str]) -> std::process::Command {
        let mut c = apphost_in(self.tmp.path(), &self.data);
        c.args(args)
            .env("TEST_PROVIDER_KEY", "sk-test-crash")
            .env_remove("APPHOST_FAILPOINT");
        c
    }
    fn run(&self, args: &[&str], failpoint: Option<&str>) -> Output {
        let mut c = self.cmd(args);
        if let Some(f) = failpoint {
            c.env("APPHOST_FAILPOINT", f);
        }
        c.output().unwrap()
    }
    fn ok(&self, args: &[&str]) -> Value {
        let out = self.run(args, None);
        assert!(out.status.success(), "{args:?}: {}", describe(&out));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", describe(&out)))
    }
    fn app_dir(&self) -> PathBuf {
        self.data.join("apps").join(APP)
    }
    /// The one run of the app.
    fn run_id(&self) -> String {
        let listed = self.ok(&["workflow", "list", APP]);
        let runs = listed.as_array().unwrap();
        assert_eq!(runs.len(), 1, "one run: {listed}");
        runs[0]["runId"].as_str().unwrap().to_owned()
    }
}

/// A stand-in provider answering every chat completion with "Dear cats" after `delay`.
fn stand_in(delay: Duration) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let count = count.clone();
            std::thread::spawn(move || {
                if read_request(&conn) {
                    count.fetch_add(1, Ordering::SeqCst);
                }
                std::thread::sleep(delay);
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
            });
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

/// A fresh data directory with the fixture installed and the stand-in provider set.
fn host(base: &str) -> Host {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let host = Host { tmp, data };
    let pkg = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/apps")
        .join(APP);
    host.ok(&["install", pkg.to_str().unwrap(), "--yes", "--sideload"]);
    host.ok(&[
        "model",
        "set",
        "--base-url",
        base,
        "--model",
        "stand-in-1",
        "--api-key-env",
        "TEST_PROVIDER_KEY",
    ]);
    host
}

const START: &[&str] = &[
    "workflow",
    "start",
    APP,
    WF,
    "--input",
    r#"{"topic":"cats"}"#,
];

fn killed(out: &Output) -> bool {
    out.status.signal() == Some(9)
}

/// What the app's data holds after a run, with the run's own ids replaced by their roles.
fn final_state(host: &Host, run: &Value) -> Value {
    assert_eq!(run["finished"], true, "{run}");
    let status = &run["state"]["status"];
    assert_eq!(status["status"], "succeeded", "{run}");
    let result = &status["result"];
    let (artifact, summary, evidence) = (
        result["artifact"].as_str().unwrap_or_default(),
        result["summary"].as_str().unwrap_or_default(),
        result["evidence"].as_str().unwrap_or_default(),
    );
    let dir = host.app_dir();
    let arts = AppArtifacts::open_read_only(&dir).unwrap().unwrap();
    let artifacts: Vec<Value> = arts
        .list(None, 100)
        .unwrap()
        .items
        .into_iter()
        .map(|m| {
            let role = match m.id.as_str() {
                id if id == artifact => "artifact",
                id if id == summary => "summary",
                _ => "unknown",
            };
            let (_, bytes) = arts.read(&m.id, 1 << 20).unwrap();
            let text = String::from_utf8(bytes)
                .unwrap()
                .replace(artifact, "<artifact>");
            json!({"role": role, "name": m.name, "mime": m.mime_type, "content": text})
        })
        .collect();
    let ev = AppEvidence::open_read_only(&dir).unwrap().unwrap();
    let records: Vec<Value> = ev
        .list(None, None, 100)
        .unwrap()
        .items
        .into_iter()
        .map(|r| {
            let refs: Vec<&str> = r
                .artifacts
                .iter()
                .map(|a| {
                    if a.artifact_id == artifact {
                        "<artifact>"
                    } else {
                        "unknown"
                    }
                })
                .collect();
            let data: Value = serde_json::from_str(
                &r.data
                    .to_string()
                    .replace(summary, "<summary>")
                    .replace(evidence, "<evidence>"),
            )
            .unwrap();
            json!({"first": r.id == evidence, "kind": r.kind, "summary": r.summary, "refs": refs, "data": data})
        })
        .collect();
    let storage = AppStorage::open(&dir, 16 << 20).unwrap();
    let kv = json!({
        "drafts/first": storage.get("drafts/first").unwrap(),
        "replies/artifact": storage.get("replies/artifact").unwrap().map(|v| {
            if v == artifact { json!("<artifact>") } else { v }
        }),
    });
    json!({"artifacts": artifacts, "evidence": records, "storage": kv})
}

fn expected() -> Value {
    json!({
        "artifacts": [
            {"role": "artifact", "name": "Reply: cats", "mime": "application/json",
             "content": "{\"text\":\"Dear cats\"}"},
            {"role": "summary", "name": "Summary: cats", "mime": "application/json",
             "content": "{\"artifact\":\"<artifact>\",\"topic\":\"cats\"}"},
        ],
        "evidence": [
            {"first": true, "kind": "workflow.published", "summary": "reply published",
             "refs": ["<artifact>"], "data": null},
            {"first": false, "kind": "workflow.done", "summary": "run done", "refs": [],
             "data": {"evidence": "<evidence>", "summary": "<summary>"}},
        ],
        "storage": {"drafts/first": "Dear cats", "replies/artifact": "<artifact>"},
    })
}

#[test]
fn an_uninterrupted_run_is_the_reference() {
    let (base, seen) = stand_in(Duration::ZERO);
    let h = host(&base);
    let out = h.run(START, Some("workflow.after_effect:99"));
    assert!(out.status.success(), "{}", describe(&out));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(final_state(&h, &run), expected());
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

/// Kills `start` at every crash point, before and after every step's effect, then resumes.
#[test]
fn a_kill_at_every_step_boundary_resumes_to_the_same_state_without_repeating_an_effect() {
    let (base, seen) = stand_in(Duration::ZERO);
    for point in ["workflow.before_effect", "workflow.after_effect"] {
        for n in 1..=STEP_CALLS {
            let what = format!("{point}:{n}");
            let before = seen.load(Ordering::SeqCst);
            let h = host(&base);
            let out = h.run(START, Some(&what));
            assert!(killed(&out), "{what}: not killed: {}", describe(&out));
            let run_id = h.run_id();
            let shown = h.ok(&["workflow", "show", &run_id]);
            assert_eq!(shown["finished"], false, "{what}: {shown}");
            let run = h.ok(&["workflow", "resume", &run_id]);
            assert_eq!(final_state(&h, &run), expected(), "{what}");
            assert_eq!(
                seen.load(Ordering::SeqCst) - before,
                1,
                "{what}: the model was asked once"
            );
            // A resume of the finished run changes nothing.
            let again = h.ok(&["workflow", "resume", &run_id]);
            assert_eq!(final_state(&h, &again), expected(), "{what}: again");
        }
    }
}

/// Every process, `start` and each `resume`, is killed right after its second effect: the run
/// moves on a step at a time across many processes and still ends as one uninterrupted run.
#[test]
fn a_chain_of_killed_resumes_ends_as_one_run() {
    let (base, seen) = stand_in(Duration::ZERO);
    let h = host(&base);
    let kill = "workflow.after_effect:2";
    assert!(killed(&h.run(START, Some(kill))));
    let run_id = h.run_id();
    let mut kills = 1;
    let run = loop {
        let out = h.run(&["workflow", "resume", &run_id], Some(kill));
        if killed(&out) {
            kills += 1;
            assert!(kills <= STEP_CALLS + 2, "no progress across resumes");
            continue;
        }
        assert!(out.status.success(), "{}", describe(&out));
        break serde_json::from_slice::<Value>(&out.stdout).unwrap();
    };
    assert!(kills >= 4, "{kills} kills");
    assert_eq!(final_state(&h, &run), expected());
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

/// Real SIGKILLs after a timer, wherever the process happens to be (the agent step's provider
/// answers after 150 ms, so early kills land inside the agent task).
#[test]
fn timed_sigkills_resume_to_the_same_state() {
    let (base, seen) = stand_in(Duration::from_millis(150));
    let mut landed = 0;
    for delay_ms in [40u64, 120, 200, 260, 320, 400, 550] {
        let before = seen.load(Ordering::SeqCst);
        let h = host(&base);
        let mut child = h
            .cmd(START)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let was_running = child.try_wait().unwrap().is_none();
        let _ = child.kill(); // SIGKILL
        let status = child.wait().unwrap();
        if was_running && status.signal() == Some(9) {
            landed += 1;
        }
        let listed = h.ok(&["workflow", "list", APP]);
        let Some(run_id) = listed[0]["runId"].as_str().map(str::to_owned) else {
            continue; // killed before the run was recorded: nothing to resume
        };
        let run = h.ok(&["workflow", "resume", &run_id]);
        let what = format!("killed after {delay_ms} ms ({:?})", started.elapsed());
        assert_eq!(final_state(&h, &run), expected(), "{what}");
        let asked = seen.load(Ordering::SeqCst) - before;
        // A kill inside the agent step cuts its model turn: the resumed step runs the same task
        // again (one more request), never a second task.
        assert!(
            asked == 1 || (asked == 2 && was_running),
            "{what}: the model was asked {asked} times"
        );
    }
    assert!(
        landed >= 3,
        "only {landed} kills landed while the run was driven"
    );
}
