//! `lime.storage` migrations and table methods on a real per-app SQLite file: ordered apply,
//! reviewed hashes, all-or-nothing batches, updates, hostile SQL, quota, declared tables only.

use std::path::Path;
use std::time::{Duration, Instant};

use runtime_core::app_storage::migrate::sha256_hex;
use runtime_core::app_storage::{
    AppStorage, Migration, MigrationFailure, Query, StorageError, TableDecl, DEFAULT_QUOTA_BYTES,
    MIN_QUOTA_BYTES,
};
use serde_json::{json, Map, Value};

const INIT: &str = "CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL, created_at TEXT);";
const TAGS: &str = "ALTER TABLE notes ADD COLUMN tag TEXT; CREATE INDEX notes_tag ON notes (tag);";
const PINS: &str = "CREATE TABLE pins (note_id TEXT PRIMARY KEY REFERENCES notes (id));";

fn mig(id: &str, sql: &str) -> Migration {
    Migration {
        id: id.into(),
        sha256: sha256_hex(sql.as_bytes()),
        sql: sql.as_bytes().to_vec(),
    }
}

fn open(dir: &Path) -> AppStorage {
    AppStorage::open(dir, DEFAULT_QUOTA_BYTES).unwrap()
}

fn tables(s: &AppStorage, names: &[&str]) -> Vec<String> {
    let decls: Vec<TableDecl> = names
        .iter()
        .map(|n| TableDecl {
            name: (*n).into(),
            primary_key: None,
        })
        .collect();
    names
        .iter()
        .filter(|n| {
            !matches!(
                s.table_get(&decls, n, &json!("x")),
                Err(StorageError::SchemaMismatch(_))
            )
        })
        .map(|n| (*n).to_owned())
        .collect()
}

fn decl(name: &str) -> TableDecl {
    TableDecl {
        name: name.into(),
        primary_key: Some("id".into()),
    }
}

fn row(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn failure(e: StorageError) -> MigrationFailure {
    match e {
        StorageError::Migration { failure, .. } => failure,
        other => panic!("expected a migration failure, got {other}"),
    }
}

#[test]
fn migrations_apply_in_order_once_and_are_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = open(tmp.path());
    let plan = [mig("001_init.sql", INIT), mig("002_tags.sql", TAGS)];
    let applied = s.migrate("1.0.0", &plan, "2026-11-23T00:00:00Z").unwrap();
    assert_eq!(applied, ["001_init.sql", "002_tags.sql"]);
    // 002 depends on 001: only an ordered apply succeeds, and both are recorded in order.
    let rec = s.applied_migrations().unwrap();
    assert_eq!(
        rec.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
        ["001_init.sql", "002_tags.sql"]
    );
    assert_eq!(rec[1].sha256, sha256_hex(TAGS.as_bytes()));
    assert_eq!(rec[1].app_version, "1.0.0");
    // Running the same plan again (a restart) applies nothing.
    drop(s);
    let mut s = open(tmp.path());
    assert!(s.migrate("1.0.0", &plan, "later").unwrap().is_empty());
    assert_eq!(s.applied_migrations().unwrap().len(), 2);
}

#[test]
fn tampered_bytes_are_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = open(tmp.path());
    let mut evil = mig("002_tags.sql", TAGS);
    evil.sql = b"DROP TABLE notes;".to_vec();
    let e = s
        .migrate("1.0.0", &[mig("001_init.sql", INIT), evil], "t")
        .unwrap_err();
    assert_eq!(e.app_code(), "APP_E202");
    assert_eq!(failure(e), MigrationFailure::HashMismatch);
    assert!(s.applied_migrations().unwrap().is_empty());
    assert!(tables(&s, &["notes"]).is_empty(), "001 must not have run");
}

