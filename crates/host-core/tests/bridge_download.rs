//! `host:download` through `BridgeHost`: Rust checks the request (choke point for artifacts,
//! bounds, name), the host UI only asks the user, and the file lands in the download folder
//! without replacing anything; a cancel, a revoke before saving, another app's artifact, an
//! unmounted frame and a forged answer all write nothing.

mod support;

use std::path::{Path, PathBuf};

use host_core::foundation::error::ErrorCode;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::host::{BridgeHost, Outgoing, MAX_PENDING_DOWNLOADS};
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::bridge::mounts::Mount;
use host_core::hosting::capability::services::Services;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::install::store::Store;
use serde_json::{json, Value};
use support::{copy_dir, fixture, install};

/// hello-app renamed `name`, declaring lime.artifacts with an optional artifact permission.
fn app(tmp: &Path, name: &str) -> PathBuf {
    let pkg = tmp.join(format!("pkg-{name}"));
    copy_dir(&fixture("good/hello-app"), &pkg);
    let md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&md)
        .unwrap()
        .replace("hello-app", name)
        .replace(
            "    lime.storage: \"^0.10.0\"\n",
            "    lime.storage: \"^0.10.0\"\n    lime.artifacts: \"^0.10.0\"\n",
        )
        .replace(
            "requiredCapabilities: [lime.ui, lime.storage]",
            "requiredCapabilities: [lime.ui, lime.storage, lime.artifacts]",
        )
        .replace(
            "permissions: [notes_storage]",
            "permissions: [notes_storage, notes_artifacts]",
        );
    std::fs::write(&md, text).unwrap();
    let perms = pkg.join("app.permissions.yaml");
    let mut p = std::fs::read_to_string(&perms).unwrap();
    p.push_str("  - key: notes_artifacts\n    scope: artifact\n    access: read-write\n    required: false\n    reason: Export notes.\n");
    std::fs::write(&perms, p).unwrap();
    pkg
}

struct Env {
    _tmp: tempfile::TempDir,
    downloads: PathBuf,
    store: Store,
    host: BridgeHost,
    n: u32,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path().join("data"));
        install(&dir, &app(tmp.path(), "dl-a"));
        install(&dir, &app(tmp.path(), "dl-b"));
        let store = Store::open_for_calls(&dir).unwrap();
        for a in ["dl-a", "dl-b"] {
            store.grant(a, "notes_artifacts").unwrap();
        }
        let host = BridgeHost::new(
            Services::new(dir.apps_data()),
            HostProfile::current(),
            OriginStyle::Scheme,
        );
        Env {
            downloads: tmp.path().join("Downloads"),
            _tmp: tmp,
            store,
            host,
            n: 0,
        }
    }

    fn mount(&mut self, app: &str) -> Mount {
        let m = self.host.mount(&self.store, app, "notes").unwrap();
        self.send(&m, "app:ready", json!({}));
        m
    }

    fn send(&mut self, m: &Mount, kind: &str, payload: Value) -> (String, Vec<Outgoing>) {
        self.n += 1;
        let id = format!("r{}", self.n);
        let msg = json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
                         "appId": m.app_id, "entryKey": m.entry_key, "payload": payload});
        let out = self
            .host
            .handle(&self.store, &m.mount_id, &m.origin, &msg.to_string());
        (id, out)
    }

    fn answer(&mut self, download_id: &str, save: bool) -> Vec<Outgoing> {
        let dir = self.downloads.clone();
        self.host
            .answer_download(&self.store, download_id, save, Some(&dir))
            .unwrap()
    }

    fn files(&self) -> Vec<String> {
        let mut v: Vec<String> = match std::fs::read_dir(&self.downloads) {
            Ok(rd) => rd
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect(),
            Err(_) => Vec::new(),
        };
        v.sort();
        v
    }
}

/// The one `ConfirmDownload` in `out`: (download id, file name, size, MIME type).
fn confirm(out: &[Outgoing]) -> (String, String, u64, String) {
    match out {
        [Outgoing::ConfirmDownload {
            download_id,
            file_name,
            size,
            mime_type,
            ..
        }] => (
            download_id.clone(),
            file_name.clone(),
            *size,
            mime_type.clone(),
        ),
        other => panic!("expected one ConfirmDownload, got {other:?}"),
    }
}

