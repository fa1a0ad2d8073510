use serde_json::json;

use super::*;

const FRAME: FrameIdentity<'static> = FrameIdentity {
    app_id: "hello-app",
    entry_key: "notes",
    origin: "agentapp://hello-app",
};

fn env(kind: &str, payload: Value) -> Value {
    json!({
        "protocol": PROTOCOL, "version": 1, "type": kind, "requestId": "r-1",
        "appId": "hello-app", "entryKey": "notes", "payload": payload,
    })
}

fn ok(v: &Value) -> AppMessage {
    decode(&v.to_string(), FRAME, FRAME.origin, true).expect("accepted")
}

fn refused(v: &Value) -> Refusal {
    decode(&v.to_string(), FRAME, FRAME.origin, true).expect_err("refused")
}

#[test]
fn a_valid_invoke_is_decoded() {
    let m = ok(&env(
        "capability:invoke",
        json!({"capability": "lime.storage", "method": "get", "args": {"key": "a"}}),
    ));
    assert_eq!(
        m,
        AppMessage::Invoke(Call {
            request_id: "r-1".into(),
            capability: "lime.storage".into(),
            method: "get".into(),
            args: json!({"key": "a"}),
            options: Map::new(),
        })
    );
}

#[test]
fn every_spoofing_attempt_is_refused_with_its_reason() {
    let good = env(
        "capability:invoke",
        json!({"capability": "lime.storage", "method": "get"}),
    );
    let with = |k: &str, v: Value| {
        let mut m = good.clone();
        m[k] = v;
        m
    };
    let cases: Vec<(Value, Refusal)> = vec![
        (
            with("protocol", json!("lime.agentApp.bridge2")),
            Refusal::WrongProtocol,
        ),
        (with("version", json!(2)), Refusal::WrongVersion),
        (with("version", json!("1")), Refusal::WrongVersion),
        (with("version", json!(1.0)), Refusal::WrongVersion),
        (with("appId", json!("other-app")), Refusal::AppMismatch),
        (with("entryKey", json!("settings")), Refusal::EntryMismatch),
        (with("type", json!("host:response")), Refusal::UnknownType),
        (with("type", json!(7)), Refusal::UnknownType),
        (with("requestId", json!("")), Refusal::InvalidRequestId),
        (with("requestId", json!("a b")), Refusal::InvalidRequestId),
        (
            with("requestId", json!("x".repeat(129))),
            Refusal::InvalidRequestId,
        ),
        (with("requestId", json!(5)), Refusal::InvalidRequestId),
        (with("payload", json!([1])), Refusal::InvalidPayload),
        (with("extra", json!(true)), Refusal::UnknownField),
        (json!([good.clone()]), Refusal::NotAnObject),
    ];
    for (msg, want) in cases {
        assert_eq!(refused(&msg), want, "{msg}");
    }
    let mut no_entry = good.clone();
    no_entry.as_object_mut().unwrap().remove("entryKey");
    assert_eq!(refused(&no_entry), Refusal::EntryMismatch);
    let mut no_app = good.clone();
    no_app.as_object_mut().unwrap().remove("appId");
    assert_eq!(refused(&no_app), Refusal::AppMismatch);
    let mut no_id = good.clone();
    no_id.as_object_mut().unwrap().remove("requestId");
    assert_eq!(refused(&no_id), Refusal::MissingRequestId);
}

#[test]
fn origin_size_json_and_handshake_are_checked() {
    let good = env("host:getSnapshot", json!({}));
    assert_eq!(
        decode(&good.to_string(), FRAME, "agentapp://other-app", true),
        Err(Refusal::WrongOrigin)
    );
    assert_eq!(
        decode(&good.to_string(), FRAME, "null", true),
        Err(Refusal::WrongOrigin)
    );
    assert_eq!(
        decode(&good.to_string(), FRAME, FRAME.origin, false),
        Err(Refusal::NotReady)
    );
    let ready = env("app:ready", json!({}));
    assert!(matches!(
        decode(&ready.to_string(), FRAME, FRAME.origin, false),
        Ok(AppMessage::Ready { .. })
    ));
    assert_eq!(
        decode("{not json", FRAME, FRAME.origin, true),
        Err(Refusal::NotJson)
    );
    let deep = "[".repeat(10_000);
    assert_eq!(
        decode(&deep, FRAME, FRAME.origin, true),
        Err(Refusal::NotJson)
    );
    let big = env(
        "capability:invoke",
        json!({"capability": "lime.storage", "method": "set",
               "args": {"value": "x".repeat(MAX_MESSAGE_BYTES)}}),
    );
    assert_eq!(refused(&big), Refusal::TooLarge);
}

#[test]
fn payloads_are_validated_per_type() {
    let bad: Vec<(&str, Value)> = vec![
        (
            "capability:invoke",
            json!({"capability": "storage", "method": "get"}),
        ),
        (
            "capability:invoke",
            json!({"capability": "lime.", "method": "get"}),
        ),
        (
            "capability:invoke",
            json!({"capability": "lime.storage", "method": "get-x"}),
        ),
        ("capability:invoke", json!({"capability": "lime.storage"})),
        (
            "capability:invoke",
            json!({"capability": "lime.storage", "method": "get", "options": 3}),
        ),
        ("host:navigate", json!({"route": "notes"})),
        ("host:navigate", json!({"route": "//evil.example/x"})),
        ("host:navigate", json!({"route": "/a\nb"})),
        ("host:toast", json!({"message": ""})),
        ("host:toast", json!({"message": "hi", "level": "shout"})),
        ("host:toast", json!({"message": "x".repeat(501)})),
        ("host:openExternal", json!({})),
        ("host:download", json!({"fileName": "a.txt"})),
        ("capability:cancel", json!({"requestId": "a b"})),
    ];
    for (kind, payload) in bad {
        let r = refused(&env(kind, payload.clone()));
        assert!(
            matches!(r, Refusal::InvalidPayload),
            "{kind} {payload}: {r:?}"
        );
    }
    assert_eq!(
        refused(&env("host:toast", json!({"message": "hi", "html": "<b>"}))),
        Refusal::UnknownField
    );
}

#[test]
fn the_other_app_types_decode() {
    assert_eq!(
        ok(&env("host:navigate", json!({"route": "/notes/1"}))),
        AppMessage::Navigate {
            request_id: Some("r-1".into()),
            route: "/notes/1".into()
        }
    );
    assert_eq!(
        ok(&env(
            "host:toast",
            json!({"message": "Saved", "level": "success"})
        )),
        AppMessage::Toast {
            request_id: Some("r-1".into()),
            message: "Saved".into(),
            level: ToastLevel::Success
        }
    );
    assert_eq!(
        ok(&env("capability:cancel", json!({"requestId": "r-0"}))),
        AppMessage::Cancel {
            request_id: Some("r-1".into()),
            target: "r-0".into()
        }
    );
    assert!(matches!(
        ok(&env("host:download", json!({"artifactId": "art_1"}))),
        AppMessage::Download { .. }
    ));
    assert!(matches!(
        ok(&env(
            "host:openExternal",
            json!({"url": "https://example.com"})
        )),
        AppMessage::OpenExternal { .. }
    ));
}

#[test]
fn refusal_strings_are_unique_and_parse_back() {
    let mut seen = std::collections::HashSet::new();
    for r in Refusal::ALL {
        assert!(seen.insert(r.as_str()));
        assert!(r.as_str().starts_with("bridge."));
        assert_eq!(Refusal::parse(r.as_str()), Some(*r));
    }
}
