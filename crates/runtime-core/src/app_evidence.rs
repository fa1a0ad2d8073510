//! `lime.evidence` data: an app's evidence records (model and tool calls, sources, eval results,
//! ...), in `apps/<app>/evidence.sqlite` (WAL, `synchronous=FULL`), and the evidence pack
//! export.
//!
//! A record is `{kind, summary, data, artifacts}` plus the provenance of the call that made it.
//! `artifacts` are refs to the same app's artifacts with the SHA-256 they had when the record
//! was made, so a pack shows what evidence pointed at even after the artifact changed or went.
//! Everything is bounded: field sizes, refs per record, records per app and total bytes (the
//! quota, `APP_E201`). Ids are random and scoped to the app (each app has its own file).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::app_area::{AppArea, Db};
use crate::app_artifacts::{
    open_app_dir, open_db, open_db_read_only, parse_cursor, rfc3339_ms, seq_page, AppArtifacts,
    ArtifactError, Provenance,
};
use crate::clock::{Clock, SystemClock};
use crate::idempotency;
use crate::ids::EvidenceId;

/// The evidence database inside an app's data directory.
pub const EVIDENCE_FILE: &str = "evidence.sqlite";
/// The `schemaVersion` of an evidence pack.
pub const PACK_SCHEMA_VERSION: &str = "apphost.evidence-pack.v1";
pub const MAX_KIND_BYTES: usize = 64;
pub const MAX_SUMMARY_BYTES: usize = 2000;
/// Largest `data` (as compact JSON text).
pub const MAX_DATA_BYTES: usize = 64 * 1024;
pub const MAX_ARTIFACT_REFS: usize = 64;
pub const MAX_LIST_LIMIT: u32 = 1000;
/// Default quota of an app's evidence bytes (kind + summary + data + refs): 16 MiB.
pub const DEFAULT_EVIDENCE_QUOTA_BYTES: u64 = 16 * 1024 * 1024;
pub const DEFAULT_MAX_RECORDS: u64 = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvidenceLimits {
    pub quota_bytes: u64,
    pub max_records: u64,
}

impl Default for EvidenceLimits {
    fn default() -> Self {
        EvidenceLimits {
            quota_bytes: DEFAULT_EVIDENCE_QUOTA_BYTES,
            max_records: DEFAULT_MAX_RECORDS,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    #[error("evidence quota exceeded: {used} + {adding} bytes > {quota} bytes")]
    QuotaExceeded { used: u64, adding: u64, quota: u64 },
    #[error("the app already keeps {max} evidence records")]
    TooMany { max: u64 },
    #[error("invalid kind: 1..=64 characters of [A-Za-z0-9._:-]")]
    InvalidKind,
    #[error("{0}")]
    TooLarge(String),
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("invalid evidence id")]
    InvalidId,
    #[error("no evidence record with this id")]
    NotFound,
    #[error("this idempotency key was used for another evidence record")]
    IdempotencyConflict,
    #[error("artifact ref: {0}")]
    Artifact(#[from] ArtifactError),
    #[error("evidence database error: {0}")]
    Db(#[from] rusqlite::Error),
    #[error("evidence i/o error: {0}")]
    Io(std::io::Error),
}

impl EvidenceError {
    /// The Host Bridge code: `APP_E201` quota, `APP_E900` bad arguments, `APP_E904` unknown id
    /// (or an artifact ref to an unknown artifact), `APP_E999` host failure.
    pub fn app_code(&self) -> &'static str {
        match self {
            EvidenceError::QuotaExceeded { .. } | EvidenceError::TooMany { .. } => "APP_E201",
            EvidenceError::InvalidKind
            | EvidenceError::TooLarge(_)
            | EvidenceError::InvalidArgument(_)
            | EvidenceError::InvalidId
            | EvidenceError::IdempotencyConflict => "APP_E900",
            EvidenceError::NotFound => "APP_E904",
            EvidenceError::Artifact(a) => a.app_code(),
            EvidenceError::Db(_) | EvidenceError::Io(_) => "APP_E999",
        }
    }

    /// The `causeCode` (`evidence.*`, or the artifact ref's `artifacts.*`).
    pub fn cause_code(&self) -> &'static str {
        match self {
            EvidenceError::QuotaExceeded { .. } => "evidence.quota_exceeded",
            EvidenceError::TooMany { .. } => "evidence.too_many",
            EvidenceError::InvalidKind => "evidence.invalid_kind",
            EvidenceError::TooLarge(_) => "evidence.too_large",
            EvidenceError::InvalidArgument(_) => "evidence.invalid_argument",
            EvidenceError::InvalidId => "evidence.invalid_id",
            EvidenceError::NotFound => "evidence.not_found",
            EvidenceError::IdempotencyConflict => "evidence.idempotency_conflict",
            EvidenceError::Artifact(a) => a.cause_code(),
            EvidenceError::Db(_) => "evidence.db",
            EvidenceError::Io(_) => "evidence.io",
        }
    }

    pub fn is_host_failure(&self) -> bool {
        match self {
            EvidenceError::Db(_) | EvidenceError::Io(_) => true,
            EvidenceError::Artifact(a) => a.is_host_failure(),
            _ => false,
        }
    }
}

/// A ref from a record to one of the app's artifacts, with the content hash it had.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactRef {
    pub artifact_id: String,
    pub sha256: String,
}