/// The one posted message's (type, payload).
fn posted(out: &[Outgoing]) -> (String, Value) {
    match out {
        [Outgoing::Post { message, .. }] => (
            message["type"].as_str().unwrap().to_owned(),
            message["payload"].clone(),
        ),
        other => panic!("expected one post, got {other:?}"),
    }
}

fn create_artifact(env: &mut Env, m: &Mount, name: &str, text: &str) -> String {
    let (_, out) = env.send(
        m,
        "capability:invoke",
        json!({"capability": "lime.artifacts", "method": "create",
               "args": {"name": name, "mimeType": "text/markdown", "text": text}}),
    );
    let (kind, payload) = posted(&out);
    assert_eq!(kind, "host:response", "{payload}");
    payload["value"]["id"].as_str().unwrap().to_owned()
}

#[test]
fn bytes_and_artifacts_are_saved_only_after_the_user_confirms_and_never_replace_a_file() {
    let mut env = Env::new();
    let m = env.mount("dl-a");

    // Bytes: the name is sanitized before the user sees it.
    let (_, out) = env.send(
        &m,
        "host:download",
        json!({"text": "# hi", "fileName": "../../.bashrc\u{202e}txt.md", "mimeType": "text/markdown"}),
    );
    let (id, name, size, mime) = confirm(&out);
    assert_eq!(
        (name.as_str(), size, mime.as_str()),
        ("bashrctxt.md", 4, "text/markdown")
    );
    assert!(env.files().is_empty(), "nothing before the answer");
    let (kind, payload) = posted(&env.answer(&id, true));
    assert_eq!(kind, "host:response");
    assert_eq!(
        payload["value"],
        json!({"saved": true, "fileName": "bashrctxt.md"})
    );
    assert_eq!(
        std::fs::read(env.downloads.join("bashrctxt.md")).unwrap(),
        b"# hi"
    );

    // Same name again: " (1)", the first file untouched.
    let (_, out) = env.send(
        &m,
        "host:download",
        json!({"base64": "AAEC", "fileName": "bashrctxt.md"}),
    );
    let (id, _, size, mime) = confirm(&out);
    assert_eq!((size, mime.as_str()), (3, "application/octet-stream"));
    let (_, payload) = posted(&env.answer(&id, true));
    assert_eq!(payload["value"]["fileName"], "bashrctxt (1).md");
    assert_eq!(
        std::fs::read(env.downloads.join("bashrctxt.md")).unwrap(),
        b"# hi"
    );
    assert_eq!(
        std::fs::read(env.downloads.join("bashrctxt (1).md")).unwrap(),
        [0, 1, 2]
    );

    // An artifact of its own: name, size and type from the store.
    let art = create_artifact(&mut env, &m, "report.md", "# report");
    let (_, out) = env.send(&m, "host:download", json!({"artifactId": art}));
    let (id, name, size, mime) = confirm(&out);
    assert_eq!(
        (name.as_str(), size, mime.as_str()),
        ("report.md", 8, "text/markdown")
    );
    let (_, payload) = posted(&env.answer(&id, true));
    assert_eq!(
        payload["value"],
        json!({"saved": true, "fileName": "report.md"})
    );
    assert_eq!(
        std::fs::read(env.downloads.join("report.md")).unwrap(),
        b"# report"
    );

    // Cancel: answered, nothing written.
    let (_, out) = env.send(
        &m,
        "host:download",
        json!({"text": "x", "fileName": "c.txt"}),
    );
    let (id, ..) = confirm(&out);
    let (_, payload) = posted(&env.answer(&id, false));
    assert_eq!(payload["value"], json!({"saved": false}));
    assert_eq!(
        env.files(),
        ["bashrctxt (1).md", "bashrctxt.md", "report.md"]
    );

    // An answer is used once; a forged id is an error and writes nothing.
    let e = env
        .host
        .answer_download(&env.store, &id, true, Some(&env.downloads.clone()))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::DownloadUnknown);
    let e = env
        .host
        .answer_download(
            &env.store,
            "download_forged",
            true,
            Some(&env.downloads.clone()),
        )
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::DownloadUnknown);
    assert_eq!(env.files().len(), 3);

    // Every save is audited.
    let audit = env.store.audit_log(Some("dl-a"), 100).unwrap();
    assert_eq!(
        audit
            .iter()
            .filter(|r| r["action"] == "download.save")
            .count(),
        3
    );
}

