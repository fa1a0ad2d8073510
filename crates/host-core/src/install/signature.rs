//! Ed25519 package signatures and trusted publisher keys.
//!
//! The signature lives in `app.signature.yaml` under `signature.ed25519` and signs
//!
//! ```text
//! apphost.signature.v1\nmanifestHash=sha256:<hex>\nfilesDigest=sha256:<hex>\n
//! ```
//!
//! i.e. the manifest hash and the digest of the per-file list. Neither includes
//! `app.signature.yaml` (or `app.lock.json`), so there is no self-reference. The block also
//! carries the public key, so a signature from a key the host does not trust is still checked:
//! a bad signature is always rejected, whoever made it.

use base64::Engine;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::Serialize;
use serde_json::{json, Value};

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::hashing::{same_hash, sha256};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// How far a package's origin is established.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trust {
    /// Signed by a key in the host's trusted-keys list.
    Trusted,
    /// Validly signed, by a key the host does not trust.
    UnknownKey,
    /// No AppHost signature.
    Unsigned,
}

impl Trust {
    pub fn as_str(self) -> &'static str {
        match self {
            Trust::Trusted => "trusted",
            Trust::UnknownKey => "unknown-key",
            Trust::Unsigned => "unsigned",
        }
    }
    pub fn parse(s: &str) -> Option<Trust> {
        [Trust::Trusted, Trust::UnknownKey, Trust::Unsigned]
            .into_iter()
            .find(|t| t.as_str() == s)
    }
    /// Whether installing needs sideload mode (an explicit, marked exception).
    pub fn needs_sideload(self) -> bool {
        self != Trust::Trusted
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustedKey {
    pub key_id: String,
    pub public_key: String,
    pub name: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignatureCheck {
    pub trust: Trust,
    /// Display only: two keys may share it. Identity is `public_key`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_id: Option<String>,
    /// The full Ed25519 public key that made the signature (canonical base64).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
}

/// The canonical base64 text of a public key (what the store keeps and compares).
pub fn encode_public_key(key: &VerifyingKey) -> String {
    B64.encode(key.as_bytes())
}

/// Whether a trusted-key row holds exactly `key` (compared as key bytes, never by id).
fn holds(row: &TrustedKey, key: &VerifyingKey) -> bool {
    parse_public_key(&row.public_key).is_ok_and(|k| k == *key)
}

/// `ed25519:<first 16 hex digits of SHA-256(public key)>`.
pub fn key_id(public: &VerifyingKey) -> String {
    format!("ed25519:{}", &hex::encode(sha256(public.as_bytes()))[..16])
}

pub fn signed_message(manifest_hash: &str, files_digest: &str) -> Vec<u8> {
    format!("apphost.signature.v1\nmanifestHash={manifest_hash}\nfilesDigest={files_digest}\n")
        .into_bytes()
}

fn malformed(why: impl std::fmt::Display) -> HostError {
    HostError::new(
        ErrorCode::VerifySignatureMalformed,
        format!("app.signature.yaml: {why}"),
    )
}

fn invalid(why: impl std::fmt::Display) -> HostError {
    HostError::new(
        ErrorCode::VerifySignatureInvalid,
        format!("the package signature is not valid: {why}"),
    )
}

pub fn parse_public_key(b64: &str) -> HostResult<VerifyingKey> {
    let bytes = B64.decode(b64.trim()).map_err(|e| {
        HostError::new(
            ErrorCode::KeyInvalid,
            format!("public key is not base64: {e}"),
        )
    })?;
    let arr: [u8; 32] = bytes
        .try_into()
        .map_err(|_| HostError::new(ErrorCode::KeyInvalid, "an Ed25519 public key is 32 bytes"))?;
    VerifyingKey::from_bytes(&arr).map_err(|e| {
        HostError::new(
            ErrorCode::KeyInvalid,
            format!("not an Ed25519 public key: {e}"),
        )
    })
}

/// Checks the signature block (`signature` value of `app.signature.yaml`, if the file exists).
pub fn check(
    signature_doc: Option<&Value>,
    manifest_hash: &str,
    files_digest: &str,
    trusted: &[TrustedKey],
) -> HostResult<SignatureCheck> {
    let unsigned = SignatureCheck {
        trust: Trust::Unsigned,
        key_id: None,
        public_key: None,
        signer: None,
    };
    let Some(doc) = signature_doc else {
        return Ok(unsigned);
    };
    if !doc.is_object() {
        return Err(malformed("`signature` must be a mapping"));
    }
    // The standard's sigstore block: its manifest hash must match when it is not a placeholder.
    if let Some(h) = doc.pointer("/manifest/hash").and_then(Value::as_str) {
        // Templates ship placeholders ("REPLACE_WITH_REAL_SHA256", all zeros): not a claim.
        let hex = h.strip_prefix("sha256:").unwrap_or(h);
        let is_hash = hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit());
        let placeholder = !is_hash || hex.bytes().all(|b| b == b'0');
        if !placeholder && !same_hash(h, manifest_hash) {
            return Err(HostError::new(
                ErrorCode::VerifyManifestHashMismatch,
                "app.signature.yaml signature.manifest.hash does not match APP.md",
            )
            .with("declared", h)
            .with("computed", manifest_hash));
        }
    }
    let Some(ed) = doc.get("ed25519") else {
        return Ok(unsigned);
    };
    let field = |k: &str| {
        ed.get(k)
            .and_then(Value::as_str)
            .ok_or_else(|| malformed(format!("signature.ed25519.{k} is missing")))
    };
    let claimed_manifest = field("manifestHash")?;
    let claimed_files = field("filesDigest")?;
    let sig_b64 = field("signature")?;
    let claimed_key_id = ed.get("keyId").and_then(Value::as_str);
    let sig_bytes = B64
        .decode(sig_b64.trim())
        .map_err(|e| malformed(format!("signature is not base64: {e}")))?;
    let sig = Signature::from_slice(&sig_bytes)
        .map_err(|_| malformed("an Ed25519 signature is 64 bytes"))?;

    if !same_hash(claimed_manifest, manifest_hash) {
        return Err(
            invalid("it signs a different APP.md (manifestHash differs)")
                .with("signed", claimed_manifest)
                .with("computed", manifest_hash),
        );
    }
    if !same_hash(claimed_files, files_digest) {
        return Err(
            invalid("it signs a different set of files (filesDigest differs)")
                .with("signed", claimed_files)
                .with("computed", files_digest),
        );
    }
    let message = signed_message(manifest_hash, files_digest);
    // The key: the embedded public key, else a trusted key named by keyId. A key id is short
    // and two keys may share one, so every trusted key with that id is tried and the one the
    // signature verifies with is the signer.
    let key = match ed.get("publicKey").and_then(Value::as_str) {
        Some(pk) => {
            let key = parse_public_key(pk).map_err(|e| malformed(e.message))?;
            let id = key_id(&key);
            if let Some(claimed) = claimed_key_id {
                if claimed != id {
                    return Err(invalid(format!(
                        "keyId {claimed} does not belong to the embedded public key ({id})"
                    )));
                }
            }
            key.verify_strict(&message, &sig).map_err(|_| {
                invalid(format!(
                    "the Ed25519 signature does not verify with key {id}"
                ))
                .with("keyId", &id)
            })?;
            key
        }
        None => {
            let id = claimed_key_id
                .ok_or_else(|| malformed("signature.ed25519 needs publicKey or keyId"))?;
            let candidates: Vec<VerifyingKey> = trusted
                .iter()
                .filter(|k| k.key_id == id)
                .filter_map(|k| parse_public_key(&k.public_key).ok())
                .filter(|k| key_id(k) == id)
                .collect();
            if candidates.is_empty() {
                return Err(invalid(format!(
                    "key {id} is unknown and the signature does not carry its public key"
                )));
            }
            candidates
                .into_iter()
                .find(|k| k.verify_strict(&message, &sig).is_ok())
                .ok_or_else(|| {
                    invalid(format!(
                        "the Ed25519 signature does not verify with key {id}"
                    ))
                    .with("keyId", id)
                })?
        }
    };
    let id = key_id(&key);
    let public_key = Some(encode_public_key(&key));
    match trusted.iter().find(|k| holds(k, &key)) {
        Some(k) => Ok(SignatureCheck {
            trust: Trust::Trusted,
            key_id: Some(id),
            public_key,
            signer: Some(k.name.clone()),
        }),
        None => Ok(SignatureCheck {
            trust: Trust::UnknownKey,
            key_id: Some(id),
            public_key,
            signer: None,
        }),
    }
}

/// A new signing key from the OS random source.
pub fn generate_key() -> HostResult<SigningKey> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed)
        .map_err(|e| HostError::new(ErrorCode::Internal, format!("no OS randomness: {e}")))?;
    Ok(SigningKey::from_bytes(&seed))
}

