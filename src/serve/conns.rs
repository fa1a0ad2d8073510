//! Which connections are waiting for a request head, so slow or half-sent heads cannot take
//! every connection `apphost serve` has.
//!
//! Every connection is *waiting* from its accept until its first request head is complete, and
//! again after each answer (an idle keep-alive connection waits for its next head). At most
//! [`HeadWaiters::new`]'s `cap` connections wait at once: admitting one more drops the one that
//! has waited longest. A client that opens hundreds of connections and sends half a head on each
//! only ever holds `cap` of them, each for less time the faster new connections arrive, while a
//! real request (a complete head sent at once) leaves the queue as soon as hyper parsed it and is
//! answered. A dropped idle keep-alive connection costs a browser one reconnect.
//!
//! The choice is made under one lock: a connection is either chosen (and dropped, even if its
//! head completes in the same instant) or it left the queue first (and is served).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// One connection's place: its ticket in the queue (if waiting) and how it is told to close.
#[derive(Debug, Default)]
pub struct Waiter {
    ticket: Mutex<Option<u64>>,
    dropped: Notify,
}

impl Waiter {
    /// Resolves once this connection was chosen to make room (at once if it already was).
    pub async fn dropped(&self) {
        self.dropped.notified().await;
    }
}

#[derive(Debug, Default)]
struct Queue {
    next: u64,
    /// Ticket (admission order) -> connection.
    waiting: BTreeMap<u64, Arc<Waiter>>,
}

/// The connections waiting for a request head, oldest first.
#[derive(Debug)]
pub struct HeadWaiters {
    cap: usize,
    queue: Mutex<Queue>,
}

impl HeadWaiters {
    pub fn new(cap: usize) -> Self {
        HeadWaiters {
            cap: cap.max(1),
            queue: Mutex::new(Queue::default()),
        }
    }

    /// A new connection, waiting for its first head (it may push out the oldest waiter).
    pub fn admit(&self) -> Arc<Waiter> {
        let waiter = Arc::new(Waiter::default());
        self.wait(&waiter);
        waiter
    }

    /// `waiter` waits for a head again (after an answer). Makes room first if the queue is full.
    pub fn wait(&self, waiter: &Arc<Waiter>) {
        let mut q = self.lock();
        while q.waiting.len() >= self.cap {
            match q.waiting.pop_first() {
                Some((_, oldest)) => {
                    if let Ok(mut t) = oldest.ticket.lock() {
                        *t = None;
                    }
                    oldest.dropped.notify_one();
                }
                None => break,
            }
        }
        let ticket = q.next;
        q.next += 1;
        q.waiting.insert(ticket, Arc::clone(waiter));
        if let Ok(mut t) = waiter.ticket.lock() {
            *t = Some(ticket);
        }
    }

    /// `waiter`'s head is complete: it leaves the queue. False if it was chosen to be dropped.
    pub fn leave(&self, waiter: &Waiter) -> bool {
        let mut q = self.lock();
        let ticket = waiter.ticket.lock().ok().and_then(|mut t| t.take());
        match ticket {
            Some(t) => q.waiting.remove(&t).is_some(),
            None => false,
        }
    }

    /// The connection ended: it no longer counts.
    pub fn forget(&self, waiter: &Waiter) {
        let _ = self.leave(waiter);
    }

    /// How many connections wait for a head now.
    pub fn len(&self) -> usize {
        self.lock().waiting.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        // A panic while holding this lock cannot leave the map inconsistent: keep serving.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_its_oldest_waiter() {
        let q = HeadWaiters::new(2);
        let a = q.admit();
        let b = q.admit();
        assert_eq!(q.len(), 2);
        let c = q.admit();
        assert_eq!(q.len(), 2);
        assert!(!q.leave(&a), "a was dropped to make room");
        assert!(q.leave(&b) && q.leave(&c));
        assert!(q.is_empty());
    }

    #[test]
    fn a_served_connection_is_not_dropped_and_waits_again_at_the_back() {
        let q = HeadWaiters::new(2);
        let a = q.admit();
        let b = q.admit();
        assert!(q.leave(&a), "a's head is complete");
        let c = q.admit();
        q.wait(&a); // answered: waits for its next head, now the youngest
        assert!(!q.leave(&b), "b waited longest");
        assert!(q.leave(&c) && q.leave(&a));
        q.forget(&a);
        assert!(q.is_empty());
    }

    #[tokio::test]
    async fn the_dropped_connection_is_told() {
        let q = HeadWaiters::new(1);
        let a = q.admit();
        let _b = q.admit();
        tokio::time::timeout(std::time::Duration::from_secs(1), a.dropped())
            .await
            .expect("a is told to close");
    }
}
