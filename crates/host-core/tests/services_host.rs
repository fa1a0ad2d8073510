//! Backend services hosted for real (issue 24): the doc-parser sample app's Python service
//! answers its page through `lime.services.call`, saves through `lime.storage.set` back through
//! the choke point as its own caller (audited as `service/parser`), shows in readiness and the
//! list, stops when the app closes, and leaves nothing behind when uninstalled.

mod services_support;
mod support;

use host_core::foundation::profile::HostProfile;
use host_core::install::readiness::{Outcome, Status};
use host_core::install::store::{DataMode, Store};
use serde_json::json;
use services_support::{alive, doc_parser, Host};

const DOC: &str = "# Title\nOne two three.\n## Part A\nFour five.\n## Part B\nSix.\n";

#[test]
fn the_sample_app_parses_through_its_service_and_the_service_writes_storage_through_the_host() {
    let mut h = Host::with(&[doc_parser()]);
    let r = h
        .store
        .readiness("doc-parser", &HostProfile::current())
        .unwrap();
    let c = r.checks.iter().find(|c| c.kind == "service").unwrap();
    assert_eq!(c.outcome, Outcome::Pass, "{c:?}");
    assert_eq!(r.status, Status::Ready);

    let out = h
        .service(
            "doc-parser",
            "parser",
            "parser",
            "parse",
            json!({"text": DOC}),
        )
        .unwrap();
    assert_eq!(out["words"], 6);
    assert_eq!(out["headings"], 3);
    assert_eq!(out["outline"][1], json!({"level": 2, "title": "Part A"}));
    assert_eq!(out["saved"], true, "{out}");

    // The service's write went through lime.storage for the app: the frame reads it.
    let got = h
        .frame_call(
            "doc-parser",
            "parser",
            "lime.storage",
            "get",
            json!({"key": "last-parse"}),
        )
        .unwrap();
    assert_eq!(got["words"], 6, "{got}");

    // Audited: the service start, and its storage call as caller `service/parser`.
    let audit = h.audit("doc-parser");
    assert!(audit.iter().any(|a| a["action"] == "service.start"));
    let svc_call = audit
        .iter()
        .find(|a| a["action"] == "capability.call" && a["details"]["entryKey"] == "service/parser")
        .expect("the service's call is audited");
    assert_eq!(svc_call["details"]["capability"], "lime.storage");
    assert_eq!(svc_call["details"]["method"], "set");
    assert_eq!(svc_call["details"]["decision"], "allow");
    let active = h.store.active_app("doc-parser").unwrap();
    assert_eq!(
        svc_call["details"]["packageHash"],
        active.package_hash.as_str()
    );

    // list: running with a pid; the app closing stops it.
    let list = h
        .frame_call("doc-parser", "parser", "lime.services", "list", json!({}))
        .unwrap();
    let s = &list["services"][0];
    assert_eq!(s["key"], "parser");
    assert_eq!(s["state"], "running", "{list}");
    let pid = s["pid"].as_u64().unwrap();
    assert!(alive(pid));
    h.services.close_app("doc-parser");
    assert!(!alive(pid), "the service outlived its app's close");
    let audit = h.audit("doc-parser");
    assert!(audit
        .iter()
        .any(|a| a["action"] == "service.stop" && a["details"]["reason"] == "app-closed"));
}

#[test]
fn another_app_cannot_reach_the_service_and_undeclared_services_are_not_found() {
    let tmp = tempfile::tempdir().unwrap();
    let other = services_support::relay_app(tmp.path(), "other-app", false);
    let mut h = Host::with(&[doc_parser(), other]);
    // other-app asks for "parser": its own manifest declares no such service.
    let e = h
        .service(
            "other-app",
            "parser",
            "parser",
            "parse",
            json!({"text": DOC}),
        )
        .unwrap_err();
    assert_eq!(e.cause_code, Some("service.not_declared"));
    let list = h
        .frame_call("doc-parser", "parser", "lime.services", "list", json!({}))
        .unwrap();
    assert_eq!(
        list["services"][0]["state"], "stopped",
        "nothing started: {list}"
    );
    // The host's lifecycle names cannot be called by a frame.
    for m in ["initialize", "$/cancelRequest", "lime.storage.set"] {
        let e = h
            .service("doc-parser", "parser", "parser", m, json!({}))
            .unwrap_err();
        assert_eq!(e.cause_code, Some("services.invalid_argument"), "{m}");
    }
}