#[test]
fn a_failing_migration_rolls_back_the_whole_batch() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = open(tmp.path());
    let plan = [
        mig("001_init.sql", INIT),
        mig(
            "002_broken.sql",
            "INSERT INTO notes (id, body) VALUES ('a', 'x'); SELEC nonsense;",
        ),
    ];
    let e = s.migrate("1.0.0", &plan, "t").unwrap_err();
    assert_eq!(failure(e), MigrationFailure::Failed);
    assert!(s.applied_migrations().unwrap().is_empty());
    assert!(tables(&s, &["notes"]).is_empty(), "001 was rolled back");
}

#[test]
fn an_update_applies_only_new_migrations_and_keeps_data() {
    let tmp = tempfile::tempdir().unwrap();
    let v1 = [mig("001_init.sql", INIT), mig("002_tags.sql", TAGS)];
    {
        let mut s = open(tmp.path());
        s.migrate("1.0.0", &v1, "t1").unwrap();
        s.table_insert(
            &[decl("notes")],
            "notes",
            &row(json!({"id": "n1", "body": "kept"})),
        )
        .unwrap();
    }
    let mut s = open(tmp.path());
    let v2 = [
        mig("001_init.sql", INIT),
        mig("002_tags.sql", TAGS),
        mig("003_pins.sql", PINS),
    ];
    assert_eq!(s.migrate("2.0.0", &v2, "t2").unwrap(), ["003_pins.sql"]);
    let rec = s.applied_migrations().unwrap();
    assert_eq!(rec[2].app_version, "2.0.0");
    assert_eq!(rec[0].app_version, "1.0.0");
    let got = s
        .table_get(&[decl("notes")], "notes", &json!("n1"))
        .unwrap();
    assert_eq!(got.unwrap()["body"], "kept");
    // Rolling back to 1.0.0: its plan is a prefix of what ran; no downgrade runs.
    assert!(s.migrate("1.0.0", &v1, "t3").unwrap().is_empty());
    assert_eq!(tables(&s, &["pins"]), ["pins"]);
}

#[test]
fn an_edited_or_out_of_order_migration_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = open(tmp.path());
    s.migrate(
        "1.0.0",
        &[mig("001_init.sql", INIT), mig("003_pins.sql", PINS)],
        "t",
    )
    .unwrap();
    // 001 edited after it ran.
    let edited = [mig(
        "001_init.sql",
        "CREATE TABLE other (id TEXT PRIMARY KEY);",
    )];
    assert_eq!(
        failure(s.migrate("2.0.0", &edited, "t").unwrap_err()),
        MigrationFailure::Changed
    );
    // A new 002 would run after 003.
    let late = [
        mig("001_init.sql", INIT),
        mig("002_tags.sql", TAGS),
        mig("003_pins.sql", PINS),
    ];
    assert_eq!(
        failure(s.migrate("2.0.0", &late, "t").unwrap_err()),
        MigrationFailure::OutOfOrder
    );
    assert_eq!(s.applied_migrations().unwrap().len(), 2);
}

