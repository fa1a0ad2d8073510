//! A `local-http` service's own `lime.*` requests: the callback channel is the service's
//! stdout (requests, one JSON-RPC 2.0 message per line) and stdin (the host's answers, after the
//! token line), the same pipes a stdio service uses. No socket, port, path or token exists for it,
//! so nothing but the launched service can send on it (another app's sandbox sees neither the
//! pipes nor the process; another user's process cannot open `/proc/<pid>/fd/*`), and who is
//! calling is the launch whose pipe it is, never anything in the message.
//!
//! - Lines are capped at [`MAX_LINE`]: a longer one that starts with `{` breaks the channel
//!   (`service.protocol`: the service is killed at the host's next look,
//!   [`HostRequests::broken`]); a longer plain-text line is log output, kept cut.
//! - A line that is not a JSON object with a string `method` is the service's log output (to the
//!   log ring); one that starts with `{` but is not JSON is answered `-32700` (`id: null`).
//! - A request (`method` + `id`) naming something other than `lime.*` is answered `-32601`, a
//!   non-string/number `id` or an over-long method `-32600`; neither reaches the host handler.
//! - `lime.*` requests are served one at a time, ONLY while a host call to the service is in
//!   flight (a request made between calls waits for the next one, like a stdio service's; one
//!   pending when the service stops is never served), at most [`MAX_REQUESTS_PER_CALL`] per call
//!   (more are answered `-32001 HOST_E_RATE_LIMITED service.too_many_requests`). The refusals
//!   are counted, and the supervisor audits them once per host call ([`HostRequests::take_flood`]
//!   → `AuditEvent::LimeFlood`, `service.lime_flood` in host-core): a flood cannot flood the log.
//! - Memory is bounded by one line; the pipes give back-pressure to a flooding service.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{ChildStdin, ChildStdout};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use serde_json::{json, Value};

use crate::channel::{HostHandler, LOG_RING, MAX_LINE};

/// `lime.*` requests served per host call; more are refused.
pub const MAX_REQUESTS_PER_CALL: u32 = 256;
/// Longest accepted method name.
pub const MAX_METHOD: usize = 128;
/// JSON-RPC code of a refused request (the host handler's refusals use it too).
pub const REFUSED: i64 = -32001;

#[derive(Default)]
struct GateState {
    in_call: bool,
    /// Host calls opened so far: a request that waited through a whole (short) call is still
    /// served by it, even if the reader woke after the call ended.
    calls: u64,
    served: u32,
    /// Requests refused over the cap since the last [`HostRequests::take_flood`].
    refused: u32,
    closed: bool,
    broken: Option<String>,
}

#[derive(Default)]
struct Gate {
    state: Mutex<GateState>,
    cv: Condvar,
}

enum Admit {
    Serve,
    TooMany,
    Closed,
}

impl Gate {
    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wait for a host call in flight, then count the request against it.
    fn admit(&self) -> Admit {
        let mut s = self.lock();
        let seen = s.calls;
        while !s.in_call && s.calls == seen && !s.closed {
            s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        if s.closed {
            return Admit::Closed;
        }
        if s.served >= MAX_REQUESTS_PER_CALL {
            s.refused = s.refused.saturating_add(1);
            return Admit::TooMany;
        }
        s.served += 1;
        Admit::Serve
    }
}

/// `lime.*` requests refused over the per-call cap ([`MAX_REQUESTS_PER_CALL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flood {
    pub refused: u32,
    /// Requests served in that call.
    pub served: u32,
}

/// The reader of one launch's callback channel.
pub struct HostRequests {
    gate: Arc<Gate>,
    reader: Option<JoinHandle<()>>,
}

/// Open while a host call is in flight; closes the gate when dropped.
pub struct CallWindow<'a>(&'a Gate);

impl Drop for CallWindow<'_> {
    fn drop(&mut self) {
        self.0.lock().in_call = false;
    }
}

