//! Keeps each server's session: started on demand, restarted after it dies or times out with
//! an exponential backoff (200 ms doubling to 30 s; a call during the backoff is
//! `tools.server_unavailable` with `retryAfterMs`), restarted when its definition changes, and
//! stopped (process group killed and reaped) by [`Supervisor::shutdown`] or on drop. The
//! sessions live on the supervisor's own current-thread tokio runtime; callers block on it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::connection::{unavailable, Connection};
use super::spec::{ServerSpec, ToolInfo};
use super::stdio_pipes::SharedRing;
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::install::secrets::SecretValue;

const BACKOFF_FIRST: Duration = Duration::from_millis(200);
const BACKOFF_MAX: Duration = Duration::from_secs(30);

#[derive(Default)]
struct Slot {
    spec: Option<ServerSpec>,
    conn: Option<Arc<Connection>>,
    failures: u32,
    retry_at: Option<Instant>,
    last_error: Option<String>,
    stderr: SharedRing,
    starts: u32,
}

/// What `tools list` shows of a server's process.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    /// `running`, `stopped` or `backoff`.
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    pub failures: u32,
    pub starts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    pub stderr_tail: String,
    pub stderr_dropped: u64,
}

pub struct Supervisor {
    rt: tokio::runtime::Runtime,
    slots: Mutex<HashMap<String, Slot>>,
    /// One gate per server: callers on several threads (the workflow driver's) that find it
    /// not running start it once; the others wait for that start and share it.
    gates: Mutex<HashMap<String, Arc<Mutex<()>>>>,
}

