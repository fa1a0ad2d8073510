//! A JSON-RPC client for `serve_stdio` over in-process pipes.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use runtime_core::app_server::{serve_stdio, ServeConfig};
use runtime_core::backend::ExecutionBackend;
use runtime_core::runtime::{Runtime, RuntimeConfig};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

pub struct Client {
    write: DuplexStream,
    lines: Lines<BufReader<DuplexStream>>,
    pub notifications: Vec<Value>,
    next_id: i64,
    pub server: tokio::task::JoinHandle<std::io::Result<()>>,
}

pub fn runtime(dir: &std::path::Path, backend: Option<Arc<dyn ExecutionBackend>>) -> Runtime {
    Runtime::open(RuntimeConfig::new(dir), backend).unwrap()
}

impl Client {
    /// Closes the connection and waits for the server to end, as a process exit would: the
    /// runtime (and its directory lock) is released once its last handle is gone.
    pub async fn shutdown(self) {
        let Client { write, server, .. } = self;
        drop(write);
        let _ = server.await;
    }

    pub fn start(rt: Runtime) -> Client {
        Client::start_with(ServeConfig::new(rt))
    }

    pub fn start_with(config: ServeConfig) -> Client {
        let (client_w, server_r) = tokio::io::duplex(1 << 20);
        let (server_w, client_r) = tokio::io::duplex(1 << 20);
        let server = tokio::spawn(serve_stdio(BufReader::new(server_r), server_w, config));
        Client {
            write: client_w,
            lines: BufReader::new(client_r).lines(),
            notifications: Vec::new(),
            next_id: 1,
            server,
        }
    }

    pub async fn send_raw(&mut self, line: &str) {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
    }

    pub async fn read_message(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.lines.next_line())
            .await
            .expect("the server answers within 20 s")
            .unwrap()
            .expect("the server is still running");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carries only JSON lines: {line:?}: {e}"))
    }

    /// Reads until the response with `id`, keeping notifications.
    pub async fn response(&mut self, id: &Value) -> Value {
        loop {
            let m = self.read_message().await;
            if m.get("method").is_some() && m.get("id").is_none() {
                self.notifications.push(m);
                continue;
            }
            assert_eq!(&m["id"], id, "responses come in order: {m}");
            return m;
        }
    }

    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(&msg.to_string()).await;
        self.response(&id).await
    }

    pub async fn ok(&mut self, method: &str, params: Value) -> Value {
        let r = self.call(method, params).await;
        assert!(r.get("error").is_none(), "{method} failed: {r}");
        r["result"].clone()
    }

    pub async fn err(&mut self, method: &str, params: Value) -> i64 {
        let r = self.call(method, params).await;
        r["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("{method} should fail: {r}"))
    }

    pub async fn init(&mut self) -> Value {
        let r = self
            .ok(
                "initialize",
                json!({"clientInfo": {"name": "test", "version": "1"}}),
            )
            .await;
        self.send_raw(r#"{"method":"initialized","params":{}}"#)
            .await;
        r
    }

    /// Waits for an `agentSession/event` notification matching `pred`.
    pub async fn wait_event(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(n) = self
            .notifications
            .iter()
            .find(|n| pred(&n["params"]["event"]))
        {
            return n["params"]["event"].clone();
        }
        loop {
            let m = self.read_message().await;
            assert!(m.get("id").is_none(), "unexpected response {m}");
            self.notifications.push(m.clone());
            if pred(&m["params"]["event"]) {
                return m["params"]["event"].clone();
            }
        }
    }

    pub async fn wait_type(&mut self, ty: &str) -> Value {
        let ty = ty.to_owned();
        self.wait_event(move |e| e["type"] == ty.as_str()).await
    }

    pub fn events(&self) -> Vec<Value> {
        self.notifications
            .iter()
            .map(|n| n["params"]["event"].clone())
            .collect()
    }
}
