//! `lime.files` through the choke point over a real store: refs per app, reads confined to the
//! grant, and the attacks of issue 21 §1: another app's ref, a revoked ref, a path or URL as a
//! ref, a folder with a symlink out and a hard link, a file swapped for a symlink, a FIFO, a
//! huge file without a range, overflowing ranges, an app without `lime.files`. Each refusal has
//! its stable cause, and nothing is read or changed.

mod support;

use std::path::Path;

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::mounting::mount_entry;
use host_core::hosting::bridge::mounts::{Mount, MountTable};
use host_core::hosting::capability::dispatch::{dispatch, SessionAnswers, Verdict};
use host_core::hosting::capability::services::Services;
use host_core::hosting::capability::Call;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::hosting::user_files;
use host_core::install::store::{DataMode, Store};
use serde_json::{json, Value};
use support::{hello_app_as, install};

const DECLARE: [(&str, &str); 2] = [
    (
        "    lime.storage: \"^0.10.0\"\n",
        "    lime.storage: \"^0.10.0\"\n    lime.files: \"^0.10.0\"\n",
    ),
    (
        "requiredCapabilities: [lime.ui, lime.storage]",
        "requiredCapabilities: [lime.ui, lime.storage, lime.files]",
    ),
];

struct Env {
    tmp: tempfile::TempDir,
    dir: DataDir,
    store: Store,
    profile: HostProfile,
    table: MountTable,
    services: Services,
    answers: SessionAnswers,
}

impl Env {
    /// `apps`: (name, declares lime.files).
    fn new(apps: &[(&str, bool)]) -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path().join("data"));
        for (name, declares) in apps {
            let edits: &[(&str, &str)] = if *declares { &DECLARE } else { &[] };
            install(&dir, &hello_app_as(tmp.path(), name, edits));
        }
        let store = Store::open(&dir).unwrap();
        Env {
            services: Services::new(dir.apps_data()),
            tmp,
            dir,
            store,
            profile: HostProfile::current(),
            table: MountTable::new(),
            answers: SessionAnswers::default(),
        }
    }

    fn mount(&mut self, app: &str) -> Mount {
        mount_entry(
            &self.store,
            &self.profile,
            &mut self.table,
            &OriginStyle::Scheme,
            app,
            "notes",
        )
        .unwrap()
    }

    fn run(&mut self, mount: &Mount, method: &str, args: Value) -> Result<Value, Value> {
        let c = Call {
            request_id: "r1".into(),
            capability: "lime.files".into(),
            method: method.into(),
            args,
            options: Default::default(),
        };
        match dispatch(
            &self.store,
            &self.profile,
            &mount.caller(),
            &c,
            "trace-1",
            &mut self.answers,
        ) {
            Verdict::Allowed(proof) => self
                .services
                .call_with(&self.store, &proof, &c.args)
                .map(|r| r.value)
                .map_err(|e| serde_json::to_value(e).unwrap()),
            Verdict::Denied(e) => Err(serde_json::to_value(e).unwrap()),
            Verdict::Ask(q) => Err(json!({"ask": q.permission})),
        }
    }

    fn grant(&self, app: &str, path: &Path) -> String {
        user_files::grant_path(&self.store, app, path)
            .unwrap()
            .handle
    }

    fn user_dir(&self) -> std::path::PathBuf {
        let d = self.tmp.path().join("docs");
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn reads_audited(&self, app: &str) -> usize {
        self.store
            .audit_log(Some(app), 1000)
            .unwrap()
            .iter()
            .filter(|r| r["action"] == "files.read")
            .count()
    }
}

fn code(e: &Value) -> (&str, &str) {
    (
        e["code"].as_str().unwrap_or(""),
        e["causeCode"].as_str().unwrap_or(""),
    )
}

