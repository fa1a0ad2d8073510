//! Checking one metadata file: its shape, its signatures against the trusted root's keys for
//! its role (a threshold of distinct keys), its type and its expiry.

use std::collections::{BTreeMap, BTreeSet};

use ed25519_dalek::{Signature as EdSignature, VerifyingKey};
use sha2::{Digest, Sha256};

use super::canonical::canonical_bytes;
use super::metadata::{Envelope, PublicKey, Role, RoleKeys, Root, SHA256};
use crate::foundation::error::{ErrorCode, HostError, HostResult};

/// The most signatures read from one file (more are ignored, not an error).
const MAX_SIGNATURES: usize = 64;

pub(crate) fn invalid(role: &str, why: impl std::fmt::Display) -> HostError {
    HostError::new(
        ErrorCode::CatalogMetadataInvalid,
        format!("the catalog's {role} metadata is invalid: {why}"),
    )
    .with("role", role)
}

/// Parses a file into its envelope (no signature checked yet).
pub fn envelope(role: &str, bytes: &[u8]) -> HostResult<Envelope> {
    serde_json::from_slice(bytes).map_err(|e| invalid(role, e))
}

/// The key id TUF gives a key: hex SHA-256 of its canonical JSON.
pub fn key_id(key: &PublicKey) -> String {
    let v = serde_json::to_value(key).unwrap_or_default();
    hex::encode(Sha256::digest(canonical_bytes(&v)))
}

fn ed25519(key: &PublicKey) -> Option<VerifyingKey> {
    if key.keytype != "ed25519" || key.scheme != "ed25519" {
        return None;
    }
    let bytes: [u8; 32] = hex::decode(&key.keyval.public).ok()?.try_into().ok()?;
    VerifyingKey::from_bytes(&bytes).ok()
}

/// Checks that a threshold of `role`'s distinct keys signed `env.signed`.
pub fn check_threshold(
    role: &str,
    env: &Envelope,
    keys: &BTreeMap<String, PublicKey>,
    role_keys: &RoleKeys,
) -> HostResult<()> {
    let message = canonical_bytes(&env.signed);
    let mut signed_by: BTreeSet<[u8; 32]> = BTreeSet::new();
    for sig in env.signatures.iter().take(MAX_SIGNATURES) {
        if !role_keys.keyids.iter().any(|k| k == &sig.keyid) {
            continue;
        }
        let Some(key) = keys.get(&sig.keyid).and_then(ed25519) else {
            continue;
        };
        let Some(bytes) = hex::decode(&sig.sig)
            .ok()
            .and_then(|b| <[u8; 64]>::try_from(b).ok())
        else {
            continue;
        };
        if key
            .verify_strict(&message, &EdSignature::from_bytes(&bytes))
            .is_ok()
        {
            signed_by.insert(key.to_bytes());
        }
    }
    let threshold = role_keys.threshold.max(1) as usize;
    if signed_by.len() < threshold {
        return Err(HostError::new(
            ErrorCode::CatalogSignatureInvalid,
            format!(
                "the catalog's {role} metadata has {} valid signature(s) of the {threshold} its role needs",
                signed_by.len()
            ),
        )
        .with("role", role)
        .with("threshold", threshold)
        .with("valid", signed_by.len()));
    }
    Ok(())
}

/// The keys of `role` in `root`.
pub fn role_keys<'r>(root: &'r Root, role: &str) -> HostResult<&'r RoleKeys> {
    root.roles
        .get(role)
        .ok_or_else(|| invalid("root", format!("names no keys for the {role} role")))
}

/// Checks the typed role inside a verified envelope: `_type`, spec major version.
pub fn typed<T: Role>(env: &Envelope) -> HostResult<T> {
    let role: T = serde_json::from_value(env.signed.clone()).map_err(|e| invalid(T::NAME, e))?;
    if role.kind() != T::NAME {
        return Err(invalid(
            T::NAME,
            format!("its _type is {:?}, not {:?}", role.kind(), T::NAME),
        ));
    }
    if !role.spec_version().starts_with("1.") {
        return Err(invalid(
            T::NAME,
            format!("spec_version {} is not 1.x", role.spec_version()),
        ));
    }
    Ok(role)
}

