//! Bounded paging for the list/read methods: an opaque cursor (the sequence, or index, read
//! through) and a clamped limit. The log is walked page by page, so no call holds more than a
//! page of events, and no call scans more than [`MAX_SCAN`] events (it then returns fewer
//! items and a cursor to go on from).

use super::{codes, RpcError};
use crate::event::Event;
use crate::ids::SessionId;
use crate::log::{EventLog, LogError, CATCH_UP_PAGE};

/// `capability/list`: default and maximum page.
pub const CAPABILITY_PAGE: u32 = 100;
/// `agentSession/list`: default page.
pub const SESSION_PAGE: u32 = 50;
/// `agentSession/list`: maximum page.
pub const MAX_SESSION_PAGE: u32 = 200;
/// `artifact/read`: default page.
pub const ARTIFACT_PAGE: u32 = 50;
/// `artifact/read`: maximum page.
pub const MAX_ARTIFACT_PAGE: u32 = 200;
/// `artifact/read`: inline content per page (bytes); an artifact past it starts the next page.
pub const MAX_PAGE_CONTENT: u64 = 8 * 1024 * 1024;
/// `evidence/export` events: default and maximum page.
pub const EVENT_PAGE: u32 = 1000;
/// Events one call walks at most.
pub const MAX_SCAN: u64 = 100_000;

/// The page size: `limit` clamped to `1..=max`, `default` when absent.
pub fn limit(limit: Option<u32>, default: u32, max: u32) -> usize {
    limit.unwrap_or(default).clamp(1, max) as usize
}

/// A cursor's position (0 without one); a cursor this server did not hand out is `-32602`.
pub fn position(cursor: Option<&str>) -> Result<u64, RpcError> {
    match cursor {
        None => Ok(0),
        Some(c) => c
            .strip_prefix("c")
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(|| RpcError::new(codes::INVALID_PARAMS, "invalid params: unknown cursor")),
    }
}

pub fn cursor(position: u64) -> String {
    format!("c{position}")
}

/// Walks `session`'s events after sequence `after`, a page at a time, until `f` returns false
/// or [`MAX_SCAN`] events were seen. Returns the sequence walked through and whether the
/// log ended.
pub fn walk(
    log: &EventLog,
    session: &SessionId,
    after: u64,
    mut f: impl FnMut(Event) -> bool,
) -> Result<(u64, bool), LogError> {
    let mut through = after;
    let mut seen = 0u64;
    loop {
        let page = log.read(session, through.saturating_add(1), CATCH_UP_PAGE)?;
        let full = page.len() == CATCH_UP_PAGE;
        for e in page {
            let seq = e.sequence;
            seen += 1;
            if !f(e) {
                return Ok((through, false));
            }
            through = seq;
            if seen >= MAX_SCAN {
                return Ok((through, false));
            }
        }
        if !full {
            return Ok((through, true));
        }
    }
}
