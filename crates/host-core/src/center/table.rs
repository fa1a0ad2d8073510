//! A bounded table of values keyed by random ids that expire: what the center keeps between
//! two calls of the host UI. Dropping a value (taken, evicted, expired) runs its `Drop`, which
//! is how an upload's file goes away with it.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::foundation::error::HostResult;

pub(crate) struct Table<T> {
    items: HashMap<String, (Instant, T)>,
    max: usize,
    ttl: Duration,
    /// Starts every id (`r-` reviews, `u-` uploads): an id says what it names.
    prefix: &'static str,
}

impl<T> Table<T> {
    pub fn new(prefix: &'static str, max: usize, ttl: Duration) -> Self {
        Table {
            items: HashMap::new(),
            max: max.max(1),
            ttl,
            prefix,
        }
    }

    /// Drops expired values, then the oldest ones until there is room for one more.
    fn make_room(&mut self, now: Instant) {
        let ttl = self.ttl;
        self.items
            .retain(|_, (at, _)| now.saturating_duration_since(*at) < ttl);
        while self.items.len() >= self.max {
            let Some(oldest) = self
                .items
                .iter()
                .min_by_key(|(_, (at, _))| *at)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            self.items.remove(&oldest);
        }
    }

    /// Keeps `value` under a new random id.
    pub fn insert(&mut self, value: T) -> HostResult<String> {
        let now = Instant::now();
        self.make_room(now);
        let id = format!("{}{}", self.prefix, super::random_id()?);
        self.items.insert(id.clone(), (now, value));
        Ok(id)
    }

    /// Removes and answers the value of `id`, unless it expired.
    pub fn take(&mut self, id: &str) -> Option<T> {
        let (at, v) = self.items.remove(id)?;
        (at.elapsed() < self.ttl).then_some(v)
    }

    /// The value of `id`, unless it expired.
    pub fn get(&self, id: &str) -> Option<&T> {
        let (at, v) = self.items.get(id)?;
        (at.elapsed() < self.ttl).then_some(v)
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.items.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    struct Counted(Rc<Cell<u32>>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }

    #[test]
    fn ids_are_random_128_bit_hex_and_values_are_used_once() {
        let mut t = Table::new("t-", 4, Duration::from_secs(60));
        let a = t.insert(1).unwrap();
        let b = t.insert(2).unwrap();
        assert_eq!(a.len(), 34);
        assert!(a.starts_with("t-"));
        assert!(a[2..].chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert_eq!(t.get(&a), Some(&1));
        assert_eq!(t.take(&a), Some(1));
        assert_eq!(t.take(&a), None);
        assert_eq!(t.take("not-an-id"), None);
    }

    #[test]
    fn the_oldest_value_is_dropped_when_full() {
        let dropped = Rc::new(Cell::new(0));
        let mut t = Table::new("t-", 2, Duration::from_secs(60));
        let first = t.insert(Counted(dropped.clone())).unwrap();
        t.insert(Counted(dropped.clone())).unwrap();
        t.insert(Counted(dropped.clone())).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(dropped.get(), 1, "the evicted value was dropped");
        assert!(t.take(&first).is_none(), "the oldest was the one evicted");
    }

    #[test]
    fn expired_values_are_not_answered_and_are_dropped() {
        let dropped = Rc::new(Cell::new(0));
        let mut t = Table::new("t-", 4, Duration::from_millis(0));
        let id = t.insert(Counted(dropped.clone())).unwrap();
        assert!(t.get(&id).is_none());
        assert!(t.take(&id).is_none());
        assert_eq!(dropped.get(), 1);
    }
}
