//! `apphost serve` fires a `schedule: {every}` entry with no client connected: the session ticks
//! its schedules on its own thread (`workflow_host::tick_in_background`), not only while a host
//! UI polls `next_events`. The schedule's slot is made due (its durable record) before `serve`
//! starts; `apphost workflow list` (handed to the running host over its door) then shows the
//! run, with no browser ever opening the UI.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{apphost_in, copy_dir, describe, Serving};
use host_core::foundation::paths::DataDir;
use host_core::hosting::workflow::schedule::{self, ScheduleRecord};
use serde_json::Value;

const APP: &str = "reply-workflow";

fn list(tmp: &Path, data: &Path) -> Vec<Value> {
    let out = apphost_in(tmp, data)
        .args(["workflow", "list", APP])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn serve_starts_a_due_schedule_with_no_client_connected() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let pkg = tmp.path().join("pkg");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/apps")
            .join(APP),
        &pkg,
    );
    let md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&md).unwrap().replacen(
        "storage:\n  namespace",
        "  - key: every-quarter\n    kind: background-task\n    title: Draft a reply every 15 minutes\n    workflow: draft-review-publish\n    schedule: {every: \"15m\"}\nstorage:\n  namespace",
        1,
    );
    std::fs::write(&md, text).unwrap();
    let out = apphost_in(tmp.path(), &data)
        .args(["install", pkg.to_str().unwrap(), "--yes", "--sideload"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    // The schedule's slot passed 5 s ago (within the 60 s grace: due, not missed).
    let dir = DataDir::at(&data);
    let date = std::process::Command::new("date")
        .args(["-u", "-d", "-5 seconds", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .unwrap();
    let due = String::from_utf8(date.stdout).unwrap().trim().to_owned();
    let record = ScheduleRecord {
        app: APP.into(),
        entry: "every-quarter".into(),
        workflow: "draft-review-publish".into(),
        every_secs: 900,
        next_due: due.clone(),
        last_started: None,
        missed_total: 0,
        last_missed: None,
    };
    let records = [(format!("{APP}/every-quarter"), record)]
        .into_iter()
        .collect();
    schedule::save(&schedule::records_path(&dir), &records).unwrap();
    assert!(list(tmp.path(), &data).is_empty());

    let _serve = Serving::start(apphost_in(tmp.path(), &data));
    // Nobody opens the URL: the run appears anyway.
    let deadline = Instant::now() + Duration::from_secs(15);
    let runs = loop {
        let runs = list(tmp.path(), &data);
        if !runs.is_empty() {
            break runs;
        }
        assert!(
            Instant::now() < deadline,
            "no scheduled run while serve ran"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["workflow"], "draft-review-publish");
    assert_eq!(
        runs[0]["idempotencyKey"],
        format!("schedule:every-quarter:{due}"),
        "{runs:?}"
    );
    let saved = schedule::load(&schedule::records_path(&dir));
    assert_eq!(
        saved[&format!("{APP}/every-quarter")].last_started,
        Some(due.clone())
    );
}
