//! The standard's hashes, computed exactly as the reference CLI computes them, plus AppHost's
//! file-list digest.
//!
//! - `manifestHash` = `sha256:` + hex(SHA-256(raw bytes of APP.md)). No normalisation.
//! - `packageHash` = `sha256:` + hex(SHA-256 over, for every file in the CLI's order,
//!   `rel_path (UTF-8, '/'-separated) 0x00 content 0x00`). `node_modules` and `.git` are
//!   skipped at any depth. See [`crate::install::package::path::cli_order`] for the order.
//! - `filesDigest` (AppHost, signed): SHA-256 over the canonical per-file list, excluding
//!   `app.lock.json` and `app.signature.yaml`; see `docs/package-format.md`.
//!
//! SHA-256 comes from the `sha2` crate, which uses the CPU's SHA extensions (SHA-NI) when present.

use sha2::{Digest, Sha256};

pub type Sha256Bytes = [u8; 32];

pub const LOCK_FILE: &str = "app.lock.json";
pub const SIGNATURE_FILE: &str = "app.signature.yaml";

pub fn sha256(data: &[u8]) -> Sha256Bytes {
    Sha256::digest(data).into()
}

pub fn to_ref(digest: &Sha256Bytes) -> String {
    format!("sha256:{}", hex::encode(digest))
}

pub fn manifest_hash(app_md: &[u8]) -> String {
    to_ref(&sha256(app_md))
}

/// `sha256:` followed by exactly 64 hex digits (either case, as the schema allows).
pub fn is_sha256_ref(s: &str) -> bool {
    s.strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Compares two hash strings, tolerating the `sha256:` prefix and hex case on either side
/// (the standard's signature examples use bare hex).
pub fn same_hash(a: &str, b: &str) -> bool {
    let strip = |s: &str| s.strip_prefix("sha256:").unwrap_or(s).to_ascii_lowercase();
    strip(a) == strip(b)
}

/// One file of a package after reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRecord {
    pub path: String,
    pub size: u64,
    pub sha256: Sha256Bytes,
}

impl FileRecord {
    pub fn hex(&self) -> String {
        hex::encode(self.sha256)
    }
}

/// Whether a file takes part in the signed file list (everything but the lock and signature).
pub fn in_file_list(path: &str) -> bool {
    path != LOCK_FILE && path != SIGNATURE_FILE
}

/// `filesDigest`: SHA-256 over `"apphost.files.v1\n"` then one line per listed file, in the
/// reference CLI's order: `<path> 0x00 <size in decimal> 0x00 <sha256 hex> '\n'`.
pub fn files_digest(files: &[FileRecord]) -> String {
    let mut h = Sha256::new();
    h.update(b"apphost.files.v1\n");
    for f in files.iter().filter(|f| in_file_list(&f.path)) {
        h.update(f.path.as_bytes());
        h.update([0]);
        h.update(f.size.to_string().as_bytes());
        h.update([0]);
        h.update(f.hex().as_bytes());
        h.update(b"\n");
    }
    to_ref(&h.finalize().into())
}

/// The reference CLI's `hashDirectory`, fed one file at a time in CLI order.
#[derive(Default, Clone)]
pub struct PackageHasher {
    h: Sha256,
}

impl PackageHasher {
    pub fn begin_file(&mut self, path: &str) {
        self.h.update(path.as_bytes());
        self.h.update([0]);
    }
    pub fn update(&mut self, data: &[u8]) {
        self.h.update(data);
    }
    pub fn end_file(&mut self) {
        self.h.update([0]);
    }
    pub fn finish(self) -> String {
        to_ref(&self.h.finalize().into())
    }
}

/// Incremental SHA-256 of one file.
#[derive(Default, Clone)]
pub struct FileHasher {
    h: Sha256,
}

impl FileHasher {
    pub fn update(&mut self, data: &[u8]) {
        self.h.update(data);
    }
    pub fn finish(self) -> Sha256Bytes {
        self.h.finalize().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_hash_frames_each_file_as_path_nul_content_nul() {
        let files = [
            (".hidden", "h"),
            ("APP.md", "---\n"),
            ("a/b", ""),
            ("a-b/x", "x"),
        ];
        let mut h = PackageHasher::default();
        let mut framed = Vec::new();
        for (path, body) in files {
            h.begin_file(path);
            h.update(body.as_bytes());
            h.end_file();
            framed.extend_from_slice(path.as_bytes());
            framed.push(0);
            framed.extend_from_slice(body.as_bytes());
            framed.push(0);
        }
        assert_eq!(h.finish(), to_ref(&sha256(&framed)));
    }

    #[test]
    fn hash_refs() {
        assert!(is_sha256_ref(&manifest_hash(b"x")));
        assert!(!is_sha256_ref("sha256:abc"));
        assert!(same_hash(
            &format!("sha256:{}", "AB".repeat(32)),
            &"ab".repeat(32)
        ));
        assert_eq!(
            manifest_hash(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
