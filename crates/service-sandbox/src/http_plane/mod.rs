//! The `local-http` protocol: the service speaks HTTP/1.1 on a socket AppHost provides, and
//! nothing but the host can reach it.
//!
//! - The HOST binds a unix socket in a fresh host-private `0700` directory (never mounted into
//!   any sandbox) and hands the already-listening descriptor to the service as fd 3
//!   (`LISTEN_FDS=1`, `LISTEN_PID`: socket activation). The service binds nothing itself, and the
//!   path it could symlink or swap is not in its view: the host always connects to its own socket.
//! - The service runs in the same sandbox as a stdio service with its network namespace unshared
//!   (no TCP/UDP anywhere; Landlock also denies TCP bind/connect).
//! - A per-launch random token is written as the first line of the service's stdin (never in argv
//!   or the environment); the service must require `Authorization: Bearer <token>` on every
//!   request. Another local process that finds the socket still has no token.
//! - Calls are JSON-RPC 2.0 bodies `POST /rpc`, one connection each, with a deadline over the whole
//!   exchange and bounded head/body ([`client`]). stderr goes to the log ring.
//! - A cancelled call ([`HttpService::call_cancellable`]) drops its connection within one
//!   [`crate::cancel::CANCEL_POLL`] and fails `service.cancelled` at once; the process keeps
//!   running (a cancel is not a crash) and its late answer, written to a closed connection, is
//!   never read.
//! - The service's own `lime.*` requests come back on its stdout, answered on its stdin after the
//!   token line, served only while a host call is in flight ([`host_requests`]); other stdout lines
//!   go to the log ring.

pub mod client;
pub mod host_requests;

use std::collections::VecDeque;
use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

use crate::cancel::CancelToken;
use crate::cgroup::PidsGroup;
use crate::channel::HostHandler;
use crate::error::SandboxError;
use crate::spec::ServiceSpec;
use host_requests::HostRequests;

/// Largest accepted response body.
pub const MAX_BODY: usize = crate::channel::MAX_LINE;

pub struct HttpService {
    child: Child,
    stdin: Option<ChildStdin>,
    group: Option<PidsGroup>,
    socket_dir: PathBuf,
    token: String,
    log: Arc<Mutex<VecDeque<u8>>>,
    readers: Vec<JoinHandle<()>>,
    requests: Option<HostRequests>,
    next_id: u64,
    dead: Option<String>,
}

/// 32 random bytes, hex.
fn new_token() -> Result<String, SandboxError> {
    let mut b = [0u8; 32];
    // SAFETY: writes at most b.len() bytes into b.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n != b.len() as isize {
        return Err(SandboxError::StartFailed("getrandom".into()));
    }
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// A fresh `0700` directory only the host user can enter, outside every sandbox's view.
fn private_dir() -> Result<PathBuf, SandboxError> {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    let suffix = new_token()?;
    let dir = base.join(format!("apphost-http-{}", &suffix[..16]));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| SandboxError::StartFailed(format!("socket dir: {e}")))?;
    Ok(dir)
}

impl HttpService {
    /// [`Self::start_with_handler`] with a handler that refuses every `lime.*` request.
    pub fn start(spec: &ServiceSpec) -> Result<Self, SandboxError> {
        Self::start_with_handler(
            spec,
            Box::new(|_, _| Err((host_requests::REFUSED, "no host handler".into()))),
        )
    }

