//! A `local-http` service's own `lime.*` requests (issue 24 §1): they come back on the service's
//! stdout, are answered on its stdin, and pass the capability choke point with the service as
//! the caller (app, `service/<key>`, active package), derived from the launch, never from the
//! message. Each attack is reproduced through the real sandbox, then its refusal (stable code)
//! and that nothing changed are checked. The fixture is `fixtures/apps/http-service`.

mod services_support;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use host_core::hosting::capability::dispatch::CallError;
use serde_json::{json, Value};
use services_support::{alive, doc_parser, Host};

const APP: &str = "http-app";

/// The doc-parser app (a page declaring lime.services and lime.storage, a granted storage
/// permission) with its service replaced by `http-service`'s `api` (manifest block and files).
fn http_app(tmp: &Path, name: &str) -> PathBuf {
    // a flood of 300 host requests takes a few seconds in a debug build
    services_support::app_with_service_of(tmp, name, "http-service", "api", Some(30000))
}

fn host(apps: &[&str]) -> Host {
    let tmp = tempfile::tempdir().unwrap();
    let pkgs: Vec<PathBuf> = apps
        .iter()
        .map(|a| {
            if *a == "doc-parser" {
                doc_parser()
            } else {
                http_app(tmp.path(), a)
            }
        })
        .collect();
    let h = Host::with(&pkgs);
    drop(tmp);
    h
}

fn call(h: &mut Host, app: &str, method: &str, params: Value) -> Result<Value, CallError> {
    h.service(app, "parser", "api", method, params)
}

fn get(h: &mut Host, app: &str, key: &str) -> Value {
    h.frame_call(app, "parser", "lime.storage", "get", json!({"key": key}))
        .unwrap()
}

/// The service's own capability calls in the audit log.
fn service_calls(h: &Host, app: &str) -> Vec<Value> {
    h.audit(app)
        .into_iter()
        .filter(|a| a["action"] == "capability.call" && a["details"]["entryKey"] == "service/api")
        .collect()
}

fn pid(h: &mut Host, app: &str) -> Option<u64> {
    let list = h
        .frame_call(app, "parser", "lime.services", "list", json!({}))
        .unwrap();
    list["services"][0]["pid"].as_u64()
}

fn refusal(answer: &Value) -> (i64, String) {
    (
        answer["error"]["code"].as_i64().unwrap_or(0),
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[test]
fn a_local_http_service_saves_through_the_choke_point_as_itself() {
    let mut h = host(&[APP]);
    let out = call(
        &mut h,
        APP,
        "save",
        json!({"key": "greeting", "value": "hi"}),
    )
    .unwrap();
    assert!(out["answer"].get("result").is_some(), "{out}");
    assert_eq!(get(&mut h, APP, "greeting"), json!("hi"));
    let active = h.store.active_app(APP).unwrap();
    let rows = service_calls(&h, APP);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let d = &rows[0]["details"];
    assert_eq!(rows[0]["app"], APP);
    assert_eq!(d["capability"], "lime.storage");
    assert_eq!(d["method"], "set");
    assert_eq!(d["decision"], "allow");
    assert_eq!(d["mountId"], "service:http-app/api");
    assert_eq!(d["packageHash"], active.package_hash.as_str());
}

#[test]
fn forged_identity_fields_and_tokens_are_ignored_the_caller_comes_from_the_launch() {
    let mut h = host(&[APP, "doc-parser"]);
    let forged = json!({
        "app": "doc-parser", "appId": "doc-parser", "entryKey": "parser",
        "token": "0".repeat(64), "authorization": "Bearer 00",
        "caller": {"appId": "doc-parser", "entryKey": "parser", "version": "9.9.9"},
        "packageHash": "sha256:forged",
    });
    let out = call(
        &mut h,
        APP,
        "relay",
        json!({"method": "lime.storage.set", "params": {"key": "stolen", "value": 1}, "extra": forged}),
    )
    .unwrap();
    assert!(out.get("result").is_some(), "{out}");
    assert_eq!(get(&mut h, APP, "stolen"), json!(1));
    assert_eq!(get(&mut h, "doc-parser", "stolen"), Value::Null);
    let rows = service_calls(&h, APP);
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0]["details"]["packageHash"],
        h.store.active_app(APP).unwrap().package_hash.as_str()
    );
    assert!(h
        .audit("doc-parser")
        .iter()
        .all(|a| a["details"]["method"] != "set"));
}

