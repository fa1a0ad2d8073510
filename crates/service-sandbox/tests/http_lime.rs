//! A `local-http` service's own `lime.*` requests (`http_plane/host_requests.rs`): sent on its
//! stdout, answered on its stdin by the host handler, only while a host call is in flight.
//! host-core's `tests/services_http_lime.rs` has the attacks through the real choke point.

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::http_service_spec;
use serde_json::{json, Value};
use service_sandbox::{HttpService, ServiceSpec};

const T: Duration = Duration::from_secs(20);

fn spec(tmp: &Path) -> ServiceSpec {
    http_service_spec(tmp)
}

#[test]
fn the_services_request_reaches_the_handler_once_and_its_answer_comes_back() {
    let tmp = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(Vec::<(String, Value)>::new()));
    let s2 = seen.clone();
    let mut svc = HttpService::start_with_handler(
        &spec(tmp.path()),
        Box::new(move |m: &str, p: Value| {
            s2.lock().unwrap().push((m.to_owned(), p));
            Ok(json!({"stored": true}))
        }),
    )
    .unwrap();
    let out = svc
        .call("save", json!({"key": "k", "value": [1, 2]}), T)
        .unwrap();
    assert_eq!(out["answer"]["result"], json!({"stored": true}), "{out}");
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(
            "lime.storage.set".to_owned(),
            json!({"key": "k", "value": [1, 2]})
        )]
    );
    // Plain stdout text is the service's log, not a request.
    svc.call("raw", json!({"text": "hello from stdout", "answers": 0}), T)
        .unwrap();
    svc.call("count", json!({}), T).unwrap();
    assert!(svc.logs().contains("hello from stdout"), "{}", svc.logs());
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[test]
fn without_a_handler_every_request_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let mut svc = HttpService::start(&spec(tmp.path())).unwrap();
    let out = svc
        .call("save", json!({"key": "k", "value": 1}), T)
        .unwrap();
    assert_eq!(out["answer"]["error"]["code"], -32001, "{out}");
}
