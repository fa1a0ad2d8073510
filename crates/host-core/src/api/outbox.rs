//! The outbox itself: a bounded queue of host→UI events with monotonic sequence numbers, read
//! by `next_events` (`events.rs`). Held by the [`Session`](super::Session); below both the
//! session and the event poll, so neither needs the other for it.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

/// Events kept for readers that are behind.
pub const OUTBOX_CAPACITY: usize = 1024;
/// Most events one answer carries (the reader asks again with the new `next`).
pub const MAX_BATCH: usize = 256;
/// Kind of the events carrying `Outgoing[]` (executed like a `bridge_message` answer).
pub const OUTGOING: &str = "outgoing";

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
