//! The agent tools against the attacks of the review: reserved files, quotas, planted links.

use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::json;

use super::*;
use crate::app_artifacts::{ArtifactLimits, MAX_LIST_LIMIT};

#[derive(Debug)]
struct Small {
    storage_quota: u64,
    artifact_quota: u64,
}

impl ToolPolicy for Small {
    fn storage_quota(&self, _app: &AppId) -> u64 {
        self.storage_quota
    }
    fn artifact_limits(&self, _app: &AppId) -> ArtifactLimits {
        ArtifactLimits {
            quota_bytes: self.artifact_quota,
            ..ArtifactLimits::default()
        }
    }
    fn artifact_write_needs_approval(&self) -> bool {
        false
    }
    fn package(&self, _app: &AppId) -> Option<PackageFacts> {
        Some(PackageFacts {
            app_version: "1.2.3".into(),
            package_hash: "sha256:p".into(),
            manifest_hash: "sha256:m".into(),
        })
    }
}

fn tools(root: &Path, storage_quota: u64, artifact_quota: u64) -> HostTools {
    HostTools::new(AppDataStore::new(root)).with_policy(Arc::new(Small {
        storage_quota,
        artifact_quota,
    }))
}

fn call(app: &str) -> ToolCall {
    ToolCall {
        app: AppId::new(app).unwrap(),
        session_id: "sess_1".into(),
        turn_id: "turn_1".into(),
        tool_call_id: "call_1".into(),
    }
}

fn write(t: &HostTools, path: &str, content: &str) -> Result<ToolOutput, ToolError> {
    t.run(
        &call("demo"),
        "storage_write",
        &json!({"path": path, "content": content}),
    )
}

/// Every file under `dir`, with its bytes (links read as their target text).
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd {
        let e = e.unwrap();
        let p = e.path();
        let m = std::fs::symlink_metadata(&p).unwrap();
        if m.is_dir() {
            for (n, b) in snapshot(&p) {
                out.push((format!("{}/{n}", e.file_name().to_string_lossy()), b));
            }
        } else if m.file_type().is_symlink() {
            let t = std::fs::read_link(&p).unwrap();
            out.push((
                e.file_name().to_string_lossy().into(),
                t.to_string_lossy().into_owned().into_bytes(),
            ));
        } else {
            out.push((
                e.file_name().to_string_lossy().into(),
                std::fs::read(&p).unwrap(),
            ));
        }
    }
    out.sort();
    out
}

#[test]
fn paths_cannot_leave_the_files_area() {
    let tmp = tempfile::tempdir().unwrap();
    let t = HostTools::new(AppDataStore::new(tmp.path()));
    let demo = call("demo");
    for bad in ["../x", "/etc/passwd", "a/../../b", "", "a//b", "./x"] {
        let e = t
            .run(&demo, "storage_read", &json!({"path": bad}))
            .unwrap_err();
        assert_eq!(e.code, "invalid_path", "{bad}");
        let e = write(&t, bad, "x").unwrap_err();
        assert_eq!(e.code, "invalid_path", "{bad}");
    }
    assert!(
        !tmp.path().join("demo").exists(),
        "a refused call created nothing"
    );
    write(&t, "d/a.txt", "hi").unwrap();
    let (out, _) = t
        .run(&demo, "storage_read", &json!({"path": "d/a.txt"}))
        .unwrap();
    assert_eq!(out, "hi");
    assert_eq!(
        std::fs::read(tmp.path().join("demo/files/d/a.txt")).unwrap(),
        b"hi"
    );
    let (list, _) = t.run(&demo, "storage_list", &json!({})).unwrap();
    assert_eq!(list, "d/a.txt\t2\n");
    assert_eq!(
        t.run(&call("other"), "storage_read", &json!({"path": "d/a.txt"}))
            .unwrap_err()
            .code,
        "not_found"
    );
}

