//! `lime.storage` through the choke point over a real store and real per-app SQLite files:
//! migrations the install review showed are applied on first use, in order, once; a tampered,
//! failing or hostile migration is rolled back and blocks the app version (readiness says why)
//! until an update; an update applies only its new migrations and keeps the data; the quota
//! comes from the manifest.

mod support;

use std::path::{Path, PathBuf};

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::mounting::mount_entry;
use host_core::hosting::bridge::mounts::{Mount, MountTable};
use host_core::hosting::capability::dispatch::{dispatch, CallError, SessionAnswers, Verdict};
use host_core::hosting::capability::services::Services;
use host_core::hosting::capability::Call;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::install::readiness::Status;
use host_core::install::store::{InstallMode, Store};
use serde_json::{json, Value};
use support::{copy_dir, install_with, repo_root};

struct Host {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    dir: DataDir,
    profile: HostProfile,
    table: MountTable,
    services: Services,
    answers: SessionAnswers,
    n: u32,
}

impl Host {
    fn new() -> Host {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_owned();
        let dir = DataDir::at(root.join("data"));
        Host {
            services: Services::new(dir.apps_data()),
            _tmp: tmp,
            root,
            dir,
            profile: HostProfile::all_available(),
            table: MountTable::new(),
            answers: SessionAnswers::default(),
            n: 0,
        }
    }

    /// A copy of the notes sample as `name`, at `version`, changed by `edit`.
    fn package(&self, name: &str, version: &str, edit: impl FnOnce(&Path)) -> PathBuf {
        let p = self.root.join(name);
        copy_dir(&repo_root().join("fixtures/apps/notes"), &p);
        let app_md = p.join("APP.md");
        let text = std::fs::read_to_string(&app_md).unwrap();
        std::fs::write(
            &app_md,
            text.replacen("version: 1.0.0", &format!("version: {version}"), 1),
        )
        .unwrap();
        edit(&p);
        p
    }

    fn install(&self, pkg: &Path, mode: InstallMode) {
        install_with(&self.dir, pkg, mode);
    }

    fn store(&self) -> Store {
        Store::open(&self.dir).unwrap()
    }

    fn mount(&mut self, store: &Store) -> Mount {
        mount_entry(
            store,
            &self.profile,
            &mut self.table,
            &OriginStyle::Scheme,
            "notes",
            "notes",
        )
        .unwrap()
    }

    /// Mounts the active version and makes one call, as the bridge would.
    fn call(&mut self, method: &str, args: Value) -> Result<Value, CallError> {
        let store = self.store();
        let mount = self.mount(&store);
        self.n += 1;
        let inv = Call {
            request_id: format!("r{}", self.n),
            capability: "lime.storage".into(),
            method: method.into(),
            args,
            options: Default::default(),
        };
        match dispatch(
            &store,
            &self.profile,
            &mount.caller(),
            &inv,
            "t",
            &mut self.answers,
        ) {
            Verdict::Allowed(proof) => self.services.call(&store, &proof, &inv.args),
            Verdict::Denied(e) => Err(e),
            Verdict::Ask(q) => panic!("unexpected prompt {q:?}"),
        }
    }

    fn storage_file(&self) -> PathBuf {
        self.dir.apps_data().join("notes/storage.sqlite")
    }