/// What an app records.
#[derive(Debug, Clone, PartialEq)]
pub struct EvidenceInput {
    pub kind: String,
    pub summary: String,
    pub data: Value,
    pub artifact_ids: Vec<String>,
}

/// One stored record.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceRecord {
    pub id: String,
    pub kind: String,
    pub summary: String,
    pub data: Value,
    pub artifacts: Vec<ArtifactRef>,
    pub created_at: String,
    pub provenance: Provenance,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvidencePage {
    pub items: Vec<EvidenceRecord>,
    pub next_cursor: Option<String>,
}

/// An app's evidence, open.
pub struct AppEvidence {
    conn: Connection,
    limits: EvidenceLimits,
    /// Stamps `created_at` (the system clock unless [`AppEvidence::with_clock`]).
    clock: Arc<dyn Clock>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS evidence (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    kind       TEXT NOT NULL,
    summary    TEXT NOT NULL,
    data       TEXT NOT NULL,
    artifacts  TEXT NOT NULL,
    created_at TEXT NOT NULL,
    provenance TEXT NOT NULL,
    bytes      INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS evidence_by_kind ON evidence (kind, seq);
CREATE TABLE IF NOT EXISTS lime_meta (
    name  TEXT PRIMARY KEY NOT NULL,
    value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT OR IGNORE INTO lime_meta (name, value) VALUES ('evidence_bytes', 0);
";

const COLUMNS: &str = "id, kind, summary, data, artifacts, created_at, provenance, seq";

impl AppEvidence {
    /// Opens (creating if needed) the evidence of the app whose data directory is `app_dir`.
    pub fn open(app_dir: &Path, limits: EvidenceLimits) -> Result<AppEvidence, EvidenceError> {
        let area = open_app_dir(app_dir).map_err(EvidenceError::Io)?;
        let conn = open_db(&area.prepare_db(Db::Evidence).map_err(EvidenceError::Io)?)?;
        conn.execute_batch(SCHEMA)?;
        conn.execute_batch(idempotency::SCHEMA)?;
        Ok(AppEvidence {
            conn,
            limits,
            clock: Arc::new(SystemClock),
        })
    }

    /// Opens the evidence read-only, only if the app has some (never creates or writes).
    pub fn open_read_only(app_dir: &Path) -> Result<Option<AppEvidence>, EvidenceError> {
        let Some(area) = AppArea::open_existing(app_dir).map_err(EvidenceError::Io)? else {
            return Ok(None);
        };
        if !area.db_exists(Db::Evidence).map_err(EvidenceError::Io)? {
            return Ok(None);
        }
        Ok(Some(AppEvidence {
            conn: open_db_read_only(&area.db_path(Db::Evidence))?,
            limits: EvidenceLimits::default(),
            clock: Arc::new(SystemClock),
        }))
    }

    /// Stamps new records' `created_at` with `clock` instead of the system clock.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> AppEvidence {
        self.clock = clock;
        self
    }

    /// How many evidence records the app holds.
    pub fn count(&self) -> Result<u64, EvidenceError> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM evidence", [], |r| r.get(0))?;
        Ok(n.max(0) as u64)
    }

    /// Bytes recorded (what the quota counts).
    pub fn used(&self) -> Result<u64, EvidenceError> {
        Ok(self
            .conn
            .query_row(
                "SELECT value FROM lime_meta WHERE name = 'evidence_bytes'",
                [],
                |r| r.get::<_, i64>(0),
            )?
            .max(0) as u64)
    }

    /// Records one piece of evidence. `artifacts` resolves `input.artifact_ids` (the app's own
    /// artifacts; any unknown id refuses the record). Fails, changing nothing, on bad input or
    /// over the quota.
    pub fn record(
        &mut self,
        input: &EvidenceInput,
        artifacts: Option<&AppArtifacts>,
        provenance: &Provenance,
    ) -> Result<EvidenceRecord, EvidenceError> {
        self.record_keyed(None, input, artifacts, provenance)
    }

    /// [`AppEvidence::record`] under an idempotency key (`crate::idempotency`): a key already
    /// used for the same kind, summary, data and artifact ids returns that record (nothing is
    /// written); for other content it is refused (`IdempotencyConflict`), writing nothing.
    pub fn record_keyed(
        &mut self,
        key: Option<&str>,
        input: &EvidenceInput,
        artifacts: Option<&AppArtifacts>,
        provenance: &Provenance,
    ) -> Result<EvidenceRecord, EvidenceError> {
        if key.is_some_and(|k| !idempotency::valid_key(k)) {
            return Err(EvidenceError::InvalidArgument(
                "the idempotency key must be 1..=256 printable ASCII characters".into(),
            ));
        }
        check_kind(&input.kind)?;
        if input.summary.len() > MAX_SUMMARY_BYTES {
            return Err(EvidenceError::TooLarge(format!(
                "summary longer than {MAX_SUMMARY_BYTES} bytes"
            )));
        }
        let data = serde_json::to_string(&input.data)
            .map_err(|e| EvidenceError::InvalidArgument(e.to_string()))?;
        if data.len() > MAX_DATA_BYTES {
            return Err(EvidenceError::TooLarge(format!(
                "data is {} bytes of JSON (at most {MAX_DATA_BYTES})",
                data.len()
            )));
        }
        if input.artifact_ids.len() > MAX_ARTIFACT_REFS {
            return Err(EvidenceError::TooLarge(format!(
                "more than {MAX_ARTIFACT_REFS} artifact refs"
            )));
        }
        let mut refs: Vec<ArtifactRef> = Vec::with_capacity(input.artifact_ids.len());
        for id in &input.artifact_ids {
            crate::app_artifacts::check_id(id)?;
            if refs.iter().any(|r| &r.artifact_id == id) {
                continue;
            }
            let meta = match artifacts {
                Some(a) => a.get(id)?,
                None => return Err(ArtifactError::NotFound.into()),
            };
            refs.push(ArtifactRef {
                artifact_id: meta.id,
                sha256: meta.sha256,
            });
        }
        let refs_text = serde_json::to_string(&refs).unwrap_or_else(|_| "[]".into());
        let ids_text = input.artifact_ids.join("\n");
        let print = idempotency::fingerprint(&[
            input.kind.as_bytes(),
            input.summary.as_bytes(),
            data.as_bytes(),
            ids_text.as_bytes(),
        ]);
        let bytes = (input.kind.len() + input.summary.len() + data.len() + refs_text.len()) as u64;
        let record = EvidenceRecord {
            id: EvidenceId::random().into_string(),
            kind: input.kind.clone(),
            summary: input.summary.clone(),
            data: input.data.clone(),
            artifacts: refs,
            created_at: rfc3339_ms(self.clock.now()),
            provenance: provenance.clone(),
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        if let Some(k) = key {
            match idempotency::lookup(&tx, k, &print)? {
                idempotency::Known::New => idempotency::remember(&tx, k, &record.id, &print)?,
                idempotency::Known::Same(id) => {
                    drop(tx);
                    return self.get(&id);
                }
                idempotency::Known::Conflict => return Err(EvidenceError::IdempotencyConflict),
            }
        }
        let count: i64 = tx.query_row("SELECT count(*) FROM evidence", [], |r| r.get(0))?;
        if count.max(0) as u64 >= self.limits.max_records {
            return Err(EvidenceError::TooMany {
                max: self.limits.max_records,
            });
        }
        let used: i64 = tx.query_row(
            "SELECT value FROM lime_meta WHERE name = 'evidence_bytes'",
            [],
            |r| r.get(0),
        )?;
        let used = used.max(0) as u64;
        if used.saturating_add(bytes) > self.limits.quota_bytes {
            return Err(EvidenceError::QuotaExceeded {
                used,
                adding: bytes,
                quota: self.limits.quota_bytes,
            });
        }
        tx.execute(
            "INSERT INTO evidence (id, kind, summary, data, artifacts, created_at, provenance, bytes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                record.id,
                record.kind,
                record.summary,
                data,
                refs_text,
                record.created_at,
                serde_json::to_string(provenance).unwrap_or_default(),
                bytes as i64
            ],
        )?;
        tx.execute(
            "UPDATE lime_meta SET value = value + ?1 WHERE name = 'evidence_bytes'",
            [bytes as i64],
        )?;
        tx.commit()?;
        Ok(record)
    }

    /// One record.
    pub fn get(&self, id: &str) -> Result<EvidenceRecord, EvidenceError> {
        check_id(id)?;
        self.conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM evidence WHERE id = ?1"),
                [id],
                row_record,
            )
            .optional()?
            .ok_or(EvidenceError::NotFound)
    }

