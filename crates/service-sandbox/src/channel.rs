//! A running service: JSON-RPC 2.0 over its stdin/stdout (one message per line, bounded),
//! a bounded stderr ring, calls with timeout + cancel, the service's own `lime.*` requests
//! handed to the host's handler, and a kill that reaps the whole process tree.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::cancel::{CancelToken, CANCEL_POLL};
use crate::cgroup::PidsGroup;
use crate::error::SandboxError;
use crate::spec::ServiceSpec;

/// Longest accepted line from the service.
pub const MAX_LINE: usize = 1 << 20;
/// Bytes of stderr kept.
pub const LOG_RING: usize = 64 * 1024;

/// Answers the service's own requests (`lime.<ns>.<method>`): `Ok(result)` or `Err((code, message))`.
pub type HostHandler = Box<dyn FnMut(&str, Value) -> Result<Value, (i64, String)> + Send>;

enum Incoming {
    Message(Value),
    Broken(String),
    Closed,
}

pub struct ServiceProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Incoming>,
    log: Arc<Mutex<VecDeque<u8>>>,
    readers: Vec<JoinHandle<()>>,
    group: Option<PidsGroup>,
    next_id: u64,
    handler: HostHandler,
    dead: Option<String>,
}

fn read_lines(out: impl Read, tx: mpsc::Sender<Incoming>) {
    let mut reader = BufReader::with_capacity(64 * 1024, out);
    loop {
        let mut line = Vec::new();
        match reader
            .by_ref()
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
        {
            Ok(0) | Err(_) => {
                let _ = tx.send(Incoming::Closed);
                return;
            }
            Ok(_) if line.len() > MAX_LINE => {
                let _ = tx.send(Incoming::Broken(format!("line over {MAX_LINE} bytes")));
                return;
            }
            Ok(_) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let msg = match serde_json::from_slice(&line) {
                    Ok(v) => Incoming::Message(v),
                    Err(e) => Incoming::Broken(format!("bad JSON: {e}")),
                };
                if tx.send(msg).is_err() {
                    return;
                }
            }
        }
    }
}

pub(crate) fn ring(err: impl Read, log: Arc<Mutex<VecDeque<u8>>>) {
    let mut err = err;
    let mut buf = [0u8; 4096];
    while let Ok(n) = err.read(&mut buf) {
        if n == 0 {
            return;
        }
        let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
        log.extend(&buf[..n]);
        let excess = log.len().saturating_sub(LOG_RING);
        log.drain(..excess);
    }
}

impl ServiceProcess {
    /// Launch the service in its sandbox; the host's handler answers its `lime.*` requests.
    pub fn start(spec: &ServiceSpec, handler: HostHandler) -> Result<Self, SandboxError> {
        Self::start_with_egress(spec, handler, None)
    }

