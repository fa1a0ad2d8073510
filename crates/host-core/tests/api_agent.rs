//! The host UI's agent area (`host_core::api::agent`) over a real store and a stand-in
//! OpenAI-compatible provider (a small HTTP/1.1 server on 127.0.0.1:0 written here): the model
//! settings are set, shown (never the key) and tested as `apphost model set|show|test` do them.
//! The secret store is the encrypted file with its key file in a temporary folder.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Once;

use host_core::api::{self, Session};
use host_core::foundation::error::ErrorCode;
use host_core::foundation::paths::DataDir;
use serde_json::{json, Value};
use support::agent::{call, session};

const KEY: &str = "sk-test-CANARY-api-agent-never-answered";

fn secret_store_in_a_temp_folder() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        std::env::set_var("APPHOST_SECRET_STORE", "file");
        std::env::set_var("APPHOST_SECRET_KEY_FILE", dir.join("secret.key"));
    });
}

fn setup() -> (tempfile::TempDir, Session) {
    secret_store_in_a_temp_folder();
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    (tmp, session(&dir))
}

/// A stand-in provider answering every request with `reply`; returns its base URL.
fn stand_in(reply: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let mut r = BufReader::new(&conn);
            let mut len = 0;
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some((k, v)) = line.split_once(':') {
                    if k.eq_ignore_ascii_case("content-length") {
                        len = v.trim().parse().unwrap_or(0);
                    }
                }
            }
            let mut body = vec![0; len];
            let _ = r.read_exact(&mut body);
            let _ = (&conn).write_all(reply.as_bytes());
        }
    });
    base
}

fn sse_ok() -> String {
    let body = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"OK\"},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n"
    );
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[test]
fn model_settings_before_any_setup_need_setup_and_create_nothing() {
    let (tmp, s) = setup();
    let v = call(&s, "model_settings", json!({}));
    assert_eq!(v["status"], "needs-setup");
    assert_eq!(v["apiKey"]["set"], false);
    assert!(
        !tmp.path().join("data").exists(),
        "showing created the data dir"
    );
    let e = api::call(&s, "test_model", json!({})).unwrap_err();
    assert_eq!(e.code, ErrorCode::ModelNotConfigured);
}

#[test]
fn set_model_keeps_the_key_write_only_and_test_model_reports_latency() {
    let (_t, s) = setup();
    let base = stand_in(sse_ok());
    let v = call(
        &s,
        "set_model",
        json!({"baseUrl": base, "model": "stand-in-1", "apiKey": KEY}),
    );
    assert_eq!(v["apiKeyChange"], "stored");
    assert_eq!(v["status"]["apiKey"]["set"], true);
    assert!(!v.to_string().contains(KEY), "the key came back: {v}");
    let shown = call(&s, "model_settings", Value::Null);
    assert_eq!(shown["status"], "ready");
    assert_eq!(shown["baseUrl"], base);
    assert_eq!(shown["model"], "stand-in-1");
    assert_eq!(shown["apiKey"]["present"], true);
    assert!(!shown.to_string().contains(KEY));
    // Blank apiKey keeps the key.
    let kept = call(
        &s,
        "set_model",
        json!({"baseUrl": base, "model": "stand-in-2", "apiKey": "  "}),
    );
    assert_eq!(kept["apiKeyChange"], "kept");
    let t = call(&s, "test_model", json!({}));
    assert_eq!(t["ok"], true);
    assert_eq!(t["model"], "stand-in-2");
    assert!(t["latencyMs"].is_u64());
    // removeApiKey drops it.
    let removed = call(
        &s,
        "set_model",
        json!({"baseUrl": base, "model": "stand-in-2", "removeApiKey": true}),
    );
    assert_eq!(removed["apiKeyChange"], "removed");
    assert_eq!(removed["status"]["apiKey"]["set"], false);
}

#[test]
fn test_model_answers_the_providers_error() {
    let (_t, s) = setup();
    let refused = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", l.local_addr().unwrap());
        drop(l);
        url
    };
    call(&s, "set_model", json!({"baseUrl": refused, "model": "m"}));
    let e = api::call(&s, "test_model", json!({})).unwrap_err();
    assert_eq!(e.code, ErrorCode::ProviderUnreachable, "{e:?}");
    let base = stand_in(
        "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}".into(),
    );
    call(&s, "set_model", json!({"baseUrl": base, "model": "m"}));
    let e = api::call(&s, "test_model", json!({})).unwrap_err();
    assert_eq!(e.code, ErrorCode::ProviderAuth, "{e:?}");
}

#[test]
fn bad_set_model_arguments_are_refused_before_the_data_dir_is_touched() {
    let (tmp, s) = setup();
    let long = "k".repeat(5000);
    for (args, code) in [
        (
            json!({"baseUrl": "ftp://x", "model": "m"}),
            ErrorCode::ModelInvalidBaseUrl,
        ),
        (
            json!({"baseUrl": "http://127.0.0.1:1/v1", "model": ""}),
            ErrorCode::ModelInvalidName,
        ),
        (
            json!({"baseUrl": "http://127.0.0.1:1/v1", "model": "m", "apiKey": "k", "removeApiKey": true}),
            ErrorCode::ApiBadArguments,
        ),
        (
            json!({"baseUrl": "http://127.0.0.1:1/v1", "model": "m", "apiKey": long}),
            ErrorCode::ApiBadArguments,
        ),
        (
            json!({"baseUrl": "http://127.0.0.1:1/v1", "model": "m", "apiKey": "a\nb"}),
            ErrorCode::ApiBadArguments,
        ),
        (
            json!({"baseUrl": "http://127.0.0.1:1/v1", "model": "m", "key": "k"}),
            ErrorCode::ApiBadArguments,
        ),
    ] {
        let e = api::call(&s, "set_model", args.clone()).expect_err(&args.to_string());
        assert_eq!(e.code, code, "{args}");
        assert!(!e.message.contains("kkkk"), "the key was echoed");
    }
    assert!(!tmp.path().join("data").exists());
}
