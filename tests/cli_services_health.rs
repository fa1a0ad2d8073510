//! `apphost services list|call|reset` through the real binary see a service's durable health
//! (issue 24 §2/§3): a crash loop recorded in host.db by another process (here: this test, as a
//! stand-in for the window) shows in `services list --json` and refuses a call without starting
//! anything, until `services reset`; a service whose data dir is over its disk quota is refused
//! (`service.disk_quota_exceeded`) until `services reset --delete-data` frees it. Needs the
//! sandbox shim beside the binary (`cargo build -p service-sandbox --bin apphost-service-shim`).

mod common;

use common::describe;
use common::services_cli::ServicesHost;
use host_core::foundation::paths::DataDir;
use host_core::install::store::Store;

const APP: &str = "doc-parser";

/// The shared set-up with a 1 MiB disk quota per service, and the store as another process
/// (the window) sees it.
struct Host(ServicesHost);

impl std::ops::Deref for Host {
    type Target = ServicesHost;
    fn deref(&self) -> &ServicesHost {
        &self.0
    }
}

impl Host {
    fn new() -> Host {
        let quota = (1u64 << 20).to_string();
        Host(ServicesHost::with_env(&[(
            "APPHOST_SERVICE_DISK_QUOTA_BYTES",
            &quota,
        )]))
    }

    fn store(&self) -> Store {
        Store::open_for_calls(&DataDir::at(self.data.clone())).unwrap()
    }

    fn starts(&self) -> usize {
        self.store()
            .audit_log(Some(APP), 10_000)
            .unwrap()
            .iter()
            .filter(|a| a["action"] == "service.start")
            .count()
    }

    fn refused_with(&self, args: &[&str], cause: &str) {
        let out = self.run(args);
        assert!(!out.status.success(), "{args:?}: {}", describe(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("service.cannot_run") && err.contains(cause),
            "{args:?} wanted {cause}: {}",
            describe(&out)
        );
    }
}

#[test]
fn a_crash_loop_recorded_by_another_process_shows_in_list_and_refuses_until_reset() {
    let h = Host::new();
    let version = h.store().active_app(APP).unwrap().version;
    let now = host_core::install::store::service_health_rows::now_ms();
    for i in 0..5 {
        h.store()
            .record_service_crash(APP, &version, "parser", now - i * 1000, "service.exited; 7")
            .unwrap();
    }
    let list = h.json(&["services", "list", APP]);
    assert_eq!(list[0]["state"], "blocked", "{list}");
    assert_eq!(list[0]["code"], "service.crash_loop");
    assert_eq!(list[0]["crashesInWindow"], 5);
    assert!(list[0]["lastCrashAt"].is_string());
    assert_eq!(list[0]["lastError"], "service.exited; 7");

    h.refused_with(
        &[
            "services",
            "call",
            APP,
            "parser",
            "parse",
            r##"{"text":"# a"}"##,
        ],
        "service.crash_loop",
    );
    assert_eq!(h.starts(), 0, "nothing started");

    let out = h.json(&["services", "reset", APP, "parser"]);
    assert_eq!(out["cleared"], true, "{out}");
    assert_eq!(h.json(&["services", "list", APP])[0]["state"], "stopped");
    let got = h.json(&[
        "services",
        "call",
        APP,
        "parser",
        "parse",
        r##"{"text":"# a"}"##,
    ]);
    assert_eq!(got["headings"], 1, "{got}");
    assert_eq!(
        h.json(&["services", "reset", APP, "parser"])["cleared"],
        false
    );
    // a reset of what the app does not declare is refused, nothing recorded
    let out = h.run(&["services", "reset", APP, "../parser", "--delete-data"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("service.not_declared"));
}

#[test]
fn over_its_disk_quota_a_service_is_refused_until_reset_delete_data() {
    let h = Host::new();
    // a first call makes the data dir; then it holds more than the 1 MiB quota
    let got = h.json(&[
        "services",
        "call",
        APP,
        "parser",
        "parse",
        r#"{"text":"x"}"#,
    ]);
    assert_eq!(got["words"], 1, "{got}");
    let dir = h.data.join("apps").join(APP).join("services/parser");
    std::fs::write(dir.join("hoard.bin"), vec![1u8; 2 << 20]).unwrap();
    let starts = h.starts();
    h.refused_with(
        &[
            "services",
            "call",
            APP,
            "parser",
            "parse",
            r#"{"text":"x"}"#,
        ],
        "service.disk_quota_exceeded",
    );
    assert_eq!(h.starts(), starts, "nothing started");
    let list = h.json(&["services", "list", APP]);
    assert_eq!(list[0]["code"], "service.disk_quota_exceeded", "{list}");

    let out = h.json(&["services", "reset", APP, "parser", "--delete-data"]);
    assert!(out["freedBytes"].as_u64().unwrap() >= 2 << 20, "{out}");
    assert!(!dir.join("hoard.bin").exists() && dir.is_dir());
    let got = h.json(&[
        "services",
        "call",
        APP,
        "parser",
        "parse",
        r#"{"text":"x"}"#,
    ]);
    assert_eq!(got["words"], 1, "{got}");
}
