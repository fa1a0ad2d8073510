//! `lime.knowledge`: a folder the user binds to a declared knowledge template is indexed and
//! searched through the choke point with citations; readiness flips on bind; every refusal
//! (a template of another app, an unbound or undeclared template, FTS5 syntax in the query, a
//! bad folder) has a stable code and changes nothing; uninstall removes the binding.

mod support;

use std::path::{Path, PathBuf};

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::app_knowledge;
use host_core::hosting::bridge::mounting::mount_entry;
use host_core::hosting::bridge::mounts::MountTable;
use host_core::hosting::capability::dispatch::{dispatch, CallError, SessionAnswers, Verdict};
use host_core::hosting::capability::services::Services;
use host_core::hosting::capability::Call;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::install::readiness::Status;
use host_core::install::store::{DataMode, Store};
use host_core::ErrorCode;
use serde_json::{json, Value};
use support::{copy_dir, install, repo_root};

const TEMPLATES: &str = "knowledgeTemplates:\n  - {key: handbook, standard: agentknowledge, type: pack, required: true}\n  - {key: extra, standard: agentknowledge, type: pack}\n";

/// The notes sample as `name`, declaring `lime.knowledge` and two templates.
fn package(root: &Path, name: &str) -> PathBuf {
    let p = root.join(name);
    copy_dir(&repo_root().join("fixtures/apps/notes"), &p);
    let app_md = p.join("APP.md");
    let text = std::fs::read_to_string(&app_md).unwrap();
    let text = text
        .replacen("name: notes\n", &format!("name: {name}\n"), 1)
        .replacen(
            "    lime.storage: \"^0.10.0\"\n",
            "    lime.storage: \"^0.10.0\"\n    lime.knowledge: \"^0.10.0\"\n",
            1,
        )
        .replacen(
            "storage:\n  namespace",
            &format!("{TEMPLATES}storage:\n  namespace"),
            1,
        );
    std::fs::write(&app_md, text).unwrap();
    p
}

struct Host {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    dir: DataDir,
    services: Services,
    answers: SessionAnswers,
}

impl Host {
    fn new() -> Host {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_owned();
        let dir = DataDir::at(root.join("data"));
        install(&dir, &package(&root, "notes"));
        Host {
            services: Services::new(dir.apps_data()),
            _tmp: tmp,
            root,
            dir,
            answers: SessionAnswers::default(),
        }
    }

    fn docs(&self) -> PathBuf {
        let d = self.root.join("docs");
        std::fs::create_dir_all(d.join("policies")).unwrap();
        std::fs::write(d.join("guide.md"), "# Returns\nItems can be returned within 30 days.\n\n# Shipping\nWe ship parcels on Mondays.\n").unwrap();
        std::fs::write(
            d.join("policies/refunds.html"),
            "<h1>Refund policy</h1><p>Refunds reach your card in 5 days.</p>",
        )
        .unwrap();
        d
    }

    fn bind(&self, template: &str, folder: &Path) -> Result<(), ErrorCode> {
        let (store, _) = Store::open_locked(&self.dir).unwrap();
        app_knowledge::bind(&store, "notes", template, folder)
            .map(|_| ())
            .map_err(|e| e.code)
    }

    fn readiness(&self) -> Status {
        Store::open(&self.dir)
            .unwrap()
            .readiness("notes", &HostProfile::all_available())
            .unwrap()
            .status
    }

    fn search(&mut self, args: Value) -> Result<Value, CallError> {
        let store = Store::open(&self.dir).unwrap();
        let profile = HostProfile::all_available();
        let mount = mount_entry(
            &store,
            &profile,
            &mut MountTable::new(),
            &OriginStyle::Scheme,
            "notes",
            "notes",
        )
        .unwrap();
        let inv = Call {
            request_id: "r1".into(),
            capability: "lime.knowledge".into(),
            method: "search".into(),
            args,
            options: Default::default(),
        };
        match dispatch(
            &store,
            &profile,
            &mount.caller(),
            &inv,
            "t",
            &mut self.answers,
        ) {
            Verdict::Allowed(proof) => self
                .services
                .call_with(&store, &proof, &inv.args)
                .map(|r| r.value),
            Verdict::Denied(e) => Err(e),
            Verdict::Ask(q) => panic!("unexpected prompt {q:?}"),
        }
    }

    fn bindings(&self) -> usize {
        Store::open(&self.dir)
            .unwrap()
            .knowledge_bindings("notes")
            .unwrap()
            .len()
    }
}

fn cause(e: &CallError) -> (&str, Option<&str>) {
    (e.code.as_str(), e.cause_code)
}