impl HostRequests {
    /// Read `stdout` (requests and log lines) and answer on `stdin` with `handler`.
    pub fn start(
        stdout: ChildStdout,
        stdin: ChildStdin,
        handler: HostHandler,
        log: Arc<Mutex<VecDeque<u8>>>,
    ) -> Self {
        let gate = Arc::new(Gate::default());
        let g = gate.clone();
        let reader = std::thread::spawn(move || serve(stdout, stdin, handler, &log, &g));
        HostRequests {
            gate,
            reader: Some(reader),
        }
    }

    /// Serve the service's requests until the returned window is dropped (the call's end).
    pub fn open_for_call(&self) -> CallWindow<'_> {
        {
            let mut s = self.gate.lock();
            s.in_call = true;
            s.calls += 1;
            s.served = 0;
        }
        self.gate.cv.notify_all();
        CallWindow(&self.gate)
    }

    /// Why the channel broke (a line over the cap), if it did.
    pub fn broken(&self) -> Option<String> {
        self.gate.lock().broken.clone()
    }

    /// Requests served in the current (or last) call.
    pub fn served(&self) -> u32 {
        self.gate.lock().served
    }

    /// The refusals since the last look (the call that just ended), if any: one audit record
    /// per host call, whatever the size of the flood.
    pub fn take_flood(&self) -> Option<Flood> {
        let mut s = self.gate.lock();
        let refused = std::mem::take(&mut s.refused);
        (refused > 0).then_some(Flood {
            refused,
            served: s.served,
        })
    }

    /// Serve nothing more; a request waiting for a call is dropped unanswered.
    pub fn close(&self) {
        self.gate.lock().closed = true;
        self.gate.cv.notify_all();
    }

    /// [`Self::close`], then wait for the reader (call after the service's processes are gone:
    /// its stdout is at EOF and writes to its stdin fail).
    pub fn join(&mut self) {
        self.close();
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
    }
}

impl Drop for HostRequests {
    fn drop(&mut self) {
        self.close();
    }
}

pub(crate) fn push_log(log: &Mutex<VecDeque<u8>>, bytes: &[u8]) {
    let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
    log.extend(bytes);
    let excess = log.len().saturating_sub(LOG_RING);
    log.drain(..excess);
}

/// The reader loop. A broken channel is recorded before stdout is closed, so the service's
/// failed write can never be seen by the host before the reason.
fn serve(
    stdout: ChildStdout,
    mut stdin: ChildStdin,
    mut handler: HostHandler,
    log: &Mutex<VecDeque<u8>>,
    gate: &Gate,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    loop {
        let mut line = Vec::new();
        match reader
            .by_ref()
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
        {
            Ok(0) | Err(_) => return,
            Ok(_) if line.len() > MAX_LINE => {
                if line.trim_ascii_start().starts_with(b"{") {
                    gate.lock().broken = Some(format!("stdout line over {MAX_LINE} bytes"));
                    return;
                }
                // An over-long log line (plain text: not a request) is logged cut, and the
                // rest of it skipped chunk by chunk; it does not end the service.
                push_log(log, &line);
                push_log(log, b" [cut]\n");
                if !skip_to_newline(&mut reader) {
                    return;
                }
                continue;
            }
            Ok(_) => {}
        }
        let reply = match classify(&line) {
            Line::Log => {
                push_log(log, &line);
                continue;
            }
            Line::Ignored => continue,
            Line::Answer(reply) => reply,
            Line::Lime { id, method, params } => match gate.admit() {
                Admit::Closed => return,
                Admit::TooMany => error(
                    id,
                    REFUSED,
                    format!(
                        "HOST_E_RATE_LIMITED service.too_many_requests: at most \
                         {MAX_REQUESTS_PER_CALL} lime.* requests per host call"
                    ),
                ),
                Admit::Serve => match handler(&method, params) {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err((code, message)) => error(id, code, message),
                },
            },
        };
        let mut bytes = serde_json::to_vec(&reply).unwrap_or_default();
        bytes.push(b'\n');
        if stdin
            .write_all(&bytes)
            .and_then(|()| stdin.flush())
            .is_err()
        {
            return; // the service is gone or closed its stdin
        }
    }
}

