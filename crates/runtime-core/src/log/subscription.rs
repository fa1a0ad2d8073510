//! Resumable subscriptions: live delivery through a bounded channel, catch-up from the log
//! (durable rows, then pending ones) whenever the channel was dropped (the subscriber fell
//! behind) or a gap shows.

use std::collections::VecDeque;

use tokio::sync::mpsc;

use super::{EventLog, LogError, CATCH_UP_PAGE};
use crate::event::Event;
use crate::ids::SessionId;

pub struct Subscription {
    log: EventLog,
    session: SessionId,
    last: u64,
    live: Option<mpsc::Receiver<Event>>,
    page: VecDeque<Event>,
}

impl Subscription {
    pub(super) fn new(log: EventLog, session: SessionId, after: u64) -> Self {
        Subscription {
            log,
            session,
            last: after,
            live: None,
            page: VecDeque::new(),
        }
    }

    /// The sequence of the last event delivered (or the starting point).
    pub fn position(&self) -> u64 {
        self.last
    }

    /// The next event (`sequence == position() + 1`, or the event declaring a gap a crash
    /// left), waiting for it if needed.
    pub async fn next(&mut self) -> Result<Event, LogError> {
        loop {
            if let Some(e) = self.take_ready()? {
                return Ok(e);
            }
            let live = self
                .live
                .as_mut()
                .expect("take_ready registers a live channel");
            match live.recv().await {
                Some(e) if e.sequence <= self.last => {}
                Some(e) if e.sequence == self.last + 1 => {
                    self.last = e.sequence;
                    return Ok(e);
                }
                // A gap (should not happen: live order is sequence order) or a dropped
                // channel: catch up from the database.
                Some(_) | None => self.live = None,
            }
        }
    }

    /// The next event if one is available without waiting.
    pub fn try_next(&mut self) -> Result<Option<Event>, LogError> {
        if let Some(e) = self.take_ready()? {
            return Ok(Some(e));
        }
        let live = self
            .live
            .as_mut()
            .expect("take_ready registers a live channel");
        loop {
            match live.try_recv() {
                Ok(e) if e.sequence <= self.last => {}
                Ok(e) if e.sequence == self.last + 1 => {
                    self.last = e.sequence;
                    return Ok(Some(e));
                }
                Ok(_) | Err(mpsc::error::TryRecvError::Disconnected) => {
                    self.live = None;
                    return self.take_ready();
                }
                Err(mpsc::error::TryRecvError::Empty) => return Ok(None),
            }
        }
    }

    /// Serves from the current database page; refills it (registering for live delivery
    /// first, so nothing appended in between is missed) when empty.
    fn take_ready(&mut self) -> Result<Option<Event>, LogError> {
        loop {
            while let Some(e) = self.page.pop_front() {
                // The log's own order: consecutive, except across a gap a crash left, which
                // the event after it declares.
                if e.sequence > self.last {
                    self.last = e.sequence;
                    return Ok(Some(e));
                }
            }
            if self.live.is_some() {
                return Ok(None);
            }
            self.live = Some(self.log.register(&self.session));
            let page = self.log.read(&self.session, self.last + 1, CATCH_UP_PAGE)?;
            if page.is_empty() {
                return Ok(None);
            }
            // More may follow in the database than the page holds: read again after this
            // page (the live channel is re-registered then, which is cheap).
            if page.len() == CATCH_UP_PAGE {
                self.live = None;
            }
            self.page.extend(page);
        }
    }
}
