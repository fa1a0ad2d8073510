use std::path::PathBuf;

use sha2::{Digest, Sha256};

use super::*;

pub(crate) fn prov(trace: &str) -> Provenance {
    Provenance {
        app_id: "notes".into(),
        app_version: "1.0.0".into(),
        package_hash: "sha256:aa".into(),
        manifest_hash: "sha256:bb".into(),
        entry_key: "main".into(),
        trace_id: trace.into(),
        agent: None,
    }
}

fn open(limits: ArtifactLimits) -> (tempfile::TempDir, PathBuf, AppArtifacts) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("notes");
    let a = AppArtifacts::open(&dir, limits).unwrap();
    (tmp, dir, a)
}

fn blob_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(blobs_dir(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn round_trip_with_provenance_survives_reopening() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("notes");
    let meta = {
        let mut a = AppArtifacts::open(&dir, ArtifactLimits::default()).unwrap();
        a.create(
            "report.md",
            Some("text/markdown; charset=utf-8"),
            b"# Hi",
            &prov("t1"),
        )
        .unwrap()
    };
    assert!(meta.id.starts_with("artifact_") && meta.id.len() == 41);
    assert_eq!(meta.size, 4);
    assert_eq!(meta.sha256, hex(&Sha256::digest(b"# Hi")));
    assert_eq!(meta.provenance, prov("t1"));
    let a = AppArtifacts::open(&dir, ArtifactLimits::default()).unwrap();
    let (m, bytes) = a.read(&meta.id, u64::MAX).unwrap();
    assert_eq!((m, bytes.as_slice()), (meta.clone(), &b"# Hi"[..]));
    assert_eq!(blob_names(&dir), std::slice::from_ref(&meta.sha256));
    assert_eq!(a.used().unwrap(), 4);
    assert!(dir.join(ARTIFACTS_FILE).is_file());
}

#[test]
fn same_content_is_stored_once_and_its_blob_goes_with_the_last_row() {
    let (_t, dir, mut a) = open(ArtifactLimits::default());
    let one = a.create("a.txt", None, b"same", &prov("t1")).unwrap();
    let two = a.create("b.txt", None, b"same", &prov("t2")).unwrap();
    let other = a.create("c.txt", None, b"other", &prov("t3")).unwrap();
    assert_ne!(one.id, two.id);
    assert_eq!(one.sha256, two.sha256);
    assert_eq!(blob_names(&dir).len(), 2);
    assert_eq!(a.used().unwrap(), 4 + 5);
    assert!(a.delete(&one.id).unwrap());
    assert!(!a.delete(&one.id).unwrap());
    // Still referenced by `two`.
    assert_eq!(blob_names(&dir).len(), 2);
    assert_eq!(a.read(&two.id, 100).unwrap().1, b"same");
    assert!(a.delete(&two.id).unwrap());
    assert_eq!(blob_names(&dir), std::slice::from_ref(&other.sha256));
    assert_eq!(a.used().unwrap(), 5);
    assert!(matches!(a.get(&one.id), Err(ArtifactError::NotFound)));
}

#[test]
fn quota_counts_distinct_content_and_a_refused_create_leaves_nothing() {
    let limits = ArtifactLimits {
        max_artifact_bytes: 8,
        quota_bytes: 10,
        max_artifacts: 3,
    };
    let (_t, dir, mut a) = open(limits);
    a.create("a", None, b"123456", &prov("t")).unwrap();
    // Duplicate content costs nothing.
    a.create("b", None, b"123456", &prov("t")).unwrap();
    let e = a.create("c", None, b"12345", &prov("t")).unwrap_err();
    assert!(
        matches!(
            e,
            ArtifactError::QuotaExceeded {
                used: 6,
                adding: 5,
                quota: 10
            }
        ),
        "{e}"
    );
    assert_eq!(e.app_code(), "APP_E201");
    let e = a.create("c", None, b"123456789", &prov("t")).unwrap_err();
    assert!(
        matches!(e, ArtifactError::TooLarge { size: 9, max: 8 }),
        "{e}"
    );
    assert_eq!(e.app_code(), "APP_E900");
    assert_eq!(blob_names(&dir).len(), 1);
    assert_eq!(a.count().unwrap(), 2);
    a.create("c", None, b"1234", &prov("t")).unwrap();
    let e = a.create("d", None, b"", &prov("t")).unwrap_err();
    assert!(matches!(e, ArtifactError::TooMany { max: 3 }), "{e}");
    assert_eq!(a.used().unwrap(), 10);
}

#[test]
fn listing_pages_in_creation_order() {
    let (_t, _d, mut a) = open(ArtifactLimits::default());
    let ids: Vec<String> = (0..5)
        .map(|i| {
            a.create(
                &format!("n{i}"),
                None,
                format!("{i}").as_bytes(),
                &prov("t"),
            )
            .unwrap()
            .id
        })
        .collect();
    let p1 = a.list(None, 2).unwrap();
    let p2 = a.list(p1.next_cursor.as_deref(), 2).unwrap();
    let p3 = a.list(p2.next_cursor.as_deref(), 2).unwrap();
    let got: Vec<String> = [p1.items, p2.items, p3.items.clone()]
        .concat()
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(got, ids);
    assert_eq!(p3.items.len(), 1);
    assert_eq!(p3.next_cursor, None);
    assert!(a.list(None, 0).is_err());
    assert!(a.list(None, 1001).is_err());
    for bad in ["x", "c", "c-1", "c1x", "../1"] {
        assert!(
            matches!(
                a.list(Some(bad), 10),
                Err(ArtifactError::InvalidArgument(_))
            ),
            "{bad}"
        );
    }
}

#[test]
fn names_ids_and_mime_types_are_validated() {
    let (_t, dir, mut a) = open(ArtifactLimits::default());
    for bad in [
        "",
        ".",
        "..",
        "../x",
        "a/b",
        "a\\b",
        "a\nb",
        " x",
        "x ",
        "a\u{202e}b",
    ] {
        assert!(
            matches!(
                a.create(bad, None, b"x", &prov("t")),
                Err(ArtifactError::InvalidName(_))
            ),
            "{bad:?}"
        );
    }
    assert!(a.create(&"n".repeat(256), None, b"x", &prov("t")).is_err());
    for bad in [
        "text",
        "/x",
        "text/",
        "te xt/plain",
        "text/plain; x",
        &format!("a/{}", "b".repeat(130)),
    ] {
        assert!(
            matches!(
                a.create("n", Some(bad), b"x", &prov("t")),
                Err(ArtifactError::InvalidMimeType)
            ),
            "{bad:?}"
        );
    }
    for bad in [
        "",
        "../x",
        "artifact_../x",
        "x",
        "evidence_1",
        &format!("artifact_{}", "a".repeat(200)),
    ] {
        assert!(
            matches!(a.get(bad), Err(ArtifactError::InvalidId)),
            "{bad:?}"
        );
        assert!(
            matches!(a.delete(bad), Err(ArtifactError::InvalidId)),
            "{bad:?}"
        );
    }
    assert!(matches!(a.get("artifact_0"), Err(ArtifactError::NotFound)));
    assert!(blob_names(&dir).is_empty());
    assert_eq!(a.count().unwrap(), 0);
    a.create(
        "été — résumé.pdf",
        Some("application/pdf"),
        b"%PDF",
        &prov("t"),
    )
    .unwrap();
}

#[test]
fn a_changed_blob_is_refused_and_a_new_create_repairs_it() {
    let (_t, dir, mut a) = open(ArtifactLimits::default());
    let m = a.create("a", None, b"hello", &prov("t")).unwrap();
    let path = blobs_dir(&dir).join(&m.sha256);
    std::fs::write(&path, b"HELLO").unwrap();
    assert!(matches!(a.read(&m.id, 100), Err(ArtifactError::Corrupt)));
    // A link in its place is not followed either.
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(dir.join(ARTIFACTS_FILE), &path).unwrap();
    assert!(matches!(a.read(&m.id, 100), Err(ArtifactError::Corrupt)));
    // Creating the same content again puts the right bytes back.
    a.create("b", None, b"hello", &prov("t")).unwrap();
    assert_eq!(a.read(&m.id, 100).unwrap().1, b"hello");
    assert!(!std::fs::symlink_metadata(&path)
        .unwrap()
        .file_type()
        .is_symlink());
    // Reading is bounded before any byte is read.
    assert!(matches!(
        a.read(&m.id, 4),
        Err(ArtifactError::TooLarge { .. })
    ));
}

#[test]
fn a_read_only_open_neither_cleans_up_nor_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("notes");
    let mut a = AppArtifacts::open(&dir, ArtifactLimits::default()).unwrap();
    let m = a.create("a", None, b"kept", &prov("t")).unwrap();
    // A host writing a blob whose row is not committed yet.
    let pending = blobs_dir(&dir).join(".tmp-inflight");
    std::fs::write(&pending, b"in flight").unwrap();
    let ro = AppArtifacts::open_read_only(&dir).unwrap().unwrap();
    assert!(pending.exists());
    assert_eq!(ro.list(None, 10).unwrap().items, std::slice::from_ref(&m));
    assert_eq!(ro.read(&m.id, 100).unwrap().1, b"kept");
    assert!(ro.conn.execute("DELETE FROM artifacts", []).is_err());
    assert_eq!(a.count().unwrap(), 1);
}

