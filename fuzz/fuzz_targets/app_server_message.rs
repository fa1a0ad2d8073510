//! The App Server's JSON-RPC decoder and handler on arbitrary lines (after a valid handshake),
//! with no model backend: every line gets a JSON-RPC response or, for notifications, none;
//! never a panic or a stall.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use runtime_core::app_server::{decode_line, Connection};
use runtime_core::runtime::{Runtime, RuntimeConfig};
use serde_json::json;

struct Env {
    tokio: tokio::runtime::Runtime,
    runtime: Runtime,
    _dir: tempfile::TempDir,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let dir = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).unwrap();
        let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let runtime = tokio.block_on(async { Runtime::open(RuntimeConfig::new(dir.path()), None).unwrap() });
        Env { tokio, runtime, _dir: dir }
    })
}

fuzz_target!(|data: &[u8]| {
    let env = env();
    let text = String::from_utf8_lossy(data);
    env.tokio.block_on(async {
        let (tx, _rx) = tokio::sync::mpsc::channel(4096);
        let mut conn = Connection::new(env.runtime.clone(), tx);
        conn.handle_message(json!({"id": 0, "method": "initialize", "params": {"clientInfo": {"name": "fuzz"}}})).await;
        conn.handle_message(json!({"method": "initialized"})).await;
        for line in text.lines().take(16) {
            match decode_line(line) {
                Ok(msg) => {
                    let has_id = msg.get("id").is_some() || !msg.is_object();
                    let resp = conn.handle_message(msg).await;
                    if has_id {
                        let resp = resp.expect("requests are answered");
                        assert!(resp.get("result").is_some() ^ resp.get("error").is_some());
                    }
                }
                Err(err) => assert_eq!(err["error"]["code"], -32700),
            }
        }
    });
});
