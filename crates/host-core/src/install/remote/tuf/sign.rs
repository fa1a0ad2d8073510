//! The publisher's half: keys and signatures in TUF's form.

use ed25519_dalek::{Signer, SigningKey, VerifyingKey};
use serde::Serialize;

use super::canonical::canonical_bytes;
use super::metadata::{Envelope, KeyVal, PublicKey, Signature};
use super::verify::key_id;

/// TUF's form of an Ed25519 public key.
pub fn public_key(key: &VerifyingKey) -> PublicKey {
    PublicKey {
        keytype: "ed25519".into(),
        scheme: "ed25519".into(),
        keyval: KeyVal {
            public: hex::encode(key.as_bytes()),
        },
    }
}

/// The key id of a signing key's public half.
pub fn signing_key_id(key: &SigningKey) -> String {
    key_id(&public_key(&key.verifying_key()))
}

/// `signed` wrapped with one signature per key, as pretty-printed JSON bytes.
pub fn sign(signed: &impl Serialize, keys: &[&SigningKey]) -> Vec<u8> {
    let value = serde_json::to_value(signed).unwrap_or_default();
    let message = canonical_bytes(&value);
    let signatures = keys
        .iter()
        .map(|k| Signature {
            keyid: signing_key_id(k),
            sig: hex::encode(k.sign(&message).to_bytes()),
        })
        .collect();
    let env = Envelope {
        signed: value,
        signatures,
    };
    serde_json::to_vec_pretty(&env).unwrap_or_default()
}
