//! Asynchronous [`Outgoing`]s: what the host sends a frame without the frame having just sent
//! something (today: `lime.agent` task events, produced on the agent runtime's own threads).
//! Producers push; a transport drains with [`AsyncOutbox::take`] or blocks in
//! [`AsyncOutbox::wait`] (without holding the `BridgeHost`, whose lock the producers never
//! take). Bounded: a full outbox makes producers wait (back-pressure) instead of dropping, so a
//! frame never misses an event it was sent; a frame that reloads resumes from a sequence.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::Outgoing;

/// Most outgoings waiting at once.
pub const OUTBOX_CAPACITY: usize = 4096;

/// Where a transport with its own event queue takes asynchronous outgoings at once.
pub type Forward = Arc<dyn Fn(Outgoing) + Send + Sync>;

#[derive(Default)]
pub struct AsyncOutbox {
    queue: Mutex<VecDeque<Outgoing>>,
    ready: Condvar,
    forward: Mutex<Option<Forward>>,
}

impl AsyncOutbox {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Outgoing>> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// From now on, hands every outgoing to `f` as it is pushed (what was queued first, in
    /// order): the command layer's outbox (`api::Session`) uses this, so a task event reaches
    /// `next_events` without a poll in between.
    pub fn forward_to(&self, f: Forward) {
        let mut fwd = self.forward.lock().unwrap_or_else(|p| p.into_inner());
        for o in self.take() {
            f(o);
        }
        *fwd = Some(f);
    }

    /// Queues `o` (or forwards it) unless the outbox is full (then `Err(o)`: try again later).
    pub fn try_push(&self, o: Outgoing) -> Result<(), Box<Outgoing>> {
        let fwd = self
            .forward
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(f) = fwd {
            f(o);
            return Ok(());
        }
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
    fn forwarding_hands_over_what_was_queued_then_each_push() {
        let o = AsyncOutbox::new();
        o.try_push(post("m", 0)).unwrap();
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = got.clone();
        o.forward_to(Arc::new(move |x| sink.lock().unwrap().push(x)));
        o.try_push(post("m", 1)).unwrap();
        assert_eq!(*got.lock().unwrap(), vec![post("m", 0), post("m", 1)]);
        assert!(o.is_empty());
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
