//! A data dir with the doc-parser sample installed, driven through the real `apphost` binary
//! (`--json`): the set-up `cli_services.rs`, `cli_services_health.rs` and
//! `cli_config_reserved.rs` share.

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;
use tempfile::TempDir;

use super::{apphost_in, describe};

/// The doc-parser sample's app name.
pub const DOC_PARSER: &str = "doc-parser";

pub struct ServicesHost {
    pub tmp: TempDir,
    pub data: PathBuf,
    env: Vec<(String, String)>,
}

impl ServicesHost {
    /// doc-parser installed; its service can run (the sandbox shim is beside the binary).
    pub fn new() -> ServicesHost {
        ServicesHost::with_env(&[])
    }

    /// As [`ServicesHost::new`], with `env` set on every command.
    pub fn with_env(env: &[(&str, &str)]) -> ServicesHost {
        let shim =
            PathBuf::from(env!("CARGO_BIN_EXE_apphost")).with_file_name("apphost-service-shim");
        assert!(
            shim.is_file(),
            "build the sandbox shim first: cargo build -p service-sandbox --bin apphost-service-shim"
        );
        ServicesHost::installed(env)
    }

    /// doc-parser installed, for commands that start no service (no shim needed).
    pub fn installed(env: &[(&str, &str)]) -> ServicesHost {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let env = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let h = ServicesHost { tmp, data, env };
        let pkg = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/apps/doc-parser");
        let out = h.run(&["install", pkg.to_str().unwrap(), "--yes", "--sideload"]);
        assert!(out.status.success(), "{}", describe(&out));
        h
    }

    pub fn run(&self, args: &[&str]) -> Output {
        apphost_in(self.tmp.path(), &self.data)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .args(args)
            .output()
            .unwrap()
    }

    /// The JSON a successful command prints.
    pub fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(out.status.success(), "{}", describe(&out));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", describe(&out)))
    }
}

/// A loopback JSON-RPC endpoint (one request per connection) whose `result` is `answer` of the
/// request.
pub fn json_rpc_endpoint(
    answer: impl Fn(&Value) -> Value + Send + 'static,
) -> std::net::SocketAddr {
    use std::io::{BufRead, BufReader, Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut c in l.incoming().flatten() {
            let mut r = BufReader::new(c.try_clone().unwrap());
            let mut len = 0;
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; len];
            let _ = r.read_exact(&mut body);
            let req: Value = serde_json::from_slice(&body).unwrap_or_default();
            let out =
                serde_json::json!({"jsonrpc": "2.0", "id": req["id"], "result": answer(&req)})
                    .to_string();
            let _ = write!(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{out}", out.len());
        }
    });
    addr
}
