//! What sits between a stdio server's pipes and rmcp: the stderr ring (the last
//! [`STDERR_BYTES`] bytes the server wrote, the rest counted as dropped) and the stdout guard,
//! which forwards each line only if it is at most [`MAX_MESSAGE_BYTES`] and valid JSON. rmcp
//! skips unparsable lines silently (so a call would only time out); the guard instead reports
//! the first bad line and ends the stream, so the call in flight fails at once with
//! `tools.bad_response` and memory stays bounded whatever the server floods.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};

/// Bytes of a server's stderr kept.
pub const STDERR_BYTES: usize = 64 * 1024;
/// Largest message (one line) a stdio server may send.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// The tail of a server's stderr.
#[derive(Debug, Default)]
pub struct Ring {
    bytes: VecDeque<u8>,
    dropped: u64,
}

impl Ring {
    pub fn push(&mut self, chunk: &[u8]) {
        for b in chunk {
            if self.bytes.len() == STDERR_BYTES {
                self.bytes.pop_front();
                self.dropped += 1;
            }
            self.bytes.push_back(*b);
        }
    }
    /// The kept text (lossy UTF-8) and how many earlier bytes were dropped.
    pub fn tail(&self) -> (String, u64) {
        let (a, b) = self.bytes.as_slices();
        let mut v = a.to_vec();
        v.extend_from_slice(b);
        (String::from_utf8_lossy(&v).into_owned(), self.dropped)
    }
    pub fn len(&self) -> usize {
        self.bytes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

pub type SharedRing = Arc<Mutex<Ring>>;

/// Copies `stderr` into `ring` until EOF.
pub async fn pump_stderr(stderr: impl AsyncRead + Unpin, ring: SharedRing) {
    let mut stderr = stderr;
    let mut buf = [0u8; 8192];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if let Ok(mut r) = ring.lock() {
                    r.push(&buf[..n]);
                }
            }
        }
    }
}

/// Why the guard stopped forwarding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    TooLarge,
    NotJson,
}

/// Forwards `stdout` to `out` line by line while each line is valid JSON of at most
/// [`MAX_MESSAGE_BYTES`]; on the first that is not, records it in `violation` and returns
/// (dropping `out`, which ends rmcp's stream).
pub async fn guard_stdout(
    stdout: impl AsyncRead + Unpin,
    mut out: impl tokio::io::AsyncWrite + Unpin,
    violation: Arc<Mutex<Option<Violation>>>,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line: Vec<u8> = Vec::new();
    loop {
        let (done, used) = {
            let buf = match reader.fill_buf().await {
                Ok(b) => b,
                Err(_) => return,
            };
            if buf.is_empty() {
                return;
            }
            match buf.iter().position(|b| *b == b'\n') {
                Some(i) => {
                    line.extend_from_slice(&buf[..=i]);
                    (true, i + 1)
                }
                None => {
                    line.extend_from_slice(buf);
                    (false, buf.len())
                }
            }
        };
        reader.consume(used);
        if line.len() > MAX_MESSAGE_BYTES + 1 {
            set(&violation, Violation::TooLarge);
            return;
        }
        if !done {
            continue;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if !text.iter().all(u8::is_ascii_whitespace)
            && serde_json::from_slice::<serde::de::IgnoredAny>(text).is_err()
        {
            set(&violation, Violation::NotJson);
            return;
        }
        if out.write_all(&line).await.is_err() {
            return;
        }
        line.clear();
    }
}

fn set(v: &Arc<Mutex<Option<Violation>>>, what: Violation) {
    if let Ok(mut g) = v.lock() {
        g.get_or_insert(what);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_tail_and_counts_the_rest() {
        let mut r = Ring::default();
        r.push(&vec![b'a'; STDERR_BYTES]);
        r.push(b"xyz");
        let (tail, dropped) = r.tail();
        assert_eq!(tail.len(), STDERR_BYTES);
        assert!(tail.ends_with("xyz"));
        assert_eq!(dropped, 3);
    }

    #[tokio::test]
    async fn the_guard_forwards_json_lines_and_stops_at_the_first_bad_one() {
        let input: &[u8] = b"{\"a\":1}\n\n{\"b\":2}\nnot json\n{\"c\":3}\n";
        let (w, mut r) = tokio::io::duplex(1024);
        let v = Arc::new(Mutex::new(None));
        guard_stdout(input, w, v.clone()).await;
        let mut got = String::new();
        r.read_to_string(&mut got).await.unwrap();
        assert_eq!(got, "{\"a\":1}\n\n{\"b\":2}\n");
        assert_eq!(*v.lock().unwrap(), Some(Violation::NotJson));
    }

    #[tokio::test]
    async fn the_guard_stops_a_line_over_the_cap_without_buffering_it() {
        let big = vec![b'1'; MAX_MESSAGE_BYTES + 10];
        let (w, _r) = tokio::io::duplex(1024);
        let v = Arc::new(Mutex::new(None));
        guard_stdout(&big[..], w, v.clone()).await;
        assert_eq!(*v.lock().unwrap(), Some(Violation::TooLarge));
    }
}