impl Supervisor {
    pub fn new() -> HostResult<Supervisor> {
        // A current-thread runtime: the sessions' tasks run on whichever caller is blocked on a
        // call (no cross-thread wake-up per message); between calls they wait, which a server
        // sees only as back-pressure on its pipes.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| unavailable("*", e))?;
        Ok(Supervisor {
            rt,
            slots: Mutex::new(HashMap::new()),
            gates: Mutex::new(HashMap::new()),
        })
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The running session of `server`, started if needed. `secrets` resolves the spec's
    /// secrets, called only when a process is started.
    pub fn session(
        &self,
        server: &str,
        spec: &ServerSpec,
        secrets: impl FnOnce() -> HostResult<Vec<(String, SecretValue)>>,
    ) -> HostResult<Arc<Connection>> {
        let gate = self
            .gates
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(server.to_owned())
            .or_default()
            .clone();
        let _starting = gate.lock().unwrap_or_else(|p| p.into_inner());
        let stderr = {
            let mut slots = self.slots();
            let slot = slots.entry(server.to_owned()).or_default();
            if slot.spec.as_ref() != Some(spec) {
                if let Some(old) = slot.conn.take() {
                    self.stop_conn(old);
                }
                slot.failures = 0;
                slot.retry_at = None;
                slot.spec = Some(spec.clone());
            }
            if let Some(conn) = &slot.conn {
                if conn.is_alive() {
                    return Ok(conn.clone());
                }
                let dead = slot.conn.take().expect("some");
                slot.failures += 1;
                slot.retry_at = Some(Instant::now() + backoff(slot.failures));
                slot.last_error = Some("the server exited".to_owned());
                self.stop_conn(dead);
            }
            if let Some(at) = slot.retry_at {
                let now = Instant::now();
                if at > now {
                    return Err(unavailable(
                        server,
                        slot.last_error.as_deref().unwrap_or("restarting"),
                    )
                    .with("retryAfterMs", (at - now).as_millis() as u64));
                }
            }
            slot.starts += 1;
            slot.stderr.clone()
        };
        let opened =
            secrets().and_then(|s| self.rt.block_on(Connection::open(server, spec, s, stderr)));
        let mut slots = self.slots();
        let slot = slots.entry(server.to_owned()).or_default();
        match opened {
            Ok(conn) => {
                let conn = Arc::new(conn);
                slot.conn = Some(conn.clone());
                slot.retry_at = None;
                slot.last_error = None;
                Ok(conn)
            }
            Err(e) => {
                slot.failures += 1;
                slot.retry_at = Some(Instant::now() + backoff(slot.failures));
                slot.last_error = Some(e.message.clone());
                Err(e)
            }
        }
    }

    /// The tools the running session listed (starting it if needed).
    pub fn tools(
        &self,
        server: &str,
        spec: &ServerSpec,
        secrets: impl FnOnce() -> HostResult<Vec<(String, SecretValue)>>,
    ) -> HostResult<Vec<ToolInfo>> {
        Ok(self.session(server, spec, secrets)?.tools.clone())
    }

    /// Runs a call on `conn`; a call that failed because the server died, timed out or broke
    /// the protocol ends the session (killing a stuck process) and arms the backoff.
    pub fn call(
        &self,
        server: &str,
        conn: Arc<Connection>,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        timeout: Duration,
    ) -> HostResult<rmcp::model::CallToolResult> {
        self.call_until(server, conn, tool, arguments, timeout, None)
    }

    /// [`Self::call`] that also ends when `cancel` fires (an agent turn cancelled): the call's
    /// future is dropped, so rmcp sends `notifications/cancelled`; `tools.cancelled`.
    pub fn call_until(
        &self,
        server: &str,
        conn: Arc<Connection>,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        timeout: Duration,
        cancel: Option<runtime_core::backend::CancelSignal>,
    ) -> HostResult<rmcp::model::CallToolResult> {
        let result = self.rt.block_on(async {
            let Some(mut cancel) = cancel else {
                return conn.call(server, tool, arguments, timeout).await;
            };
            tokio::select! {
                r = conn.call(server, tool, arguments, timeout) => r,
                () = cancel.cancelled() => {
                    super::connection::cancel_grace().await;
                    Err(HostError::new(
                        ErrorCode::ToolsCancelled,
                        format!("{server}/{tool} was cancelled with its agent turn"),
                    )
                    .with("server", server))
                }
            }
        });
        if let Err(e) = &result {
            let broken = match e.code {
                ErrorCode::ToolsTimeout | ErrorCode::ToolsServerUnavailable => true,
                ErrorCode::ToolsBadResponse => conn.violation().is_some(),
                _ => false,
            };
            if broken {
                self.fail(server, conn, e);
            }
        }
        result
    }

    /// Ends `conn`'s session after a broken call: killed now, reaped when no call holds it,
    /// and the backoff armed.
    fn fail(&self, server: &str, conn: Arc<Connection>, e: &HostError) {
        conn.kill();
        let mut slots = self.slots();
        let Some(slot) = slots.get_mut(server) else {
            return;
        };
        if slot.conn.as_ref().is_some_and(|c| Arc::ptr_eq(c, &conn)) {
            slot.conn = None;
            slot.failures += 1;
            slot.retry_at = Some(Instant::now() + backoff(slot.failures));
            slot.last_error = Some(e.message.clone());
            drop(slots);
            self.stop_conn(conn);
        }
    }

    fn stop_conn(&self, conn: Arc<Connection>) {
        conn.kill();
        // Reaped here when no other call holds it; else when the last holder drops it (tokio
        // reaps a killed child it no longer owns).
        // Inside an async context (a runtime dropped on a worker thread) blocking would panic:
        // the killed child is then left to tokio's orphan reaper.
        if let Ok(c) = Arc::try_unwrap(conn) {
            if tokio::runtime::Handle::try_current().is_err() {
                self.rt.block_on(c.close());
            }
        }
    }

    pub fn status(&self, server: &str) -> ServerStatus {
        let slots = self.slots();
        let empty = Slot::default();
        let slot = slots.get(server).unwrap_or(&empty);
        let (tail, dropped) = slot.stderr.lock().map(|r| r.tail()).unwrap_or_default();
        let state = if slot.conn.is_some() {
            "running"
        } else if slot.retry_at.is_some_and(|t| t > Instant::now()) {
            "backoff"
        } else {
            "stopped"
        };
        ServerStatus {
            state,
            pid: slot.conn.as_ref().and_then(|c| c.pid),
            failures: slot.failures,
            starts: slot.starts,
            last_error: slot.last_error.clone(),
            stderr_tail: tail,
            stderr_dropped: dropped,
        }
    }

    /// Stops one server (after `tools remove`).
    pub fn stop(&self, server: &str) {
        let conn = self.slots().remove(server).and_then(|s| s.conn);
        if let Some(c) = conn {
            self.stop_conn(c);
        }
    }

    /// Stops every server: process groups killed and reaped.
    pub fn shutdown(&self) {
        let conns: Vec<_> = self
            .slots()
            .values_mut()
            .filter_map(|s| s.conn.take())
            .collect();
        for c in conns {
            self.stop_conn(c);
        }
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn backoff(failures: u32) -> Duration {
    let exp = failures.saturating_sub(1).min(16);
    (BACKOFF_FIRST * 2u32.saturating_pow(exp)).min(BACKOFF_MAX)
}