    /// `(id, app_version)` of the applied migrations, read straight from the app's file.
    fn applied(&self) -> Vec<(String, String)> {
        let c = rusqlite::Connection::open(self.storage_file()).unwrap();
        let mut s = c
            .prepare("SELECT id, app_version FROM lime_migrations ORDER BY seq")
            .unwrap();
        s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    fn has_table(&self, name: &str) -> bool {
        let c = rusqlite::Connection::open(self.storage_file()).unwrap();
        c.query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
            [name],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
            == 1
    }
}

fn write(p: &Path, rel: &str, text: &str) {
    std::fs::write(p.join(rel), text).unwrap();
}

#[test]
fn migrations_apply_on_first_use_and_an_update_applies_only_new_ones_keeping_data() {
    let mut h = Host::new();
    let v1 = h.package("v1", "1.0.0", |_| {});
    h.install(&v1, InstallMode::Install);
    assert!(!h.storage_file().exists(), "nothing runs before first use");

    let id = h
        .call(
            "tableInsert",
            json!({"table": "notes", "row": {"id": "n1", "body": "hi", "created_at": "t"}}),
        )
        .unwrap();
    assert_eq!(id, json!({"id": "n1"}));
    h.call(
        "tableInsert",
        json!({"table": "tags", "row": {"name": "work"}}),
    )
    .unwrap();
    h.call("set", json!({"key": "k", "value": 1})).unwrap();
    assert_eq!(
        h.applied(),
        [
            ("001_init.sql".to_owned(), "1.0.0".to_owned()),
            ("002_pins_and_tags.sql".to_owned(), "1.0.0".to_owned())
        ]
    );
    let audit = h.store().audit_log(Some("notes"), 100).unwrap();
    assert!(audit.iter().any(|a| a["action"] == "storage.migrated"));

    // A restart (new services) applies nothing again.
    h.services = Services::new(h.dir.apps_data());
    let rows = h
        .call(
            "tableQuery",
            json!({"table": "notes", "where": {"pinned": 0}}),
        )
        .unwrap();
    assert_eq!(rows["rows"][0]["body"], "hi");
    assert_eq!(h.applied().len(), 2);

    // 1.1.0 adds 003: only it runs, for 1.1.0; the rows and key-value data are kept.
    let v2 = h.package("v2", "1.1.0", |p| {
        write(
            p,
            "storage/migrations/003_archive.sql",
            "ALTER TABLE notes ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;",
        )
    });
    h.install(&v2, InstallMode::Update);
    assert!(h
        .call(
            "tableUpdate",
            json!({"table": "notes", "id": "n1", "patch": {"archived": 1}})
        )
        .unwrap()["updated"]
        .as_bool()
        .unwrap());
    assert_eq!(
        h.applied().last().unwrap(),
        &("003_archive.sql".to_owned(), "1.1.0".to_owned())
    );
    assert_eq!(h.applied().len(), 3);
    let row = h
        .call("tableGet", json!({"table": "notes", "id": "n1"}))
        .unwrap();
    assert_eq!(
        (row["body"].clone(), row["archived"].clone()),
        (json!("hi"), json!(1))
    );
    assert_eq!(h.call("get", json!({"key": "k"})).unwrap(), json!(1));

    // Rolling back to 1.0.0 runs no downgrade and keeps working.
    Store::open_locked(&h.dir)
        .unwrap()
        .0
        .rollback("notes")
        .unwrap();
    assert_eq!(
        h.call("tableGet", json!({"table": "notes", "id": "n1"}))
            .unwrap()["body"],
        "hi"
    );
    assert_eq!(h.applied().len(), 3);

    // Undeclared tables and the host's own are out of reach.
    let e = h
        .call("tableQuery", json!({"table": "lime_kv"}))
        .unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.cause_code),
        ("APP_E900", Some("storage.undeclared_table"))
    );
}

/// Installed migration bytes changed after the review (the pack file edited on disk): refused
/// before running, and the version is blocked.
#[test]
fn a_tampered_migration_file_is_refused_and_blocks_the_app() {
    let mut h = Host::new();
    let v1 = h.package("v1", "1.0.0", |_| {});
    h.install(&v1, InstallMode::Install);
    let needle = std::fs::read(v1.join("storage/migrations/002_pins_and_tags.sql")).unwrap();
    let mut tampered = false;
    for e in std::fs::read_dir(h.dir.packs()).unwrap() {
        let path = e.unwrap().path();
        let mut bytes = std::fs::read(&path).unwrap();
        if let Some(at) = bytes
            .windows(needle.len())
            .position(|w| w == needle.as_slice())
        {
            // "-- 1.0.0 ships" -> "-- 1.0.1 ships": same size, different hash.
            bytes[at + 7] ^= 1;
            let mut perm = std::fs::metadata(&path).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perm.set_readonly(false);
            std::fs::set_permissions(&path, perm).unwrap();
            std::fs::write(&path, bytes).unwrap();
            tampered = true;
        }
    }
    assert!(tampered, "the migration was not found in a pack");
    let e = h.call("set", json!({"key": "k", "value": 1})).unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.cause_code),
        ("APP_E202", Some("storage.migration_hash_mismatch"))
    );
    assert!(!h.has_table("notes"), "nothing of the batch ran");
    let report = h.store().readiness("notes", &h.profile).unwrap();
    assert_eq!(report.status, Status::Blocked);
    let check = report
        .checks
        .iter()
        .find(|c| c.code == Some("storage.migration_failed"))
        .unwrap();
    assert!(
        check.message.contains("002_pins_and_tags.sql"),
        "{}",
        check.message
    );
    // The entry is blocked: it can no longer be mounted, and a frame mounted before is refused
    // at the choke point.
    let store = h.store();
    let e = mount_entry(
        &store,
        &h.profile,
        &mut h.table,
        &OriginStyle::Scheme,
        "notes",
        "notes",
    )
    .unwrap_err();
    assert_eq!(e.code, host_core::ErrorCode::MountNotReady);
    let stale = h.table.all().next().cloned().unwrap();
    let inv = Call {
        request_id: "late".into(),
        capability: "lime.storage".into(),
        method: "get".into(),
        args: json!({"key": "k"}),
        options: Default::default(),
    };
    match dispatch(
        &store,
        &h.profile,
        &stale.caller(),
        &inv,
        "t",
        &mut h.answers,
    ) {
        Verdict::Denied(e) => assert_eq!(e.cause_code, Some("entry.not_ready")),
        other => panic!("expected a denial, got {other:?}"),
    }
}