/// The secret key file AppHost writes (`apphost keygen`).
pub fn secret_key_json(key: &SigningKey, name: &str) -> Value {
    json!({
        "type": "apphost-ed25519-secret-key",
        "name": name,
        "keyId": key_id(&key.verifying_key()),
        "secretKey": B64.encode(key.to_bytes()),
        "publicKey": B64.encode(key.verifying_key().as_bytes()),
    })
}

/// The public key file to hand to hosts (`apphost trust add`).
pub fn public_key_json(key: &VerifyingKey, name: &str) -> Value {
    json!({ "type": "apphost-ed25519-public-key", "name": name, "keyId": key_id(key), "publicKey": B64.encode(key.as_bytes()) })
}

pub fn parse_secret_key(doc: &Value) -> HostResult<SigningKey> {
    let b64 = doc
        .get("secretKey")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            HostError::new(
                ErrorCode::KeyInvalid,
                "not an AppHost secret key file (no secretKey)",
            )
        })?;
    let bytes = B64.decode(b64.trim()).map_err(|e| {
        HostError::new(
            ErrorCode::KeyInvalid,
            format!("secretKey is not base64: {e}"),
        )
    })?;
    let seed: [u8; 32] = bytes
        .try_into()
        .map_err(|_| HostError::new(ErrorCode::KeyInvalid, "an Ed25519 secret key is 32 bytes"))?;
    Ok(SigningKey::from_bytes(&seed))
}

