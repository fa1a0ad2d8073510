//! The host UI's workflow runs (`host_core::api::workflow`, docs/host-api.md "Workflow runs")
//! over the sample app `fixtures/apps/reply-workflow` with a scripted model: the Run action starts
//! the run and it waits at the review; Approve runs it to the end, Reject takes the other branch,
//! Edit passes the edited data; the app's own frame cannot answer; every action is audited and
//! announced; each ended run has exactly one evidence record, also after a restart; scheduled
//! starts fire once per slot and slots missed while no host ran are reported, never run.

mod support;

use std::time::Duration;

use host_core::api::{self, Session};
use host_core::foundation::error::ErrorCode;
use host_core::foundation::paths::DataDir;
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::workflow::{run_evidence, schedule};
use runtime_core::app_evidence::AppEvidence;
use runtime_core::backend::ScriptedBackend;
use serde_json::{json, Value};
use support::agent::{call, scripted_backend, session, set_placeholder_model};
use support::{copy_dir, install, repo_root};

const APP: &str = "reply-workflow";

struct Host {
    _tmp: tempfile::TempDir,
    dir: DataDir,
    s: Session,
    backend: ScriptedBackend,
}

fn host_with(edit: impl FnOnce(&std::path::Path)) -> Host {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let pkg = tmp.path().join("pkg");
    copy_dir(&repo_root().join("fixtures/apps").join(APP), &pkg);
    edit(&pkg);
    install(&dir, &pkg);
    set_placeholder_model(&dir);
    let s = session(&dir);
    let backend = scripted_backend(&s);
    Host {
        _tmp: tmp,
        dir,
        s,
        backend,
    }
}

fn host() -> Host {
    host_with(|_| {})
}

fn code(s: &Session, command: &str, args: Value) -> ErrorCode {
    api::call(s, command, args.clone())
        .map(|v| panic!("{command} {args} answered {v}"))
        .unwrap_err()
        .code
}

fn start(h: &Host, topic: &str) -> Value {
    h.backend.push_text(&[&format!("Dear {topic}")]);
    call(
        &h.s,
        "workflow_start",
        json!({"appId": APP, "entryKey": "reply", "input": {"topic": topic}}),
    )
}

fn detail(h: &Host, run: &str) -> Value {
    call(&h.s, "workflow_run", json!({"runId": run}))
}