#[test]
fn binding_a_folder_makes_the_app_ready_and_search_returns_citations() {
    let mut h = Host::new();
    assert_eq!(h.readiness(), Status::NeedsSetup);
    let report = Store::open(&h.dir)
        .unwrap()
        .readiness("notes", &HostProfile::all_available())
        .unwrap();
    assert!(report
        .setup_actions
        .iter()
        .any(|a| a.kind == "bind-knowledge" && a.key == "handbook"));
    // A needs-setup app does not mount, so its frames cannot call before the user binds.
    let docs = h.docs();
    h.bind("handbook", &docs).unwrap();
    assert_eq!(h.readiness(), Status::Ready);
    // The optional template is still unbound: a stable refusal, no index created for it.
    let e = h
        .search(json!({"template": "extra", "query": "refunds"}))
        .unwrap_err();
    assert_eq!(cause(&e), ("APP_E003", Some("knowledge.not_bound")));
    let indexes = std::fs::read_dir(h.dir.apps_data().join("notes/knowledge"))
        .unwrap()
        .count();
    assert_eq!(indexes, 1);
    let v = h
        .search(json!({"template": "handbook", "query": "refunds card", "topK": 3}))
        .unwrap();
    let hits = v["hits"].as_array().unwrap();
    assert_eq!(hits[0]["document"], "policies/refunds.html");
    assert_eq!(hits[0]["section"], "Refund policy");
    let (start, end) = (
        hits[0]["start"].as_u64().unwrap() as usize,
        hits[0]["end"].as_u64().unwrap() as usize,
    );
    let src = std::fs::read_to_string(docs.join("policies/refunds.html")).unwrap();
    assert!(src[start..end].contains("Refunds reach your card"));
    assert!(hits[0]["snippet"].as_str().unwrap().contains("[Refunds]"));
    assert!(hits[0]["score"].as_f64().unwrap() > 0.0);
    let v = h
        .search(json!({"template": "handbook", "query": "mondays"}))
        .unwrap();
    assert_eq!(v["hits"][0]["section"], "Shipping");

    // Fresh content after a reindex (the CLI's `knowledge reindex`, the watcher's job).
    std::fs::write(docs.join("new.md"), "# Warranty\nTwo years of warranty.\n").unwrap();
    {
        let store = Store::open(&h.dir).unwrap();
        let r = app_knowledge::reindex(&store, "notes", "handbook").unwrap();
        assert_eq!((r.report.indexed, r.report.unchanged), (1, 2));
    }
    let v = h
        .search(json!({"template": "handbook", "query": "warranty"}))
        .unwrap();
    assert_eq!(v["hits"][0]["document"], "new.md");
}

#[test]
fn injection_undeclared_and_bad_arguments_are_refused_with_stable_codes() {
    let mut h = Host::new();
    let docs = h.docs();
    h.bind("handbook", &docs).unwrap();
    // FTS5 syntax is only words: no error from FTS5, no match-everything.
    for q in ["\"a\" OR x:*", "NEAR(", "title:* OR body:*", "refunds*"] {
        let v = h
            .search(json!({"template": "handbook", "query": q}))
            .unwrap();
        assert!(v["hits"].as_array().unwrap().len() <= 1, "{q}: {v}");
    }
    let refused = [
        (
            json!({"template": "handbook", "query": "*:^"}),
            "APP_E900",
            "knowledge.query_invalid",
        ),
        (
            json!({"template": "handbook", "query": "x".repeat(2000)}),
            "APP_E900",
            "knowledge.query_invalid",
        ),
        (
            json!({"template": "handbook", "query": "a", "topK": 0}),
            "APP_E900",
            "knowledge.query_invalid",
        ),
        (
            json!({"template": "handbook", "query": "a", "topK": 51}),
            "APP_E900",
            "knowledge.query_invalid",
        ),
        (
            json!({"template": "handbook"}),
            "APP_E900",
            "knowledge.invalid_argument",
        ),
        (
            json!({"template": "handbook", "query": "a", "path": "/etc"}),
            "APP_E900",
            "knowledge.invalid_argument",
        ),
        (
            json!({"template": "other-apps-kb", "query": "a"}),
            "APP_E002",
            "knowledge.template_not_declared",
        ),
        (
            json!({"template": "extra", "query": "a"}),
            "APP_E003",
            "knowledge.not_bound",
        ),
    ];
    for (args, code, cause_code) in refused {
        let e = h.search(args.clone()).unwrap_err();
        assert_eq!(cause(&e), (code, Some(cause_code)), "{args}");
    }
    // A bad folder or an undeclared template binds nothing.
    assert_eq!(
        h.bind("extra", Path::new("relative/dir")),
        Err(ErrorCode::KnowledgeFolderInvalid)
    );
    assert_eq!(
        h.bind("extra", &h.root.join("missing")),
        Err(ErrorCode::KnowledgeFolderInvalid)
    );
    assert_eq!(
        h.bind("extra", &docs.join("guide.md")),
        Err(ErrorCode::KnowledgeFolderInvalid)
    );
    assert_eq!(
        h.bind("nope", &docs),
        Err(ErrorCode::KnowledgeTemplateNotDeclared)
    );
    assert_eq!(h.bindings(), 1);
}