/// The attack: `storage_write {path: "storage.sqlite"}` clobbered the app's database. Now every
/// reserved name lands in `files/`, and `lime.storage` keeps working.
#[test]
fn reserved_names_are_confined_to_files_and_lime_storage_keeps_working() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tools(tmp.path(), crate::app_storage::DEFAULT_QUOTA_BYTES, 1 << 20);
    let dir = tmp.path().join("demo");
    let mut kv = AppStorage::open(&dir, crate::app_storage::DEFAULT_QUOTA_BYTES).unwrap();
    kv.set("k", &json!("before")).unwrap();
    let db_before = std::fs::read(dir.join("storage.sqlite")).unwrap();
    for name in [
        "storage.sqlite",
        "storage.sqlite-wal",
        "storage.sqlite-shm",
        "storage.sqlite-journal",
        "artifacts.sqlite",
        "artifact-blobs/x",
        "evidence.sqlite",
    ] {
        write(&t, name, "hello").unwrap();
        assert_eq!(
            std::fs::read(dir.join("files").join(name)).unwrap(),
            b"hello",
            "{name}"
        );
    }
    assert_eq!(
        std::fs::read(dir.join("storage.sqlite")).unwrap(),
        db_before
    );
    assert!(!dir.join("artifacts.sqlite").exists());
    assert!(!dir.join("evidence.sqlite").exists());
    assert!(!dir.join("artifact-blobs").exists());
    // The database still opens and answers, on the open connection and a new one.
    assert_eq!(kv.get("k").unwrap(), Some(json!("before")));
    kv.set("k", &json!("after")).unwrap();
    drop(kv);
    let kv = AppStorage::open(&dir, crate::app_storage::DEFAULT_QUOTA_BYTES).unwrap();
    assert_eq!(kv.get("k").unwrap(), Some(json!("after")));
}

/// The attack: `storage_write` wrote 7.7 MiB against a 1 MiB quota. Now `files/` and
/// `storage.sqlite` share the quota: a write over it is `quota_exceeded` and writes nothing.
#[test]
fn storage_write_over_the_storage_quota_is_refused_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let quota = 256 * 1024;
    let t = tools(tmp.path(), quota, 1 << 20);
    let chunk = "x".repeat(64 * 1024);
    let mut written = 0;
    let err = loop {
        match write(&t, &format!("f{written}.txt"), &chunk) {
            Ok(_) => written += 1,
            Err(e) => break e,
        }
        assert!(written < 10, "the quota never bit");
    };
    assert_eq!(err.code, "quota_exceeded");
    assert!(
        (2..4).contains(&written),
        "{written} chunks of 64 KiB fit in 256 KiB"
    );
    let dir = tmp.path().join("demo");
    let before = snapshot(&dir.join("files"));
    assert_eq!(
        write(&t, "big.txt", &chunk).unwrap_err().code,
        "quota_exceeded"
    );
    // Replacing a file counts only the difference.
    write(&t, "f0.txt", "small").unwrap();
    write(&t, "f0.txt", &chunk).unwrap();
    assert_eq!(
        snapshot(&dir.join("files")),
        before,
        "nothing of the refused writes landed"
    );
    // The other side: lime.storage sees what files/ holds and cannot grow past the rest.
    let mut kv = AppStorage::open(&dir, quota).unwrap();
    let e = kv.set("big", &json!("y".repeat(100 * 1024))).unwrap_err();
    assert_eq!(e.app_code(), "APP_E201");
    assert_eq!(kv.get("big").unwrap(), None);
}

