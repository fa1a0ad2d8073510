//! The `trusted_keys` table (publisher keys the user trusts) and the `publishers` pins.

use rusqlite::{params, OptionalExtension};

use super::{audit, now_str, Signer, Store, TrustedKey};
use crate::foundation::error::{ErrorCode, HostError, HostResult};

impl Store {
    pub fn trusted_keys(&self) -> HostResult<Vec<TrustedKey>> {
        let mut stmt = self.conn.prepare(
            "SELECT key_id, public_key, name FROM trusted_keys ORDER BY key_id, public_key",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(TrustedKey {
                key_id: r.get(0)?,
                public_key: r.get(1)?,
                name: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Trusts a key. The key is identified by its full public key: the id is recomputed from
    /// it (whatever `key.key_id` says), and adding a key again only renames it.
    pub fn add_trusted_key(&self, key: &TrustedKey) -> HostResult<TrustedKey> {
        self.require_lock()?;
        let vk = crate::install::signature::parse_public_key(&key.public_key)?;
        let key = TrustedKey {
            key_id: crate::install::signature::key_id(&vk),
            public_key: crate::install::signature::encode_public_key(&vk),
            name: key.name.clone(),
        };
        let tx = self.conn.unchecked_transaction()?;
        tx.execute(
            "INSERT INTO trusted_keys (public_key, key_id, name, added_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (public_key) DO UPDATE SET name = excluded.name",
            params![key.public_key, key.key_id, key.name, now_str()],
        )?;
        audit(
            &tx,
            "trust.add",
            None,
            None,
            &serde_json::json!({"keyId": key.key_id, "publicKey": key.public_key, "name": key.name}),
        )?;
        tx.commit()?;
        Ok(key)
    }

    /// Stops trusting a key, named by its full public key or by its key id (refused when
    /// several trusted keys share that id).
    pub fn remove_trusted_key(&self, key: &str) -> HostResult<TrustedKey> {
        self.require_lock()?;
        let full = crate::install::signature::parse_public_key(key)
            .ok()
            .map(|k| crate::install::signature::encode_public_key(&k));
        let matching: Vec<TrustedKey> = self
            .trusted_keys()?
            .into_iter()
            .filter(|k| match &full {
                Some(pk) => k.public_key == *pk,
                None => k.key_id == key,
            })
            .collect();
        let found = match matching.as_slice() {
            [] => {
                return Err(
                    HostError::new(ErrorCode::KeyNotFound, format!("no trusted key {key}"))
                        .with("keyId", key),
                )
            }
            [one] => one.clone(),
            several => {
                return Err(HostError::new(
                    ErrorCode::KeyAmbiguous,
                    format!(
                        "{} trusted keys have the id {key}; name the one to remove by its full public key",
                        several.len()
                    ),
                )
                .with("keyId", key)
                .with("keys", several))
            }
        };
        let tx = self.conn.unchecked_transaction()?;
        tx.execute(
            "DELETE FROM trusted_keys WHERE public_key = ?1",
            [&found.public_key],
        )?;
        audit(
            &tx,
            "trust.remove",
            None,
            None,
            &serde_json::json!({"keyId": found.key_id, "publicKey": found.public_key}),
        )?;
        tx.commit()?;
        Ok(found)
    }

    /// The publisher pinned for an app name (installed, or uninstalled with its data kept).
    pub fn publisher_pin(&self, name: &str) -> HostResult<Option<Signer>> {
        Ok(self
            .conn
            .query_row(
                "SELECT key_id, public_key FROM publishers WHERE app = ?1",
                [name],
                |r| Ok(Signer::pinned(r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }
}
