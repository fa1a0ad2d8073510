//! The stdio transport: one JSON message per line in, one per line out. Lines longer than the
//! limit are answered with `-32600` and skipped without being buffered whole; malformed JSON
//! gets `-32700`. Stdout carries only protocol lines (logs go to stderr via `tracing`).

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::{codes, decode_line, error_response, Connection, RpcError};
use crate::runtime::Runtime;

/// Default longest accepted line (bytes, without the newline).
pub const DEFAULT_MAX_LINE_BYTES: usize = 4 * 1024 * 1024;
/// Outbound queue (messages) between the handler/forwarders and the writer.
pub const OUTBOUND_QUEUE: usize = 1024;

#[derive(Clone)]
pub struct ServeConfig {
    pub runtime: Runtime,
    pub max_line_bytes: usize,
    /// Sessions the connection follows at most ([`super::MAX_SUBSCRIPTIONS`]).
    pub max_subscriptions: usize,
    /// The token `initialize` must carry (the door); `None` on stdio.
    pub token: Option<std::sync::Arc<str>>,
    /// Time a client has to complete `initialize` + `initialized` (the door); `None`: no limit.
    pub handshake_timeout: Option<std::time::Duration>,
    /// The host's extension methods (`host_methods`); `None`: only the standard ones.
    pub host_methods: Option<std::sync::Arc<super::host_methods::HostMethods>>,
    /// The client as host methods see it: set per connection by the door (its socket);
    /// the default (stdio) never hangs up.
    pub caller: super::host_methods::Caller,
}

impl ServeConfig {
    pub fn new(runtime: Runtime) -> Self {
        ServeConfig {
            runtime,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_subscriptions: super::MAX_SUBSCRIPTIONS,
            token: None,
            handshake_timeout: None,
            host_methods: None,
            caller: Default::default(),
        }
    }
}

/// A JSON-RPC error line (`id: null`) a transport sends before it closes a connection it
/// refuses (`data.code` names why).
pub(crate) fn refusal_line(code: i64, message: &str, data_code: &str) -> Vec<u8> {
    let e = RpcError::new(code, message).with(serde_json::json!({"code": data_code}));
    let mut line = serde_json::to_vec(&error_response(Value::Null, &e)).unwrap_or_default();
    line.push(b'\n');
    line
}

enum Line {
    Text(Vec<u8>),
    TooLong,
    Eof,
}

/// Reads one line of at most `max` bytes; longer lines are consumed and reported as too long.
async fn read_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    max: usize,
    buf: &mut Vec<u8>,
) -> std::io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Text(std::mem::take(buf))
            });
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if buf.len() + take > max {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        r.consume(if done { take + 1 } else { take });
        if done {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Text(std::mem::take(buf))
            });
        }
    }
}

/// Serves one client over a reader/writer pair until the reader ends. In-flight turns keep
/// running in the runtime; their events stay in the log.
pub async fn serve_stdio<R, W>(reader: R, writer: W, config: ServeConfig) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, mut rx) = mpsc::channel::<Value>(OUTBOUND_QUEUE);
    let write_task = tokio::spawn(async move {
        let mut w = writer;
        while let Some(msg) = rx.recv().await {
            let mut line = serde_json::to_vec(&msg).unwrap_or_default();
            line.push(b'\n');
            if w.write_all(&line).await.is_err() {
                return;
            }
            // Flush when nothing else is queued (batches bursts, keeps latency low).
            if rx.is_empty() && w.flush().await.is_err() {
                return;
            }
        }
        let _ = w.flush().await;
    });
    let mut conn = Connection::new(config.runtime.clone(), tx.clone())
        .with_max_subscriptions(config.max_subscriptions)
        .with_token(config.token.clone())
        .with_host_methods(config.host_methods.clone())
        .with_caller(config.caller.clone());
    let mut reader = reader;
    let mut buf = Vec::new();
    let deadline = config
        .handshake_timeout
        .map(|t| tokio::time::Instant::now() + t);
    loop {
        let next = read_line(&mut reader, config.max_line_bytes, &mut buf);
        let line = match deadline.filter(|_| !conn.is_ready()) {
            None => next.await?,
            Some(at) => match tokio::time::timeout_at(at, next).await {
                Ok(line) => line?,
                Err(_) => {
                    let e = RpcError::new(
                        codes::CONNECTION_REFUSED,
                        "Connection refused: initialize did not complete in time",
                    )
                    .with(serde_json::json!({"code": "appserver.handshake_timeout"}));
                    let _ = tx.send(error_response(Value::Null, &e)).await;
                    break;
                }
            },
        };
        let response = match line {
            Line::Eof => break,
            Line::TooLong => Some(error_response(
                Value::Null,
                &RpcError::new(
                    codes::INVALID_REQUEST,
                    format!(
                        "Invalid request: line longer than {} bytes",
                        config.max_line_bytes
                    ),
                ),
            )),
            Line::Text(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let text = text.trim();
                if text.is_empty() {
                    continue;
                }
                match decode_line(text) {
                    Ok(msg) => conn.handle_message(msg).await,
                    Err(err) => Some(err),
                }
            }
        };
        if let Some(r) = response {
            if tx.send(r).await.is_err() {
                break;
            }
        }
        if conn.should_close() {
            break;
        }
    }
    drop(conn);
    drop(tx);
    let _ = write_task.await;
    Ok(())
}