/// Parses `bytes` as a `T` signed by a threshold of `root`'s keys for `T`'s role.
pub fn verify_role<T: Role>(bytes: &[u8], root: &Root) -> HostResult<T> {
    let env = envelope(T::NAME, bytes)?;
    check_threshold(T::NAME, &env, &root.keys, role_keys(root, T::NAME)?)?;
    typed(&env)
}

/// A root's own consistency: every key id is the hash of its key, every key Ed25519, every
/// role present with a threshold of at least one that its keys can reach.
pub fn check_root_shape(root: &Root) -> HostResult<()> {
    for (id, key) in &root.keys {
        if &key_id(key) != id {
            return Err(invalid(
                "root",
                format!("key id {id} is not its key's hash"),
            ));
        }
        if ed25519(key).is_none() {
            return Err(invalid("root", format!("key {id} is not an Ed25519 key")));
        }
    }
    for name in ["root", "timestamp", "snapshot", "targets"] {
        let rk = role_keys(root, name)?;
        let known: BTreeSet<&String> = rk
            .keyids
            .iter()
            .filter(|k| root.keys.contains_key(*k))
            .collect();
        if rk.threshold == 0 || (known.len() as u64) < u64::from(rk.threshold) {
            return Err(invalid(
                "root",
                format!(
                    "the {name} role's threshold {} cannot be met by its keys",
                    rk.threshold
                ),
            ));
        }
    }
    Ok(())
}

/// Parses a root file and checks it is signed by a threshold of its own root keys.
pub fn self_signed_root(bytes: &[u8]) -> HostResult<Root> {
    let env = envelope("root", bytes)?;
    let root: Root = typed(&env)?;
    check_root_shape(&root)?;
    check_threshold("root", &env, &root.keys, role_keys(&root, "root")?)?;
    Ok(root)
}

/// `expires` as a timestamp.
pub fn expiry(role: &str, expires: &str) -> HostResult<jiff::Timestamp> {
    expires.parse::<jiff::Timestamp>().map_err(|e| {
        invalid(
            role,
            format!("expires {expires:?} is not an RFC 3339 time: {e}"),
        )
    })
}

/// Refuses a role past its expiry (freeze).
pub fn check_not_expired<T: Role>(role: &T, now: jiff::Timestamp) -> HostResult<()> {
    let at = expiry(T::NAME, role.expires())?;
    if at <= now {
        return Err(HostError::new(
            ErrorCode::CatalogMetadataExpired,
            format!("the catalog's {} metadata expired at {at}", T::NAME),
        )
        .with("role", T::NAME)
        .with("expires", at.to_string()));
    }
    Ok(())
}

/// Hex SHA-256 of bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Checks a file against the length and hash its parent role signed (mix-and-match).
pub fn check_meta_file(
    role: &str,
    bytes: &[u8],
    length: Option<u64>,
    hashes: Option<&BTreeMap<String, String>>,
) -> HostResult<()> {
    let mismatch = |why: String| {
        HostError::new(
            ErrorCode::CatalogMetadataMismatch,
            format!("the catalog's {role} metadata is not the one its parent signed: {why}"),
        )
        .with("role", role)
    };
    if let Some(len) = length {
        if bytes.len() as u64 != len {
            return Err(mismatch(format!("{} bytes, signed {len}", bytes.len())));
        }
    }
    if let Some(want) = hashes.and_then(|h| h.get(SHA256)) {
        let got = sha256_hex(bytes);
        if !got.eq_ignore_ascii_case(want) {
            return Err(mismatch(format!("sha256 {got}, signed {want}")));
        }
    }
    Ok(())
}
