//! The door: the App Server (`appserver.v0`, one JSON message per line) on a Unix socket in the
//! runtime's data directory, served by the process that owns the runtime (the desktop window or
//! `apphost serve`) so other clients (`apphost app-server --stdio` relays to it) share its
//! sessions. Threat model and wire rules: `docs/app-server.md` ("The door").
//!
//! - `<runtime>/app-server.sock` (0600) in `<runtime>/` (0700): only our user can reach the
//!   path. It is not TCP: a web page (a loopback port, DNS rebinding) cannot open it.
//! - Every connection's peer uid (`SO_PEERCRED`) must equal ours, else `-32004`
//!   `appserver.peer_uid` and closed.
//! - `<runtime>/app-server.token` (0600): a fresh 32-byte token per launch; `initialize` must
//!   carry it as `authToken` (constant-time compare), else `-32004` `appserver.bad_token` and
//!   closed. A client has [`HANDSHAKE_TIMEOUT`] to complete the handshake.
//! - Bounded: at most [`MAX_CONNECTIONS`] at once (one more: `-32005`
//!   `appserver.connection_limit`, closed), lines up to [`MAX_LINE_BYTES`], each connection's
//!   outbound queue bounded; a slow client slows only its own forwarders, which catch up from
//!   the log, so appends never wait for a client.
//! - A socket file left by a crashed host is stale: the owner of the runtime lock (there is
//!   one) removes it before binding.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Semaphore;

use super::protocol::codes;
use super::{door_token, refusal_line, serve_stdio, ServeConfig};
use crate::runtime::Runtime;

/// The socket's file name in the runtime directory.
pub const SOCKET_FILE: &str = "app-server.sock";
/// The token's file name in the runtime directory.
pub const TOKEN_FILE: &str = "app-server.token";
/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 64;
/// Longest accepted line on the socket (bytes).
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;
/// Time a client has to complete `initialize` + `initialized`.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the door of the runtime in `runtime_dir` is.
pub fn socket_path(runtime_dir: &Path) -> PathBuf {
    runtime_dir.join(SOCKET_FILE)
}

/// Where the door's token is.
pub fn token_path(runtime_dir: &Path) -> PathBuf {
    runtime_dir.join(TOKEN_FILE)
}

/// Called with the runtime before each accepted connection is served (the host brings a model
/// configured since the runtime opened: [`Runtime::set_backend`]).
pub type OnConnect = Arc<dyn Fn(&Runtime) + Send + Sync>;

/// The door's bounds (tests use small ones).
#[derive(Clone, Debug)]
pub struct DoorLimits {
    pub max_connections: usize,
    pub max_line_bytes: usize,
    pub handshake_timeout: Duration,
}

impl Default for DoorLimits {
    fn default() -> Self {
        DoorLimits {
            max_connections: MAX_CONNECTIONS,
            max_line_bytes: MAX_LINE_BYTES,
            handshake_timeout: HANDSHAKE_TIMEOUT,
        }
    }
}

/// An open door: serving until dropped; dropping it stops accepting and removes the socket and
/// token files (connections already open end with their clients).
pub struct Door {
    socket: PathBuf,
    token_file: PathBuf,
    accept: tokio::task::AbortHandle,
}

