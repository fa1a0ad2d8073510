//! Asynchronous [`Outgoing`]s: what the host sends a frame without the frame having just sent
//! something (today: `lime.agent` task events, produced on the agent runtime's own threads).
//! Producers push; a transport drains with [`AsyncOutbox::take`] or blocks in
//! [`AsyncOutbox::wait`] (without holding the `BridgeHost`, whose lock the producers never
//! take). Bounded: a full outbox makes producers wait (back-pressure) instead of dropping, so a
//! frame never misses an event it was sent; a frame that reloads resumes from a sequence.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::Outgoing;

/// Most outgoings waiting at once.
pub const OUTBOX_CAPACITY: usize = 4096;

#[derive(Default)]
pub struct AsyncOutbox {
    queue: Mutex<VecDeque<Outgoing>>,
    ready: Condvar,
}

impl AsyncOutbox {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Outgoing>> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `o` unless the outbox is full (then `Err(o)`: try again later).
    pub fn try_push(&self, o: Outgoing) -> Result<(), Box<Outgoing>> {
        let mut q = self.lock();
        if q.len() >= OUTBOX_CAPACITY {
            return Err(Box::new(o));
        }
        q.push_back(o);
        drop(q);
        self.ready.notify_all();
        Ok(())
    }

    /// Everything queued, oldest first (empty when nothing is).
    pub fn take(&self) -> Vec<Outgoing> {
        self.lock().drain(..).collect()
    }

    /// Waits up to `timeout` for something to be queued, then takes everything.
    pub fn wait(&self, timeout: Duration) -> Vec<Outgoing> {
        let deadline = Instant::now() + timeout;
        let mut q = self.lock();
        while q.is_empty() {
            let now = Instant::now();
            if now >= deadline {
                return Vec::new();
            }
            q = self
                .ready
                .wait_timeout(q, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        q.drain(..).collect()
    }

    /// Drops what is queued for `mount_id` (the frame went away).
    pub fn forget_mount(&self, mount_id: &str) {
        self.lock().retain(|o| match o {
            Outgoing::Post { mount_id: m, .. } => m != mount_id,
            _ => true,
        });
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn post(m: &str, n: u64) -> Outgoing {
        Outgoing::Post {
            mount_id: m.into(),
            message: json!({ "n": n }),
        }
    }

    #[test]
    fn wait_wakes_on_a_push_from_another_thread_and_keeps_order() {
        let o = Arc::new(AsyncOutbox::new());
        let p = o.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            for n in 0..3 {
                p.try_push(post("m", n)).unwrap();
            }
        });
        let mut got = o.wait(Duration::from_secs(5));
        t.join().unwrap();
        got.extend(o.take());
        assert_eq!(got, vec![post("m", 0), post("m", 1), post("m", 2)]);
        assert!(o.wait(Duration::from_millis(10)).is_empty());
    }

    #[test]
    fn a_full_outbox_refuses_instead_of_dropping_and_forget_mount_clears_one_frame() {
        let o = AsyncOutbox::new();
        for n in 0..OUTBOX_CAPACITY as u64 {
            o.try_push(post(if n % 2 == 0 { "a" } else { "b" }, n))
                .unwrap();
        }
        assert_eq!(o.try_push(post("a", 9)), Err(Box::new(post("a", 9))));
        o.forget_mount("a");
        assert_eq!(o.len(), OUTBOX_CAPACITY / 2);
        assert!(o
            .take()
            .iter()
            .all(|x| matches!(x, Outgoing::Post { mount_id, .. } if mount_id == "b")));
    }
}
