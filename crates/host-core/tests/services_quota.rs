//! Issue 24 §2/§3: a service's writable directory has a total-size quota (refused before a
//! launch when over it, stopped and audited as a `disk` limit hit when it fills past it while
//! running, readiness says how to free space), and a service's crash health is durable in
//! host.db: a new session over the same data dir (another process, a restart) sees the crash
//! loop the first one saw, until `apphost services reset`; an uninstall removes it.

mod services_support;
mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use host_core::foundation::profile::HostProfile;
use host_core::hosting::capability::services::Services;
use host_core::hosting::services::reset::reset;
use host_core::install::readiness::{Outcome, Status};
use host_core::install::store::{DataMode, Store};
use serde_json::{json, Value};
use services_support::{alive, relay_app, Host};

const APP: &str = "quota-app";
/// The quota every test here runs under (set before any service starts).
const QUOTA: u64 = 4 << 20;

const SERVICE_PY: &str = r#"import json, os, sys, time
def send(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    meth, rid, p = m.get("method"), m.get("id"), m.get("params") or {}
    if rid is None: continue
    if meth == "initialize": send({"jsonrpc": "2.0", "id": rid, "result": {}}); continue
    if meth == "die": os._exit(7)
    if meth == "fill":
        wrote, err = 0, None
        for i in range(p.get("files", 8)):
            try:
                with open("/service/fill-%d.bin" % i, "wb") as f:
                    for _ in range(p.get("mib", 1)):
                        f.write(b"\1" * (1 << 20)); f.flush(); os.fsync(f.fileno())
                        wrote += 1 << 20
                        time.sleep(0.005)
            except OSError as e:
                err = str(e)
        send({"jsonrpc": "2.0", "id": rid, "result": {"wrote": wrote, "error": err}}); continue
    if meth == "link":
        os.symlink(p["target"], "/service/" + p["name"])
        send({"jsonrpc": "2.0", "id": rid, "result": True}); continue
    send({"jsonrpc": "2.0", "id": rid, "result": {"echo": p}})
"#;

fn quota_app(tmp: &Path) -> PathBuf {
    std::env::set_var("APPHOST_SERVICE_DISK_QUOTA_BYTES", QUOTA.to_string());
    std::env::set_var("APPHOST_SERVICE_DISK_SCAN_MS", "50");
    let pkg = relay_app(tmp, APP, false);
    std::fs::write(pkg.join("services/relay/relay.py"), SERVICE_PY).unwrap();
    let manifest = std::fs::read_to_string(pkg.join("APP.md"))
        .unwrap()
        .replace("timeoutMs: 800", "timeoutMs: 30000");
    std::fs::write(pkg.join("APP.md"), manifest).unwrap();
    pkg
}

fn host() -> (Host, tempfile::TempDir) {
    let pkgs = tempfile::tempdir().unwrap();
    let h = Host::with(&[quota_app(pkgs.path())]);
    (h, pkgs)
}

fn service_dir(h: &Host) -> PathBuf {
    h.dir.apps_data().join(APP).join("services/relay")
}

fn call(h: &mut Host, method: &str, params: Value) -> Result<Value, Option<&'static str>> {
    h.service(APP, "parser", "relay", method, params)
        .map_err(|e| e.cause_code)
}

fn used(dir: &Path) -> u64 {
    service_sandbox::disk_usage::usage(dir, Default::default())
        .unwrap()
        .bytes
}

fn count(h: &Host, action: &str) -> usize {
    h.audit(APP)
        .iter()
        .filter(|a| a["action"] == action)
        .count()
}

fn service_check(h: &Host) -> host_core::install::readiness::Check {
    let r = h.store.readiness(APP, &HostProfile::current()).unwrap();
    r.checks
        .into_iter()
        .find(|c| c.kind == "service" && c.entry.is_none())
        .unwrap()
}

