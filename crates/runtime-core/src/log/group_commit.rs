//! Group commit: the flusher thread that writes pending events in one transaction per
//! `max_delay` or `max_events`, the final flush when the log closes, and the test-only crash
//! point inside a batch.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::ids::SessionId;

use super::*;

/// Test-only crash point (`APPHOST_LOG_CRASH_AT`, read once): `flush-mid-batch` aborts the
/// process inside the third group-commit batch, after half its rows are written and before it
/// commits (the first two batches commit, so the crash lands mid-stream).
#[cfg(not(feature = "failpoints"))]
pub(super) fn crash_point(_: &str) {}

#[cfg(feature = "failpoints")]
pub(super) fn crash_point(name: &str) {
    static AT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    static HITS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    if AT
        .get_or_init(|| std::env::var("APPHOST_LOG_CRASH_AT").ok())
        .as_deref()
        == Some(name)
        && HITS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 2
    {
        eprintln!("event log: crash point {name}");
        std::process::abort();
    }
}

/// Writes every pending event in one transaction (with the reservations of their sessions
/// moved ahead), without holding the state lock while it commits: deltas keep being published
/// meanwhile. Serialized with durable appends by the `conn` lock.
pub(super) fn flush_pending(inner: &Inner) -> Result<(), LogError> {
    let mut conn = lock(&inner.conn);
    let (batch, reservations) = {
        let st = lock(&inner.shared.state);
        if st.pending.is_empty() {
            return Ok(());
        }
        let mut res: Vec<(SessionId, u64)> = Vec::new();
        for e in &st.pending {
            if !res.iter().any(|(s, _)| s == &e.session_id) {
                let s = &st.sessions[&e.session_id];
                let through = if st.closing {
                    s.last_sequence
                } else {
                    s.reserved.max(s.last_sequence + RESERVATION_BLOCK)
                };
                res.push((e.session_id.clone(), through));
            }
        }
        (st.pending.clone(), res)
    };
    let tx = conn.transaction()?;
    insert_events(&tx, &batch[..batch.len() / 2])?;
    crash_point("flush-mid-batch");
    insert_events(&tx, &batch[batch.len() / 2..])?;
    for (s, through) in &reservations {
        put_reservation(&tx, s, *through)?;
    }
    tx.commit()?;
    let mut st = lock(&inner.shared.state);
    // Only flushes and durable appends (both under `conn`) remove pending events, and new ones
    // are pushed at the end: the batch is still the prefix.
    st.pending.drain(..batch.len());
    st.pending_since = if st.pending.is_empty() {
        None
    } else {
        Some(Instant::now())
    };
    for (s, through) in reservations {
        if let Some(state) = st.sessions.get_mut(&s) {
            // A reservation never drops below a pending sequence.
            state.reserved = if through >= state.last_sequence {
                through
            } else {
                state.reserved.max(through)
            };
        }
    }
    Ok(())
}

/// The group-commit thread: flushes when the oldest pending event is `max_delay` old or
/// `max_events` are pending; ends when the log is closed. It holds the log itself only while
/// flushing, so dropping the last handle closes the log at once.
pub(super) fn flusher(shared: Arc<Shared>, group: GroupCommit, weak: Weak<Inner>) {
    loop {
        {
            let mut st = lock(&shared.state);
            loop {
                if st.closing {
                    return;
                }
                let now = Instant::now();
                match st.pending_since {
                    Some(t)
                        if st.pending.len() >= group.max_events || now >= t + group.max_delay =>
                    {
                        break
                    }
                    Some(t) => {
                        st = shared
                            .wake
                            .wait_timeout(st, t + group.max_delay - now)
                            .unwrap_or_else(|p| p.into_inner())
                            .0;
                    }
                    None => {
                        st = shared.wake.wait(st).unwrap_or_else(|p| p.into_inner());
                    }
                }
            }
        }
        let Some(inner) = weak.upgrade() else { return };
        if let Err(e) = flush_pending(&inner) {
            lock(&shared.state).flush_failures += 1;
            tracing::error!(error = %e, "event log: group commit failed; retrying");
            drop(inner);
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Inner {
    /// A clean close: pending events become durable and every reservation is trimmed to the
    /// session's last event, so the next open declares no loss.
    fn drop(&mut self) {
        lock(&self.shared.state).closing = true;
        self.shared.wake.notify_all();
        if let Err(e) = flush_pending(self) {
            tracing::error!(error = %e, "event log: final flush failed");
            return;
        }
        let conn = self.conn.get_mut().unwrap_or_else(|p| p.into_inner());
        let _ = conn.execute(
            "UPDATE reservations SET through = (SELECT COALESCE(MAX(sequence), 0) FROM events \
             WHERE events.session_id = reservations.session_id)",
            [],
        );
    }
}