/// The attack: 320 `artifact_write` calls of 1 MB wrote past the 256 MiB artifact quota and
/// were listed nowhere. Now each call is a `lime.artifacts` artifact: listed, with provenance,
/// and refused over the quota.
#[test]
fn artifact_write_makes_listed_artifacts_and_is_refused_over_quota() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tools(tmp.path(), 1 << 20, 100 * 1024);
    let demo = call("demo");
    let mut made = Vec::new();
    let err = loop {
        let content = format!("{}{}", made.len(), "a".repeat(30 * 1024));
        match t.run(
            &demo,
            "artifact_write",
            &json!({"title": format!("Report {}", made.len()), "content": content, "kind": "markdown"}),
        ) {
            Ok((_, recs)) => made.push(recs[0].clone()),
            Err(e) => break e,
        }
        assert!(made.len() < 10, "the quota never bit");
    };
    assert_eq!(err.code, "quota_exceeded");
    assert_eq!(made.len(), 3);
    let store = AppArtifacts::open_read_only(&tmp.path().join("demo"))
        .unwrap()
        .unwrap();
    let page = store.list(None, MAX_LIST_LIMIT).unwrap();
    assert_eq!(page.items.len(), 3, "the refused call left no artifact");
    for (m, r) in page.items.iter().zip(&made) {
        assert_eq!(r.artifact_ref, format!("artifact://demo/{}", m.id));
        assert_eq!(m.mime_type, "text/markdown; charset=utf-8");
        assert_eq!(m.provenance.app_version, "1.2.3");
        let agent = m.provenance.agent.as_ref().unwrap();
        assert_eq!(
            (
                agent.session_id.as_str(),
                agent.run_id.as_str(),
                agent.tool_call_id.as_str()
            ),
            ("sess_1", "turn_1", "call_1")
        );
    }
    assert_eq!(store.used().unwrap(), 3 * (30 * 1024 + 1));
    assert!(!tmp.path().join("demo/artifacts").exists());
    // Its content reads back through the ref, and only for its own app.
    let app = AppId::new("demo").unwrap();
    let bytes = t
        .artifact_content(&app, &made[0].artifact_ref, 1 << 20)
        .unwrap();
    assert!(bytes.starts_with(b"0aaa"));
    let other = AppId::new("other").unwrap();
    assert!(t
        .artifact_content(&other, &made[0].artifact_ref, 1 << 20)
        .is_none());
}

/// Planted links at `files/`, at a sub-folder and at the old `.partial-write` name, and at the
/// blob directory, never send a write outside the app's folder.
#[test]
fn planted_links_never_send_a_tool_write_outside() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tools(tmp.path(), 1 << 20, 1 << 20);
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("victim.txt"), b"precious").unwrap();
    let dir = tmp.path().join("demo");
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();

    symlink(&outside, files.join("sub")).unwrap();
    assert_eq!(
        write(&t, "sub/victim.txt", "pwned").unwrap_err().code,
        "link_refused"
    );
    assert_eq!(
        write(&t, "sub/new.txt", "pwned").unwrap_err().code,
        "link_refused"
    );
    symlink(
        outside.join("victim.txt"),
        files.join("a.txt.partial-write"),
    )
    .unwrap();
    write(&t, "a.txt", "mine").unwrap();
    symlink(outside.join("victim.txt"), files.join("b.txt")).unwrap();
    assert_eq!(
        write(&t, "b.txt", "pwned").unwrap_err().code,
        "link_refused"
    );

    std::fs::remove_dir_all(&files).unwrap();
    symlink(&outside, &files).unwrap();
    assert_eq!(
        write(&t, "x.txt", "pwned").unwrap_err().code,
        "link_refused"
    );
    assert_eq!(
        t.run(
            &call("demo"),
            "storage_read",
            &json!({"path": "victim.txt"})
        )
        .unwrap_err()
        .code,
        "link_refused"
    );

    symlink(&outside, dir.join("artifact-blobs")).unwrap();
    let e = t
        .run(
            &call("demo"),
            "artifact_write",
            &json!({"title": "t", "content": "pwned"}),
        )
        .unwrap_err();
    assert_eq!(e.code, "storage_error");

    assert_eq!(
        snapshot(&outside),
        vec![("victim.txt".to_owned(), b"precious".to_vec())]
    );
}

#[test]
fn the_policy_decides_whether_artifact_write_needs_approval() {
    let risky = |specs: Vec<ToolSpec>| {
        specs
            .into_iter()
            .map(|s| (s.name, s.risky))
            .collect::<Vec<_>>()
    };
    let default = risky(HostTools::specs());
    assert!(default.contains(&("artifact_write".into(), true)));
    assert!(default.contains(&("storage_write".into(), true)));
    let tmp = tempfile::tempdir().unwrap();
    let relaxed = risky(tools(tmp.path(), 1, 1).current_specs());
    assert!(relaxed.contains(&("artifact_write".into(), false)));
    assert!(relaxed.contains(&("storage_write".into(), true)));
}