#[test]
fn over_its_quota_a_service_is_refused_before_launch_and_readiness_says_how_to_free_space() {
    let (mut h, _pkgs) = host();
    // a first launch makes the service dir; the host then finds it over the quota
    assert!(call(&mut h, "echo", json!({})).is_ok());
    let dir = service_dir(&h);
    std::fs::write(dir.join("old.bin"), vec![9u8; 5 << 20]).unwrap();
    let host = host_core::hosting::capability::services::service_host(&h.store);
    let id = host_core::hosting::services::ServiceId {
        app: APP.into(),
        key: "relay".into(),
    };
    host.stop(&id, "test");
    let starts = count(&h, "service.start");

    assert_eq!(
        call(&mut h, "echo", json!({})).unwrap_err(),
        Some("service.disk_quota_exceeded")
    );
    assert_eq!(count(&h, "service.start"), starts, "nothing started");
    assert!(h.audit(APP).iter().any(|a| a["action"] == "service.refused"
        && a["details"]["code"] == "service.disk_quota_exceeded"));

    // readiness: blocked (a required service), with the action that frees the space
    let c = service_check(&h);
    assert_eq!(c.code, Some("service.disk_quota_exceeded"), "{c:?}");
    assert_eq!(c.outcome, Outcome::Blocked);
    let action = c.setup_action.expect("a setup action");
    assert_eq!(
        action.target.as_deref(),
        Some("apphost services reset quota-app relay --delete-data")
    );
    assert_eq!(
        h.store
            .readiness(APP, &HostProfile::current())
            .unwrap()
            .status,
        Status::Blocked
    );
    let list = host.list(&h.store, APP).unwrap();
    assert_eq!(list[0].state, "blocked");
    assert_eq!(list[0].code.as_deref(), Some("service.disk_quota_exceeded"));

    // the action: the data goes (audited), the record is cleared, the service runs again
    let out = reset(&h.store, &h.dir, APP, "relay", true).unwrap();
    assert!(out.cleared);
    assert!(out.freed_bytes.unwrap() >= 5 << 20, "{out:?}");
    assert!(dir.is_dir() && std::fs::read_dir(&dir).unwrap().next().is_none());
    assert_eq!(count(&h, "service.data_deleted"), 1);
    assert_eq!(count(&h, "service.reset"), 1);
    assert_eq!(service_check(&h).outcome, Outcome::Pass);
    assert!(call(&mut h, "echo", json!({})).is_ok());
}

#[test]
fn freeing_space_by_hand_clears_the_readiness_check_without_a_launch() {
    let (mut h, _pkgs) = host();
    assert!(call(&mut h, "echo", json!({})).is_ok());
    let host = host_core::hosting::capability::services::service_host(&h.store);
    let id = host_core::hosting::services::ServiceId {
        app: APP.into(),
        key: "relay".into(),
    };
    host.stop(&id, "test");
    let big = service_dir(&h).join("old.bin");
    std::fs::write(&big, vec![9u8; 5 << 20]).unwrap();
    assert!(call(&mut h, "echo", json!({})).is_err());
    assert_eq!(service_check(&h).code, Some("service.disk_quota_exceeded"));
    std::fs::remove_file(&big).unwrap();
    assert_eq!(service_check(&h).outcome, Outcome::Pass);
}

