//! The host's HTTP/1.1 client for a `local-http` service: one request per connection over the
//! host-private unix socket, the per-launch token as a bearer credential, a deadline over the
//! whole exchange (a slowloris answer ends in `service.timeout`), bounded headers and body.
//! A cancellable exchange ([`post_cancellable`]) waits on the socket at most [`CANCEL_POLL`] at a
//! time and looks at its token in between: once cancelled, the connection is dropped (the
//! service sees it closed; its late answer goes nowhere) and the call fails `service.cancelled`.

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::cancel::{CancelToken, CANCEL_POLL};
use crate::error::SandboxError;

/// Largest accepted response head (status line + headers).
pub const MAX_HEAD: usize = 16 * 1024;

pub struct Response {
    pub status: u16,
    pub body: Vec<u8>,
}

fn left(deadline: Instant) -> Result<Duration, SandboxError> {
    let d = deadline.saturating_duration_since(Instant::now());
    if d.is_zero() {
        Err(SandboxError::Timeout)
    } else {
        Ok(d)
    }
}

/// How long the next socket wait may last: to the deadline, at most one [`CANCEL_POLL`].
fn wait_slice(deadline: Instant) -> Result<Duration, SandboxError> {
    Ok(left(deadline)?.min(CANCEL_POLL))
}

fn would_block(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

fn io_err(e: std::io::Error) -> SandboxError {
    if would_block(&e) {
        SandboxError::Timeout
    } else {
        SandboxError::Exited(format!("http: {e}"))
    }
}

/// `POST <path>` with a JSON body; `token` = `None` sends no credential (tests only).
pub fn post(
    socket: &Path,
    token: Option<&str>,
    path: &str,
    body: &[u8],
    timeout: Duration,
    max_body: usize,
) -> Result<Response, SandboxError> {
    post_cancellable(
        socket,
        token,
        path,
        body,
        timeout,
        max_body,
        &CancelToken::default(),
    )
}

/// [`post`] that `cancel` ends: the connection is dropped within one [`CANCEL_POLL`] and the
/// call fails `service.cancelled`.
pub fn post_cancellable(
    socket: &Path,
    token: Option<&str>,
    path: &str,
    body: &[u8],
    timeout: Duration,
    max_body: usize,
    cancel: &CancelToken,
) -> Result<Response, SandboxError> {
    let deadline = Instant::now() + timeout;
    if cancel.is_cancelled() {
        return Err(SandboxError::Cancelled);
    }
    let stream = UnixStream::connect(socket).map_err(io_err)?;
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: apphost-service\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(t) = token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    head.push_str("\r\n");
    let mut wire = Wire {
        stream,
        deadline,
        cancel,
    };
    // A server may answer (401, 413) and close before it reads the body: a broken pipe while
    // writing still leaves its answer to read, which is the one to report.
    let sent = wire
        .write_all(head.as_bytes())
        .and_then(|()| wire.write_all(body));
    match sent {
        Ok(()) => read_response(&mut wire, max_body),
        Err(Sent::Io(e))
            if e.kind() == ErrorKind::BrokenPipe || e.kind() == ErrorKind::ConnectionReset =>
        {
            match read_response(&mut wire, max_body) {
                Err(SandboxError::Cancelled) => Err(SandboxError::Cancelled),
                other => other.map_err(|_| io_err(e)),
            }
        }
        Err(Sent::Io(e)) => Err(io_err(e)),
        Err(Sent::Refused(e)) => Err(e),
    }
    // `wire` (the connection) is dropped here: a cancelled exchange closes it.
}

/// Why a write ended: the socket's own error, or the deadline/cancel.
enum Sent {
    Io(std::io::Error),
    Refused(SandboxError),
}

/// One connection with the exchange's deadline and cancel token: every wait on the socket lasts
/// at most one [`CANCEL_POLL`], the token is looked at between waits.
struct Wire<'a> {
    stream: UnixStream,
    deadline: Instant,
    cancel: &'a CancelToken,
}

impl Wire<'_> {
    fn check(&self) -> Result<Duration, SandboxError> {
        if self.cancel.is_cancelled() {
            return Err(SandboxError::Cancelled);
        }
        wait_slice(self.deadline)
    }

    fn write_all(&mut self, mut bytes: &[u8]) -> Result<(), Sent> {
        while !bytes.is_empty() {
            let wait = self.check().map_err(Sent::Refused)?;
            self.stream
                .set_write_timeout(Some(wait))
                .map_err(Sent::Io)?;
            match self.stream.write(bytes) {
                Ok(0) => return Err(Sent::Io(ErrorKind::WriteZero.into())),
                Ok(n) => bytes = &bytes[n..],
                Err(e) if would_block(&e) || e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(Sent::Io(e)),
            }
        }
        Ok(())
    }

    /// Reads what the service sent next into `buf`: 0 = the connection ended.
    fn read_some(&mut self, buf: &mut Vec<u8>) -> Result<usize, SandboxError> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            let wait = self.check()?;
            self.stream.set_read_timeout(Some(wait)).map_err(io_err)?;
            match self.stream.read(&mut chunk) {
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    return Ok(n);
                }
                Err(e) if would_block(&e) || e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(io_err(e)),
            }
        }
    }
}

fn read_response(wire: &mut Wire<'_>, max_body: usize) -> Result<Response, SandboxError> {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD {
            return Err(SandboxError::Protocol(format!(
                "http head over {MAX_HEAD} bytes"
            )));
        }
        if wire.read_some(&mut buf)? == 0 {
            return Err(SandboxError::Exited("http: closed before the head".into()));
        }
    };
    if head_end > MAX_HEAD {
        return Err(SandboxError::Protocol(format!(
            "http head over {MAX_HEAD} bytes"
        )));
    }
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| {
            l.strip_prefix("HTTP/1.1 ")
                .or_else(|| l.strip_prefix("HTTP/1.0 "))
        })
        .and_then(|l| l.get(..3))
        .and_then(|c| c.parse::<u16>().ok())
        .ok_or_else(|| SandboxError::Protocol("bad http status line".into()))?;
    let mut length = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        if name == "transfer-encoding" {
            return Err(SandboxError::Protocol(
                "http transfer-encoding is not supported; send Content-Length".into(),
            ));
        }
        if name == "content-length" {
            length = Some(
                value
                    .parse::<usize>()
                    .map_err(|_| SandboxError::Protocol("bad Content-Length".into()))?,
            );
        }
    }
    if length.is_some_and(|n| n > max_body) {
        return Err(SandboxError::Protocol(format!(
            "http body over {max_body} bytes"
        )));
    }
    let mut body = buf.split_off(head_end + 4);
    loop {
        if body.len() > max_body {
            return Err(SandboxError::Protocol(format!(
                "http body over {max_body} bytes"
            )));
        }
        if length.is_some_and(|n| body.len() >= n) {
            body.truncate(length.unwrap_or(0));
            break;
        }
        if wire.read_some(&mut body)? == 0 {
            if length.is_some() {
                return Err(SandboxError::Exited("http: body cut short".into()));
            }
            break; // no Content-Length: the body ends with the connection
        }
    }
    Ok(Response { status, body })
}