#[test]
fn artifacts_need_the_permission_at_ask_and_at_save_and_only_the_apps_own() {
    let mut env = Env::new();
    let a = env.mount("dl-a");
    let b = env.mount("dl-b");
    let art = create_artifact(&mut env, &a, "secret.md", "# mine");

    // Another app naming A's artifact id: not found in its own store, no dialog.
    let (_, out) = env.send(&b, "host:download", json!({"artifactId": art}));
    let (kind, payload) = posted(&out);
    assert_eq!(kind, "host:error");
    assert_eq!(payload["code"], "APP_E904", "{payload}");

    // Revoked between the question and the answer: refused at save time, nothing written.
    let (_, out) = env.send(&a, "host:download", json!({"artifactId": art}));
    let (id, ..) = confirm(&out);
    env.store.revoke("dl-a", "notes_artifacts").unwrap();
    let (kind, payload) = posted(&env.answer(&id, true));
    assert_eq!(kind, "host:error");
    assert_eq!(payload["code"], "APP_E002", "{payload}");
    // Not granted when asked: refused, no dialog (the app asks for the permission first).
    let (_, out) = env.send(&a, "host:download", json!({"artifactId": art}));
    let (kind, payload) = posted(&out);
    assert_eq!(kind, "host:error");
    assert_eq!(
        (payload["code"].as_str(), payload["causeCode"].as_str()),
        (Some("APP_E002"), Some("permission.denied"))
    );
    assert!(env.files().is_empty());
    // Both checks went through the choke point and were audited.
    let audit = env.store.audit_log(Some("dl-a"), 100).unwrap();
    let reads = audit
        .iter()
        .filter(|r| {
            r["details"]["capability"] == "lime.artifacts" && r["details"]["method"] == "read"
        })
        .count();
    assert_eq!(reads, 3);
}

#[test]
fn bad_requests_are_refused_before_any_dialog_and_pending_ones_are_bounded() {
    let mut env = Env::new();
    let m = env.mount("dl-a");
    // Exactly one source: two, none, or an unknown field are refused by the decoder (ignored,
    // counted, never answered).
    for payload in [
        json!({"text": "a", "base64": "AA=="}),
        json!({"fileName": "x"}),
        json!({"text": "a", "path": "/etc/passwd"}),
    ] {
        let (_, out) = env.send(&m, "host:download", payload.clone());
        assert!(out.is_empty(), "{payload}: {out:?}");
    }
    for (payload, cause) in [
        (json!({"base64": "***"}), "download.invalid_argument"),
        (
            json!({"text": "a", "mimeType": "not a type"}),
            "download.invalid_argument",
        ),
    ] {
        let (_, out) = env.send(&m, "host:download", payload.clone());
        let (kind, p) = posted(&out);
        assert_eq!(kind, "host:error", "{payload}");
        assert_eq!(p["causeCode"], cause, "{payload}");
    }
    // At most MAX_PENDING_DOWNLOADS wait for the user; then a retryable rate limit.
    let mut ids = Vec::new();
    for i in 0..MAX_PENDING_DOWNLOADS {
        let (_, out) = env.send(&m, "host:download", json!({"text": format!("{i}")}));
        ids.push(confirm(&out).0);
    }
    let (_, out) = env.send(&m, "host:download", json!({"text": "over"}));
    let (kind, p) = posted(&out);
    assert_eq!(
        (kind.as_str(), p["code"].as_str()),
        ("host:error", Some("HOST_E_RATE_LIMITED"))
    );
    assert_eq!(p["retryable"], true);
    // Unmounting drops them: a late answer finds nothing and writes nothing.
    env.host.unmount(&m.mount_id);
    let e = env
        .host
        .answer_download(&env.store, &ids[0], true, Some(&env.downloads.clone()))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::DownloadUnknown);
    assert!(env.files().is_empty());
}