/// Polls the run's detail until `done` holds (the host's driver moves runs on its own thread).
fn wait_for(h: &Host, run: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let d = detail(h, run);
        if done(&d) {
            return d;
        }
        assert!(std::time::Instant::now() < deadline, "never {what}: {d}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The run waits for its review and the driver has recorded the request (the run's state
/// shows the review a moment before its fact is in the log).
fn review_requested(d: &Value) -> bool {
    d["pending"]["kind"] == "review"
        && d["timeline"]["steps"]
            .as_array()
            .is_some_and(|s| s.iter().any(|r| r["what"] == "review"))
}

/// Waits until the run ended and its evidence is recorded.
fn ended(h: &Host, run: &str, status: &'static str) -> Value {
    wait_for(h, run, status, move |d| {
        d["run"]["status"] == status && !d["evidence"].is_null()
    })
}

/// Starts a run and waits for its review.
fn started(h: &Host, topic: &str) -> String {
    let id = start(h, topic)["runId"].as_str().unwrap().to_owned();
    wait_for(h, &id, "review", review_requested);
    id
}

fn audit_actions(dir: &DataDir) -> Vec<(String, Value)> {
    let conn = rusqlite::Connection::open(dir.db_path()).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT action, details FROM audit_log WHERE action LIKE 'workflow.%' ORDER BY rowid",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                serde_json::from_str(&r.get::<_, String>(1)?).unwrap(),
            ))
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

fn evidence_of(dir: &DataDir, run: &str) -> Vec<Value> {
    let Some(ev) = AppEvidence::open_read_only(&dir.apps_data().join(APP)).unwrap() else {
        return Vec::new();
    };
    let page = ev
        .list(Some(run_evidence::RUN_EVIDENCE_KIND), None, 100)
        .unwrap();
    page.items
        .into_iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .filter(|r| r["data"]["runtimeCorrelation"]["runId"] == run)
        .collect()
}

fn changed(s: &Session) -> Vec<Value> {
    let batch = call(s, "next_events", json!({"after": 0}));
    batch["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "workflow:changed")
        .map(|e| e["payload"].clone())
        .collect()
}

#[test]
fn run_from_the_host_waits_at_review_and_approve_runs_it_to_the_end_with_one_evidence_record() {
    let h = host();
    assert_eq!(call(&h.s, "workflow_runs", json!({})), json!([]));
    let run = start(&h, "cats");
    assert!(!run["finished"].as_bool().unwrap(), "{run}");
    let id = run["runId"].as_str().unwrap().to_owned();

    let d = wait_for(&h, &id, "review", review_requested);
    assert_eq!(d["run"]["waiting"], "review");
    let p = &d["pending"];
    assert_eq!(p["kind"], "review");
    assert_eq!(p["prompt"], "Approve this reply?");
    assert_eq!(p["show"], json!({"topic": "cats", "draft": "Dear cats"}));
    let steps = d["timeline"]["steps"].as_array().unwrap();
    assert_eq!(steps[0]["state"], "draft");
    assert_eq!(steps[0]["kind"], "agent-task");
    assert_eq!(steps[0]["status"], "succeeded");
    assert_eq!(steps[0]["output"], "\"Dear cats\"");
    assert!(steps[0]["endedAt"].is_string());
    assert_eq!(steps[1]["state"], "review");
    assert_eq!(steps[1]["status"], "waiting");
    assert!(d["evidence"].is_null());
    let listed = call(&h.s, "workflow_runs", json!({"appId": APP}));
    assert_eq!(listed[0]["runId"], id.as_str());
    assert_eq!(
        call(&h.s, "workflow_runs", json!({"appId": "other"})),
        json!([])
    );

    call(
        &h.s,
        "workflow_respond",
        json!({"runId": id, "decision": "approve"}),
    );
    let d = ended(&h, &id, "succeeded");
    assert!(
        d["result"].as_str().unwrap().contains("\"approved\":true"),
        "{d}"
    );
    let states: Vec<&str> = d["timeline"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["draft", "review", "save", "publish"]);
    assert_eq!(d["timeline"]["steps"][1]["status"], "approved");
    assert!(d["timeline"]["endedAt"].is_string());

    // One evidence record, with the package provenance and the run's correlation.
    let ev = evidence_of(&h.dir, &id);
    assert_eq!(ev.len(), 1, "{ev:?}");
    let rec = &ev[0];
    assert_eq!(rec["data"]["status"], "succeeded");
    assert_eq!(rec["data"]["package"]["appVersion"], "1.0.0");
    assert!(rec["data"]["package"]["packageHash"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    assert_eq!(
        rec["provenance"]["manifestHash"],
        rec["data"]["package"]["manifestHash"]
    );
    assert_eq!(
        rec["data"]["runtimeCorrelation"]["traceId"],
        format!("trace_{id}")
    );
    assert!(rec["data"]["runtimeCorrelation"]["sessionId"]
        .as_str()
        .unwrap()
        .contains(&id));
    assert_eq!(d["evidence"]["id"], rec["id"]);

    // A restart (a new session over the same data) records nothing again.
    drop(h.s);
    let s2 = session(&h.dir);
    assert_eq!(
        call(&s2, "workflow_runs", json!({}))
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(evidence_of(&h.dir, &id).len(), 1);

    let audited = audit_actions(&h.dir);
    let names: Vec<&str> = audited.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(names, ["workflow.start", "workflow.respond"]);
    assert_eq!(audited[1].1["by"], "host-user");
    assert_eq!(audited[1].1["decision"], "approve");
}

#[test]
fn reject_takes_the_other_branch_and_edit_passes_the_edited_data() {
    let h = host();
    // Reject without notes: the run ends on `discarded`, nothing saved or published.
    let id = started(&h, "dogs");
    call(
        &h.s,
        "workflow_respond",
        json!({"runId": id, "decision": "reject"}),
    );
    let d = ended(&h, &id, "succeeded");
    assert!(
        d["result"].as_str().unwrap().contains("\"approved\":false"),
        "{d}"
    );
    let states: Vec<&str> = d["timeline"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["draft", "review"], "{d:#}");
    assert_eq!(d["timeline"]["steps"][1]["status"], "rejected");
    assert_eq!(evidence_of(&h.dir, &id).len(), 1);

    // Edit: approved with the reviewer's data, which becomes the review's output.
    let id = started(&h, "owls");
    assert_eq!(
        code(
            &h.s,
            "workflow_respond",
            json!({"runId": id, "decision": "edit"})
        ),
        ErrorCode::ApiBadArguments
    );
    assert_eq!(
        code(
            &h.s,
            "workflow_respond",
            json!({"runId": id, "decision": "approve", "data": {"x": 1}})
        ),
        ErrorCode::ApiBadArguments
    );
    assert_eq!(detail(&h, &id)["run"]["status"], "waiting");
    call(
        &h.s,
        "workflow_respond",
        json!({"runId": id, "decision": "edit", "data": {"draft": "Dear owls, edited"}}),
    );
    let d = ended(&h, &id, "succeeded");
    let review = d["outputs"]["review"].as_str().unwrap();
    assert!(review.contains("Dear owls, edited"), "{review}");
    assert_eq!(d["timeline"]["steps"][1]["status"], "approved");
    // A finished run takes no answer and no cancel.
    assert_eq!(
        code(
            &h.s,
            "workflow_respond",
            json!({"runId": id, "decision": "approve"})
        ),
        ErrorCode::WorkflowRunFinished
    );
    assert_eq!(
        code(&h.s, "workflow_cancel", json!({"runId": id})),
        ErrorCode::WorkflowRunFinished
    );
    let reasons: Vec<Value> = changed(&h.s)
        .into_iter()
        .map(|p| p["reason"].clone())
        .collect();
    assert!(reasons.contains(&json!("workflow.start")));
    assert!(reasons.contains(&json!("workflow.respond")));
}

#[test]
fn cancel_ends_the_run_with_its_evidence_and_bad_requests_get_their_codes() {
    let h = host();
    let id = started(&h, "bees");
    let c = call(&h.s, "workflow_cancel", json!({"runId": id}));
    assert_eq!(c["status"], "cancelled");
    ended(&h, &id, "cancelled");
    let ev = evidence_of(&h.dir, &id);
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0]["data"]["status"], "cancelled");

    for (cmd, args, want) in [
        (
            "workflow_run",
            json!({"runId": "run_nope"}),
            ErrorCode::WorkflowRunNotFound,
        ),
        (
            "workflow_run",
            json!({"runId": "x".repeat(5000)}),
            ErrorCode::WorkflowRunNotFound,
        ),
        (
            "workflow_cancel",
            json!({"runId": ""}),
            ErrorCode::WorkflowRunNotFound,
        ),
        (
            "workflow_start",
            json!({"appId": APP, "entryKey": "home"}),
            ErrorCode::WorkflowNoEntry,
        ),
        (
            "workflow_start",
            json!({"appId": "nope", "entryKey": "reply"}),
            ErrorCode::AppNotInstalled,
        ),
        (
            "workflow_start",
            json!({"appId": APP}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "workflow_respond",
            json!({"runId": id, "decision": "maybe"}),
            ErrorCode::ApiBadArguments,
        ),
        (
            "workflow_runs",
            json!({"extra": 1}),
            ErrorCode::ApiBadArguments,
        ),
    ] {
        assert_eq!(code(&h.s, cmd, args.clone()), want, "{cmd} {args}");
    }
    let big = json!({"appId": APP, "entryKey": "reply", "input": {"t": "x".repeat(300 * 1024)}});
    assert_eq!(
        code(&h.s, "workflow_start", big),
        ErrorCode::WorkflowInvalidInput
    );
    // Refusals left no run behind.
    assert_eq!(
        call(&h.s, "workflow_runs", json!({}))
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn the_apps_own_frame_cannot_answer_its_review() {
    let h = host();
    let id = started(&h, "frogs");
    let before = detail(&h, &id);
    let out =
        h.s.with_bridge(|host, store| {
            let m = host.mount(store, APP, "home").unwrap();
            let send = |host: &mut host_core::hosting::bridge::host::BridgeHost,
                        rid: &str,
                        kind: &str,
                        p: Value| {
                let raw =
                    json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": rid,
                                 "appId": APP, "entryKey": "home", "payload": p})
                    .to_string();
                serde_json::to_value(host.handle(store, &m.mount_id, &m.origin, &raw)).unwrap()
            };
            send(host, "r0", "app:ready", json!({}));
            let mut outs = Vec::new();
            for (cap, method) in [("lime.workflow", "respond"), ("host", "workflow_respond")] {
                outs.push(send(
                    host,
                    &format!("r-{cap}-{method}"),
                    "capability:invoke",
                    json!({"capability": cap, "method": method,
                           "args": {"runId": id, "decision": "approve"}}),
                ));
            }
            outs
        })
        .unwrap();
    // `lime.workflow.respond` is refused with an error; a non-`lime.*` capability is a
    // malformed message, dropped without an answer. Neither answers for the user.
    assert!(out[0].to_string().contains("host:error"), "{}", out[0]);
    for o in &out {
        let text = o.to_string();
        assert!(
            !text.contains("host:response"),
            "a frame's answer was accepted: {text}"
        );
    }
    let after = detail(&h, &id);
    assert_eq!(after["run"]["status"], "waiting");
    assert_eq!(after["timeline"], before["timeline"]);
    assert!(audit_actions(&h.dir)
        .iter()
        .all(|(a, _)| a != "workflow.respond"));
}

fn scheduled(pkg: &std::path::Path) {
    let md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&md).unwrap();
    let text = text.replacen(
        "storage:\n  namespace",
        "  - key: every-quarter\n    kind: background-task\n    title: Draft a reply every 15 minutes\n    workflow: draft-review-publish\n    schedule: {every: \"15m\"}\nstorage:\n  namespace",
        1,
    );
    std::fs::write(md, text).unwrap();
}

fn set_next_due(dir: &DataDir, ago: jiff::SignedDuration) {
    let path = schedule::records_path(dir);
    let mut r = schedule::load(&path);
    let rec = r.get_mut(&format!("{APP}/every-quarter")).unwrap();
    rec.next_due = jiff::Timestamp::now().checked_sub(ago).unwrap().to_string();
    schedule::save(&path, &r).unwrap();
}

fn tick(s: &Session) {
    std::thread::sleep(Duration::from_millis(1100));
    call(s, "next_events", json!({"after": 0}));
}

#[test]
fn a_schedule_starts_once_per_slot_and_reports_slots_missed_while_no_host_ran() {
    let h = host_with(scheduled);
    call(&h.s, "next_events", json!({"after": 0}));
    let recs = call(&h.s, "workflow_schedules", json!({}));
    assert_eq!(recs.as_array().unwrap().len(), 1, "{recs}");
    assert_eq!(recs[0]["entry"], "every-quarter");
    let next: jiff::Timestamp = recs[0]["nextDue"].as_str().unwrap().parse().unwrap();
    assert!(next > jiff::Timestamp::now() + jiff::SignedDuration::from_mins(14));
    assert_eq!(call(&h.s, "workflow_runs", json!({})), json!([]));

    // Due a moment ago: one start.
    h.backend.push_text(&["Dear schedule"]);
    set_next_due(&h.dir, jiff::SignedDuration::from_secs(5));
    tick(&h.s);
    let runs = call(&h.s, "workflow_runs", json!({}));
    assert_eq!(runs.as_array().unwrap().len(), 1, "{runs}");
    assert_eq!(runs[0]["workflow"], "draft-review-publish");
    tick(&h.s);
    assert_eq!(
        call(&h.s, "workflow_runs", json!({}))
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // Due hours ago (no host ran): reported, no start, never caught up.
    set_next_due(&h.dir, jiff::SignedDuration::from_secs(2 * 3600 - 60));
    tick(&h.s);
    assert_eq!(
        call(&h.s, "workflow_runs", json!({}))
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let recs = call(&h.s, "workflow_schedules", json!({}));
    assert_eq!(recs[0]["missedTotal"], 8, "{recs}");
    assert_eq!(recs[0]["lastMissed"]["missed"], 8);
    assert!(changed(&h.s)
        .iter()
        .any(|p| p["reason"] == "schedule_missed" && p["missed"] == 8));
    let audited = audit_actions(&h.dir);
    assert_eq!(
        audited
            .iter()
            .filter(|(a, _)| a == "workflow.scheduled_start")
            .count(),
        1
    );
}

fn schedule_readiness(dir: &DataDir) -> host_core::install::readiness::Report {
    host_core::install::store::Store::open(dir)
        .unwrap()
        .readiness(
            APP,
            &host_core::foundation::profile::HostProfile::all_available(),
        )
        .unwrap()
}

#[test]
fn readiness_passes_a_valid_schedule_and_blocks_only_the_entry_of_an_invalid_one() {
    let h = host_with(scheduled);
    let r = schedule_readiness(&h.dir);
    let c = r.checks.iter().find(|c| c.kind == "schedule").unwrap();
    assert_eq!(
        c.outcome,
        host_core::install::readiness::Outcome::Pass,
        "{c:?}"
    );
    assert_eq!(c.entry.as_deref(), Some("every-quarter"));

    for (every, code) in [
        ("{every: \"5s\"}", "schedule.invalid"),
        ("{cron: \"* * * * *\"}", "schedule.invalid"),
        (
            "{every: \"15m\"}\n    workflow: nope",
            "schedule.no_workflow",
        ),
    ] {
        let h = host_with(|pkg| {
            scheduled(pkg);
            let md = pkg.join("APP.md");
            let text = std::fs::read_to_string(&md).unwrap();
            let text = text.replacen(
                "    workflow: draft-review-publish\n    schedule: {every: \"15m\"}",
                &format!("    schedule: {every}"),
                1,
            );
            std::fs::write(md, text).unwrap();
        });
        let r = schedule_readiness(&h.dir);
        let c = r.checks.iter().find(|c| c.kind == "schedule").unwrap();
        assert_eq!(c.code, Some(code), "{every}: {c:?}");
        assert_eq!(c.outcome, host_core::install::readiness::Outcome::Blocked);
        let status = |k: &str| r.entries.iter().find(|e| e.entry_key == k).unwrap().status;
        assert_eq!(
            status("every-quarter"),
            host_core::install::readiness::Status::Blocked,
            "{every}"
        );
        assert_ne!(
            status("reply"),
            host_core::install::readiness::Status::Blocked,
            "{every}"
        );
        // The host never starts it.
        call(&h.s, "next_events", json!({"after": 0}));
        assert_eq!(
            call(&h.s, "workflow_schedules", json!({})),
            json!([]),
            "{every}"
        );
    }
}