#[test]
fn opening_removes_unreferenced_blobs_and_temporary_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("notes");
    let kept = {
        let mut a = AppArtifacts::open(&dir, ArtifactLimits::default()).unwrap();
        a.create("a", None, b"kept", &prov("t")).unwrap()
    };
    let blobs = blobs_dir(&dir);
    std::fs::write(blobs.join(".tmp-0123"), b"partial").unwrap();
    std::fs::write(blobs.join(hex(&Sha256::digest(b"orphan"))), b"orphan").unwrap();
    std::fs::create_dir(blobs.join("subdir")).unwrap();
    let a = AppArtifacts::open(&dir, ArtifactLimits::default()).unwrap();
    assert_eq!(a.cleanup().removed, 2);
    assert_eq!(blob_names(&dir), [kept.sha256.clone(), "subdir".to_owned()]);
    assert_eq!(a.read(&kept.id, 100).unwrap().1, b"kept");
}

#[test]
fn a_linked_app_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let dir = tmp.path().join("notes");
    std::os::unix::fs::symlink(&elsewhere, &dir).unwrap();
    assert!(matches!(
        AppArtifacts::open(&dir, ArtifactLimits::default()),
        Err(ArtifactError::Io { .. })
    ));
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    // A link as the blob directory is refused too.
    let dir2 = tmp.path().join("other");
    std::fs::create_dir(&dir2).unwrap();
    std::os::unix::fs::symlink(&elsewhere, dir2.join(BLOBS_DIR)).unwrap();
    assert!(AppArtifacts::open(&dir2, ArtifactLimits::default()).is_err());
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert!(AppArtifacts::open_read_only(&tmp.path().join("none"))
        .unwrap()
        .is_none());
    assert!(!tmp.path().join("none").exists());
}