#[test]
fn an_app_lists_reads_and_stats_its_refs_without_seeing_a_path() {
    let mut env = Env::new(&[("files-a", true)]);
    let docs = env.user_dir();
    std::fs::write(docs.join("report.md"), "# Report\nhello").unwrap();
    let r = env.grant("files-a", &docs.join("report.md"));
    assert!(r.starts_with("fref_") && r.len() == 37, "{r}");
    let m = env.mount("files-a");

    let list = env.run(&m, "list", json!({})).unwrap();
    assert_eq!(list["refs"].as_array().unwrap().len(), 1);
    let one = &list["refs"][0];
    assert_eq!(one["ref"], r.as_str());
    assert_eq!(one["name"], "report.md");
    assert_eq!(one["kind"], "file");
    assert_eq!(one["size"], 14);
    assert_eq!(one["mimeType"], "text/markdown");
    let text = env
        .run(&m, "readRef", json!({"ref": r, "encoding": "text"}))
        .unwrap();
    assert_eq!(text["content"], "# Report\nhello");
    assert_eq!(text["eof"], true);
    let part = env
        .run(&m, "readRef", json!({"ref": r, "offset": 2, "length": 6}))
        .unwrap();
    assert_eq!(part["encoding"], "base64");
    assert_eq!(part["content"], "UmVwb3J0"); // "Report"
    assert_eq!(part["length"], 6);
    assert_eq!(part["eof"], false);
    let stat = env.run(&m, "stat", json!({"ref": r})).unwrap();
    assert_eq!(stat["size"], 14);
    // No answer names where the file is.
    let docs_text = docs.to_str().unwrap();
    for v in [&list, &text, &part, &stat] {
        assert!(!v.to_string().contains(docs_text), "{v}");
    }
    // Each read is audited with its bytes, without the path.
    assert_eq!(env.reads_audited("files-a"), 2);
    let audit = env.store.audit_log(Some("files-a"), 10).unwrap();
    let read = audit.iter().find(|r| r["action"] == "files.read").unwrap();
    assert_eq!(read["details"]["bytes"], 6);
    assert!(!read.to_string().contains(docs_text));
    let grant = env.store.audit_log(Some("files-a"), 1000).unwrap();
    assert!(grant.iter().any(|r| r["action"] == "files.grant"));
}

