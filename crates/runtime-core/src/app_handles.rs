//! [`AppHandles`]: the open per-app handles of one kind (an app's artifact store, evidence
//! database, storage file), opened on first use and closed when the app stops, is disabled,
//! updated or uninstalled. One type for every such cache, so "open once, reopen when stale,
//! close on the app's way out" is written once.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

/// Open handles keyed by app name.
#[derive(Debug)]
pub struct AppHandles<T> {
    open: HashMap<String, T>,
}

impl<T> Default for AppHandles<T> {
    fn default() -> Self {
        AppHandles {
            open: HashMap::new(),
        }
    }
}

impl<T> AppHandles<T> {
    /// `app`'s handle, opened with `open` on first use. A failed open caches nothing.
    pub fn get_or_open<E>(
        &mut self,
        app: &str,
        open: impl FnOnce() -> Result<T, E>,
    ) -> Result<&mut T, E> {
        Ok(match self.open.entry(app.to_owned()) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(open()?),
        })
    }

    /// `app`'s handle if `fresh` accepts the open one; otherwise the open one is closed first
    /// (before `open` runs) and replaced. A failed open leaves `app` with no handle.
    pub fn get_or_reopen<E>(
        &mut self,
        app: &str,
        fresh: impl FnOnce(&T) -> bool,
        open: impl FnOnce() -> Result<T, E>,
    ) -> Result<&mut T, E> {
        if self.open.get(app).is_some_and(|h| !fresh(h)) {
            self.open.remove(app);
        }
        self.get_or_open(app, open)
    }

    /// Whether `app` has an open handle.
    pub fn is_open(&self, app: &str) -> bool {
        self.open.contains_key(app)
    }

    /// Closes `app`'s handle (dropping it), if open.
    pub fn close(&mut self, app: &str) -> Option<T> {
        self.open.remove(app)
    }

    /// How many handles are open.
    pub fn len(&self) -> usize {
        self.open.len()
    }

    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_once_and_a_failed_open_caches_nothing() {
        let mut h: AppHandles<u32> = AppHandles::default();
        let mut opened = 0;
        for _ in 0..3 {
            let v = h
                .get_or_open("a", || {
                    opened += 1;
                    Ok::<_, ()>(7)
                })
                .unwrap();
            assert_eq!(*v, 7);
        }
        assert_eq!(opened, 1);
        assert_eq!(h.get_or_open("b", || Err("refused")), Err("refused"));
        assert!(!h.is_open("b"));
        assert_eq!(h.len(), 1);
        assert_eq!(h.close("a"), Some(7));
        assert!(h.is_empty());
    }

    #[test]
    fn a_stale_handle_is_closed_before_the_reopen() {
        let mut h: AppHandles<&str> = AppHandles::default();
        h.get_or_open("a", || Ok::<_, ()>("v1")).unwrap();
        let kept = h.get_or_reopen("a", |v| *v == "v1", || Ok::<_, ()>("other"));
        assert_eq!(kept.map(|v| *v), Ok("v1"));
        assert_eq!(
            h.get_or_reopen("a", |v| *v == "v2", || Err::<&str, _>("refused")),
            Err("refused")
        );
        assert!(
            !h.is_open("a"),
            "the stale handle is gone even though the reopen failed"
        );
        let v2 = h.get_or_reopen("a", |v| *v == "v2", || Ok::<_, ()>("v2"));
        assert_eq!(v2.map(|v| *v), Ok("v2"));
    }
}