#[test]
fn a_template_of_another_app_is_not_reachable() {
    let mut h = Host::new();
    install(&h.dir, &package(&h.root, "other"));
    let docs = h.docs();
    {
        let (store, _) = Store::open_locked(&h.dir).unwrap();
        app_knowledge::bind(&store, "other", "extra", &docs).unwrap();
    }
    let empty = h.root.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    h.bind("handbook", &empty).unwrap();
    // `other` bound its own `extra`; `notes`' template of the same key is still unbound, and
    // notes' own index has nothing of other's folder.
    let e = h
        .search(json!({"template": "extra", "query": "refunds"}))
        .unwrap_err();
    assert_eq!(cause(&e), ("APP_E003", Some("knowledge.not_bound")));
    let v = h
        .search(json!({"template": "handbook", "query": "refunds"}))
        .unwrap();
    assert!(v["hits"].as_array().unwrap().is_empty());
}

#[test]
fn a_link_out_of_the_bound_folder_is_skipped_and_reported() {
    let mut h = Host::new();
    let docs = h.docs();
    let outside = h.root.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.md"), "# Secret\nexfiltrated words\n").unwrap();
    std::os::unix::fs::symlink(outside.join("secret.md"), docs.join("leak.md")).unwrap();
    h.bind("handbook", &docs).unwrap();
    let v = h
        .search(json!({"template": "handbook", "query": "exfiltrated"}))
        .unwrap();
    assert!(v["hits"].as_array().unwrap().is_empty());
    let st = app_knowledge::status(&Store::open(&h.dir).unwrap(), Some("notes")).unwrap();
    assert_eq!(st.len(), 1);
    assert_eq!(st[0].index.files, 2);
    assert!(st[0]
        .index
        .problems
        .iter()
        .any(|p| p.code == "knowledge.link_skipped" && p.path == "leak.md"));
}

#[test]
fn unbind_and_uninstall_remove_the_binding_and_delete_data_the_index() {
    let mut h = Host::new();
    let docs = h.docs();
    h.bind("handbook", &docs).unwrap();
    h.bind("extra", &docs).unwrap();
    h.search(json!({"template": "extra", "query": "refunds"}))
        .unwrap();
    {
        let (store, _) = Store::open_locked(&h.dir).unwrap();
        app_knowledge::unbind(&store, "notes", "extra").unwrap();
        let e = app_knowledge::unbind(&store, "notes", "extra").unwrap_err();
        assert_eq!(e.code, ErrorCode::KnowledgeNotBound);
    }
    let e = h
        .search(json!({"template": "extra", "query": "refunds"}))
        .unwrap_err();
    assert_eq!(cause(&e), ("APP_E003", Some("knowledge.not_bound")));
    // Rebound to another folder: the service opens the new index, not the one it had open.
    let other = h.root.join("other-docs");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("a.txt"), "nothing about money\n").unwrap();
    h.bind("extra", &other).unwrap();
    let v = h
        .search(json!({"template": "extra", "query": "refunds money"}))
        .unwrap();
    assert_eq!(v["hits"].as_array().unwrap().len(), 1);
    assert_eq!(v["hits"][0]["document"], "a.txt");
    {
        let (store, _) = Store::open_locked(&h.dir).unwrap();
        app_knowledge::unbind(&store, "notes", "handbook").unwrap();
    }
    assert_eq!(h.readiness(), Status::NeedsSetup);
    h.services.close_app("notes");
    let (store, _) = Store::open_locked(&h.dir).unwrap();
    store
        .uninstall("notes", DataMode::DeleteData, None)
        .unwrap();
    assert!(store.knowledge_bindings("notes").unwrap().is_empty());
    assert!(!h.dir.apps_data().join("notes/knowledge").exists());
}

#[test]
fn the_host_watcher_re_indexes_a_bound_folder_when_files_change() {
    let mut h = Host::new();
    let docs = h.docs();
    h.bind("handbook", &docs).unwrap();
    let _watch = host_core::hosting::knowledge_watch::KnowledgeWatcher::start(h.dir.clone());
    // Let the watcher read the bindings and watch the folder, then change a file.
    std::thread::sleep(std::time::Duration::from_millis(800));
    std::fs::write(
        docs.join("policies/late.md"),
        "# Loyalty\nMembers earn loyalty points.\n",
    )
    .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let v = h
            .search(json!({"template": "handbook", "query": "loyalty"}))
            .unwrap();
        if v["hits"].as_array().unwrap().len() == 1 {
            assert_eq!(v["hits"][0]["document"], "policies/late.md");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "not re-indexed: {v}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