    /// Records in order, optionally of one `kind`, after `cursor`, at most `limit`.
    pub fn list(
        &self,
        kind: Option<&str>,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<EvidencePage, EvidenceError> {
        if limit == 0 || limit > MAX_LIST_LIMIT {
            return Err(EvidenceError::InvalidArgument(format!(
                "limit must be 1..={MAX_LIST_LIMIT}"
            )));
        }
        if let Some(k) = kind {
            check_kind(k)?;
        }
        let after = parse_cursor(cursor)
            .map_err(|_| EvidenceError::InvalidArgument("unknown cursor".into()))?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM evidence WHERE seq > ?1 AND (?2 IS NULL OR kind = ?2)
             ORDER BY seq LIMIT ?3"
        ))?;
        let rows = stmt.query_map(params![after, kind, i64::from(limit) + 1], |r| {
            Ok((row_record(r)?, r.get::<_, i64>(7)?))
        })?;
        let (items, next_cursor) = seq_page(rows, limit)?;
        Ok(EvidencePage { items, next_cursor })
    }

    /// The evidence pack: every record (optionally of one `kind`) with its provenance, and each
    /// artifact the records refer to, with the SHA-256 the ref recorded and, when the artifact
    /// still exists with that content, its metadata (`present`). Bounded by the quota.
    pub fn export(
        &self,
        app: Value,
        kind: Option<&str>,
        artifacts: Option<&AppArtifacts>,
        generated_at: &str,
    ) -> Result<Value, EvidenceError> {
        let mut records = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self.list(kind, cursor.as_deref(), MAX_LIST_LIMIT)?;
            records.extend(page.items);
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        let mut refs: BTreeMap<(String, String), Value> = BTreeMap::new();
        for r in &records {
            for a in &r.artifacts {
                let key = (a.artifact_id.clone(), a.sha256.clone());
                if refs.contains_key(&key) {
                    continue;
                }
                let meta = match artifacts {
                    Some(store) => match store.get(&a.artifact_id) {
                        Ok(m) if m.sha256 == a.sha256 => Some(m),
                        Ok(_) | Err(ArtifactError::NotFound) => None,
                        Err(e) => return Err(e.into()),
                    },
                    None => None,
                };
                let v = match meta {
                    Some(m) => json!({
                        "artifactId": m.id, "sha256": m.sha256, "present": true,
                        "name": m.name, "mimeType": m.mime_type, "size": m.size,
                        "createdAt": m.created_at, "provenance": m.provenance,
                    }),
                    None => json!({
                        "artifactId": a.artifact_id, "sha256": a.sha256, "present": false,
                    }),
                };
                refs.insert(key, v);
            }
        }
        Ok(json!({
            "schemaVersion": PACK_SCHEMA_VERSION,
            "app": app,
            "generatedAt": generated_at,
            "kind": kind,
            "records": records,
            "artifacts": refs.into_values().collect::<Vec<_>>(),
        }))
    }
}

