//! A hostile backend service and a hostile neighbour (issue 24): each attack is reproduced
//! through the real sandbox and channel, then the refusal (stable code) and that nothing
//! changed are checked. The `relay` fixture service does what the test asks: forward a
//! `lime.*` request to the host (with forged fields), hang, exit, flood its channel.

mod services_support;
mod support;

use std::time::Duration;

use host_core::foundation::profile::HostProfile;
use host_core::install::readiness::Status;
use serde_json::{json, Value};
use services_support::{alive, doc_parser, relay_app, Host};

const APP: &str = "relay-app";

fn host(optional: bool) -> Host {
    let tmp = tempfile::tempdir().unwrap();
    let relay = relay_app(tmp.path(), APP, optional);
    let h = Host::with(&[doc_parser(), relay]);
    drop(tmp);
    h
}

fn relay(h: &mut Host, method: &str, params: Value, extra: Value) -> Value {
    h.service(
        APP,
        "parser",
        "relay",
        "relay",
        json!({"method": method, "params": params, "extra": extra}),
    )
    .unwrap()
}

fn pid(h: &mut Host) -> Option<u64> {
    let list = h
        .frame_call(APP, "parser", "lime.services", "list", json!({}))
        .unwrap();
    list["services"][0]["pid"].as_u64()
}

fn audited(h: &Host, app: &str, pred: impl Fn(&Value) -> bool) -> usize {
    h.audit(app).iter().filter(|a| pred(a)).count()
}

#[test]
fn a_service_calling_an_undeclared_capability_is_refused_and_audited() {
    let mut h = host(false);
    let answer = relay(
        &mut h,
        "lime.artifacts.create",
        json!({"name": "x.txt", "mediaType": "text/plain", "content": "x"}),
        json!({}),
    );
    let msg = answer["error"]["message"].as_str().unwrap();
    assert!(msg.starts_with("APP_E00"), "{answer}");
    assert!(msg.contains("not_declared"), "{answer}");
    assert!(!h
        .dir
        .apps_data()
        .join(APP)
        .join("artifacts.sqlite")
        .exists());
    assert_eq!(
        audited(&h, APP, |a| a["details"]["entryKey"] == "service/relay"
            && a["details"]["capability"] == "lime.artifacts"
            && a["details"]["decision"] == "deny"),
        1
    );
}

#[test]
fn forged_caller_fields_change_nothing_the_caller_is_rebuilt_from_the_store() {
    let mut h = host(false);
    let forged = json!({
        "app": "doc-parser", "appId": "doc-parser", "entryKey": "parser",
        "caller": {"appId": "doc-parser", "entryKey": "parser", "version": "9.9.9"},
        "packageHash": "sha256:forged",
    });
    let answer = relay(
        &mut h,
        "lime.storage.set",
        json!({"key": "stolen", "value": 1}),
        forged,
    );
    assert!(answer.get("result").is_some(), "{answer}");
    // Written to the relay app's own storage, never doc-parser's.
    let mine = h
        .frame_call(
            APP,
            "parser",
            "lime.storage",
            "get",
            json!({"key": "stolen"}),
        )
        .unwrap();
    assert_eq!(mine, json!(1));
    let theirs = h
        .frame_call(
            "doc-parser",
            "parser",
            "lime.storage",
            "get",
            json!({"key": "stolen"}),
        )
        .unwrap();
    assert_eq!(theirs, Value::Null);
    let active = h.store.active_app(APP).unwrap();
    let rows: Vec<Value> = h
        .audit(APP)
        .into_iter()
        .filter(|a| a["details"]["entryKey"] == "service/relay")
        .collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["app"], APP);
    assert_eq!(
        rows[0]["details"]["packageHash"],
        active.package_hash.as_str()
    );
    assert_eq!(
        audited(&h, "doc-parser", |a| a["action"] == "capability.call"
            && a["details"]["method"] == "set"),
        0
    );
}

#[test]
fn a_service_can_never_answer_an_approval_ask_the_user_or_call_services() {
    let mut h = host(false);
    for (method, params) in [
        (
            "lime.agent.respondAction",
            json!({"taskId": "t", "actionId": "a", "decision": "approve"}),
        ),
        ("lime.workflow.respond", json!({"runId": "r", "answer": {}})),
        (
            "lime.policy.requestPermission",
            json!({"permission": "parse_storage"}),
        ),
        (
            "lime.services.call",
            json!({"service": "relay", "method": "echo"}),
        ),
    ] {
        let answer = relay(&mut h, method, params, json!({}));
        let msg = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains("service.user_only"), "{method}: {answer}");
    }
    assert_eq!(
        audited(&h, APP, |a| a["details"]["reason"] == "service.user_only"),
        4
    );
}

