//! Time is an input. The event log stamps events with a [`Clock`]; the turn machine never reads
//! one.

use std::sync::atomic::{AtomicI64, Ordering};

pub trait Clock: Send + Sync {
    fn now(&self) -> jiff::Timestamp;
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> jiff::Timestamp {
        jiff::Timestamp::now()
    }
}

/// A clock for tests: starts at the given instant and advances 1 ms per reading.
#[derive(Debug)]
pub struct SteppingClock(AtomicI64);

impl SteppingClock {
    pub fn new(start_ms: i64) -> Self {
        SteppingClock(AtomicI64::new(start_ms))
    }
}

impl Clock for SteppingClock {
    fn now(&self) -> jiff::Timestamp {
        let ms = self.0.fetch_add(1, Ordering::Relaxed);
        jiff::Timestamp::from_millisecond(ms).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
    }
}