fn uninstall_while_running(mode: DataMode) {
    let mut h = Host::with(&[doc_parser()]);
    h.service(
        "doc-parser",
        "parser",
        "parser",
        "parse",
        json!({"text": DOC}),
    )
    .unwrap();
    let list = h
        .frame_call("doc-parser", "parser", "lime.services", "list", json!({}))
        .unwrap();
    let pid = list["services"][0]["pid"].as_u64().unwrap();
    let app_dir = h.dir.apps_data().join("doc-parser");
    assert!(app_dir.join("services/parser").is_dir());
    assert!(h
        .dir
        .root()
        .join("runtime/service-packages/doc-parser")
        .is_dir());
    let export = h.tmp.path().join("export.zip");
    let (locked, _) = Store::open_locked(&h.dir).unwrap();
    locked
        .uninstall(
            "doc-parser",
            mode,
            (mode == DataMode::ExportThenDelete).then_some(export.as_path()),
        )
        .unwrap();
    assert!(!alive(pid), "{mode:?}: the service outlived the uninstall");
    assert!(!h
        .dir
        .root()
        .join("runtime/service-packages/doc-parser")
        .exists());
    match mode {
        DataMode::KeepData => {
            assert!(app_dir.join("services/parser").is_dir(), "kept data");
            assert!(app_dir.join("services/.logs").is_dir(), "kept logs");
        }
        _ => assert!(!app_dir.exists(), "{mode:?} left {app_dir:?}"),
    }
    if mode == DataMode::ExportThenDelete {
        assert!(export.is_file());
    }
    // Nothing can start it again.
    let host = host_core::hosting::capability::services::service_host(&h.store);
    let id = host_core::hosting::services::ServiceId {
        app: "doc-parser".into(),
        key: "parser".into(),
    };
    let e = host.call(&h.store, &id, "stats", json!({})).unwrap_err();
    assert_eq!(e.code, "service.not_found");
}

#[test]
fn uninstall_keep_data_stops_the_service_and_keeps_its_data_and_logs() {
    uninstall_while_running(DataMode::KeepData);
}

#[test]
fn uninstall_delete_data_while_running_leaves_no_process_and_no_files() {
    uninstall_while_running(DataMode::DeleteData);
}

#[test]
fn export_then_delete_while_running_leaves_no_process_and_no_files() {
    uninstall_while_running(DataMode::ExportThenDelete);
}

#[test]
fn disable_stops_the_service_and_a_disabled_app_cannot_start_it() {
    let mut h = Host::with(&[doc_parser()]);
    h.service(
        "doc-parser",
        "parser",
        "parser",
        "parse",
        json!({"text": DOC}),
    )
    .unwrap();
    let list = h
        .frame_call("doc-parser", "parser", "lime.services", "list", json!({}))
        .unwrap();
    let pid = list["services"][0]["pid"].as_u64().unwrap();
    let (locked, _) = Store::open_locked(&h.dir).unwrap();
    locked.set_enabled("doc-parser", false).unwrap();
    assert!(!alive(pid));
    let host = host_core::hosting::capability::services::service_host(&h.store);
    let id = host_core::hosting::services::ServiceId {
        app: "doc-parser".into(),
        key: "parser".into(),
    };
    let e = host.call(&h.store, &id, "stats", json!({})).unwrap_err();
    assert_eq!(e.code, "service.app_disabled");
}