#[test]
fn a_flooded_channel_kills_the_service_and_a_notification_storm_executes_nothing() {
    let mut h = host(false);
    let out = h
        .service(APP, "parser", "relay", "spam", json!({"n": 2000}))
        .unwrap();
    assert_eq!(out["sent"], 2000);
    assert_eq!(
        audited(&h, APP, |a| a["details"]["capability"] == "lime.events"),
        0,
        "notifications from a service are never executed"
    );
    let before = pid(&mut h).unwrap();
    let e = h
        .service(APP, "parser", "relay", "flood", json!({}))
        .unwrap_err();
    assert_eq!(e.cause_code, Some("service.protocol"));
    assert!(!alive(before));
}

#[test]
fn a_service_that_never_answers_times_out_and_the_cancel_reaches_it() {
    let mut h = host(false);
    let e = h
        .service(APP, "parser", "relay", "hang", json!({}))
        .unwrap_err();
    assert_eq!(e.cause_code, Some("service.timeout"));
    assert!(e.retryable);
    // The process got `$/cancelRequest` for the call (it records it in its own dir).
    let marker = h.dir.apps_data().join(APP).join("services/relay/cancelled");
    let mut seen = false;
    for _ in 0..100 {
        // The next call lets the service read the cancel before its own request.
        let _ = h.service(APP, "parser", "relay", "echo", json!({}));
        if marker.is_file() {
            seen = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(seen, "the cancel never reached the process");
    assert!(audited(&h, APP, |a| a["action"] == "service.limit") >= 1);
}

#[test]
fn exiting_mid_call_is_reported_then_backoff_then_a_crash_loop_blocks_until_the_user_resets() {
    let mut h = host(false);
    let e = h
        .service(APP, "parser", "relay", "die", json!({"code": 7}))
        .unwrap_err();
    assert_eq!(e.cause_code, Some("service.exited"));
    let e = h
        .service(APP, "parser", "relay", "echo", json!({}))
        .unwrap_err();
    assert_eq!(e.cause_code, Some("service.backoff"));
    let mut last = None;
    for _ in 0..40 {
        std::thread::sleep(Duration::from_millis(60));
        match h.service(APP, "parser", "relay", "die", json!({"code": 7})) {
            // The crash loop blocks the required service, so the app's page is blocked too:
            // its calls stop at the choke point.
            Err(e)
                if e.cause_code == Some("service.crash_loop")
                    || e.cause_code == Some("entry.not_ready") =>
            {
                last = Some(e);
                break;
            }
            _ => {}
        }
    }
    assert!(last.is_some(), "no crash loop after repeated exits");
    let profile = HostProfile::current();
    let r = h.store.readiness(APP, &profile).unwrap();
    let c = r
        .checks
        .iter()
        .find(|c| c.kind == "service" && c.entry.is_none())
        .unwrap();
    assert_eq!(c.code, Some("service.crash_loop"));
    assert_eq!(r.status, Status::Blocked);
    // The host's own view (the detail page, the CLI) still lists it.
    let host = host_core::hosting::capability::services::service_host(&h.store);
    let list = host.list(&h.store, APP).unwrap();
    assert_eq!(list[0].state, "blocked");
    assert_eq!(list[0].code.as_deref(), Some("service.crash_loop"));
    assert!(list[0].restarts >= 4);
    assert!(audited(&h, APP, |a| a["action"] == "service.crash") >= 5);
    // The user's stop resets it.
    let id = host_core::hosting::services::ServiceId {
        app: APP.into(),
        key: "relay".into(),
    };
    host.stop(&id, "user");
    assert_eq!(
        h.store.readiness(APP, &profile).unwrap().status,
        Status::Ready
    );
    assert!(h.service(APP, "parser", "relay", "echo", json!({})).is_ok());
}

#[test]
fn an_optional_services_crash_loop_only_degrades_the_app() {
    let mut h = host(true);
    for _ in 0..40 {
        std::thread::sleep(Duration::from_millis(60));
        if let Err(e) = h.service(APP, "parser", "relay", "die", json!({})) {
            if e.cause_code == Some("service.crash_loop") {
                break;
            }
        }
    }
    let r = h.store.readiness(APP, &HostProfile::current()).unwrap();
    assert_eq!(r.status, Status::ReadyDegraded);
}