#[test]
fn a_running_service_filling_many_files_past_its_quota_is_stopped_audited_and_kept_out() {
    let (mut h, _pkgs) = host();
    assert!(call(&mut h, "echo", json!({})).is_ok());
    let host = host_core::hosting::capability::services::service_host(&h.store);
    let pid = host.list(&h.store, APP).unwrap()[0].pid.unwrap();
    // 64 files of 1 MiB: each is far under RLIMIT_FSIZE, only the total quota holds them
    let e = call(&mut h, "fill", json!({"files": 64, "mib": 1})).unwrap_err();
    assert_eq!(e, Some("service.disk_quota_exceeded"));
    assert!(!alive(u64::from(pid)), "the service outlived its quota");
    let on_disk = used(&service_dir(&h));
    eprintln!("stopped with {on_disk} bytes on disk (quota {QUOTA}, 64 MiB asked)");
    assert!((QUOTA..48 << 20).contains(&on_disk), "{on_disk}");
    let audit = h.audit(APP);
    let limit = audit
        .iter()
        .find(|a| a["action"] == "service.limit")
        .expect("a limit hit");
    assert!(
        limit["details"]["limit"]
            .as_str()
            .unwrap()
            .starts_with("disk"),
        "{limit}"
    );
    assert!(audit
        .iter()
        .any(|a| a["action"] == "service.stop" && a["details"]["reason"] == "disk-quota"));
    // a quota stop is not a crash
    assert_eq!(count(&h, "service.crash"), 0);

    // further writes fail: it is not started again while over the quota (readiness now blocks
    // the app's page at the choke point, and the service host refuses the launch)
    let starts = count(&h, "service.start");
    let e = call(&mut h, "fill", json!({"files": 1, "mib": 1})).unwrap_err();
    assert!(
        matches!(e, Some("service.disk_quota_exceeded" | "entry.not_ready")),
        "{e:?}"
    );
    let id = host_core::hosting::services::ServiceId {
        app: APP.into(),
        key: "relay".into(),
    };
    assert_eq!(
        host.start(&h.store, &id).unwrap_err().code,
        "service.disk_quota_exceeded"
    );
    assert_eq!(count(&h, "service.start"), starts);
    assert_eq!(used(&service_dir(&h)), on_disk);
    assert_eq!(service_check(&h).code, Some("service.disk_quota_exceeded"));
}

#[test]
fn a_link_to_a_big_host_file_counts_as_a_link_and_is_never_followed() {
    let (mut h, _pkgs) = host();
    let big = h.tmp.path().join("host-big.bin");
    std::fs::write(&big, vec![1u8; 8 << 20]).unwrap();
    // the service plants links to big files outside its dir (paths it cannot even see)
    for (name, target) in [
        ("to-host-file", big.to_str().unwrap()),
        ("to-host-root", "/"),
        ("to-usr", "/usr"),
    ] {
        assert!(call(&mut h, "link", json!({"name": name, "target": target})).is_ok());
    }
    let host = host_core::hosting::capability::services::service_host(&h.store);
    let id = host_core::hosting::services::ServiceId {
        app: APP.into(),
        key: "relay".into(),
    };
    host.stop(&id, "test");
    // the next launch measures the dir (links as links) and starts
    assert!(call(&mut h, "echo", json!({})).is_ok());
    assert!(used(&service_dir(&h)) < 1 << 20);
    assert_eq!(service_check(&h).outcome, Outcome::Pass);
    assert_eq!(std::fs::metadata(&big).unwrap().len(), 8 << 20);
}

/// Crashes until the service is in a crash loop.
fn crash_loop(h: &mut Host) {
    for _ in 0..60 {
        // the crash loop blocks the required service, so the app's page is blocked too
        if let Err(Some("service.crash_loop" | "entry.not_ready")) = call(h, "die", json!({})) {
            return;
        }
        std::thread::sleep(Duration::from_millis(60));
    }
    panic!("no crash loop");
}