    /// Bind the socket, launch the service in its sandbox with the listener and hand it the
    /// token; `handler` answers the service's own `lime.*` requests ([`host_requests`]).
    pub fn start_with_handler(
        spec: &ServiceSpec,
        handler: HostHandler,
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
        let token = new_token()?;
        let socket_dir = private_dir()?;
        let cleanup = |e: SandboxError, dir: &Path| {
            let _ = std::fs::remove_dir_all(dir);
            e
        };
        let listener = UnixListener::bind(socket_dir.join("http.sock"))
            .map_err(|e| cleanup(SandboxError::StartFailed(format!("bind: {e}")), &socket_dir))?;
        let _ = std::fs::set_permissions(
            socket_dir.join("http.sock"),
            std::fs::Permissions::from_mode(0o600),
        );
        let group = PidsGroup::create(spec.limits.max_processes).map_err(|e| {
            cleanup(
                SandboxError::SandboxUnavailable(format!("pids cgroup: {e}")),
                &socket_dir,
            )
        })?;
        let mut child = crate::launch::spawn_with(&spec, &group, Some(listener.as_fd()))
            .map_err(|e| cleanup(e, &socket_dir))?;
        drop(listener); // the service holds the only listening descriptor now
        let log = Arc::new(Mutex::new(VecDeque::new()));
        let mut readers = Vec::new();
        let stdout = child.stdout.take();
        if let Some(err) = child.stderr.take() {
            let log = log.clone();
            readers.push(std::thread::spawn(move || crate::channel::ring(err, log)));
        }
        let mut svc = Self {
            stdin: child.stdin.take(),
            child,
            group: Some(group),
            socket_dir,
            token,
            log,
            readers,
            requests: None,
            next_id: 1,
            dead: None,
        };
        let line = format!("{}\n", svc.token);
        let sent = svc
            .stdin
            .as_mut()
            .map(|s| s.write_all(line.as_bytes()).and_then(|_| s.flush()));
        if !matches!(sent, Some(Ok(()))) {
            svc.kill();
            return Err(SandboxError::StartFailed(
                "could not hand over the token".into(),
            ));
        }
        // From here on stdin carries only the answers to the service's own requests.
        match (stdout, svc.stdin.take()) {
            (Some(out), Some(stdin)) => {
                svc.requests = Some(HostRequests::start(out, stdin, handler, svc.log.clone()));
            }
            _ => {
                svc.kill();
                return Err(SandboxError::StartFailed("no stdio pipes".into()));
            }
        }
        Ok(svc)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The host-side socket (tests prove other processes cannot use it without the token).
    pub fn socket_path(&self) -> PathBuf {
        self.socket_dir.join("http.sock")
    }

    /// A broken callback channel (a stdout line over the cap) ends the service: `service.protocol`.
    fn check_channel(&mut self) -> Result<(), SandboxError> {
        if let Some(why) = self.requests.as_ref().and_then(HostRequests::broken) {
            self.kill();
            self.dead = Some(why.clone());
            return Err(SandboxError::Protocol(why));
        }
        Ok(())
    }

    /// `POST /rpc` a JSON-RPC request with the token; a non-2xx status is `service.http_status`.
    /// The service's own `lime.*` requests are served while the call is in flight.
    pub fn call(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, SandboxError> {
        self.call_cancellable(method, params, timeout, &CancelToken::default())
    }

    /// [`Self::call`] that `cancel` ends: the request's connection is dropped (the service sees
    /// it closed) and the call fails `service.cancelled`; the service keeps running.
    pub fn call_cancellable(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
        cancel: &CancelToken,
    ) -> Result<Value, SandboxError> {
        if cancel.is_cancelled() {
            return Err(SandboxError::Cancelled);
        }
        if let Some(why) = &self.dead {
            return Err(SandboxError::Exited(why.clone()));
        }
        self.check_channel()?;
        let id = self.next_id;
        self.next_id += 1;
        let body = serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
        .map_err(|e| SandboxError::Protocol(e.to_string()))?;
        let window = self.requests.as_ref().map(HostRequests::open_for_call);
        let resp = client::post_cancellable(
            &self.socket_path(),
            Some(&self.token),
            "/rpc",
            &body,
            timeout,
            MAX_BODY,
            cancel,
        );
        drop(window);
        self.check_channel()?;
        let resp = resp?;
        if !(200..300).contains(&resp.status) {
            return Err(SandboxError::HttpStatus(resp.status));
        }
        crate::wasm_plane::abi::parse_reply(&resp.body, id)
    }

    /// The `lime.*` requests refused over the cap in the call that just ended, if any.
    pub fn take_flood(&self) -> Option<host_requests::Flood> {
        self.requests.as_ref().and_then(HostRequests::take_flood)
    }

    pub fn exit_status(&mut self) -> Option<String> {
        for _ in 0..50 {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Some(st.to_string());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        None
    }

    /// stdout + stderr, last [`crate::channel::LOG_RING`] bytes.
    pub fn logs(&self) -> String {
        let log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        String::from_utf8_lossy(&log.iter().copied().collect::<Vec<_>>()).into_owned()
    }

    pub fn live_pids(&self) -> Vec<i32> {
        self.group.as_ref().map(PidsGroup::pids).unwrap_or_default()
    }

    /// Kill the whole tree, reap it, remove the socket directory. A `lime.*` request still
    /// waiting for a call is never served.
    pub fn kill(&mut self) {
        if let Some(r) = &self.requests {
            r.close();
        }
        self.stdin = None;
        let pgid = self.child.id() as i32;
        // SAFETY: plain syscall on our own child's process group.
        unsafe { libc::killpg(pgid, libc::SIGKILL) };
        let _ = self.child.kill();
        let _ = self.child.wait();
        drop(self.group.take());
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        if let Some(mut r) = self.requests.take() {
            r.join();
        }
        let _ = std::fs::remove_dir_all(&self.socket_dir);
        self.dead.get_or_insert_with(|| "stopped".into());
    }
}

impl Drop for HttpService {
    fn drop(&mut self) {
        self.kill();
    }
}
