//! The host's HTTP/1.1 client for a `local-http` service: one request per connection over the
//! host-private unix socket, the per-launch token as a bearer credential, a deadline over the
//! whole exchange (a slowloris answer ends in `service.timeout`), bounded headers and body.

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

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

fn io_err(e: std::io::Error) -> SandboxError {
    match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => SandboxError::Timeout,
        _ => SandboxError::Exited(format!("http: {e}")),
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
    let deadline = Instant::now() + timeout;
    let mut stream = UnixStream::connect(socket).map_err(io_err)?;
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: apphost-service\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(t) = token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    head.push_str("\r\n");
    stream
        .set_write_timeout(Some(left(deadline)?))
        .map_err(io_err)?;
    // A server may answer (401, 413) and close before it reads the body: a broken pipe while
    // writing still leaves its answer to read, which is the one to report.
    let sent = stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body));
    match sent {
        Ok(()) => read_response(&mut stream, deadline, max_body),
        Err(e) if e.kind() == ErrorKind::BrokenPipe || e.kind() == ErrorKind::ConnectionReset => {
            read_response(&mut stream, deadline, max_body).map_err(|_| io_err(e))
        }
        Err(e) => Err(io_err(e)),
    }
}

fn read_some(
    stream: &mut UnixStream,
    buf: &mut Vec<u8>,
    deadline: Instant,
) -> Result<usize, SandboxError> {
    stream
        .set_read_timeout(Some(left(deadline)?))
        .map_err(io_err)?;
    let mut chunk = [0u8; 16 * 1024];
    let n = stream.read(&mut chunk).map_err(io_err)?;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n)
}

fn read_response(
    stream: &mut UnixStream,
    deadline: Instant,
    max_body: usize,
) -> Result<Response, SandboxError> {
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
        if read_some(stream, &mut buf, deadline)? == 0 {
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
        if read_some(stream, &mut body, deadline)? == 0 {
            if length.is_some() {
                return Err(SandboxError::Exited("http: body cut short".into()));
            }
            break; // no Content-Length: the body ends with the connection
        }
    }
    Ok(Response { status, body })
}
