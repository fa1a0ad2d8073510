//! The outbox: host→UI pushes (mounts ended by another process, install progress, bridge
//! actions produced off the request path) read by one long poll, `next_events {after, timeoutMs}`.
//!
//! Events get a monotonic sequence number (from 1). The queue is bounded ([`OUTBOX_CAPACITY`]):
//! when it is full the oldest event is dropped, and a reader that was behind learns how many it
//! missed (`missed`). A wait lasts at most [`MAX_WAIT`]; while it waits, the mount watcher
//! (`watch::sync`) runs every [`WATCH_EVERY`] (100 ms), so a store changed by another
//! process shows up as events promptly, without a second poll loop.

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use super::{answer, args, Command, Session};
use crate::foundation::error::HostResult;

/// Longest wait of one `next_events` call.
pub const MAX_WAIT: Duration = Duration::from_secs(25);
/// How often a waiting `next_events` checks the store for changes by other processes. An
/// unchanged store costs two `stat` calls (see `store_stamp::StoreStamp`), so checking every
/// 100 ms keeps an idle window near zero CPU while `apphost dev`'s commit reaches the window
/// within about 100 ms (it waited up to a second before).
pub const WATCH_EVERY: Duration = Duration::from_millis(100);

pub const COMMANDS: &[Command] = &[Command {
    name: "next_events",
    run: next_events,
}];

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
    session.ensure_knowledge_watch();
    loop {
        if let Err(e) = super::watch::sync(session) {
            tracing::debug!(
                code = e.code.as_str(),
                "mount watcher: store not readable now"
            );
        }
        super::dev_console::check_connections(session);
        super::workflow_host::tick(session);
        let left = deadline.saturating_duration_since(Instant::now());
        let batch = session.outbox.wait_after(a.after, left.min(WATCH_EVERY));
        if !batch.events.is_empty() || batch.missed > 0 || left <= WATCH_EVERY {
            return answer(batch);
        }
    }
}
