//! Egress for `remote-allowed` services: the sandbox never gets the host's network namespace.
//!
//! - The host makes a unix socket pair per launch; the sandbox end reaches the in-sandbox shim as
//!   fd [`crate::launch::EGRESS_FD`]. The shim binds `127.0.0.1:`[`PROXY_PORT`] in the sandbox's
//!   own (otherwise empty) network namespace and passes every accepted TCP connection to the host
//!   over that socket (`SCM_RIGHTS`). The service sees `HTTPS_PROXY=http://127.0.0.1:3128`.
//! - The host end ([`EgressProxy`]) speaks HTTP `CONNECT` only and lets a tunnel through only when
//!   [`policy::EgressPolicy::decide`] allows it (grant, declared domain, port 443, public
//!   addresses after its own DNS resolution), with a connect timeout, a bounded head, a
//!   per-service cap on concurrent tunnels; every allowed or refused connection is audited.

pub mod policy;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub use policy::{Decision, EgressPolicy, Refusal};

use crate::error::SandboxError;

/// The proxy port inside the sandbox's private loopback.
pub const PROXY_PORT: u16 = 3128;
/// Concurrent tunnels per service.
pub const MAX_CONNECTIONS: usize = 16;
/// Deadline for the request head and for the outbound connect.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// A tunnel with no traffic either way for this long is closed.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// Debug-build override letting exactly one `ip:port` through (tests with a loopback server).
pub const TEST_ALLOW_ENV: &str = "APPHOST_EGRESS_TEST_ALLOW";

/// One audited connection attempt (`service.egress`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressAudit {
    /// `host:port` as requested (empty when the head could not be parsed).
    pub target: String,
    /// `None` = allowed; otherwise the refusal code.
    pub refused: Option<&'static str>,
}

pub type AuditSink = Arc<dyn Fn(EgressAudit) + Send + Sync>;

/// The host side of one service's egress; dropping it stops the proxy (open tunnels end on their
/// own when either side closes or goes idle).
pub struct EgressProxy {
    sandbox_end: Option<OwnedFd>,
    control: UnixStream,
    thread: Option<JoinHandle<()>>,
}

/// The policy with the debug-only test override from [`TEST_ALLOW_ENV`] applied.
pub fn policy_from_env(policy: EgressPolicy) -> EgressPolicy {
    #[cfg(debug_assertions)]
    {
        let allow = std::env::var(TEST_ALLOW_ENV)
            .ok()
            .and_then(|v| v.parse::<std::net::SocketAddr>().ok());
        policy.with_test_allow(allow)
    }
    #[cfg(not(debug_assertions))]
    {
        policy
    }
}

impl EgressProxy {
    pub fn start(policy: EgressPolicy, audit: AuditSink) -> Result<Self, SandboxError> {
        let (host_end, sandbox_end) =
            UnixStream::pair().map_err(|e| SandboxError::StartFailed(format!("egress: {e}")))?;
        let control = host_end
            .try_clone()
            .map_err(|e| SandboxError::StartFailed(format!("egress: {e}")))?;
        let policy = Arc::new(policy);
        let thread = std::thread::spawn(move || accept_loop(host_end, policy, audit));
        Ok(Self {
            sandbox_end: Some(OwnedFd::from(sandbox_end)),
            control,
            thread: Some(thread),
        })
    }

    /// The descriptor to hand to the sandbox (the launcher dups it onto `EGRESS_FD`).
    pub fn sandbox_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        self.sandbox_end.as_ref().map(|f| f.as_fd())
    }

    /// Drop the host's copy of the sandbox end once the sandbox holds it.
    pub fn release_sandbox_end(&mut self) {
        self.sandbox_end = None;
    }
}

