//! The outbox: host→UI pushes (mounts ended by another process, install progress, bridge
//! actions produced off the request path) read by one long poll, `next_events {after, timeoutMs}`.
//!
//! Events get a monotonic sequence number (from 1). The queue is bounded ([`OUTBOX_CAPACITY`]):
//! when it is full the oldest event is dropped, and a reader that was behind learns how many it
//! missed (`missed`). A wait lasts at most [`MAX_WAIT`]; while it waits, the mount watcher
//! ([`super::watch::sync`]) runs every [`WATCH_EVERY`] (100 ms), so a store changed by another
//! process shows up as events promptly, without a second poll loop.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{answer, args, Command, Session};
use crate::foundation::error::HostResult;

/// Events kept for readers that are behind.
pub const OUTBOX_CAPACITY: usize = 1024;
/// Most events one answer carries (the reader asks again with the new `next`).
pub const MAX_BATCH: usize = 256;
/// Longest wait of one `next_events` call.
pub const MAX_WAIT: Duration = Duration::from_secs(25);
/// How often a waiting `next_events` checks the store for changes by other processes. An
/// unchanged store costs two `stat` calls (see [`super::watch::StoreStamp`]), so checking every
/// 100 ms keeps an idle window near zero CPU while `apphost dev`'s commit reaches the window
/// within about 100 ms (it waited up to a second before).
pub const WATCH_EVERY: Duration = Duration::from_millis(100);

/// Kind of the events carrying `Outgoing[]` (executed like a `bridge_message` answer).
pub const OUTGOING: &str = "outgoing";

pub const COMMANDS: &[Command] = &[Command {
    name: "next_events",
    run: next_events,
}];

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Event {
    pub seq: u64,
    pub kind: String,
    pub payload: Value,
}

/// One answer of `next_events`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Batch {
    pub events: Vec<Event>,
    /// The `after` of the next call.
    pub next: u64,
    /// Events after `after` that were dropped before this reader saw them.
    pub missed: u64,
}

#[derive(Default)]
struct Queue {
    events: VecDeque<Event>,
    last_seq: u64,
}

#[derive(Default)]
pub struct Outbox {
    queue: Mutex<Queue>,
    ready: Condvar,
}

impl Outbox {
    pub fn new() -> Self {
        Outbox::default()
    }

    /// Queues one event and wakes the readers. Returns its sequence number.
    pub fn push(&self, kind: &str, payload: Value) -> u64 {
        let Ok(mut queue) = self.queue.lock() else {
            return 0;
        };
        queue.last_seq += 1;
        let seq = queue.last_seq;
        if queue.events.len() == OUTBOX_CAPACITY {
            queue.events.pop_front();
        }
        queue.events.push_back(Event {
            seq,
            kind: kind.to_owned(),
            payload,
        });
        drop(queue);
        self.ready.notify_all();
        seq
    }

    /// The newest sequence number handed out (0 before the first event).
    pub fn last_seq(&self) -> u64 {
        self.queue.lock().map(|q| q.last_seq).unwrap_or(0)
    }

    /// The events after `after`, waiting up to `timeout` for one when there is none yet. An
    /// `after` from the future (a reader of an earlier session) reads from the start.
    pub fn wait_after(&self, after: u64, timeout: Duration) -> Batch {
        let deadline = Instant::now() + timeout;
        let Ok(mut queue) = self.queue.lock() else {
            return Batch {
                events: Vec::new(),
                next: after,
                missed: 0,
            };
        };
        loop {
            let after = if after > queue.last_seq { 0 } else { after };
            if queue.last_seq > after {
                return read(&queue, after);
            }
            let now = Instant::now();
            if now >= deadline {
                return Batch {
                    events: Vec::new(),
                    next: after,
                    missed: 0,
                };
            }
            queue = match self.ready.wait_timeout(queue, deadline - now) {
                Ok((queue, _)) => queue,
                Err(_) => {
                    return Batch {
                        events: Vec::new(),
                        next: after,
                        missed: 0,
                    }
                }
            };
        }
    }
}

