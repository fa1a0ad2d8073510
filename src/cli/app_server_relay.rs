//! `apphost app-server --stdio` as a client of a host's App Server door
//! (`<data>/runtime/app-server.sock`, RuntimeCore `app_server::door`): while the desktop window
//! or `apphost serve` owns the runtime, stdin/stdout are relayed to its socket, so this client
//! shares the host's sessions. The relay adds the door's token (`app-server.token`) to the
//! client's `initialize` as `authToken` and otherwise passes the bytes through unchanged.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use runtime_core::app_server::door;
use serde_json::Value;

/// A line the relay inspects for `initialize` is at most this long; a longer one is passed on
/// as it is (the door refuses it).
const MAX_HANDSHAKE_LINE: u64 = 64 * 1024;

/// What answers at the door.
pub enum Door {
    /// A host serves it: relay to this stream with this token.
    Open(UnixStream, String),
    /// No socket, or nobody answers on it (a crashed host's file): own the runtime.
    Closed,
}

/// Connects to the door of the runtime in `runtime_dir`.
pub fn knock(runtime_dir: &Path) -> io::Result<Door> {
    let socket = door::socket_path(runtime_dir);
    let stream = match UnixStream::connect(&socket) {
        Ok(s) => s,
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Ok(Door::Closed)
        }
        Err(e) => return Err(e),
    };
    let token = std::fs::read_to_string(door::token_path(runtime_dir))?;
    Ok(Door::Open(stream, token.trim().to_owned()))
}

/// Removes a socket file nobody answers on, once this process owns the runtime (its lock):
/// no live host can be behind it.
pub fn remove_stale(runtime_dir: &Path) {
    let socket = door::socket_path(runtime_dir);
    if std::fs::symlink_metadata(&socket).is_ok() && UnixStream::connect(&socket).is_err() {
        let _ = std::fs::remove_file(&socket);
        let _ = std::fs::remove_file(door::token_path(runtime_dir));
    }
}

/// Relays `input`/`output` to the door until the client's input ends and the door has answered
/// everything (it closes the connection then). Plain blocking threads, one per direction: the
/// fewest hops per message.
pub fn relay(
    input: impl Read,
    output: impl Write + Send + 'static,
    stream: UnixStream,
    token: &str,
) -> io::Result<()> {
    let from_door = stream.try_clone()?;
    let answers = std::thread::spawn(move || -> io::Result<()> {
        let mut from_door = from_door;
        let mut output = output;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match from_door.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            output.write_all(&buf[..n])?;
            output.flush()?;
        }
        output.flush()
    });
    let mut to_door = &stream;
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut input)
            .take(MAX_HANDSHAKE_LINE)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        let (bytes, done) = with_token(&line, token);
        to_door.write_all(&bytes)?;
        if done {
            pass_on(&mut input, &mut to_door)?;
            break;
        }
    }
    stream.shutdown(std::net::Shutdown::Write)?;
    answers
        .join()
        .map_err(|_| io::Error::other("the relay's answer thread failed"))?
}

/// Copies what the client sends as it comes (no waiting for a full buffer).
fn pass_on(input: &mut impl BufRead, to_door: &mut impl Write) -> io::Result<()> {
    loop {
        let chunk = match input.fill_buf() {
            Ok([]) => return Ok(()),
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to_door.write_all(chunk)?;
        let n = chunk.len();
        input.consume(n);
    }
}

/// The line with `authToken` set when it is the `initialize` request (then `true`: the
/// handshake is relayed), else unchanged.
fn with_token(line: &[u8], token: &str) -> (Vec<u8>, bool) {
    let Ok(Value::Object(mut msg)) = serde_json::from_slice::<Value>(line) else {
        return (line.to_vec(), false);
    };
    if msg.get("method").and_then(Value::as_str) != Some("initialize") {
        return (line.to_vec(), false);
    }
    let params = msg
        .entry("params")
        .or_insert_with(|| Value::Object(Default::default()));
    let Value::Object(p) = params else {
        return (line.to_vec(), true);
    };
    p.insert("authToken".into(), Value::String(token.to_owned()));
    let mut out = serde_json::to_vec(&msg).unwrap_or_else(|_| line.to_vec());
    out.push(b'\n');
    (out, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_goes_into_initialize_only() {
        let (out, done) = with_token(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"x"}}}"#,
            "t0k",
        );
        assert!(done);
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["params"]["authToken"], "t0k");
        assert_eq!(v["params"]["clientInfo"]["name"], "x");
        let other = br#"{"jsonrpc":"2.0","id":2,"method":"capability/list"}"#;
        assert_eq!(with_token(other, "t0k"), (other.to_vec(), false));
        assert_eq!(
            with_token(b"not json\n", "t0k"),
            (b"not json\n".to_vec(), false)
        );
    }
}