#[test]
fn undeclared_and_user_only_requests_are_refused_with_their_codes_and_audited() {
    let mut h = host(&[APP]);
    let out = call(
        &mut h,
        APP,
        "relay",
        json!({"method": "lime.artifacts.create",
               "params": {"name": "x.txt", "mediaType": "text/plain", "content": "x"}}),
    )
    .unwrap();
    let (code, msg) = refusal(&out);
    assert_eq!(code, -32001, "{out}");
    assert!(
        msg.starts_with("APP_E00") && msg.contains("not_declared"),
        "{out}"
    );
    for (method, params) in [
        (
            "lime.services.call",
            json!({"service": "api", "method": "count"}),
        ),
        (
            "lime.policy.requestPermission",
            json!({"permission": "parse_storage"}),
        ),
    ] {
        let out = call(
            &mut h,
            APP,
            "relay",
            json!({"method": method, "params": params}),
        )
        .unwrap();
        let (code, msg) = refusal(&out);
        assert_eq!(code, -32001, "{out}");
        assert!(
            msg.starts_with("APP_E002 service.user_only"),
            "{method}: {out}"
        );
    }
    assert!(!h
        .dir
        .apps_data()
        .join(APP)
        .join("artifacts.sqlite")
        .exists());
    let rows = service_calls(&h, APP);
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(rows.iter().all(|r| r["details"]["decision"] == "deny"));
}

#[test]
fn malformed_non_lime_and_id_less_lines_never_reach_the_host() {
    let mut h = host(&[APP]);
    let cases = [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"lime.storage.set","params":{"key":"m""#,
            -32700,
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}"#,
            -32601,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"storage.set","params":{"key":"m","value":1}}"#,
            -32601,
        ),
        (
            r#"{"jsonrpc":"2.0","id":[4],"method":"lime.storage.set","params":{"key":"m","value":1}}"#,
            -32600,
        ),
    ];
    for (text, code) in cases {
        let out = call(&mut h, APP, "raw", json!({"text": text, "answers": 1})).unwrap();
        assert_eq!(
            out["answers"][0]["error"]["code"].as_i64(),
            Some(code),
            "{text}: {out}"
        );
    }
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"lime.{}","params":{{}}}}"#,
        "a".repeat(200)
    );
    let out = call(&mut h, APP, "raw", json!({"text": long, "answers": 1})).unwrap();
    assert_eq!(out["answers"][0]["error"]["code"], -32600, "{out}");
    // A notification (no id) and plain text get no answer and do nothing.
    for text in [
        r#"{"jsonrpc":"2.0","method":"lime.storage.set","params":{"key":"m","value":1}}"#,
        "plain log text",
    ] {
        call(&mut h, APP, "raw", json!({"text": text, "answers": 0})).unwrap();
    }
    // The channel still works, and nothing above reached the choke point.
    let out = call(&mut h, APP, "save", json!({"key": "after", "value": 2})).unwrap();
    assert!(out["answer"].get("result").is_some(), "{out}");
    assert_eq!(get(&mut h, APP, "m"), Value::Null);
    assert_eq!(service_calls(&h, APP).len(), 1);
}

#[test]
fn an_oversized_request_line_ends_the_service_with_service_protocol_and_writes_nothing() {
    let mut h = host(&[APP]);
    call(&mut h, APP, "count", json!({})).unwrap();
    let before = pid(&mut h, APP).unwrap();
    let err = call(&mut h, APP, "raw", json!({"big": 2 << 20})).unwrap_err();
    assert_eq!(err.cause_code, Some("service.protocol"), "{err:?}");
    assert!(!alive(before), "the service survived a broken channel");
    assert_eq!(get(&mut h, APP, "big"), Value::Null);
    assert!(service_calls(&h, APP).is_empty());
    assert!(h.audit(APP).iter().any(|a| a["action"] == "service.crash"
        && a["details"]["status"]
            .as_str()
            .is_some_and(|s| s.contains("service.protocol"))));
}