#[test]
fn a_crash_loop_is_durable_across_two_sessions_over_one_data_dir_until_reset() {
    let (mut h, _pkgs) = host();
    crash_loop(&mut h);
    // session 1 ends: its service host (the only one of this data dir) goes with it
    let dir = h.dir.clone();
    let old = std::mem::replace(&mut h.services, Services::new(dir.apps_data()));
    drop(old);
    assert!(host_core::hosting::services::ServiceHost::existing(dir.root()).is_none());

    // session 2: a fresh store and service host over the same data dir
    let store = Store::open_for_calls(&dir).unwrap();
    h.store = store;
    let r = h.store.readiness(APP, &HostProfile::current()).unwrap();
    let c = r
        .checks
        .iter()
        .find(|c| c.kind == "service" && c.entry.is_none())
        .unwrap();
    assert_eq!(c.code, Some("service.crash_loop"), "{c:?}");
    assert_eq!(r.status, Status::Blocked);
    let host = host_core::hosting::capability::services::service_host(&h.store);
    let list = host.list(&h.store, APP).unwrap();
    assert_eq!(list[0].state, "blocked");
    assert_eq!(list[0].code.as_deref(), Some("service.crash_loop"));
    assert!(list[0].crashes_in_window.unwrap() >= 5, "{:?}", list[0]);
    assert!(list[0].last_crash_at.is_some());
    assert!(list[0]
        .last_error
        .as_deref()
        .unwrap()
        .contains("service.exited"));
    // as JSON (what `apphost services list --json` prints)
    let v = serde_json::to_value(&list).unwrap();
    assert_eq!(v[0]["code"], "service.crash_loop");
    assert!(v[0]["lastCrashAt"].is_string() && v[0]["crashesInWindow"].as_u64() >= Some(5));
    // the new session's supervisor refuses to start it too: nothing starts
    let starts = count(&h, "service.start");
    let id = host_core::hosting::services::ServiceId {
        app: APP.into(),
        key: "relay".into(),
    };
    let e = host.start(&h.store, &id).unwrap_err();
    assert_eq!(e.code, "service.crash_loop");
    assert_eq!(count(&h, "service.start"), starts);

    // `apphost services reset` (any process) clears it for every session
    let out = reset(&h.store, &h.dir, APP, "relay", false).unwrap();
    assert!(out.cleared && out.freed_bytes.is_none());
    assert_eq!(
        h.store
            .readiness(APP, &HostProfile::current())
            .unwrap()
            .status,
        Status::Ready
    );
    assert!(h.store.service_health(APP).unwrap().is_empty());
    assert!(call(&mut h, "echo", json!({})).is_ok());
    assert_eq!(host.list(&h.store, APP).unwrap()[0].state, "running");
    let again = reset(&h.store, &h.dir, APP, "relay", false).unwrap();
    assert!(!again.cleared);
}

#[test]
fn a_reset_from_another_session_unblocks_a_host_that_saw_the_crash_loop() {
    let (mut h, _pkgs) = host();
    crash_loop(&mut h);
    // another process's CLI clears the record in host.db only (it holds no supervisor)
    let other = Store::open_for_calls(&h.dir).unwrap();
    assert!(other.reset_service_health(APP, "relay", "cli").unwrap());
    // this host's supervisor reads the record before its next launch
    assert!(call(&mut h, "echo", json!({})).is_ok());
}

#[test]
fn uninstall_removes_the_health_record_and_a_reset_of_an_undeclared_service_is_refused() {
    let (mut h, _pkgs) = host();
    assert!(call(&mut h, "die", json!({})).is_err());
    assert_eq!(h.store.service_health(APP).unwrap().len(), 1);
    assert_eq!(service_check(&h).code, Some("service.exited"));
    let e = reset(&h.store, &h.dir, APP, "../relay", true).unwrap_err();
    assert_eq!(e.code.as_str(), "service.not_declared");
    let e = reset(&h.store, &h.dir, APP, "nope", false).unwrap_err();
    assert_eq!(e.code.as_str(), "service.not_declared");
    assert_eq!(
        h.store.service_health(APP).unwrap().len(),
        1,
        "nothing changed"
    );
    let (locked, _) = Store::open_locked(&h.dir).unwrap();
    locked.uninstall(APP, DataMode::KeepData, None).unwrap();
    assert!(h.store.service_health(APP).unwrap().is_empty());
    // a late write for an app no longer installed adds nothing
    h.store
        .record_service_crash(APP, "1.0.0", "relay", 1, "late")
        .unwrap();
    assert!(h.store.service_health(APP).unwrap().is_empty());
}