/// SQL a migration may not run, each refused with nothing applied.
#[test]
fn hostile_sql_in_a_migration_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let host_db = tmp.path().join("host.db");
    rusqlite::Connection::open(&host_db)
        .unwrap()
        .execute_batch("CREATE TABLE secrets (v TEXT); INSERT INTO secrets VALUES ('s3cret');")
        .unwrap();
    let mut s = open(&tmp.path().join("app"));
    s.set("k", &json!("v")).unwrap();
    let hostile = [
        format!("ATTACH DATABASE '{}' AS host;", host_db.display()),
        "SELECT load_extension('/usr/lib/x86_64-linux-gnu/libsqlite3.so.0');".into(),
        "PRAGMA writable_schema = ON;".into(),
        "PRAGMA journal_mode = DELETE;".into(),
        "PRAGMA max_page_count = 100000000;".into(),
        "PRAGMA trusted_schema = ON;".into(),
        "COMMIT; CREATE TABLE escaped (x);".into(),
        "SAVEPOINT a; RELEASE a;".into(),
        "DELETE FROM lime_kv;".into(),
        "UPDATE lime_kv SET value = '\"forged\"';".into(),
        "SELECT * FROM lime_kv;".into(),
        "INSERT INTO lime_migrations (id, sha256, app_version, applied_at) VALUES ('x','y','z','w');"
            .into(),
        "DROP TABLE LIME_MIGRATIONS;".into(),
        "CREATE TABLE lime_mine (x);".into(),
        "CREATE VIRTUAL TABLE docs USING fts5(body);".into(),
    ];
    for (i, sql) in hostile.iter().enumerate() {
        let plan = [
            mig("001_init.sql", INIT),
            mig(&format!("002_evil_{i}.sql"), sql),
        ];
        let e = s.migrate("1.0.0", &plan, "t").unwrap_err();
        assert_eq!(failure(e), MigrationFailure::Refused, "{sql}");
        assert!(s.applied_migrations().unwrap().is_empty(), "{sql}");
        assert!(tables(&s, &["notes", "escaped"]).is_empty(), "{sql}");
    }
    assert_eq!(s.get("k").unwrap(), Some(json!("v")));
    // Allowed: the app's own schema work, introspection pragmas, user_version, triggers.
    let fine = "CREATE TABLE log (id INTEGER PRIMARY KEY, what TEXT);
        CREATE TRIGGER notes_log AFTER INSERT ON notes BEGIN INSERT INTO log (what) VALUES (new.id); END;
        PRAGMA user_version = 7; SELECT * FROM pragma_table_info('notes');";
    s.migrate(
        "1.0.0",
        &[mig("001_init.sql", INIT), mig("002_log.sql", fine)],
        "t",
    )
    .unwrap();
}

/// A trigger an app's migration creates can never reach the host's reserved tables, even when
/// a host statement fires it.
#[test]
fn an_app_trigger_cannot_touch_reserved_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = open(tmp.path());
    let sneaky = "CREATE TRIGGER forge AFTER INSERT ON notes BEGIN
        INSERT INTO lime_migrations (id, sha256, app_version, applied_at) VALUES ('fake', 'x', 'x', 'x');
        DELETE FROM lime_kv; END;";
    s.set("k", &json!(1)).unwrap();
    s.migrate(
        "1.0.0",
        &[mig("001_init.sql", INIT), mig("002_trigger.sql", sneaky)],
        "t",
    )
    .unwrap();
    let e = s
        .table_insert(
            &[decl("notes")],
            "notes",
            &row(json!({"id": "a", "body": "b"})),
        )
        .unwrap_err();
    assert_eq!(e.app_code(), "APP_E203", "{e}");
    assert_eq!(s.applied_migrations().unwrap().len(), 2);
    assert_eq!(s.get("k").unwrap(), Some(json!(1)));
    assert!(s
        .table_get(&[decl("notes")], "notes", &json!("a"))
        .unwrap()
        .is_none());
}

#[test]
fn a_runaway_migration_is_stopped_and_rolled_back() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = open(tmp.path());
    let forever =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;";
    let start = Instant::now();
    let e = s
        .migrate_within(
            "1.0.0",
            &[mig("001_init.sql", INIT), mig("002_loop.sql", forever)],
            "t",
            Duration::from_millis(300),
        )
        .unwrap_err();
    assert_eq!(failure(e), MigrationFailure::TimedOut);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert!(s.applied_migrations().unwrap().is_empty());
    // The connection is usable afterwards, under the normal deadline.
    s.set("after", &json!(true)).unwrap();
}

#[test]
fn a_migration_past_the_quota_is_refused_and_rolled_back() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = AppStorage::open(tmp.path(), MIN_QUOTA_BYTES).unwrap();
    let big = "CREATE TABLE blobs (id INTEGER PRIMARY KEY, b BLOB);
        WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 64)
        INSERT INTO blobs (b) SELECT zeroblob(4096) FROM c;";
    let e = s
        .migrate("1.0.0", &[mig("001_big.sql", big)], "t")
        .unwrap_err();
    assert_eq!(failure(e), MigrationFailure::Quota);
    assert!(tables(&s, &["blobs"]).is_empty());
}

