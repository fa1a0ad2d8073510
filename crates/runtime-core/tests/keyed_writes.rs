//! Idempotency keys of artifact and evidence writes: a write re-issued with its key (a
//! workflow step after a crash, a frame's retry) returns the first write's record and writes
//! nothing; the same key with other content is refused with a stable code and writes nothing.

use runtime_core::app_artifacts::{AppArtifacts, ArtifactError, ArtifactLimits, Provenance};
use runtime_core::app_evidence::{AppEvidence, EvidenceError, EvidenceInput, EvidenceLimits};
use serde_json::json;

fn prov(trace: &str) -> Provenance {
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

#[test]
fn a_keyed_artifact_is_created_once_even_across_reopening() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("notes");
    let key = Some("wf:r1:save:1:1");
    let first = {
        let mut a = AppArtifacts::open(&dir, ArtifactLimits::default()).unwrap();
        a.create_keyed(key, "Reply", Some("text/plain"), b"hello", &prov("t1"))
            .unwrap()
    };
    // A crash after the commit, then the step re-issued by a new process.
    let mut a = AppArtifacts::open(&dir, ArtifactLimits::default()).unwrap();
    let again = a
        .create_keyed(key, "Reply", Some("text/plain"), b"hello", &prov("t2"))
        .unwrap();
    assert_eq!(
        again, first,
        "the first artifact, provenance and time included"
    );
    assert_eq!(a.count().unwrap(), 1);
    // Without a key (or with another one) it is a new artifact, as before.
    a.create("Reply", Some("text/plain"), b"hello", &prov("t3"))
        .unwrap();
    a.create_keyed(
        Some("other"),
        "Reply",
        Some("text/plain"),
        b"hello",
        &prov("t4"),
    )
    .unwrap();
    assert_eq!(a.count().unwrap(), 3);
}

#[test]
fn a_reused_artifact_key_with_other_content_is_refused_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("notes");
    let mut a = AppArtifacts::open(&dir, ArtifactLimits::default()).unwrap();
    let key = Some("k1");
    a.create_keyed(key, "Reply", None, b"hello", &prov("t1"))
        .unwrap();
    let used = a.used().unwrap();
    for (name, mime, bytes) in [
        ("Reply", None, &b"other bytes"[..]),
        ("Other name", None, &b"hello"[..]),
        ("Reply", Some("text/plain"), &b"hello"[..]),
    ] {
        let e = a
            .create_keyed(key, name, mime, bytes, &prov("t2"))
            .unwrap_err();
        assert!(matches!(e, ArtifactError::IdempotencyConflict), "{e}");
        assert_eq!(e.cause_code(), "artifacts.idempotency_conflict");
        assert_eq!(e.app_code(), "APP_E900");
    }
    assert_eq!(a.count().unwrap(), 1);
    assert_eq!(
        a.used().unwrap(),
        used,
        "no blob of the refused content is kept"
    );
    let blobs = std::fs::read_dir(runtime_core::app_artifacts::blobs_dir(&dir))
        .unwrap()
        .count();
    assert_eq!(blobs, 1);
    for bad in ["", "a\nb", &"k".repeat(257)] {
        let e = a
            .create_keyed(Some(bad), "Reply", None, b"x", &prov("t3"))
            .unwrap_err();
        assert_eq!(e.cause_code(), "artifacts.invalid_argument");
    }
    assert_eq!(a.count().unwrap(), 1);
}

#[test]
fn deleting_a_keyed_artifact_frees_its_key() {
    let tmp = tempfile::tempdir().unwrap();
    let mut a = AppArtifacts::open(&tmp.path().join("notes"), ArtifactLimits::default()).unwrap();
    let first = a
        .create_keyed(Some("k"), "Reply", None, b"hello", &prov("t1"))
        .unwrap();
    assert!(a.delete(&first.id).unwrap());
    let second = a
        .create_keyed(Some("k"), "Reply", None, b"hello", &prov("t2"))
        .unwrap();
    assert_ne!(second.id, first.id);
    assert_eq!(a.count().unwrap(), 1);
}

fn input(summary: &str) -> EvidenceInput {
    EvidenceInput {
        kind: "workflow.reply".into(),
        summary: summary.into(),
        data: json!({"n": 1}),
        artifact_ids: vec![],
    }
}

#[test]
fn keyed_evidence_is_recorded_once_and_a_conflict_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("notes");
    let first = {
        let mut e = AppEvidence::open(&dir, EvidenceLimits::default()).unwrap();
        e.record_keyed(Some("wf:r1:note:1:1"), &input("sent"), None, &prov("t1"))
            .unwrap()
    };
    let mut e = AppEvidence::open(&dir, EvidenceLimits::default()).unwrap();
    let again = e
        .record_keyed(Some("wf:r1:note:1:1"), &input("sent"), None, &prov("t2"))
        .unwrap();
    assert_eq!(again, first);
    assert_eq!(e.count().unwrap(), 1);
    let used = e.used().unwrap();
    let err = e
        .record_keyed(Some("wf:r1:note:1:1"), &input("other"), None, &prov("t3"))
        .unwrap_err();
    assert!(matches!(err, EvidenceError::IdempotencyConflict));
    assert_eq!(err.cause_code(), "evidence.idempotency_conflict");
    assert_eq!(err.app_code(), "APP_E900");
    let bad = e
        .record_keyed(Some("\u{7f}"), &input("sent"), None, &prov("t4"))
        .unwrap_err();
    assert_eq!(bad.cause_code(), "evidence.invalid_argument");
    assert_eq!((e.count().unwrap(), e.used().unwrap()), (1, used));
    e.record(&input("sent"), None, &prov("t5")).unwrap();
    assert_eq!(
        e.count().unwrap(),
        2,
        "unkeyed records are not deduplicated"
    );
}
