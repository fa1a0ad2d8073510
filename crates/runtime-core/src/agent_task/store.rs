//! `agent-tasks.sqlite` (beside `events.db`): which app owns which task, its idempotency key
//! (unique per app, durable), its session and trace, the request, and its runs (one turn each).
//! A run's row is written, with its turn id chosen, *before* the turn is submitted, and
//! submitting a turn id twice is a no-op in the runtime: a crash in between is repaired by
//! submitting again (`AgentTasks::ensure_started`).
//!
//! Sessions may be shared (`sessionPolicy: resume`): `task_joins` lists the tasks that run in a
//! session another task created (a task absent from it created its session), and
//! `session_refs` maps an app's `businessObjectRef` to the session its first task created.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tasks(
  task_id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL,
  idempotency_key TEXT,
  session_id TEXT NOT NULL,
  trace_id TEXT NOT NULL,
  input TEXT NOT NULL,
  output_schema TEXT,
  created_at TEXT NOT NULL,
  UNIQUE(app_id, idempotency_key)
);
CREATE INDEX IF NOT EXISTS tasks_by_app ON tasks(app_id, created_at, task_id);
CREATE TABLE IF NOT EXISTS runs(
  task_id TEXT NOT NULL REFERENCES tasks(task_id),
  run_index INTEGER NOT NULL,
  turn_id TEXT NOT NULL,
  PRIMARY KEY(task_id, run_index)
);
CREATE TABLE IF NOT EXISTS task_joins(
  task_id TEXT PRIMARY KEY REFERENCES tasks(task_id)
);
CREATE TABLE IF NOT EXISTS task_budgets(
  task_id TEXT PRIMARY KEY REFERENCES tasks(task_id),
  max_tokens INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS session_refs(
  app_id TEXT NOT NULL,
  business_ref TEXT NOT NULL,
  session_id TEXT NOT NULL,
  PRIMARY KEY(app_id, business_ref)
);
CREATE TABLE IF NOT EXISTS task_bindings(
  task_id TEXT NOT NULL REFERENCES tasks(task_id),
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  PRIMARY KEY(task_id, kind, name)
);
";

/// One task row.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskRow {
    pub task_id: String,
    pub app_id: String,
    pub idempotency_key: Option<String>,
    pub session_id: String,
    pub trace_id: String,
    pub input: String,
    pub output_schema: Option<Value>,
    pub created_at: String,
    /// Turn ids of the runs, oldest first.
    pub runs: Vec<String>,
    /// The task runs in a session another task created (`sessionPolicy: resume`).
    pub joined: bool,
    /// The task's own token budget per run (`task_budgets`, written with the task).
    pub max_tokens: Option<u64>,
}

pub struct TaskStore {
    pub(super) conn: Mutex<Connection>,
}