fn row_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<EvidenceRecord> {
    let conv = |i: usize, e: serde_json::Error| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    };
    let data: String = r.get(3)?;
    let artifacts: String = r.get(4)?;
    let prov: String = r.get(6)?;
    Ok(EvidenceRecord {
        id: r.get(0)?,
        kind: r.get(1)?,
        summary: r.get(2)?,
        data: serde_json::from_str(&data).map_err(|e| conv(3, e))?,
        artifacts: serde_json::from_str(&artifacts).map_err(|e| conv(4, e))?,
        created_at: r.get(5)?,
        provenance: serde_json::from_str(&prov).map_err(|e| conv(6, e))?,
    })
}

/// 1..=64 characters of `[A-Za-z0-9._:-]`.
pub fn check_kind(kind: &str) -> Result<(), EvidenceError> {
    let ok = !kind.is_empty()
        && kind.len() <= MAX_KIND_BYTES
        && kind
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(EvidenceError::InvalidKind)
    }
}

pub fn check_id(id: &str) -> Result<(), EvidenceError> {
    if EvidenceId::new(id).is_ok() && id.starts_with("evidence_") {
        Ok(())
    } else {
        Err(EvidenceError::InvalidId)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app_artifacts::ArtifactLimits;

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

    fn input(kind: &str, summary: &str, data: Value, ids: &[&str]) -> EvidenceInput {
        EvidenceInput {
            kind: kind.into(),
            summary: summary.into(),
            data,
            artifact_ids: ids.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn records_round_trip_with_provenance_and_artifact_hashes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("notes");
        let mut arts = AppArtifacts::open(&dir, ArtifactLimits::default()).unwrap();
        let art = arts.create("r.txt", None, b"result", &prov("t0")).unwrap();
        let rec = {
            let mut ev = AppEvidence::open(&dir, EvidenceLimits::default()).unwrap();
            ev.record(
                &input(
                    "eval.result",
                    "passed 3/3",
                    json!({"score": 1}),
                    &[&art.id, &art.id],
                ),
                Some(&arts),
                &prov("t1"),
            )
            .unwrap()
        };
        assert!(rec.id.starts_with("evidence_"));
        assert_eq!(
            rec.artifacts,
            [ArtifactRef {
                artifact_id: art.id.clone(),
                sha256: art.sha256.clone()
            }]
        );
        let ev = AppEvidence::open(&dir, EvidenceLimits::default()).unwrap();
        assert_eq!(ev.get(&rec.id).unwrap(), rec);
        assert_eq!(ev.get(&rec.id).unwrap().provenance.trace_id, "t1");

        // The pack: records with provenance, refs with hashes; a deleted artifact is not present.
        let pack = ev
            .export(
                json!({"appId": "notes"}),
                None,
                Some(&arts),
                "2026-11-23T00:00:00Z",
            )
            .unwrap();
        assert_eq!(pack["schemaVersion"], PACK_SCHEMA_VERSION);
        assert_eq!(pack["records"][0]["provenance"]["traceId"], "t1");
        assert_eq!(pack["artifacts"][0]["sha256"], art.sha256.as_str());
        assert_eq!(pack["artifacts"][0]["present"], true);
        assert_eq!(pack["artifacts"][0]["provenance"]["traceId"], "t0");
        arts.delete(&art.id).unwrap();
        let pack = ev.export(json!({}), None, Some(&arts), "x").unwrap();
        assert_eq!(pack["artifacts"][0]["present"], false);
        assert_eq!(pack["artifacts"][0]["sha256"], art.sha256.as_str());
    }

    #[test]
    fn unknown_or_foreign_artifact_refs_and_bad_input_record_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let mut other =
            AppArtifacts::open(&tmp.path().join("other"), ArtifactLimits::default()).unwrap();
        let foreign = other.create("x", None, b"x", &prov("t")).unwrap();
        let dir = tmp.path().join("notes");
        let arts = AppArtifacts::open(&dir, ArtifactLimits::default()).unwrap();
        let mut ev = AppEvidence::open(&dir, EvidenceLimits::default()).unwrap();
        let e = ev
            .record(
                &input("k", "", json!(null), &[&foreign.id]),
                Some(&arts),
                &prov("t"),
            )
            .unwrap_err();
        assert_eq!(
            (e.app_code(), e.cause_code()),
            ("APP_E904", "artifacts.not_found")
        );
        let e = ev
            .record(
                &input("k", "", json!(null), &["../x"]),
                Some(&arts),
                &prov("t"),
            )
            .unwrap_err();
        assert_eq!(e.cause_code(), "artifacts.invalid_id");
        for bad in ["", "a b", "../x", &"k".repeat(65)] {
            let e = ev
                .record(&input(bad, "", json!(null), &[]), None, &prov("t"))
                .unwrap_err();
            assert_eq!(e.cause_code(), "evidence.invalid_kind", "{bad:?}");
        }
        let e = ev
            .record(
                &input("k", &"s".repeat(2001), json!(null), &[]),
                None,
                &prov("t"),
            )
            .unwrap_err();
        assert_eq!(e.cause_code(), "evidence.too_large");
        let e = ev
            .record(
                &input("k", "", json!("x".repeat(MAX_DATA_BYTES)), &[]),
                None,
                &prov("t"),
            )
            .unwrap_err();
        assert_eq!(
            (e.app_code(), e.cause_code()),
            ("APP_E900", "evidence.too_large")
        );
        let many: Vec<String> = (0..65).map(|i| format!("artifact_{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(ev
            .record(&input("k", "", json!(null), &many), Some(&arts), &prov("t"))
            .is_err());
        assert_eq!(ev.list(None, None, 10).unwrap().items.len(), 0);
        assert_eq!(ev.used().unwrap(), 0);
        assert!(matches!(ev.get("evidence_0"), Err(EvidenceError::NotFound)));
        assert!(matches!(ev.get("../x"), Err(EvidenceError::InvalidId)));
    }

    #[test]
    fn quota_and_record_cap_refuse_without_writing() {
        let tmp = tempfile::tempdir().unwrap();
        let mut ev = AppEvidence::open(
            &tmp.path().join("notes"),
            EvidenceLimits {
                quota_bytes: 30,
                max_records: 2,
            },
        )
        .unwrap();
        // kind 1 + summary 10 + data 4 ("null") + refs 2 ("[]") = 17 bytes.
        ev.record(
            &input("k", "0123456789", json!(null), &[]),
            None,
            &prov("t"),
        )
        .unwrap();
        assert_eq!(ev.used().unwrap(), 17);
        let e = ev
            .record(
                &input("k", "0123456789", json!(null), &[]),
                None,
                &prov("t"),
            )
            .unwrap_err();
        assert!(
            matches!(
                e,
                EvidenceError::QuotaExceeded {
                    used: 17,
                    adding: 17,
                    quota: 30
                }
            ),
            "{e}"
        );
        assert_eq!(e.app_code(), "APP_E201");
        ev.record(&input("k", "", json!(null), &[]), None, &prov("t"))
            .unwrap();
        let e = ev
            .record(&input("k", "", json!(null), &[]), None, &prov("t"))
            .unwrap_err();
        assert!(matches!(e, EvidenceError::TooMany { max: 2 }));
        assert_eq!(ev.list(None, None, 10).unwrap().items.len(), 2);
    }

    #[test]
    fn listing_pages_and_filters_by_kind() {
        let tmp = tempfile::tempdir().unwrap();
        let mut ev =
            AppEvidence::open(&tmp.path().join("notes"), EvidenceLimits::default()).unwrap();
        for i in 0..7 {
            let kind = if i % 2 == 0 { "tool.call" } else { "source" };
            ev.record(
                &input(kind, &format!("{i}"), json!(i), &[]),
                None,
                &prov("t"),
            )
            .unwrap();
        }
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let p = ev.list(Some("tool.call"), cursor.as_deref(), 3).unwrap();
            seen.extend(p.items.iter().map(|r| r.summary.clone()));
            match p.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(seen, ["0", "2", "4", "6"]);
        assert_eq!(ev.list(None, None, 1000).unwrap().items.len(), 7);
        assert!(ev.list(Some("bad kind"), None, 10).is_err());
        assert!(ev.list(None, Some("zz"), 10).is_err());
        let pack = ev.export(json!({}), Some("source"), None, "x").unwrap();
        assert_eq!(pack["records"].as_array().unwrap().len(), 3);
        assert_eq!(pack["kind"], "source");
    }
}