impl Door {
    pub fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for Door {
    fn drop(&mut self) {
        self.accept.abort();
        let _ = std::fs::remove_file(&self.socket);
        let _ = std::fs::remove_file(&self.token_file);
    }
}

/// Opens the door of `runtime` (its data directory) on `handle`. The caller owns the runtime,
/// and so its directory lock: a socket file already there is a crashed host's and is replaced.
pub fn open(
    runtime: Runtime,
    handle: &tokio::runtime::Handle,
    limits: DoorLimits,
    on_connect: Option<OnConnect>,
) -> io::Result<Door> {
    open_with_host_methods(runtime, handle, limits, on_connect, None)
}

/// [`open`] whose connections also answer the host's extension methods (`host_methods`).
pub fn open_with_host_methods(
    runtime: Runtime,
    handle: &tokio::runtime::Handle,
    limits: DoorLimits,
    on_connect: Option<OnConnect>,
    host_methods: Option<Arc<super::host_methods::HostMethods>>,
) -> io::Result<Door> {
    let dir = runtime.config().data_dir.clone();
    crate::private_fs::create_private_dir(&dir)?;
    let socket = socket_path(&dir);
    let token_file = token_path(&dir);
    // A live door is never touched (its token file included); a stale one goes first.
    remove_stale(&socket)?;
    let token = door_token::fresh()?;
    write_token(&dir, &token_file, &token)?;
    let std_listener = std::os::unix::net::UnixListener::bind(&socket)?;
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
    std_listener.set_nonblocking(true)?;
    let listener = {
        let _enter = handle.enter();
        UnixListener::from_std(std_listener)?
    };
    let ours = rustix::process::getuid().as_raw();
    let config = ServeConfig {
        max_line_bytes: limits.max_line_bytes,
        token: Some(Arc::from(token.as_str())),
        handshake_timeout: Some(limits.handshake_timeout),
        host_methods,
        ..ServeConfig::new(runtime)
    };
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let accept = handle.spawn(accept_loop(listener, config, slots, ours, on_connect));
    Ok(Door {
        socket,
        token_file,
        accept: accept.abort_handle(),
    })
}

/// The token is written to a temporary name and renamed, so a reader never sees half of it.
fn write_token(dir: &Path, path: &Path, token: &str) -> io::Result<()> {
    use std::io::Write;
    let tmp = dir.join(format!("{TOKEN_FILE}.tmp"));
    let _ = std::fs::remove_file(&tmp);
    let mut f = crate::private_fs::create_private_file(&tmp)?;
    f.write_all(token.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// Removes a socket file nobody answers on (a crashed host's); refuses when one answers.
fn remove_stale(socket: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(socket) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
        Ok(_) => {}
    }
    if std::os::unix::net::UnixStream::connect(socket).is_ok() {
        return Err(io::Error::new(
            io::ErrorKind::AddrInUse,
            "another process serves the App Server door of this data directory",
        ));
    }
    tracing::info!(path = %socket.display(), "removing a stale App Server socket");
    std::fs::remove_file(socket)
}

async fn accept_loop(
    listener: UnixListener,
    config: ServeConfig,
    slots: Arc<Semaphore>,
    ours: u32,
    on_connect: Option<OnConnect>,
) {
    loop {
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            Err(e) => {
                // EMFILE and the like: back off instead of spinning.
                tracing::warn!(error = %e, "the App Server door cannot accept");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let config = config.clone();
        let slot = slots.clone().try_acquire_owned();
        let on_connect = on_connect.clone();
        tokio::spawn(async move {
            let Ok(_slot) = slot else {
                return refuse(
                    stream,
                    codes::CONNECTION_REFUSED,
                    "Connection refused: too many connections",
                    "appserver.connection_limit",
                )
                .await;
            };
            match stream.peer_cred() {
                Ok(c) if c.uid() == ours => {}
                _ => {
                    return refuse(
                        stream,
                        codes::UNAUTHORIZED,
                        "Unauthorized: the peer is another user",
                        "appserver.peer_uid",
                    )
                    .await
                }
            }
            if let Some(hook) = on_connect {
                let rt = config.runtime.clone();
                // Reads the host's settings: off the accepting threads.
                let _ = tokio::task::spawn_blocking(move || hook(&rt)).await;
            }
            let mut config = config;
            // Host methods ask it whether the client hung up (a copy: the halves keep theirs).
            if let Ok(fd) = std::os::fd::AsFd::as_fd(&stream).try_clone_to_owned() {
                config.caller = super::host_methods::Caller::on_socket(fd);
            }
            let (r, w) = stream.into_split();
            if let Err(e) = serve_stdio(tokio::io::BufReader::new(r), w, config).await {
                tracing::debug!(error = %e, "an App Server door connection ended");
            }
        });
    }
}

/// Sends one refusal line (without waiting long for a client that does not read) and closes.
async fn refuse(mut stream: UnixStream, code: i64, message: &str, data_code: &str) {
    let line = refusal_line(code, message, data_code);
    let _ = tokio::time::timeout(Duration::from_secs(1), stream.write_all(&line)).await;
    let _ = stream.shutdown().await;
}
