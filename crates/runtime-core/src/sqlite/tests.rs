use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use super::*;

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777
}

fn pragma(conn: &Connection, name: &str) -> String {
    conn.pragma_query_value(None, name, |r| r.get::<_, rusqlite::types::Value>(0))
        .map(|v| match v {
            rusqlite::types::Value::Integer(i) => i.to_string(),
            rusqlite::types::Value::Text(s) => s,
            other => format!("{other:?}"),
        })
        .unwrap()
}

#[test]
fn private_durable_creates_a_0600_wal_database() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("x.db");
    let conn = SqliteOpen::private_durable().open(&p).unwrap();
    assert_eq!(mode(&p), 0o600);
    assert_eq!(pragma(&conn, "journal_mode"), "wal");
    assert_eq!(pragma(&conn, "synchronous"), "2", "FULL");
    let host = SqliteOpen::host_store().open(&p).unwrap();
    assert_eq!(pragma(&host, "foreign_keys"), "1");
}

#[test]
fn a_link_in_place_of_a_private_database_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("elsewhere.db");
    std::fs::write(&target, b"").unwrap();
    let link = t.path().join("x.db");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for opts in [SqliteOpen::private_durable(), SqliteOpen::app_records()] {
        assert!(opts.open(&link).is_err(), "{opts:?}");
    }
    assert_eq!(
        std::fs::read(&target).unwrap(),
        b"",
        "the target is untouched"
    );
}

#[test]
fn existing_and_reader_never_create() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("missing.db");
    assert!(SqliteOpen::existing().open(&p).is_err());
    assert!(SqliteOpen::app_reader().open(&p).is_err());
    assert!(!p.exists(), "nothing created");
}

#[test]
fn the_app_reader_refuses_writes_and_attach() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("app.db");
    let w = SqliteOpen::app_records().open(&p).unwrap();
    w.execute_batch("CREATE TABLE t(v); INSERT INTO t VALUES (1);")
        .unwrap();
    let other = t.path().join("other.db");
    let attach = format!("ATTACH DATABASE '{}' AS o;", other.display());
    assert!(
        w.execute_batch(&attach).is_err(),
        "no ATTACH for app records"
    );
    let r = SqliteOpen::app_reader().open(&p).unwrap();
    assert!(r.execute_batch("INSERT INTO t VALUES (2);").is_err());
    assert!(r.execute_batch(&attach).is_err());
    let n: i64 = w
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1, "the refused write changed nothing");
    assert!(!other.exists());
}

#[test]
fn busy_is_classified_by_result_code() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("x.db");
    let a = SqliteOpen::private_durable().open(&p).unwrap();
    a.execute_batch("CREATE TABLE t(v); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);")
        .unwrap();
    let b = SqliteOpen::existing().open(&p).unwrap();
    b.busy_timeout(Duration::ZERO).unwrap();
    let e = b.execute("INSERT INTO t VALUES (2)", []).unwrap_err();
    assert!(is_busy(&e), "{e:?}");
    let syntax = b.execute_batch("NOT SQL").unwrap_err();
    assert!(!is_busy(&syntax), "{syntax:?}");
    let io = rusqlite::Error::InvalidQuery;
    assert!(!is_busy(&io));
    // A message that merely says so is not a busy error.
    let text = rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR),
        Some("database is locked".into()),
    );
    assert!(!is_busy(&text));
}