/// A failing migration rolls the whole batch back, blocks the version with the reason, and an
/// update with a fixed migration unblocks it.
#[test]
fn a_failed_migration_rolls_back_blocks_and_an_update_fixes_it() {
    let mut h = Host::new();
    let broken = h.package("broken", "1.0.0", |p| {
        write(
            p,
            "storage/migrations/002_pins_and_tags.sql",
            "CREATE TABLE tags (name TEXT PRIMARY KEY);\nALTER TABLE missing ADD COLUMN x;",
        )
    });
    h.install(&broken, InstallMode::Install);
    let e = h.call("tableQuery", json!({"table": "notes"})).unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.cause_code),
        ("APP_E202", Some("storage.migration_failed"))
    );
    assert!(!h.has_table("notes") && !h.has_table("tags"), "rolled back");
    assert!(h.applied().is_empty());
    let report = h.store().readiness("notes", &h.profile).unwrap();
    assert_eq!(report.status, Status::Blocked);
    assert!(report.entries.iter().all(|e| e.status == Status::Blocked));

    let fixed = h.package("fixed", "1.0.1", |_| {});
    h.install(&fixed, InstallMode::Update);
    assert_ne!(
        h.store().readiness("notes", &h.profile).unwrap().status,
        Status::Blocked
    );
    h.call(
        "tableInsert",
        json!({"table": "tags", "row": {"name": "ok"}}),
    )
    .unwrap();
    assert_eq!(h.applied().len(), 2);
}

/// A migration that tries to reach the host's database (ATTACH) or change pragmas is refused,
/// and the host database is untouched.
#[test]
fn hostile_sql_in_a_migration_is_refused_and_blocks() {
    let mut h = Host::new();
    let host_db = h.dir.db_path();
    let sql = format!(
        "ATTACH DATABASE '{}' AS host;\nDELETE FROM host.grants;",
        host_db.display()
    );
    let evil = h.package("evil", "1.0.0", |p| {
        write(p, "storage/migrations/002_pins_and_tags.sql", &sql)
    });
    h.install(&evil, InstallMode::Install);
    let grants_before = h.store().grants("notes").unwrap();
    let e = h.call("get", json!({"key": "k"})).unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.cause_code),
        ("APP_E202", Some("storage.migration_refused"))
    );
    assert_eq!(h.store().grants("notes").unwrap(), grants_before);
    assert!(!h.has_table("notes"));
}

/// The manifest's `storage.quota` bounds the whole app database: APP_E201 past it.
#[test]
fn the_manifest_quota_bounds_the_app_database() {
    let mut h = Host::new();
    let small = h.package("small", "1.0.0", |p| {
        let app_md = p.join("APP.md");
        let text = std::fs::read_to_string(&app_md).unwrap();
        std::fs::write(&app_md, text.replace("quota: 16MiB", "quota: 64KiB")).unwrap();
    });
    h.install(&small, InstallMode::Install);
    let body = "z".repeat(8 * 1024);
    let mut n = 0;
    let e = loop {
        match h.call(
            "tableInsert",
            json!({"table": "notes", "row": {"id": n.to_string(), "body": body, "created_at": "t"}}),
        ) {
            Ok(_) => n += 1,
            Err(e) => break e,
        }
        assert!(n < 64, "the quota never bit");
    };
    assert_eq!(
        (e.code.as_str(), e.cause_code),
        ("APP_E201", Some("storage.quota_exceeded"))
    );
    assert!(std::fs::metadata(h.storage_file()).unwrap().len() <= 64 * 1024);
    // Key-value writes share it.
    let e = h
        .call("set", json!({"key": "more", "value": body}))
        .unwrap_err();
    assert_eq!(e.code.as_str(), "APP_E201");
}
