//! What a task was started with beyond its input: the knowledge templates and the external
//! tool refs it declared (`startTask({knowledge, tools})`), kept in `agent-tasks.sqlite`'s
//! `task_bindings` beside the task row, so a host that restarts grants its session the same
//! tools again ([`AgentTasks::open`](super::AgentTasks::open) restores them) instead of a resumed
//! task losing them. The host re-checks every grant on every call; these rows only say what
//! the task asked for.

use rusqlite::params;

use super::store::{lock, TaskStore};
use crate::tools::HostTools;

/// The knowledge templates a task declared.
pub const KNOWLEDGE: &str = "knowledge";
/// The external `<server>/<tool>` refs a task declared.
pub const TOOL: &str = "tool";
/// Rows restored at open (the newest first; the grants themselves keep 4096 sessions).
const MAX_RESTORED: i64 = 65_536;

impl TaskStore {
    /// Records `names` of `kind` for `task_id` (idempotent).
    pub fn add_bindings(
        &self,
        task_id: &str,
        kind: &str,
        names: &[String],
    ) -> rusqlite::Result<()> {
        if names.is_empty() {
            return Ok(());
        }
        let mut conn = lock(&self.conn);
        let tx = conn.transaction()?;
        {
            let mut stmt = tx.prepare(
                "INSERT OR IGNORE INTO task_bindings(task_id, kind, name) VALUES (?1, ?2, ?3)",
            )?;
            for n in names {
                stmt.execute(params![task_id, kind, n])?;
            }
        }
        tx.commit()
    }

    /// `(session, kind, name)` of the newest tasks' bindings, oldest first.
    pub fn session_bindings(&self) -> rusqlite::Result<Vec<(String, String, String)>> {
        let conn = lock(&self.conn);
        let mut stmt = conn.prepare(
            "SELECT t.session_id, b.kind, b.name FROM task_bindings b JOIN tasks t USING(task_id)
             ORDER BY t.created_at DESC, t.task_id DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map([MAX_RESTORED], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        let mut out = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        out.reverse();
        Ok(out)
    }
}

/// Grants each session what its tasks declared, from the store (at open).
pub(super) fn restore(store: &TaskStore, tools: &HostTools) -> rusqlite::Result<()> {
    for (session, kind, name) in store.session_bindings()? {
        let grants = match kind.as_str() {
            KNOWLEDGE => tools.knowledge_grants(),
            TOOL => tools.tool_grants(),
            _ => continue,
        };
        grants.grant(&session, std::slice::from_ref(&name));
    }
    Ok(())
}
