//! Writing artifacts: create (blob first, then the row, inside the quota) and delete (the row,
//! then the blob when nothing references it).

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use sha2::{Digest, Sha256};

use crate::idempotency;
use crate::ids::ArtifactId;

use super::*;

impl AppArtifacts {
    /// Stores `bytes` as a new artifact. Fails, changing nothing, on a bad name or MIME type,
    /// over the size cap, the count cap or the quota.
    pub fn create(
        &mut self,
        name: &str,
        mime_type: Option<&str>,
        bytes: &[u8],
        provenance: &Provenance,
    ) -> Result<ArtifactMeta, ArtifactError> {
        self.create_keyed(None, name, mime_type, bytes, provenance)
    }

    /// [`AppArtifacts::create`] under an idempotency key (`crate::idempotency`): a key already
    /// used for the same name, MIME type and bytes returns that artifact (nothing is written);
    /// for other content it is refused (`IdempotencyConflict`), writing nothing.
    pub fn create_keyed(
        &mut self,
        key: Option<&str>,
        name: &str,
        mime_type: Option<&str>,
        bytes: &[u8],
        provenance: &Provenance,
    ) -> Result<ArtifactMeta, ArtifactError> {
        if key.is_some_and(|k| !idempotency::valid_key(k)) {
            return Err(ArtifactError::InvalidArgument(
                "the idempotency key must be 1..=256 printable ASCII characters".into(),
            ));
        }
        check_name(name)?;
        let mime_type = mime_type.unwrap_or(DEFAULT_MIME_TYPE);
        check_mime(mime_type)?;
        let size = bytes.len() as u64;
        if size > self.limits.max_artifact_bytes {
            return Err(ArtifactError::TooLarge {
                size,
                max: self.limits.max_artifact_bytes,
            });
        }
        let sha = hex(&Sha256::digest(bytes));
        let print =
            idempotency::fingerprint(&[name.as_bytes(), mime_type.as_bytes(), sha.as_bytes()]);
        if let Some(done) = self.known(key, &print)? {
            return Ok(done);
        }
        // Checked before any byte is written, and again inside the transaction.
        check_room(&self.conn, &self.limits, &sha, size)?;
        let blobs = rustix::io::dup(&self.blobs).map_err(errno("lock the blob directory"))?;
        let _lock = BlobLock::take(&blobs)?;
        let wrote = self.put_blob(&sha, bytes)?;
        let meta = ArtifactMeta {
            id: ArtifactId::random().into_string(),
            name: name.to_owned(),
            mime_type: mime_type.to_owned(),
            size,
            sha256: sha.clone(),
            created_at: rfc3339_ms(self.clock.now()),
            provenance: provenance.clone(),
        };
        let limits = self.limits;
        let result: Result<Option<String>, ArtifactError> = (|| {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            if let Some(k) = key {
                // Under the write lock: another writer may have used the key meanwhile.
                match idempotency::lookup(&tx, k, &print)? {
                    idempotency::Known::New => idempotency::remember(&tx, k, &meta.id, &print)?,
                    idempotency::Known::Same(id) => return Ok(Some(id)),
                    idempotency::Known::Conflict => return Err(ArtifactError::IdempotencyConflict),
                }
            }
            let adding = check_room(&tx, &limits, &sha, size)?;
            tx.execute(
                "INSERT INTO artifacts (id, name, mime_type, size, sha256, created_at, provenance)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    meta.id,
                    meta.name,
                    meta.mime_type,
                    size as i64,
                    sha,
                    meta.created_at,
                    serde_json::to_string(provenance).unwrap_or_default()
                ],
            )?;
            tx.execute(
                "UPDATE lime_meta SET value = value + ?1 WHERE name = 'blob_bytes'",
                [adding as i64],
            )?;
            tx.commit()?;
            Ok(None)
        })();
        match result {
            Ok(None) => Ok(meta),
            Ok(Some(id)) => self.get(&id),
            Err(e) => {
                if wrote && !self.is_referenced(&sha).unwrap_or(true) {
                    // Our own new blob, which no row references: leave no partial state.
                    self.unlink_blob(&sha).ok();
                }
                Err(e)
            }
        }
    }

    /// The artifact an earlier write under `key` with this fingerprint created, if any.
    fn known(&self, key: Option<&str>, print: &str) -> Result<Option<ArtifactMeta>, ArtifactError> {
        let Some(k) = key else { return Ok(None) };
        match idempotency::lookup(&self.conn, k, print)? {
            idempotency::Known::New => Ok(None),
            idempotency::Known::Same(id) => self.get(&id).map(Some),
            idempotency::Known::Conflict => Err(ArtifactError::IdempotencyConflict),
        }
    }

    /// Removes `id`; returns whether it existed. Its blob goes when no row references it.
    pub fn delete(&mut self, id: &str) -> Result<bool, ArtifactError> {
        check_id(id)?;
        let blobs = rustix::io::dup(&self.blobs).map_err(errno("lock the blob directory"))?;
        let _lock = BlobLock::take(&blobs)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let row: Option<(String, i64)> = tx
            .query_row(
                "SELECT sha256, size FROM artifacts WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((sha, size)) = row else {
            return Ok(false);
        };
        tx.execute("DELETE FROM artifacts WHERE id = ?1", [id])?;
        idempotency::forget_id(&tx, id)?;
        let still: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = ?1)",
            [&sha],
            |r| r.get(0),
        )?;
        if !still {
            tx.execute(
                "UPDATE lime_meta SET value = max(value - ?1, 0) WHERE name = 'blob_bytes'",
                [size],
            )?;
        }
        tx.commit()?;
        if !still {
            // After the commit: a crash here leaves an unreferenced blob, removed on open.
            self.unlink_blob(&sha)?;
        }
        Ok(true)
    }

    pub(super) fn is_referenced(&self, sha: &str) -> Result<bool, ArtifactError> {
        Ok(self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = ?1)",
            [sha],
            |r| r.get(0),
        )?)
    }
}

/// How many bytes adding content `sha` of `size` bytes would add to the quota, or the
/// error if it does not fit.
fn check_room(
    conn: &Connection,
    limits: &ArtifactLimits,
    sha: &str,
    size: u64,
) -> Result<u64, ArtifactError> {
    let count: i64 = conn.query_row("SELECT count(*) FROM artifacts", [], |r| r.get(0))?;
    if count.max(0) as u64 >= limits.max_artifacts {
        return Err(ArtifactError::TooMany {
            max: limits.max_artifacts,
        });
    }
    let present: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = ?1)",
        [sha],
        |r| r.get(0),
    )?;
    let adding = if present { 0 } else { size };
    let used = meta(conn, "blob_bytes")?;
    if used.saturating_add(adding) > limits.quota_bytes {
        return Err(ArtifactError::QuotaExceeded {
            used,
            adding,
            quota: limits.quota_bytes,
        });
    }
    Ok(adding)
}
