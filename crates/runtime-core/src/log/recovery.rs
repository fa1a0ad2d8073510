//! Recovery on open: lost ranges of streamed events are declared, never reused.

use rusqlite::Connection;

use crate::clock::Clock;
use crate::ids::{EventId, RuntimeId, SessionId};

use super::*;

/// On open: for every session whose reservation is beyond its last durable event, the events
/// published in between were lost by a crash. Appends one `snapshot.repaired` right after the
/// reserved range naming it, so those sequences are never reused and the gap is declared.
pub(super) fn declare_lost_ranges(
    conn: &mut Connection,
    runtime_id: &RuntimeId,
    clock: &dyn Clock,
) -> Result<(), LogError> {
    let lost: Vec<(String, u64, u64)> = {
        let mut stmt = conn.prepare(
            "SELECT r.session_id, COALESCE((SELECT MAX(sequence) FROM events e WHERE e.session_id = r.session_id), 0), r.through \
             FROM reservations r",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)? as u64,
                r.get::<_, i64>(2)? as u64,
            ))
        })?;
        rows.collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .filter(|(_, last, through)| through > last)
            .collect()
    };
    if lost.is_empty() {
        return Ok(());
    }
    let timestamp = format_timestamp(clock.now());
    let tx = conn.transaction()?;
    for (sid, last, through) in lost {
        let Ok(session) = SessionId::new(sid) else {
            continue;
        };
        let e = Event {
            schema_version: SCHEMA_VERSION.to_owned(),
            runtime_id: runtime_id.clone(),
            session_id: session.clone(),
            event_id: EventId::random(),
            timestamp: timestamp.clone(),
            sequence: through + 1,
            scope: Scope::default(),
            body: EventBody::Snapshot(
                EventType::SnapshotRepaired,
                SnapshotPayload {
                    source: Some("event_log_recovery".into()),
                    reason: Some("unflushed_deltas_lost".into()),
                    status: Some("repaired".into()),
                    lost_sequence_from: Some(last + 1),
                    lost_sequence_through: Some(through),
                    ..Default::default()
                },
            ),
        };
        insert_events(&tx, std::slice::from_ref(&e))?;
        put_reservation(&tx, &session, through + 1)?;
        tracing::warn!(session = %session, from = last + 1, through, "event log: declared sequences lost by a crash");
    }
    tx.commit()?;
    Ok(())
}