#[test]
fn a_request_flood_is_bounded_per_host_call_and_audited_once_per_call() {
    let mut h = host(&[APP]);
    let burst = json!({"n": 300, "method": "lime.storage.get", "params": {"key": "k"}});
    let out = call(&mut h, APP, "burst", burst).unwrap();
    assert_eq!(out["ok"], 256, "{out}");
    assert_eq!(out["refused"], 44, "{out}");
    let first = out["first"][0].as_str().unwrap();
    assert!(
        first.starts_with("HOST_E_RATE_LIMITED service.too_many_requests"),
        "{out}"
    );
    assert_eq!(
        service_calls(&h, APP).len(),
        256,
        "the refused ones never ran"
    );
    // The refusals are audited once for the call, with their count: the flood cannot flood
    // the audit log.
    assert_eq!(
        floods(&h),
        vec![json!({"service": "api", "refused": 44, "served": 256, "limit": 256})]
    );
    // The count is per call: the next call may make requests again (and, under the cap, adds
    // no flood record).
    let out = call(
        &mut h,
        APP,
        "burst",
        json!({"n": 2, "method": "lime.storage.get", "params": {"key": "k"}}),
    )
    .unwrap();
    assert_eq!(out["ok"], 2, "{out}");
    assert_eq!(floods(&h).len(), 1);
    // A second flood is its own record.
    let burst = json!({"n": 260, "method": "lime.storage.get", "params": {"key": "k"}});
    let out = call(&mut h, APP, "burst", burst).unwrap();
    assert_eq!(out["refused"], 4, "{out}");
    let all = floods(&h);
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(all.iter().any(|d| d["refused"] == 4), "{all:?}");
}

/// The `service.lime_flood` audit records of the app's service.
fn floods(h: &Host) -> Vec<Value> {
    h.audit(APP)
        .into_iter()
        .filter(|a| a["action"] == "service.lime_flood")
        .map(|a| a["details"].clone())
        .collect()
}

fn wait_for(h: &mut Host, key: &str, want: &Value) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if &get(h, APP, key) == want {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn a_request_between_calls_waits_for_a_call_and_is_never_served_after_the_stop() {
    let mut h = host(&[APP]);
    // Control: made between calls, it waits, and the next call serves it.
    call(&mut h, APP, "later", json!({"delay": 0.1, "key": "a"})).unwrap();
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(get(&mut h, APP, "a"), Value::Null, "served outside a call");
    call(&mut h, APP, "count", json!({})).unwrap();
    assert!(wait_for(&mut h, "a", &json!("late")), "never served");
    // Pending when the service stops: dropped, never served.
    call(&mut h, APP, "later", json!({"delay": 0.1, "key": "b"})).unwrap();
    let p = pid(&mut h, APP).unwrap();
    std::thread::sleep(Duration::from_millis(600));
    h.services.close_app(APP);
    assert!(!alive(p));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(get(&mut h, APP, "b"), Value::Null);
    let sets = service_calls(&h, APP);
    assert_eq!(sets.len(), 1, "{sets:?}");
    // A new launch has a new channel: the old request is not replayed.
    call(&mut h, APP, "count", json!({})).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(get(&mut h, APP, "b"), Value::Null);
}

#[test]
fn another_apps_service_or_another_user_cannot_inject_into_the_channel() {
    let mut h = host(&[APP, "http-two"]);
    call(&mut h, APP, "count", json!({})).unwrap();
    let target = pid(&mut h, APP).unwrap();
    let fd = format!("/proc/{target}/fd/1");
    assert!(
        std::fs::symlink_metadata(&fd).is_ok(),
        "{fd} must exist for this test to mean anything"
    );
    // From another app's sandbox: the process is not even visible (own pid namespace).
    let out = call(&mut h, "http-two", "probe_fd", json!({"pid": target})).unwrap();
    assert!(
        out["open"].as_str().unwrap().starts_with("refused"),
        "{out}"
    );
    // From another local user: /proc/<pid>/fd is closed to it.
    let script = r#"
import json, os, sys
os.setgid(65534); os.setuid(65534)
try:
    with open(sys.argv[1], "w") as f:
        f.write(json.dumps({"jsonrpc": "2.0", "id": "x", "method": "lime.storage.set",
                            "params": {"key": "injected", "value": 1}}) + "\n")
    print("opened")
except OSError as e:
    print("refused:", e.__class__.__name__)
"#;
    let o = Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(script)
        .arg(&fd)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.starts_with("refused"),
        "{said} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Open a call window in case anything got queued: nothing was.
    call(&mut h, APP, "count", json!({})).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(get(&mut h, APP, "injected"), Value::Null);
    assert_eq!(get(&mut h, "http-two", "injected"), Value::Null);
    assert!(service_calls(&h, APP).is_empty());
    assert!(service_calls(&h, "http-two").is_empty());
}

fn stats(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[0] * 1e3, v[v.len() / 2] * 1e3, v[v.len() - 1] * 1e3)
}

