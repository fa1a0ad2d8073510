//! `lime.agent.startTask({files})`: the app's `lime.files` refs attached to a task. The model
//! gets each file's text with its ref, name and SHA-256, never its path; refusals (another
//! app's ref, a path, a binary file, an app without lime.files) start no task.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::mounting::mount_entry;
use host_core::hosting::bridge::mounts::{Mount, MountTable};
use host_core::hosting::capability::dispatch::{dispatch, SessionAnswers, Verdict};
use host_core::hosting::capability::services::Services;
use host_core::hosting::capability::Call;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::hosting::user_files;
use host_core::install::store::Store;
use runtime_core::backend::{ExecutionBackend, ScriptedBackend};
use serde_json::{json, Value};
use support::agent::set_placeholder_model;
use support::{hello_app_as, install};

struct Env {
    tmp: tempfile::TempDir,
    store: Store,
    profile: HostProfile,
    table: MountTable,
    services: Services,
    answers: SessionAnswers,
    backend: ScriptedBackend,
}

fn app(tmp: &std::path::Path, name: &str, files: bool) -> std::path::PathBuf {
    let caps = if files {
        "    lime.storage: \"^0.10.0\"\n    lime.agent: \"^0.10.0\"\n    lime.files: \"^0.10.0\"\n"
    } else {
        "    lime.storage: \"^0.10.0\"\n    lime.agent: \"^0.10.0\"\n"
    };
    hello_app_as(
        tmp,
        name,
        &[
            ("    lime.storage: \"^0.10.0\"\n", caps),
            (
                "requiredCapabilities: [lime.ui, lime.storage]",
                "requiredCapabilities: [lime.ui, lime.storage, lime.agent]",
            ),
        ],
    )
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &app(tmp.path(), "attach-a", true));
    install(&dir, &app(tmp.path(), "attach-b", true));
    install(&dir, &app(tmp.path(), "no-files", false));
    set_placeholder_model(&dir);
    let store = Store::open(&dir).unwrap();
    let backend = ScriptedBackend::new();
    let mut services = Services::new(dir.apps_data());
    services.set_agent_backend(Arc::new(backend.clone()) as Arc<dyn ExecutionBackend>);
    Env {
        tmp,
        store,
        profile: HostProfile::current(),
        table: MountTable::new(),
        services,
        answers: SessionAnswers::default(),
        backend,
    }
}

impl Env {
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

    fn run(&mut self, m: &Mount, method: &str, args: Value) -> Result<Value, Value> {
        let c = Call {
            request_id: "r1".into(),
            capability: "lime.agent".into(),
            method: method.into(),
            args,
            options: Default::default(),
        };
        match dispatch(
            &self.store,
            &self.profile,
            &m.caller(),
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

    fn tasks(&mut self, m: &Mount) -> usize {
        self.run(m, "listTasks", json!({})).unwrap()["items"]
            .as_array()
            .unwrap()
            .len()
    }

    fn grant(&self, app: &str, name: &str, bytes: &[u8]) -> String {
        let docs = self.tmp.path().join("docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(docs.join(name), bytes).unwrap();
        user_files::grant_path(&self.store, app, &docs.join(name))
            .unwrap()
            .handle
    }
}

#[test]
fn an_attached_file_reaches_the_model_with_its_ref_name_and_hash_never_its_path() {
    let mut e = env();
    let r = e.grant("attach-a", "brief.md", b"Summarise this brief.");
    let m = e.mount("attach-a");
    e.backend.push_text(&["done"]);
    let started = e
        .run(
            &m,
            "startTask",
            json!({"input": "Summarise", "files": [r], "idempotencyKey": "k1"}),
        )
        .unwrap();
    let task = started["taskId"].as_str().unwrap().to_owned();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let t = e.run(&m, "getTask", json!({"taskId": task})).unwrap();
        if t["status"] == "succeeded" {
            break;
        }
        assert!(Instant::now() < deadline, "{t}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = serde_json::to_string(
        &e.backend
            .requests()
            .iter()
            .map(|r| format!("{r:?}"))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    assert!(sent.contains(&r), "{sent}");
    assert!(sent.contains("brief.md"));
    assert!(sent.contains("Summarise this brief."));
    // sha256("Summarise this brief.")
    let hash = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(b"Summarise this brief."))
    };
    assert!(sent.contains(&hash), "{sent}");
    let docs = e.tmp.path().join("docs");
    assert!(
        !sent.contains(docs.to_str().unwrap()),
        "the path reached the model"
    );
    let reads = e.store.audit_log(Some("attach-a"), 100).unwrap();
    let read = reads.iter().find(|r| r["action"] == "files.read").unwrap();
    assert_eq!(read["details"]["for"], "agent.startTask");
    assert_eq!(read["details"]["bytes"], 21);
}

#[test]
fn attachments_that_are_not_the_apps_readable_text_start_no_task() {
    let mut e = env();
    let of_b = e.grant("attach-b", "b.txt", b"b's");
    let binary = e.grant("attach-a", "blob.bin", &[0xff, 0xfe, 0x00, 0x80]);
    let m = e.mount("attach-a");
    let cases = [
        (json!([of_b]), "APP_E904", "files.ref_not_found"),
        (json!(["/etc/passwd"]), "APP_E900", "files.path_not_allowed"),
        (
            json!(["file:///etc/passwd"]),
            "APP_E900",
            "files.path_not_allowed",
        ),
        (json!([binary]), "APP_E900", "files.not_text"),
        (
            json!([{"ref": binary, "extra": 1}]),
            "APP_E900",
            "agent.invalid_argument",
        ),
        (json!("fref_x"), "APP_E900", "agent.invalid_argument"),
        (
            json!(vec![binary.clone(); 9]),
            "APP_E900",
            "agent.invalid_argument",
        ),
    ];
    for (files, code, cause) in cases {
        let err = e
            .run(&m, "startTask", json!({"input": "x", "files": files}))
            .unwrap_err();
        assert_eq!(
            (
                err["code"].as_str().unwrap(),
                err["causeCode"].as_str().unwrap()
            ),
            (code, cause),
            "{files}: {err}"
        );
        assert!(!err.to_string().contains("b's"));
    }
    assert_eq!(e.tasks(&m), 0);
    let other = e.mount("no-files");
    let err = e
        .run(&other, "startTask", json!({"input": "x", "files": [of_b]}))
        .unwrap_err();
    assert_eq!(err["causeCode"], "files.not_declared");
    assert_eq!(e.tasks(&other), 0);
}
