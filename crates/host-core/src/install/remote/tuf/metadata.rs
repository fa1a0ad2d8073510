//! TUF role metadata as typed data. Unknown fields are ignored (TUF allows them; they are
//! still covered by the signature, which is checked over the document as received).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The one hash algorithm named in `hashes`.
pub const SHA256: &str = "sha256";

/// The spec version this client writes and reads (major 1).
pub const SPEC_VERSION: &str = "1.0.31";

/// A signed metadata file: `{"signed": {...}, "signatures": [...]}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Envelope {
    pub signed: Value,
    pub signatures: Vec<Signature>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Signature {
    pub keyid: String,
    /// Hex of the 64-byte Ed25519 signature over the canonical bytes of `signed`.
    pub sig: String,
}

/// A public key as TUF writes it: `keyval.public` is the hex of the 32 Ed25519 bytes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct PublicKey {
    pub keytype: String,
    pub scheme: String,
    pub keyval: KeyVal,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct KeyVal {
    pub public: String,
}

/// The keys of one role and how many of them must sign.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RoleKeys {
    pub keyids: Vec<String>,
    pub threshold: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Root {
    #[serde(rename = "_type")]
    pub kind: String,
    pub spec_version: String,
    pub version: u64,
    pub expires: String,
    #[serde(default)]
    pub consistent_snapshot: bool,
    pub keys: BTreeMap<String, PublicKey>,
    pub roles: BTreeMap<String, RoleKeys>,
}

/// What a timestamp says of `snapshot.json`, or a snapshot of `targets.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct MetaFile {
    pub version: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hashes: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Timestamp {
    #[serde(rename = "_type")]
    pub kind: String,
    pub spec_version: String,
    pub version: u64,
    pub expires: String,
    pub meta: BTreeMap<String, MetaFile>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    #[serde(rename = "_type")]
    pub kind: String,
    pub spec_version: String,
    pub version: u64,
    pub expires: String,
    pub meta: BTreeMap<String, MetaFile>,
}

/// A target file: its exact length and SHA-256.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct TargetFile {
    pub length: u64,
    pub hashes: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<Value>,
}

impl TargetFile {
    /// The lowercase hex SHA-256 (every target here has one; checked when targets are read).
    pub fn sha256(&self) -> &str {
        self.hashes.get(SHA256).map(String::as_str).unwrap_or("")
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Targets {
    #[serde(rename = "_type")]
    pub kind: String,
    pub spec_version: String,
    pub version: u64,
    pub expires: String,
    pub targets: BTreeMap<String, TargetFile>,
}

/// What every role file has in common.
pub trait Role: serde::de::DeserializeOwned {
    /// The role's name (and its `_type`).
    const NAME: &'static str;
    /// The most bytes its file may have when no signed length bounds it.
    const MAX_BYTES: u64;
    fn kind(&self) -> &str;
    fn version(&self) -> u64;
    fn expires(&self) -> &str;
    fn spec_version(&self) -> &str;
}

macro_rules! role {
    ($t:ty, $name:literal, $max:expr) => {
        impl Role for $t {
            const NAME: &'static str = $name;
            const MAX_BYTES: u64 = $max;
            fn kind(&self) -> &str {
                &self.kind
            }
            fn version(&self) -> u64 {
                self.version
            }
            fn expires(&self) -> &str {
                &self.expires
            }
            fn spec_version(&self) -> &str {
                &self.spec_version
            }
        }
    };
}

role!(Root, "root", 512 * 1024);
role!(Timestamp, "timestamp", 64 * 1024);
role!(Snapshot, "snapshot", 4 * 1024 * 1024);
role!(Targets, "targets", 32 * 1024 * 1024);