#[test]
#[ignore = "benchmark: cargo test -p host-core --test services_http_lime -- --ignored --nocapture"]
fn bench_a_local_http_services_storage_get_vs_a_stdio_services() {
    let tmp = tempfile::tempdir().unwrap();
    let relay = services_support::relay_app(tmp.path(), "relay-app", false);
    let md = relay.join("APP.md");
    let text = std::fs::read_to_string(&md).unwrap();
    std::fs::write(&md, text.replace("timeoutMs: 800", "timeoutMs: 30000")).unwrap();
    let mut h = Host::with(&[http_app(tmp.path(), APP), relay]);
    let n = 250; // at most 256 requests per host call
    for app in [APP, "relay-app"] {
        h.frame_call(
            app,
            "parser",
            "lime.storage",
            "set",
            json!({"key": "k", "value": {"a": 1}}),
        )
        .unwrap();
    }
    let timed = |n| json!({"method": "lime.storage.get", "params": {"key": "k"}, "n": n});
    // warm both (started, store handles open)
    call(&mut h, APP, "timed", timed(20)).unwrap();
    h.service("relay-app", "parser", "relay", "timed", timed(20))
        .unwrap();
    let http: Vec<f64> =
        serde_json::from_value(call(&mut h, APP, "timed", timed(n)).unwrap()).unwrap();
    let stdio: Vec<f64> = serde_json::from_value(
        h.service("relay-app", "parser", "relay", "timed", timed(n))
            .unwrap(),
    )
    .unwrap();
    let (a, b, c) = stats(http);
    let (d, e, f) = stats(stdio);
    println!("lime.storage.get x{n} from a service (one host call), timed in the sandbox, ms  min / median / max");
    println!("  local-http (stdout/stdin callback channel): {a:.3} / {b:.3} / {c:.3}");
    println!("  stdio-jsonrpc (its channel):                {d:.3} / {e:.3} / {f:.3}");
    println!("  ratio of medians: {:.2}", b / e);
}

#[test]
fn an_over_long_plain_log_line_is_kept_cut_and_does_not_end_the_service() {
    let mut h = host(&[APP]);
    call(&mut h, APP, "count", json!({})).unwrap();
    let before = pid(&mut h, APP).unwrap();
    // 2.4 MB of plain text on one line, more than a request line may be.
    call(
        &mut h,
        APP,
        "raw",
        json!({"logBytes": 2_400_000, "answers": 0}),
    )
    .unwrap();
    call(&mut h, APP, "count", json!({})).unwrap();
    assert_eq!(
        pid(&mut h, APP),
        Some(before),
        "a long log line restarted the service"
    );
}
