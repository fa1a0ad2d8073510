//! The session owns its schedule ticking (`workflow_host::tick_in_background`, started by the
//! window and `apphost serve`): a `schedule: {every}` entry fires with no host UI polling
//! `next_events`. And the scheduler's first tick, which opens the bridge's store connection,
//! is not announced to the host UI as another process's `store:changed`.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use host_core::api::workflow_host::{self, TICK_EVERY};
use host_core::foundation::paths::DataDir;
use host_core::hosting::workflow::schedule;
use serde_json::{json, Value};
use support::agent::{call, session};
use support::{copy_dir, install, repo_root};

const APP: &str = "reply-workflow";

/// The sample app with a background-task entry starting its workflow every 15 minutes.
fn scheduled_app(tmp: &std::path::Path, dir: &DataDir) {
    let pkg = tmp.join("pkg");
    copy_dir(&repo_root().join("fixtures/apps").join(APP), &pkg);
    let md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&md).unwrap();
    let text = text.replacen(
        "storage:\n  namespace",
        "  - key: every-quarter\n    kind: background-task\n    title: Draft a reply every 15 minutes\n    workflow: draft-review-publish\n    schedule: {every: \"15m\"}\nstorage:\n  namespace",
        1,
    );
    std::fs::write(md, text).unwrap();
    install(dir, &pkg);
}

fn until(what: &str, within: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_schedule_fires_from_the_sessions_own_thread_with_no_ui_polling() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    scheduled_app(tmp.path(), &dir);
    let s = Arc::new(session(&dir));
    let ticker = workflow_host::tick_in_background(&s);
    // The first tick (at once) records the schedule, first due a period from now.
    let path = schedule::records_path(&dir);
    until("the schedule's record", Duration::from_secs(5), || {
        !schedule::load(&path).is_empty()
    });
    assert_eq!(call(&s, "workflow_runs", json!({})), json!([]));
    // Due a moment ago: the thread starts it within a tick or two, no `next_events` called.
    let mut r = schedule::load(&path);
    let rec = r.get_mut(&format!("{APP}/every-quarter")).unwrap();
    rec.next_due = (jiff::Timestamp::now() - jiff::SignedDuration::from_secs(5)).to_string();
    schedule::save(&path, &r).unwrap();
    until("the scheduled run", TICK_EVERY * 5, || {
        call(&s, "workflow_runs", json!({}))
            .as_array()
            .is_some_and(|a| a.len() == 1)
    });
    let runs = call(&s, "workflow_runs", json!({}));
    assert_eq!(runs[0]["workflow"], "draft-review-publish", "{runs}");
    let rec = &schedule::load(&path)[&format!("{APP}/every-quarter")];
    assert!(rec.last_started.is_some(), "{rec:?}");
    // Stopped with its handle: the slot moved on, and no second start comes.
    drop(ticker);
    std::thread::sleep(TICK_EVERY + Duration::from_millis(200));
    assert_eq!(
        call(&s, "workflow_runs", json!({}))
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_stopped_ticker_ends_its_thread_and_a_dropped_session_ends_it_too() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    scheduled_app(tmp.path(), &dir);
    let s = Arc::new(session(&dir));
    let ticker = workflow_host::tick_in_background(&s);
    let started = Instant::now();
    drop(ticker);
    assert!(
        started.elapsed() < TICK_EVERY,
        "the drop waited a whole tick"
    );
    let _ticker = workflow_host::tick_in_background(&s);
    let weak = Arc::downgrade(&s);
    drop(s);
    // The thread holds the session only during a tick.
    until("the session to go", TICK_EVERY * 3, || {
        weak.upgrade().is_none()
    });
}

fn events(s: &host_core::api::Session, after: u64, timeout_ms: u64) -> (Vec<Value>, u64) {
    let b = call(
        s,
        "next_events",
        json!({"after": after, "timeoutMs": timeout_ms}),
    );
    (
        b["events"].as_array().unwrap().clone(),
        b["next"].as_u64().unwrap(),
    )
}

#[test]
fn the_schedulers_first_tick_is_not_announced_as_a_store_change() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    scheduled_app(tmp.path(), &dir);
    let s = session(&dir);
    // The host UI's first look announces the store once (whatever was there).
    let (first, after) = events(&s, 0, 0);
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0]["kind"], "store:changed");
    // The scheduler ticks at once (no 1 s grace): it opens the bridge's store connection and
    // writes its own schedule file; the UI's next looks see no store change.
    workflow_host::tick(&s);
    assert!(!schedule::load(&schedule::records_path(&dir)).is_empty());
    let (seen, after) = events(&s, after, 1500);
    assert!(
        seen.iter().all(|e| e["kind"] != "store:changed"),
        "spurious: {seen:?}"
    );
    // Another process's commit still is.
    {
        let (store, _lock) = host_core::install::store::Store::open_locked(&dir).unwrap();
        store.set_enabled(APP, false).unwrap();
    }
    let (seen, _) = events(&s, after, 3000);
    assert!(
        seen.iter().any(|e| e["kind"] == "store:changed"),
        "{seen:?}"
    );
}