pub(super) fn lock(m: &Mutex<Connection>) -> std::sync::MutexGuard<'_, Connection> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl TaskStore {
    pub fn open(path: &Path) -> rusqlite::Result<TaskStore> {
        let conn = crate::sqlite::SqliteOpen::private_durable().open(path)?;
        conn.execute_batch(SCHEMA)?;
        Ok(TaskStore {
            conn: Mutex::new(conn),
        })
    }

    /// Inserts `row` (with its first run) unless the app already has a task with the same
    /// idempotency key; returns the stored task and whether it was created.
    pub fn insert_or_get(&self, row: &TaskRow) -> rusqlite::Result<(TaskRow, bool)> {
        self.insert_or_get_with_ref(row, None)
    }

    /// [`TaskStore::insert_or_get`], also recording `new_ref` as the app's business object ref
    /// of the task's (new) session, in the same transaction.
    pub fn insert_or_get_with_ref(
        &self,
        row: &TaskRow,
        new_ref: Option<&str>,
    ) -> rusqlite::Result<(TaskRow, bool)> {
        let mut conn = lock(&self.conn);
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if let Some(key) = &row.idempotency_key {
            let existing: Option<String> = tx
                .query_row(
                    "SELECT task_id FROM tasks WHERE app_id = ?1 AND idempotency_key = ?2",
                    params![row.app_id, key],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(id) = existing {
                let found = read(&tx, &row.app_id, &id)?.expect("selected in this transaction");
                return Ok((found, false));
            }
        }
        tx.execute(
            "INSERT INTO tasks(task_id, app_id, idempotency_key, session_id, trace_id, input, output_schema, created_at)
             VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                row.task_id,
                row.app_id,
                row.idempotency_key,
                row.session_id,
                row.trace_id,
                row.input,
                row.output_schema.as_ref().map(|v| v.to_string()),
                row.created_at
            ],
        )?;
        for (i, turn) in row.runs.iter().enumerate() {
            tx.execute(
                "INSERT INTO runs(task_id, run_index, turn_id) VALUES(?1, ?2, ?3)",
                params![row.task_id, i as i64 + 1, turn],
            )?;
        }
        if row.joined {
            tx.execute("INSERT INTO task_joins(task_id) VALUES(?1)", [&row.task_id])?;
        }
        if let Some(n) = row.max_tokens {
            tx.execute(
                "INSERT INTO task_budgets(task_id, max_tokens) VALUES(?1, ?2)",
                params![row.task_id, i64::try_from(n).unwrap_or(i64::MAX)],
            )?;
        }
        if let Some(r) = new_ref {
            tx.execute(
                "INSERT INTO session_refs(app_id, business_ref, session_id) VALUES(?1, ?2, ?3)",
                params![row.app_id, r, row.session_id],
            )?;
        }
        tx.commit()?;
        Ok((row.clone(), true))
    }

    /// How many tasks `app` has, and how many all apps have.
    pub fn counts(&self, app: &str) -> rusqlite::Result<(u64, u64)> {
        let conn = lock(&self.conn);
        let mine: i64 =
            conn.query_row("SELECT COUNT(*) FROM tasks WHERE app_id = ?1", [app], |r| {
                r.get(0)
            })?;
        let all: i64 = conn.query_row("SELECT COUNT(*) FROM tasks", [], |r| r.get(0))?;
        Ok((mine as u64, all as u64))
    }

    /// The app's task `task_id` (another app's task is `None`, exactly like a missing one).
    pub fn get(&self, app: &str, task_id: &str) -> rusqlite::Result<Option<TaskRow>> {
        let conn = lock(&self.conn);
        read(&conn, app, task_id)
    }

    /// The app's task with idempotency key `key`.
    pub fn get_by_key(&self, app: &str, key: &str) -> rusqlite::Result<Option<TaskRow>> {
        let conn = lock(&self.conn);
        let id: Option<String> = conn
            .query_row(
                "SELECT task_id FROM tasks WHERE app_id = ?1 AND idempotency_key = ?2",
                params![app, key],
                |r| r.get(0),
            )
            .optional()?;
        match id {
            Some(id) => read(&conn, app, &id),
            None => Ok(None),
        }
    }

    /// The session the app's business object ref `r` names (another app's ref is `None`).
    pub fn session_for_ref(&self, app: &str, r: &str) -> rusqlite::Result<Option<String>> {
        let conn = lock(&self.conn);
        conn.query_row(
            "SELECT session_id FROM session_refs WHERE app_id = ?1 AND business_ref = ?2",
            params![app, r],
            |r| r.get(0),
        )
        .optional()
    }

    /// Records the next run's turn id when the latest run is still `expected_last` (so two
    /// concurrent retries create one run); returns the new run index, or `None` on a race.
    pub fn add_run(
        &self,
        task_id: &str,
        expected_last: &str,
        turn: &str,
    ) -> rusqlite::Result<Option<usize>> {
        let mut conn = lock(&self.conn);
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let last: Option<(i64, String)> = tx
            .query_row(
                "SELECT run_index, turn_id FROM runs WHERE task_id = ?1 ORDER BY run_index DESC LIMIT 1",
                [task_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let next = match last {
            Some((i, t)) if t == expected_last => i + 1,
            _ => return Ok(None),
        };
        tx.execute(
            "INSERT INTO runs(task_id, run_index, turn_id) VALUES(?1, ?2, ?3)",
            params![task_id, next, turn],
        )?;
        tx.commit()?;
        Ok(Some(next as usize))
    }

    /// Up to `limit` of the app's tasks created after the cursor `(created_at, task_id)`,
    /// oldest first.
    pub fn list(
        &self,
        app: &str,
        after: Option<(&str, &str)>,
        limit: usize,
    ) -> rusqlite::Result<Vec<TaskRow>> {
        let conn = lock(&self.conn);
        let (c, t) = after.unwrap_or(("", ""));
        let ids: Vec<String> = {
            let mut stmt = conn.prepare_cached(
                "SELECT task_id FROM tasks WHERE app_id = ?1 AND (created_at, task_id) > (?2, ?3)
                 ORDER BY created_at, task_id LIMIT ?4",
            )?;
            let rows = stmt.query_map(params![app, c, t, limit as i64], |r| r.get(0))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(row) = read(&conn, app, &id)? {
                out.push(row);
            }
        }
        Ok(out)
    }
}

impl TaskStore {
    /// Up to `limit` tasks, newest first, of one app or of every app (`app: None`): the host's
    /// own view across apps (never reachable from an app, whose calls always name their app).
    pub fn recent(&self, app: Option<&str>, limit: usize) -> rusqlite::Result<Vec<TaskRow>> {
        let conn = lock(&self.conn);
        let keys: Vec<(String, String)> = {
            let mut stmt = conn.prepare_cached(
                "SELECT app_id, task_id FROM tasks WHERE (?1 IS NULL OR app_id = ?1)
                 ORDER BY created_at DESC, task_id DESC LIMIT ?2",
            )?;
            let rows =
                stmt.query_map(params![app, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let mut out = Vec::with_capacity(keys.len());
        for (app, id) in keys {
            if let Some(row) = read(&conn, &app, &id)? {
                out.push(row);
            }
        }
        Ok(out)
    }
}

fn read(conn: &Connection, app: &str, task_id: &str) -> rusqlite::Result<Option<TaskRow>> {
    let row = conn
        .query_row(
            "SELECT task_id, app_id, idempotency_key, session_id, trace_id, input, output_schema, created_at
             FROM tasks WHERE app_id = ?1 AND task_id = ?2",
            params![app, task_id],
            |r| {
                Ok(TaskRow {
                    task_id: r.get(0)?,
                    app_id: r.get(1)?,
                    idempotency_key: r.get(2)?,
                    session_id: r.get(3)?,
                    trace_id: r.get(4)?,
                    input: r.get(5)?,
                    output_schema: r
                        .get::<_, Option<String>>(6)?
                        .and_then(|s| serde_json::from_str(&s).ok()),
                    created_at: r.get(7)?,
                    runs: Vec::new(),
                    joined: false,
                    max_tokens: None,
                })
            },
        )
        .optional()?;
    let Some(mut row) = row else {
        return Ok(None);
    };
    let mut stmt =
        conn.prepare_cached("SELECT turn_id FROM runs WHERE task_id = ?1 ORDER BY run_index")?;
    row.runs = stmt
        .query_map([task_id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    row.joined = conn
        .prepare_cached("SELECT 1 FROM task_joins WHERE task_id = ?1")?
        .exists([task_id])?;
    row.max_tokens = conn
        .prepare_cached("SELECT max_tokens FROM task_budgets WHERE task_id = ?1")?
        .query_row([task_id], |r| r.get::<_, i64>(0))
        .optional()?
        .and_then(|n| u64::try_from(n).ok());
    Ok(Some(row))
}

/// What [`purge_app`] removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Purged {
    pub tasks: usize,
    pub events: usize,
}

/// Removes everything the runtime keeps for `app`'s agent tasks in `runtime_dir` (an uninstall
/// that deletes the app's data): the sessions' events, turn inputs, sequence reservations and
/// stored tool arguments no other session references in `events.db`, then the task and run
/// rows in `agent-tasks.sqlite` (last, so an interrupted purge is finished by running it again).
/// Missing files mean nothing to remove; nothing is created.
/// Sessions are random ids that are never reused, so dropping whole sessions keeps the log's
/// per-session ordering rules for every other session.
pub fn purge_app(runtime_dir: &Path, app: &str) -> rusqlite::Result<Purged> {
    let tasks_path = runtime_dir.join("agent-tasks.sqlite");
    if !tasks_path.is_file() {
        return Ok(Purged::default());
    }
    let tasks = crate::sqlite::SqliteOpen::existing().open(&tasks_path)?;
    let sessions: Vec<String> = {
        let mut stmt = tasks.prepare("SELECT DISTINCT session_id FROM tasks WHERE app_id = ?1")?;
        let rows = stmt.query_map([app], |r| r.get(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut purged = Purged::default();
    let events_path = runtime_dir.join("events.db");
    if !sessions.is_empty() && events_path.is_file() {
        let mut log = crate::sqlite::SqliteOpen::existing().open(&events_path)?;
        let tx = log.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        for s in &sessions {
            purged.events += tx.execute("DELETE FROM events WHERE session_id = ?1", [s])?;
            tx.execute("DELETE FROM turn_inputs WHERE session_id = ?1", [s])?;
            tx.execute("DELETE FROM reservations WHERE session_id = ?1", [s])?;
        }
        // Tool arguments kept behind a reference that no remaining session names.
        crate::log::args_ref::purge_sessions(&tx, &sessions)?;
        tx.commit()?;
    }
    let mut tasks = tasks;
    let tx = tasks.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.execute(
        "DELETE FROM runs WHERE task_id IN (SELECT task_id FROM tasks WHERE app_id = ?1)",
        [app],
    )?;
    // Files written before sessions could be shared have neither table.
    let has = |t: &str| -> rusqlite::Result<bool> {
        tx.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")?
            .exists([t])
    };
    if has("task_joins")? {
        tx.execute(
            "DELETE FROM task_joins WHERE task_id IN (SELECT task_id FROM tasks WHERE app_id = ?1)",
            [app],
        )?;
    }
    if has("session_refs")? {
        tx.execute("DELETE FROM session_refs WHERE app_id = ?1", [app])?;
    }
    if has("task_bindings")? {
        tx.execute(
            "DELETE FROM task_bindings WHERE task_id IN (SELECT task_id FROM tasks WHERE app_id = ?1)",
            [app],
        )?;
    }
    if has("task_budgets")? {
        tx.execute(
            "DELETE FROM task_budgets WHERE task_id IN (SELECT task_id FROM tasks WHERE app_id = ?1)",
            [app],
        )?;
    }
    purged.tasks = tx.execute("DELETE FROM tasks WHERE app_id = ?1", [app])?;
    tx.commit()?;
    Ok(purged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(app: &str, id: &str, at: &str) -> TaskRow {
        TaskRow {
            task_id: id.into(),
            app_id: app.into(),
            idempotency_key: None,
            session_id: format!("s-{id}"),
            trace_id: format!("t-{id}"),
            input: "x".into(),
            output_schema: None,
            created_at: at.into(),
            runs: vec![format!("turn-{id}")],
            joined: false,
            max_tokens: None,
        }
    }

    #[test]
    fn recent_lists_newest_first_across_apps_or_for_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = TaskStore::open(&dir.path().join("t.sqlite")).unwrap();
        for (app, id, at) in [
            ("a", "task_1", "2026-01-01T00:00:01Z"),
            ("b", "task_2", "2026-01-01T00:00:02Z"),
            ("a", "task_3", "2026-01-01T00:00:03Z"),
        ] {
            store.insert_or_get(&row(app, id, at)).unwrap();
        }
        let ids = |rows: Vec<TaskRow>| rows.into_iter().map(|r| r.task_id).collect::<Vec<_>>();
        assert_eq!(
            ids(store.recent(None, 10).unwrap()),
            ["task_3", "task_2", "task_1"]
        );
        assert_eq!(
            ids(store.recent(Some("a"), 10).unwrap()),
            ["task_3", "task_1"]
        );
        assert_eq!(ids(store.recent(None, 1).unwrap()), ["task_3"]);
        assert!(store.recent(Some("c"), 10).unwrap().is_empty());
        assert_eq!(
            store.recent(Some("b"), 10).unwrap()[0].runs,
            ["turn-task_2"]
        );
    }

    #[test]
    fn purge_handles_a_file_written_before_sessions_could_be_shared() {
        let dir = tempfile::tempdir().unwrap();
        {
            let conn = Connection::open(dir.path().join("agent-tasks.sqlite")).unwrap();
            // The schema before `task_joins` / `session_refs` existed.
            let old = SCHEMA
                .split("CREATE TABLE IF NOT EXISTS task_joins")
                .next()
                .unwrap();
            conn.execute_batch(old).unwrap();
            conn.execute(
                "INSERT INTO tasks VALUES('task_1', 'a', NULL, 's', 't', 'x', NULL, 'now')",
                [],
            )
            .unwrap();
        }
        let purged = purge_app(dir.path(), "a").unwrap();
        assert_eq!(purged.tasks, 1);
        // Opened now, the file gains the new tables; a legacy task created its own session.
        let store = TaskStore::open(&dir.path().join("agent-tasks.sqlite")).unwrap();
        let mut r = row("a", "task_2", "2026-01-01T00:00:00Z");
        r.joined = true;
        store.insert_or_get_with_ref(&r, Some("ref")).unwrap();
        assert!(store.get("a", "task_2").unwrap().unwrap().joined);
        assert_eq!(
            store.session_for_ref("a", "ref").unwrap().as_deref(),
            Some("s-task_2")
        );
        assert_eq!(store.session_for_ref("b", "ref").unwrap(), None);
        assert_eq!(purge_app(dir.path(), "a").unwrap().tasks, 1);
        assert_eq!(store.session_for_ref("a", "ref").unwrap(), None);
    }
}