#[test]
fn table_methods_work_on_declared_tables_only() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = open(tmp.path());
    s.migrate(
        "1.0.0",
        &[mig("001_init.sql", INIT), mig("002_tags.sql", TAGS)],
        "t",
    )
    .unwrap();
    let d = [decl("notes")];
    for (id, tag) in [("a", "work"), ("b", "home"), ("c", "work")] {
        s.table_insert(
            &d,
            "notes",
            &row(json!({"id": id, "body": format!("note {id}"), "tag": tag})),
        )
        .unwrap();
    }
    let q = Query {
        filter: row(json!({"tag": "work"})),
        order_by: Some("id".into()),
        descending: true,
        limit: 10,
        offset: 0,
    };
    let ids: Vec<Value> = s
        .table_query(&d, "notes", &q)
        .unwrap()
        .into_iter()
        .map(|r| r["id"].clone())
        .collect();
    assert_eq!(ids, [json!("c"), json!("a")]);
    assert!(s
        .table_update(&d, "notes", &json!("a"), &row(json!({"body": "edited"})))
        .unwrap());
    assert_eq!(
        s.table_get(&d, "notes", &json!("a")).unwrap().unwrap()["body"],
        "edited"
    );
    assert!(s.table_delete(&d, "notes", &json!("b")).unwrap());
    assert!(!s.table_delete(&d, "notes", &json!("b")).unwrap());
    // A constraint violation is the caller's error, and changes nothing.
    let dup = s.table_insert(&d, "notes", &row(json!({"id": "a", "body": "dup"})));
    assert_eq!(dup.unwrap_err().app_code(), "APP_E900");
    // Undeclared and reserved tables, unknown or injected column names are refused.
    let undeclared = s.table_get(&d, "sqlite_schema", &json!(1)).unwrap_err();
    assert!(matches!(undeclared, StorageError::UndeclaredTable(_)));
    let reserved = [decl("lime_kv")];
    assert!(matches!(
        s.table_query(
            &reserved,
            "lime_kv",
            &Query {
                limit: 1,
                ..Query::default()
            }
        ),
        Err(StorageError::UndeclaredTable(_))
    ));
    let injected = row(json!({"body\" = 'x'; DROP TABLE notes; --": 1}));
    assert!(matches!(
        s.table_update(&d, "notes", &json!("a"), &injected),
        Err(StorageError::SchemaMismatch(_))
    ));
    // A declared table no migration created.
    assert_eq!(
        s.table_get(&[decl("ghost")], "ghost", &json!(1))
            .unwrap_err()
            .app_code(),
        "APP_E203"
    );
    assert_eq!(tables(&s, &["notes"]), ["notes"]);
}

#[test]
fn table_writes_count_against_the_quota() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = AppStorage::open(tmp.path(), MIN_QUOTA_BYTES).unwrap();
    s.migrate("1.0.0", &[mig("001_init.sql", INIT)], "t")
        .unwrap();
    let d = [decl("notes")];
    let body = "y".repeat(8 * 1024);
    let mut n = 0;
    let err = loop {
        match s.table_insert(
            &d,
            "notes",
            &row(json!({"id": n.to_string(), "body": body})),
        ) {
            Ok(_) => n += 1,
            Err(e) => break e,
        }
        assert!(n < 100);
    };
    assert_eq!(err.app_code(), "APP_E201", "{err}");
    assert!(s
        .table_get(&d, "notes", &json!(n.to_string()))
        .unwrap()
        .is_none());
    // The key-value store shares the same quota.
    assert_eq!(
        s.set("more", &json!(body)).unwrap_err().app_code(),
        "APP_E201"
    );
}