fn read(queue: &Queue, after: u64) -> Batch {
    let first_kept = queue.events.front().map_or(queue.last_seq + 1, |e| e.seq);
    let missed = first_kept.saturating_sub(after + 1);
    let events: Vec<Event> = queue
        .events
        .iter()
        .filter(|e| e.seq > after)
        .take(MAX_BATCH)
        .cloned()
        .collect();
    let next = events.last().map_or(after, |e| e.seq);
    Batch {
        events,
        next,
        missed,
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "NextEventsArgs")]
pub(crate) struct NextEvents {
    #[serde(default)]
    after: u64,
    #[serde(default)]
    timeout_ms: u64,
}

/// `next_events {after, timeoutMs}`: the events after `after`, waiting up to `timeoutMs`
/// (at most 25 s) for one. Runs the mount watcher while it waits.
fn next_events(session: &Session, raw: Value) -> HostResult<Value> {
    let a: NextEvents = args("next_events", raw)?;
    let deadline = Instant::now() + Duration::from_millis(a.timeout_ms).min(MAX_WAIT);
    loop {
        if let Err(e) = super::watch::sync(session) {
            tracing::debug!(
                code = e.code.as_str(),
                "mount watcher: store not readable now"
            );
        }
        super::dev_console::check_connections(session);
        let left = deadline.saturating_duration_since(Instant::now());
        let batch = session.outbox.wait_after(a.after, left.min(WATCH_EVERY));
        if !batch.events.is_empty() || batch.missed > 0 || left <= WATCH_EVERY {
            return answer(batch);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn readers_get_the_events_after_their_cursor_in_order() {
        let outbox = Outbox::new();
        assert_eq!(outbox.wait_after(0, Duration::ZERO).events, vec![]);
        assert_eq!(outbox.push("a", Value::Null), 1);
        assert_eq!(outbox.push("b", Value::from(2)), 2);
        let batch = outbox.wait_after(0, Duration::ZERO);
        assert_eq!(batch.next, 2);
        assert_eq!(
            batch
                .events
                .iter()
                .map(|e| e.kind.as_str())
                .collect::<Vec<_>>(),
            ["a", "b"]
        );
        let batch = outbox.wait_after(1, Duration::ZERO);
        assert_eq!(batch.events.len(), 1);
        assert_eq!(batch.events[0].payload, Value::from(2));
        assert!(outbox.wait_after(2, Duration::ZERO).events.is_empty());
        // A cursor from an earlier session reads from the start.
        assert_eq!(outbox.wait_after(99, Duration::ZERO).events.len(), 2);
    }

    #[test]
    fn the_queue_is_bounded_and_a_slow_reader_learns_what_it_missed() {
        let outbox = Outbox::new();
        let total = OUTBOX_CAPACITY as u64 + 10;
        for i in 0..total {
            outbox.push("e", Value::from(i));
        }
        let batch = outbox.wait_after(0, Duration::ZERO);
        assert_eq!(batch.missed, 10);
        assert_eq!(batch.events.len(), MAX_BATCH);
        assert_eq!(batch.events[0].seq, 11);
        let mut after = batch.next;
        let mut seen = batch.events.len();
        loop {
            let b = outbox.wait_after(after, Duration::ZERO);
            if b.events.is_empty() {
                break;
            }
            assert_eq!(b.missed, 0);
            assert_eq!(b.events[0].seq, after + 1, "no gap, no repeat");
            seen += b.events.len();
            after = b.next;
        }
        assert_eq!(seen, OUTBOX_CAPACITY);
        assert_eq!(after, total);
    }

    #[test]
    fn a_waiting_reader_wakes_on_push_and_times_out_without() {
        let outbox = Arc::new(Outbox::new());
        let started = Instant::now();
        assert!(outbox
            .wait_after(0, Duration::from_millis(50))
            .events
            .is_empty());
        assert!(started.elapsed() >= Duration::from_millis(50));
        let writer = Arc::clone(&outbox);
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            writer.push("late", Value::Null)
        });
        let started = Instant::now();
        let batch = outbox.wait_after(0, Duration::from_secs(10));
        assert_eq!(batch.events.len(), 1);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(t.join().unwrap(), 1);
    }
}