impl Drop for EgressProxy {
    fn drop(&mut self) {
        self.sandbox_end = None;
        let _ = self.control.shutdown(Shutdown::Both);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Receive one descriptor sent with `SCM_RIGHTS`; `None` when the sandbox end is gone. A message
/// without a descriptor is skipped; extra descriptors in one message are closed.
fn recv_fd(sock: &UnixStream) -> Option<OwnedFd> {
    loop {
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        // room for a few ints in a cmsg; u64-aligned
        let mut cbuf = [0u64; 8];
        // SAFETY: msghdr points at live, correctly sized buffers for the duration of the call;
        // the cmsg is read only within msg_controllen as the kernel filled it.
        unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = cbuf.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&cbuf) as _;
            let n = libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
            if n <= 0 {
                return None;
            }
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            if cmsg.is_null()
                || (*cmsg).cmsg_level != libc::SOL_SOCKET
                || (*cmsg).cmsg_type != libc::SCM_RIGHTS
            {
                continue;
            }
            let data = libc::CMSG_DATA(cmsg) as *const libc::c_int;
            let count = ((*cmsg).cmsg_len as usize).saturating_sub(libc::CMSG_LEN(0) as usize)
                / std::mem::size_of::<libc::c_int>();
            if count == 0 {
                continue;
            }
            for i in 1..count {
                libc::close(std::ptr::read_unaligned(data.add(i)));
            }
            let fd = std::ptr::read_unaligned(data);
            if fd >= 0 {
                return Some(OwnedFd::from_raw_fd(fd));
            }
        }
    }
}

fn accept_loop(control: UnixStream, policy: Arc<EgressPolicy>, audit: AuditSink) {
    let active = Arc::new(AtomicUsize::new(0));
    while let Some(fd) = recv_fd(&control) {
        let mut client = TcpStream::from(fd);
        if active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            active.fetch_sub(1, Ordering::SeqCst);
            refuse(&mut client, &Refusal::TooManyConnections);
            audit(EgressAudit {
                target: String::new(),
                refused: Some(Refusal::TooManyConnections.code()),
            });
            continue;
        }
        let (policy, audit, active) = (policy.clone(), audit.clone(), active.clone());
        std::thread::spawn(move || {
            serve(client, &policy, &audit);
            active.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

fn refuse(client: &mut TcpStream, why: &Refusal) {
    let _ = write!(
        client,
        "HTTP/1.1 {} Refused\r\nX-AppHost-Error: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        why.status(),
        why.code()
    );
    let _ = client.shutdown(Shutdown::Both);
}

/// Read the head (bounded size and time); nothing after it is read before the decision.
fn read_head(client: &mut TcpStream) -> Vec<u8> {
    let _ = client.set_read_timeout(Some(HEAD_TIMEOUT));
    let deadline = std::time::Instant::now() + HEAD_TIMEOUT;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    // byte by byte: never consume tunnel bytes the client pipelined after the head
    while head.len() < policy::MAX_HEAD + 1 && std::time::Instant::now() < deadline {
        match client.read(&mut byte) {
            Ok(1) => {
                head.push(byte[0]);
                if head.ends_with(b"\r\n\r\n") {
                    break;
                }
            }
            _ => break,
        }
    }
    head
}

fn serve(mut client: TcpStream, policy: &EgressPolicy, audit: &AuditSink) {
    let head = read_head(&mut client);
    let target = policy::parse_connect(&head)
        .map(|(h, p)| format!("{h}:{p}"))
        .unwrap_or_default();
    let decided = policy
        .decide(&head, |h, p| {
            use std::net::ToSocketAddrs;
            (h, p).to_socket_addrs().map(Iterator::collect)
        })
        .and_then(|d| connect(&d));
    let upstream = match decided {
        Ok(up) => up,
        Err(why) => {
            audit(EgressAudit {
                target,
                refused: Some(why.code()),
            });
            refuse(&mut client, &why);
            return;
        }
    };
    audit(EgressAudit {
        target,
        refused: None,
    });
    if client
        .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        .is_err()
    {
        return;
    }
    tunnel(client, upstream);
}

fn connect(d: &Decision) -> Result<TcpStream, Refusal> {
    d.addrs
        .iter()
        .find_map(|a| TcpStream::connect_timeout(a, CONNECT_TIMEOUT).ok())
        .ok_or(Refusal::ConnectFailed)
}

/// Copy both ways until either side closes or the tunnel idles for [`IDLE_TIMEOUT`].
fn tunnel(client: TcpStream, upstream: TcpStream) {
    for s in [&client, &upstream] {
        let _ = s.set_read_timeout(Some(IDLE_TIMEOUT));
    }
    let (Ok(c2), Ok(u2)) = (client.try_clone(), upstream.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || pipe(c2, u2));
    pipe(upstream, client);
    let _ = up.join();
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    let _ = std::io::copy(&mut from, &mut to);
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}