    /// [`Self::start`] for a `remote-allowed` service: its only way out is `egress` (the proxy
    /// outlives nothing it needs: keep it alive as long as the service).
    pub fn start_with_egress(
        spec: &ServiceSpec,
        handler: HostHandler,
        egress: Option<&mut crate::egress::EgressProxy>,
    ) -> Result<Self, SandboxError> {
        let bwrap = crate::layers::available_layers()
            .require()
            .map_err(SandboxError::SandboxUnavailable)?;
        let spec = ServiceSpec {
            bwrap: if spec.bwrap.as_os_str().is_empty() {
                bwrap
            } else {
                spec.bwrap.clone()
            },
            ..spec.clone()
        };
        let group = PidsGroup::create(spec.limits.max_processes)
            .map_err(|e| SandboxError::SandboxUnavailable(format!("pids cgroup: {e}")))?;
        let egress_fd = egress.as_ref().and_then(|e| e.sandbox_fd());
        let mut child = crate::launch::spawn_full(&spec, &group, None, egress_fd)?;
        if let Some(e) = egress {
            e.release_sandbox_end();
        }
        let (tx, rx) = mpsc::channel();
        let log = Arc::new(Mutex::new(VecDeque::new()));
        let out = child
            .stdout
            .take()
            .ok_or_else(|| SandboxError::StartFailed("no stdout".into()))?;
        let err = child
            .stderr
            .take()
            .ok_or_else(|| SandboxError::StartFailed("no stderr".into()))?;
        let log2 = log.clone();
        let readers = vec![
            std::thread::spawn(move || read_lines(out, tx)),
            std::thread::spawn(move || ring(err, log2)),
        ];
        let stdin = child.stdin.take();
        Ok(Self {
            child,
            stdin,
            rx,
            log,
            readers,
            group: Some(group),
            next_id: 1,
            handler,
            dead: None,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit status of the outer sandbox process once it has ended.
    pub fn exit_status(&mut self) -> Option<String> {
        for _ in 0..50 {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Some(st.to_string());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        None
    }

    /// The last [`LOG_RING`] bytes the service wrote to stderr.
    pub fn logs(&self) -> String {
        let log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        String::from_utf8_lossy(&log.iter().copied().collect::<Vec<_>>()).into_owned()
    }

    /// Processes alive in the launch's pids cgroup.
    pub fn live_pids(&self) -> Vec<i32> {
        self.group.as_ref().map(PidsGroup::pids).unwrap_or_default()
    }

    fn send(&mut self, msg: &Value) -> Result<(), SandboxError> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| SandboxError::Exited("stdin closed".into()))?;
        let mut line =
            serde_json::to_vec(msg).map_err(|e| SandboxError::Protocol(e.to_string()))?;
        line.push(b'\n');
        stdin
            .write_all(&line)
            .and_then(|_| stdin.flush())
            .map_err(|e| SandboxError::Exited(e.to_string()))
    }

    /// Call `method` on the service. On timeout a `$/cancelRequest` reaches the process and the
    /// call fails with `service.timeout`.
    pub fn call(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, SandboxError> {
        self.call_cancellable(method, params, timeout, &CancelToken::default())
    }

    /// [`Self::call`] that also ends when `cancel` is cancelled (looked at every
    /// [`CANCEL_POLL`]): a `$/cancelRequest {id}` reaches the process and the call fails with
    /// `service.cancelled`; the service's late answer is skipped by the next call.
    pub fn call_cancellable(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
        cancel: &CancelToken,
    ) -> Result<Value, SandboxError> {
        if let Some(why) = &self.dead {
            return Err(SandboxError::Exited(why.clone()));
        }
        if cancel.is_cancelled() {
            return Err(SandboxError::Cancelled);
        }
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let deadline = Instant::now() + timeout;
        loop {
            if cancel.is_cancelled() {
                self.send_cancel(id);
                return Err(SandboxError::Cancelled);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left.min(CANCEL_POLL)) {
                Err(RecvTimeoutError::Timeout) if !left.is_zero() => continue,
                Err(RecvTimeoutError::Timeout) => {
                    self.send_cancel(id);
                    return Err(SandboxError::Timeout);
                }
                Err(RecvTimeoutError::Disconnected) | Ok(Incoming::Closed) => {
                    self.dead = Some("channel closed".into());
                    return Err(SandboxError::Exited("channel closed".into()));
                }
                Ok(Incoming::Broken(why)) => {
                    self.dead = Some(why.clone());
                    self.kill();
                    return Err(SandboxError::Protocol(why));
                }
                Ok(Incoming::Message(msg)) => {
                    if let Some(m) = msg.get("method").and_then(Value::as_str) {
                        self.answer_host_request(m.to_owned(), &msg)?;
                        continue;
                    }
                    if msg.get("id").and_then(Value::as_u64) != Some(id) {
                        continue; // a stale answer to a cancelled call
                    }
                    if let Some(err) = msg.get("error") {
                        return Err(SandboxError::Remote {
                            code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
                            message: err
                                .get("message")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .chars()
                                .take(1024)
                                .collect(),
                        });
                    }
                    return Ok(msg.get("result").cloned().unwrap_or(Value::Null));
                }
            }
        }
    }

    /// Tells the service to stop working on call `id` (its answer, if any, is skipped).
    fn send_cancel(&mut self, id: u64) {
        let _ = self
            .send(&json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}}));
    }

    fn answer_host_request(&mut self, method: String, msg: &Value) -> Result<(), SandboxError> {
        let Some(id) = msg.get("id").cloned() else {
            return Ok(()); // a notification from the service: nothing to answer
        };
        let reply = if !method.starts_with("lime.") {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "method not found"}})
        } else {
            match (self.handler)(&method, msg.get("params").cloned().unwrap_or(Value::Null)) {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err((code, message)) => {
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                }
            }
        };
        self.send(&reply)
    }

    /// Kill the whole tree (process group, then the pids cgroup sweep) and reap the child.
    pub fn kill(&mut self) {
        self.stdin = None;
        let pgid = self.child.id() as i32;
        unsafe { libc::killpg(pgid, libc::SIGKILL) };
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(group) = self.group.take() {
            drop(group); // kills every remaining member and removes the group
        }
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        self.dead.get_or_insert_with(|| "stopped".into());
    }
}

impl Drop for ServiceProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