#[test]
fn another_apps_ref_a_revoked_ref_and_an_unknown_ref_answer_alike() {
    let mut env = Env::new(&[("files-a", true), ("files-b", true)]);
    let docs = env.user_dir();
    std::fs::write(docs.join("secret.txt"), "b's secret").unwrap();
    let of_b = env.grant("files-b", &docs.join("secret.txt"));
    let of_a = env.grant("files-a", &docs.join("secret.txt"));
    let m = env.mount("files-a");
    let before = env.reads_audited("files-a");

    let other = env.run(&m, "readRef", json!({"ref": of_b})).unwrap_err();
    assert_eq!(code(&other), ("APP_E904", "files.ref_not_found"));
    user_files::revoke(&env.store, "files-a", &of_a).unwrap();
    let revoked = env.run(&m, "readRef", json!({"ref": of_a})).unwrap_err();
    let unknown = env
        .run(
            &m,
            "readRef",
            json!({"ref": "fref_00000000000000000000000000000000"}),
        )
        .unwrap_err();
    assert_eq!(code(&revoked), ("APP_E904", "files.ref_not_found"));
    assert_eq!(code(&unknown), ("APP_E904", "files.ref_not_found"));
    // Same message: no existence leak.
    assert_eq!(other["message"], revoked["message"]);
    assert_eq!(other["message"], unknown["message"]);
    for method in ["stat", "listFolder"] {
        let e = env.run(&m, method, json!({"ref": of_b})).unwrap_err();
        assert_eq!(code(&e), ("APP_E904", "files.ref_not_found"), "{method}");
    }
    assert!(env.run(&m, "list", json!({})).unwrap()["refs"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(env.reads_audited("files-a"), before);
    // Revoking again, or revoking another app's ref, is refused the same way and changes nothing.
    let again = user_files::revoke(&env.store, "files-a", &of_a).unwrap_err();
    assert_eq!(again.code.as_str(), "files.ref_not_found");
    let cross = user_files::revoke(&env.store, "files-a", &of_b).unwrap_err();
    assert_eq!(cross.code.as_str(), "files.ref_not_found");
    assert_eq!(env.store.file_refs("files-b").unwrap().len(), 1);
}

#[test]
fn a_path_or_url_handed_in_as_a_ref_is_refused() {
    let mut env = Env::new(&[("files-a", true)]);
    let m = env.mount("files-a");
    for bad in [
        "/etc/passwd",
        "file:///etc/passwd",
        "../../etc/passwd",
        "~/.ssh/id_ed25519",
        "C:\\Windows\\win.ini",
    ] {
        let e = env.run(&m, "readRef", json!({"ref": bad})).unwrap_err();
        assert_eq!(code(&e), ("APP_E900", "files.path_not_allowed"), "{bad}");
        assert!(!e.to_string().contains("root:"), "{e}");
    }
    let e = env
        .run(&m, "readRef", json!({"ref": "passwd"}))
        .unwrap_err();
    assert_eq!(code(&e), ("APP_E904", "files.ref_not_found"));
    assert_eq!(env.reads_audited("files-a"), 0);
}

#[test]
fn a_folder_grant_reaches_only_plain_files_under_it() {
    let mut env = Env::new(&[("files-a", true)]);
    let docs = env.user_dir();
    let folder = docs.join("project");
    std::fs::create_dir_all(folder.join("sub")).unwrap();
    std::fs::write(folder.join("a.txt"), "A").unwrap();
    std::fs::write(folder.join("sub/b.txt"), "B").unwrap();
    std::os::unix::fs::symlink("/etc", folder.join("etc")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", folder.join("passwd")).unwrap();
    let outside = docs.join("outside.txt");
    std::fs::write(&outside, "outside the folder").unwrap();
    std::fs::hard_link(&outside, folder.join("hard.txt")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        folder.join("pipe"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        0,
    )
    .unwrap();
    let r = env.grant("files-a", &folder);
    let m = env.mount("files-a");

    let listing = env.run(&m, "listFolder", json!({"ref": r})).unwrap();
    let names: Vec<&str> = listing["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a.txt", "sub"]);
    assert_eq!(listing["skipped"], 4); // etc, passwd, hard.txt, pipe
    let sub = env
        .run(&m, "listFolder", json!({"ref": r, "path": "sub"}))
        .unwrap();
    assert_eq!(sub["entries"][0]["name"], "b.txt");
    let b = env
        .run(
            &m,
            "readRef",
            json!({"ref": r, "path": "sub/b.txt", "encoding": "text"}),
        )
        .unwrap();
    assert_eq!(b["content"], "B");
    let reads = env.reads_audited("files-a");

    // Links out, the hard link, the FIFO (must not block), `..` and absolute paths.
    let cases = [
        ("etc/passwd", "files.changed"),
        ("etc", "files.changed"),
        ("passwd", "files.changed"),
        ("hard.txt", "files.changed"),
        ("pipe", "files.changed"),
        ("../outside.txt", "files.path_not_allowed"),
        ("sub/../../outside.txt", "files.path_not_allowed"),
        ("/etc/passwd", "files.path_not_allowed"),
        ("missing.txt", "files.path_not_found"),
        ("sub", "files.wrong_kind"),
    ];
    let started = std::time::Instant::now();
    for (path, cause) in cases {
        let e = env
            .run(&m, "readRef", json!({"ref": r, "path": path}))
            .unwrap_err();
        assert_eq!(code(&e).1, cause, "{path}: {e}");
        assert!(!e.to_string().contains("root:"), "{e}");
        assert!(!e.to_string().contains("outside the folder"), "{e}");
    }
    for (path, cause) in [("etc", "files.changed"), ("..", "files.path_not_allowed")] {
        let e = env
            .run(&m, "listFolder", json!({"ref": r, "path": path}))
            .unwrap_err();
        assert_eq!(code(&e).1, cause, "{path}");
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(env.reads_audited("files-a"), reads);
    // A folder ref read without a path is the wrong kind; a file ref takes no path.
    let e = env.run(&m, "readRef", json!({"ref": r})).unwrap_err();
    assert_eq!(code(&e).1, "files.wrong_kind");
    let f = env.grant("files-a", &folder.join("a.txt"));
    let e = env
        .run(&m, "readRef", json!({"ref": f, "path": "x"}))
        .unwrap_err();
    assert_eq!(code(&e).1, "files.path_not_allowed");
}

#[test]
fn a_file_swapped_for_a_symlink_after_the_grant_is_not_followed() {
    let mut env = Env::new(&[("files-a", true)]);
    let docs = env.user_dir();
    let file = docs.join("notes.txt");
    std::fs::write(&file, "mine").unwrap();
    let r = env.grant("files-a", &file);
    let folder_ref = env.grant("files-a", &docs);
    let m = env.mount("files-a");
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", &file).unwrap();
    for args in [
        json!({"ref": r}),
        json!({"ref": folder_ref, "path": "notes.txt"}),
    ] {
        let e = env.run(&m, "readRef", args.clone()).unwrap_err();
        assert_eq!(code(&e), ("APP_E002", "files.changed"), "{args}");
        assert!(!e.to_string().contains("root:"));
        let e = env.run(&m, "stat", args).unwrap_err();
        assert_eq!(code(&e).1, "files.changed");
    }
    // Swapped for a FIFO: refused without blocking (it is never opened).
    std::fs::remove_file(&file).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &file,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        0,
    )
    .unwrap();
    let started = std::time::Instant::now();
    let e = env.run(&m, "readRef", json!({"ref": r})).unwrap_err();
    assert_eq!(code(&e), ("APP_E002", "files.changed"));
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // A directory of the granted path swapped for a link is not followed either.
    let sub = docs.join("d");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("x.txt"), "x").unwrap();
    let x = env.grant("files-a", &sub.join("x.txt"));
    std::fs::rename(&sub, docs.join("d-moved")).unwrap();
    std::os::unix::fs::symlink(docs.join("d-moved"), &sub).unwrap();
    let e = env.run(&m, "readRef", json!({"ref": x})).unwrap_err();
    assert_eq!(code(&e).1, "files.changed");
    assert_eq!(env.reads_audited("files-a"), 0);
}

#[test]
fn large_files_are_read_in_bounded_ranges_and_bad_ranges_are_refused() {
    let mut env = Env::new(&[("files-a", true)]);
    let docs = env.user_dir();
    let big = docs.join("big.bin");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(64 * 1024 * 1024 * 1024).unwrap(); // 64 GiB, sparse
    drop(f);
    let r = env.grant("files-a", &big);
    let m = env.mount("files-a");
    let e = env.run(&m, "readRef", json!({"ref": r})).unwrap_err();
    assert_eq!(code(&e), ("APP_E900", "files.too_large"));
    assert_eq!(e["details"]["size"], 64u64 * 1024 * 1024 * 1024);
    let e = env
        .run(&m, "readRef", json!({"ref": r, "length": 5 * 1024 * 1024}))
        .unwrap_err();
    assert_eq!(code(&e).1, "files.too_large");
    let ok = env
        .run(
            &m,
            "readRef",
            json!({"ref": r, "offset": 1024u64 * 1024 * 1024, "length": 4 * 1024 * 1024}),
        )
        .unwrap();
    assert_eq!(ok["length"], 4 * 1024 * 1024);
    // Overflowing and nonsense ranges: refused or empty, never a panic or a huge allocation.
    let end = env
        .run(
            &m,
            "readRef",
            json!({"ref": r, "offset": u64::MAX, "length": 4 * 1024 * 1024}),
        )
        .unwrap();
    assert_eq!(end["length"], 0);
    assert_eq!(end["eof"], true);
    for bad in [
        json!({"ref": r, "offset": -1}),
        json!({"ref": r, "offset": 1.5}),
        json!({"ref": r, "offset": "0"}),
        json!({"ref": r, "length": -1}),
        json!({"ref": r, "length": 1e30}),
        json!({"ref": r, "encoding": "utf-16"}),
        json!({"ref": r, "extra": 1}),
        json!({"ref": 7}),
        json!("fref"),
    ] {
        let e = env.run(&m, "readRef", bad.clone()).unwrap_err();
        assert_eq!(code(&e).0, "APP_E900", "{bad}");
    }
    let e = env
        .run(
            &m,
            "readRef",
            json!({"ref": r, "offset": 0, "length": u64::MAX}),
        )
        .unwrap_err();
    assert_eq!(code(&e).1, "files.too_large");
}

#[test]
fn an_app_without_lime_files_declared_cannot_call_it() {
    let mut env = Env::new(&[("plain", false), ("files-a", true)]);
    let docs = env.user_dir();
    std::fs::write(docs.join("x.txt"), "x").unwrap();
    let r = env.grant("plain", &docs.join("x.txt"));
    let m = env.mount("plain");
    for method in ["list", "readRef", "stat", "listFolder"] {
        let e = env.run(&m, method, json!({"ref": r})).unwrap_err();
        assert_eq!(code(&e).0, "APP_E002", "{method}: {e}");
    }
    assert_eq!(env.reads_audited("plain"), 0);
}

#[test]
fn uninstall_in_any_mode_removes_the_apps_refs_and_uploaded_copies() {
    let env = Env::new(&[("files-a", true), ("files-b", true)]);
    let docs = env.user_dir();
    std::fs::write(docs.join("x.txt"), "x").unwrap();
    env.grant("files-a", &docs.join("x.txt"));
    let up = user_files::grant_upload(&env.store, "files-a", "../../evil/\u{7}name.txt", b"data")
        .unwrap();
    assert_eq!(up.display_name, "name.txt");
    let copy = env.dir.user_file_uploads().join(&up.handle);
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&copy).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    env.grant("files-b", &docs.join("x.txt"));
    let (locked, _) = Store::open_locked(&env.dir).unwrap();
    locked
        .uninstall("files-a", DataMode::KeepData, None)
        .unwrap();
    assert!(env.store.file_refs("files-a").unwrap().is_empty());
    assert!(!copy.exists());
    assert_eq!(env.store.file_refs("files-b").unwrap().len(), 1);
    // The user's own file is untouched.
    assert_eq!(std::fs::read_to_string(docs.join("x.txt")).unwrap(), "x");
}

#[test]
fn a_grant_that_would_expose_apphosts_own_state_or_a_special_file_is_refused() {
    let env = Env::new(&[("files-a", true)]);
    let before = env.store.file_refs("files-a").unwrap().len();
    for p in [
        env.dir.root().to_path_buf(),
        env.dir.root().join("host.db"),
        env.tmp.path().to_path_buf(),
    ] {
        let e = user_files::grant_path(&env.store, "files-a", &p).unwrap_err();
        assert_eq!(e.code.as_str(), "files.path_not_allowed", "{}", p.display());
    }
    let fifo = env.user_dir().join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        0,
    )
    .unwrap();
    let e = user_files::grant_path(&env.store, "files-a", &fifo).unwrap_err();
    assert_eq!(e.code.as_str(), "files.path_not_allowed");
    let e =
        user_files::grant_path(&env.store, "files-a", &env.user_dir().join("nope")).unwrap_err();
    assert_eq!(e.code.as_str(), "files.path_not_found");
    let e = user_files::grant_path(&env.store, "not-installed", &env.user_dir()).unwrap_err();
    assert_eq!(e.code.as_str(), "app.not_installed");
    let e = user_files::grant_upload(
        &env.store,
        "files-a",
        "big",
        &vec![0u8; user_files::MAX_UPLOAD_BYTES + 1],
    )
    .unwrap_err();
    assert_eq!(e.code.as_str(), "files.too_large");
    assert_eq!(env.store.file_refs("files-a").unwrap().len(), before);
    let leftovers = std::fs::read_dir(env.dir.user_file_uploads())
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(leftovers, 0);
}