/// Discards input up to and including the next newline, in bounded reads; false at the end of
/// the stream or on an error.
fn skip_to_newline(reader: &mut impl BufRead) -> bool {
    loop {
        let (found, used) = match reader.fill_buf() {
            Ok([]) | Err(_) => return false,
            Ok(buf) => match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (true, i + 1),
                None => (false, buf.len()),
            },
        };
        reader.consume(used);
        if found {
            return true;
        }
    }
}

fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

enum Line {
    Log,
    Ignored,
    Answer(Value),
    Lime {
        id: Value,
        method: String,
        params: Value,
    },
}

fn classify(line: &[u8]) -> Line {
    let text = line.trim_ascii();
    if text.is_empty() {
        return Line::Ignored;
    }
    let msg: Value = match serde_json::from_slice(text) {
        Ok(v) => v,
        Err(_) if text.first() == Some(&b'{') => {
            return Line::Answer(error(Value::Null, -32700, "parse error".into()));
        }
        Err(_) => return Line::Log,
    };
    let Some(method) = msg.get("method").and_then(Value::as_str) else {
        return Line::Log; // a structured log line, or a stray response
    };
    let Some(id) = msg.get("id").cloned() else {
        return Line::Ignored; // a notification: nothing reaches the host
    };
    if !(id.is_string() || id.is_number()) || method.len() > MAX_METHOD {
        return Line::Answer(error(Value::Null, -32600, "invalid request".into()));
    }
    if !method.starts_with("lime.") {
        return Line::Answer(error(id, -32601, "method not found".into()));
    }
    Line::Lime {
        id,
        method: method.to_owned(),
        params: msg.get("params").cloned().unwrap_or(Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(l: Line) -> Option<i64> {
        match l {
            Line::Answer(v) => v["error"]["code"].as_i64(),
            _ => None,
        }
    }

    #[test]
    fn lines_are_sorted_into_log_requests_and_refusals() {
        assert!(matches!(classify(b"hello world\n"), Line::Log));
        assert!(matches!(classify(b"{\"level\":\"info\"}\n"), Line::Log));
        assert!(matches!(classify(b"  \n"), Line::Ignored));
        assert!(matches!(
            classify(b"{\"method\":\"lime.storage.set\"}\n"),
            Line::Ignored
        ));
        assert_eq!(code(classify(b"{\"method\": \"lime.x\", ")), Some(-32700));
        assert_eq!(
            code(classify(b"{\"id\":1,\"method\":\"initialize\"}")),
            Some(-32601)
        );
        assert_eq!(
            code(classify(b"{\"id\":[1],\"method\":\"lime.storage.get\"}")),
            Some(-32600)
        );
        let long = format!("{{\"id\":1,\"method\":\"lime.{}\"}}", "a".repeat(200));
        assert_eq!(code(classify(long.as_bytes())), Some(-32600));
        match classify(b"{\"id\":\"a\",\"method\":\"lime.storage.get\",\"params\":{\"key\":\"k\"}}")
        {
            Line::Lime { id, method, params } => {
                assert_eq!((id, method.as_str()), (json!("a"), "lime.storage.get"));
                assert_eq!(params, json!({"key": "k"}));
            }
            _ => panic!("not a request"),
        }
    }

    #[test]
    fn skipping_an_over_long_line_stops_after_its_newline() {
        let data = format!("{}\nnext\n", "x".repeat(200_000));
        let mut r = BufReader::with_capacity(4096, data.as_bytes());
        assert!(skip_to_newline(&mut r));
        let mut rest = String::new();
        r.read_line(&mut rest).unwrap();
        assert_eq!(rest, "next\n");
        let mut r = BufReader::new(&b"no newline at all"[..]);
        assert!(!skip_to_newline(&mut r));
    }
}