/// Reads a public key file (or a secret key file, from which the public half is taken).
pub fn parse_public_key_doc(doc: &Value) -> HostResult<(VerifyingKey, Option<String>)> {
    let name = doc.get("name").and_then(Value::as_str).map(str::to_owned);
    if let Some(pk) = doc.get("publicKey").and_then(Value::as_str) {
        return Ok((parse_public_key(pk)?, name));
    }
    Ok((parse_secret_key(doc)?.verifying_key(), name))
}

/// The `signature.ed25519` block for a package.
pub fn sign_block(key: &SigningKey, manifest_hash: &str, files_digest: &str) -> Value {
    let sig = key.sign(&signed_message(manifest_hash, files_digest));
    json!({
        "keyId": key_id(&key.verifying_key()),
        "publicKey": B64.encode(key.verifying_key().as_bytes()),
        "manifestHash": manifest_hash,
        "filesDigest": files_digest,
        "signature": B64.encode(sig.to_bytes()),
    })
}

/// Renders `app.signature.yaml` holding just the Ed25519 block (JSON is valid YAML).
pub fn render_signature_file(block: &Value) -> String {
    let doc = json!({ "signature": { "ed25519": block } });
    let mut s = String::from(
        "# AppHost package signature (see docs/package-format.md). JSON is valid YAML.\n",
    );
    s.push_str(&serde_json::to_string_pretty(&doc).expect("JSON values always serialize"));
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const MH: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
    const FD: &str = "sha256:2222222222222222222222222222222222222222222222222222222222222222";

    fn doc(block: Value) -> Value {
        json!({ "ed25519": block })
    }

    fn trusted(key: &SigningKey) -> Vec<TrustedKey> {
        let vk = key.verifying_key();
        vec![TrustedKey {
            key_id: key_id(&vk),
            public_key: B64.encode(vk.as_bytes()),
            name: "Acme".into(),
        }]
    }

    #[test]
    fn trusted_unknown_and_unsigned() {
        let key = generate_key().unwrap();
        let block = sign_block(&key, MH, FD);
        let c = check(Some(&doc(block.clone())), MH, FD, &trusted(&key)).unwrap();
        assert_eq!(c.trust, Trust::Trusted);
        assert_eq!(c.signer.as_deref(), Some("Acme"));
        let c = check(Some(&doc(block)), MH, FD, &[]).unwrap();
        assert_eq!(c.trust, Trust::UnknownKey);
        assert_eq!(check(None, MH, FD, &[]).unwrap().trust, Trust::Unsigned);
    }

    /// Key ids are short; the trusted list is matched on the full key. A row that claims
    /// another key's id must not lend its trust (or name) to that key.
    #[test]
    fn trusted_keys_are_matched_on_the_full_key_not_the_id() {
        let acme = generate_key().unwrap();
        let mallory = generate_key().unwrap();
        let acme_id = key_id(&acme.verifying_key());
        let row = |k: &SigningKey, name: &str| TrustedKey {
            key_id: acme_id.clone(),
            public_key: B64.encode(k.verifying_key().as_bytes()),
            name: name.into(),
        };
        // Only Mallory's key is trusted, under a forged row carrying Acme's id.
        let forged = vec![row(&mallory, "Mallory")];
        let c = check(Some(&doc(sign_block(&acme, MH, FD))), MH, FD, &forged).unwrap();
        assert_eq!(c.trust, Trust::UnknownKey, "an id match is not trust");
        assert_eq!(c.signer, None);
        assert_eq!(
            c.public_key.as_deref(),
            Some(B64.encode(acme.verifying_key().as_bytes()).as_str())
        );
        // Two trusted rows sharing one id: each signature goes to the key that made it,
        // also when the block names the key by id only.
        let both = vec![row(&mallory, "Mallory"), row(&acme, "Acme")];
        let mut by_id = sign_block(&acme, MH, FD);
        by_id.as_object_mut().unwrap().remove("publicKey");
        let c = check(Some(&doc(by_id)), MH, FD, &both).unwrap();
        assert_eq!(c.trust, Trust::Trusted);
        assert_eq!(c.signer.as_deref(), Some("Acme"));
        let c = check(Some(&doc(sign_block(&acme, MH, FD))), MH, FD, &both).unwrap();
        assert_eq!(c.signer.as_deref(), Some("Acme"));
        // Mallory signing, naming Acme's id without a public key: the id's only real owner
        // (Acme) does not verify it, and Mallory's row does not really own that id.
        let mut spoof = sign_block(&mallory, MH, FD);
        spoof["keyId"] = json!(acme_id);
        spoof.as_object_mut().unwrap().remove("publicKey");
        assert_eq!(
            check(Some(&doc(spoof)), MH, FD, &both).unwrap_err().code,
            ErrorCode::VerifySignatureInvalid
        );
    }

    #[test]
    fn the_standard_sigstore_block_is_checked_only_when_it_holds_a_real_hash() {
        for placeholder in ["REPLACE_WITH_REAL_SHA256", &"0".repeat(64)] {
            let d = json!({"manifest": {"algorithm": "sha256", "hash": placeholder}});
            assert_eq!(check(Some(&d), MH, FD, &[]).unwrap().trust, Trust::Unsigned);
        }
        let d = json!({"manifest": {"hash": "3".repeat(64)}});
        assert_eq!(
            check(Some(&d), MH, FD, &[]).unwrap_err().code,
            ErrorCode::VerifyManifestHashMismatch
        );
        let d = json!({"manifest": {"hash": MH.trim_start_matches("sha256:")}});
        assert_eq!(check(Some(&d), MH, FD, &[]).unwrap().trust, Trust::Unsigned);
    }

    #[test]
    fn tampering_and_wrong_keys_are_always_rejected() {
        let key = generate_key().unwrap();
        let other = generate_key().unwrap();
        let block = sign_block(&key, MH, FD);
        // Different files than signed.
        let other_fd = FD.replace('2', "3");
        assert_eq!(
            check(Some(&doc(block.clone())), MH, &other_fd, &[])
                .unwrap_err()
                .code,
            ErrorCode::VerifySignatureInvalid
        );
        // Signature bytes from another key, claiming the trusted key.
        let mut forged = sign_block(&other, MH, FD);
        forged["keyId"] = block["keyId"].clone();
        forged.as_object_mut().unwrap().remove("publicKey");
        assert_eq!(
            check(Some(&doc(forged)), MH, FD, &trusted(&key))
                .unwrap_err()
                .code,
            ErrorCode::VerifySignatureInvalid
        );
        // Embedded key swapped: keyId no longer matches.
        let mut swapped = block.clone();
        swapped["publicKey"] = json!(B64.encode(other.verifying_key().as_bytes()));
        assert_eq!(
            check(Some(&doc(swapped)), MH, FD, &trusted(&key))
                .unwrap_err()
                .code,
            ErrorCode::VerifySignatureInvalid
        );
        // Garbage.
        let mut garbage = block;
        garbage["signature"] = json!("!!!");
        assert_eq!(
            check(Some(&doc(garbage)), MH, FD, &[]).unwrap_err().code,
            ErrorCode::VerifySignatureMalformed
        );
    }
}
