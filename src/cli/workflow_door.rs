//! `apphost workflow ...` handed to the running host: while the desktop window or
//! `apphost serve` owns this data directory's runs, the command is sent over its App Server
//! door (`<data>/runtime/app-server.sock`, the token from `app-server.token`) as a host method
//! (`apphost/workflow.<command>`, `host_core::api::door_workflow`); the host's driver moves the
//! run and the answer is the same `RunView` the CLI prints when it drives the run itself.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use host_core::api::door_workflow::{NAMESPACE, SETTLE_TIMEOUT};
use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::foundation::paths::DataDir;
use serde_json::{json, Value};

use super::app_server_relay::{self as relay, Door};

/// Longest answer line read from the door.
const MAX_ANSWER_BYTES: u64 = 16 * 1024 * 1024;

/// What the door did with a command.
pub enum Handoff {
    /// The host answered (its result).
    Done(Value),
    /// No host serves the door: the CLI drives the runs itself.
    NoHost,
    /// A door is there but the command could not be handed over (why, for the user).
    Failed(String),
}

/// Sends `apphost/workflow.<command>` with `params` to the host serving `dir`'s door. A host
/// error (a refused start, an unknown run) is `Err` with the host's stable code.
pub fn call(dir: &DataDir, command: &str, params: Value) -> HostResult<Handoff> {
    call_method(dir, &format!("{NAMESPACE}.{command}"), params)
}

/// Sends any host method (`apphost/services.list`, …) to the host serving `dir`'s door.
pub fn call_method(dir: &DataDir, method: &str, params: Value) -> HostResult<Handoff> {
    let runtime_dir = dir.root().join("runtime");
    let (stream, token) = match relay::knock(&runtime_dir) {
        Ok(Door::Open(s, t)) => (s, t),
        Ok(Door::Closed) => return Ok(Handoff::NoHost),
        Err(e) => return Ok(Handoff::Failed(format!("cannot knock: {e}"))),
    };
    match exchange(stream, &token, method, params) {
        Ok(Ok(v)) => Ok(Handoff::Done(v)),
        Ok(Err(e)) => match host_error(&e) {
            Some(h) => Err(h),
            None => Ok(Handoff::Failed(describe(&e))),
        },
        Err(e) => Ok(Handoff::Failed(e.to_string())),
    }
}

/// The handshake and one request; `Ok(Err(error))`: the door answered with a JSON-RPC error.
fn exchange(
    stream: UnixStream,
    token: &str,
    method: &str,
    params: Value,
) -> std::io::Result<Result<Value, Value>> {
    stream.set_read_timeout(Some(SETTLE_TIMEOUT + Duration::from_secs(30)))?;
    stream.set_write_timeout(Some(Duration::from_secs(10)))?;
    let mut out = &stream;
    let mut lines = BufReader::new(&stream);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "clientInfo": {"name": "apphost-workflow", "version": env!("CARGO_PKG_VERSION")},
        "authToken": token,
    }});
    send(&mut out, &init)?;
    if let Err(e) = answer(&mut lines, 1)? {
        return Ok(Err(e));
    }
    send(
        &mut out,
        &json!({"jsonrpc": "2.0", "method": "initialized"}),
    )?;
    send(
        &mut out,
        &json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params}),
    )?;
    answer(&mut lines, 2)
}

fn send(out: &mut impl Write, msg: &Value) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(msg)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}

/// Reads lines until the answer to `id` (or a refusal with `id: null`); other lines are
/// notifications.
fn answer(lines: &mut impl BufRead, id: u64) -> std::io::Result<Result<Value, Value>> {
    loop {
        let mut line = Vec::new();
        let n = Read::take(&mut *lines, MAX_ANSWER_BYTES).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the door closed the connection",
            ));
        }
        let Ok(msg) = serde_json::from_slice::<Value>(&line) else {
            return Err(std::io::Error::other(
                "the door sent a line that is not JSON",
            ));
        };
        let for_us = msg.get("id") == Some(&json!(id)) || msg.get("id") == Some(&Value::Null);
        if !for_us {
            continue;
        }
        return Ok(match msg.get("error") {
            Some(e) => Err(e.clone()),
            None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
        });
    }
}

/// A host method's refusal carries AppHost's stable code in `data.code`.
fn host_error(e: &Value) -> Option<HostError> {
    let code = e["data"]["code"].as_str()?;
    let code = ErrorCode::ALL.iter().find(|c| c.as_str() == code)?;
    let message = e["message"].as_str().unwrap_or("the host refused");
    let mut err = HostError::new(*code, message);
    if let Value::Object(details) = &e["data"]["details"] {
        for (k, v) in details {
            err = err.with(k, v);
        }
    }
    Some(err)
}

fn describe(e: &Value) -> String {
    let code = e["data"]["code"].as_str().unwrap_or("");
    let message = e["message"].as_str().unwrap_or("an error");
    if code.is_empty() {
        message.to_owned()
    } else {
        format!("{message} ({code})")
    }
}
