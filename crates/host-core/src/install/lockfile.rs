//! `app.lock.json`: the per-file SHA-256 list (AppHost's definition; see `docs/package-format.md`).
//!
//! ```json
//! { "lockVersion": 1, "algorithm": "sha256", "filesDigest": "sha256:…",
//!   "files": [ { "path": "APP.md", "size": 812, "sha256": "<64 hex>" }, … ] }
//! ```
//! It lists every package file except itself and `app.signature.yaml`, in the reference CLI's
//! order. When a package ships one, every entry must match the bytes read, and no file may be
//! missing from it or added to it.

use serde_json::{json, Value};

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::hashing::{files_digest, in_file_list, same_hash, FileRecord};

pub fn render(files: &[FileRecord]) -> String {
    let list: Vec<Value> = files
        .iter()
        .filter(|f| in_file_list(&f.path))
        .map(|f| json!({"path": f.path, "size": f.size, "sha256": f.hex()}))
        .collect();
    let doc = json!({
        "lockVersion": 1,
        "algorithm": "sha256",
        "filesDigest": files_digest(files),
        "files": list,
    });
    let mut s = serde_json::to_string_pretty(&doc).expect("JSON values always serialize");
    s.push('\n');
    s
}

fn invalid(why: impl std::fmt::Display) -> HostError {
    HostError::new(
        ErrorCode::VerifyLockInvalid,
        format!("app.lock.json is invalid: {why}"),
    )
}

/// Most file names a lock mismatch message names per kind (all are in its details).
const NAMED_FILES: usize = 5;

/// `a, b, c and 4 more`.
fn name_some(paths: &[String]) -> String {
    let shown: Vec<&str> = paths.iter().take(NAMED_FILES).map(String::as_str).collect();
    match paths.len().saturating_sub(NAMED_FILES) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// Checks a shipped lock file against the files actually read.
pub fn verify(lock_bytes: &[u8], files: &[FileRecord]) -> HostResult<()> {
    let doc: Value = serde_json::from_slice(lock_bytes).map_err(invalid)?;
    if doc.get("lockVersion") != Some(&json!(1)) {
        return Err(invalid("lockVersion must be 1"));
    }
    if doc.get("algorithm").and_then(Value::as_str) != Some("sha256") {
        return Err(invalid("algorithm must be \"sha256\""));
    }
    let listed = doc
        .get("files")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("files must be a list"))?;
    let mut lock: std::collections::BTreeMap<&str, (u64, &str)> = Default::default();
    for item in listed {
        let path = item
            .get("path")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("an entry has no path"))?;
        let size = item
            .get("size")
            .and_then(Value::as_u64)
            .ok_or_else(|| invalid(format!("{path}: no size")))?;
        let sha = item
            .get("sha256")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid(format!("{path}: no sha256")))?;
        if lock.insert(path, (size, sha)).is_some() {
            return Err(invalid(format!("{path} is listed twice")));
        }
    }
    let actual: Vec<&FileRecord> = files.iter().filter(|f| in_file_list(&f.path)).collect();
    let mut changed = Vec::new();
    let mut extra = Vec::new();
    for f in &actual {
        match lock.remove(f.path.as_str()) {
            Some((size, sha)) if size == f.size && same_hash(sha, &f.hex()) => {}
            Some(_) => changed.push(f.path.clone()),
            None => extra.push(f.path.clone()),
        }
    }
    let missing: Vec<String> = lock.keys().map(|s| s.to_string()).collect();
    if !changed.is_empty() || !extra.is_empty() || !missing.is_empty() {
        return Err(HostError::new(
            ErrorCode::VerifyLockMismatch,
            format!(
                "the package files do not match app.lock.json ({}); run `apphost lock` (or `apphost sign`) again after editing",
                [("changed", &changed), ("not listed", &extra), ("missing", &missing)]
                    .iter()
                    .filter(|(_, l)| !l.is_empty())
                    .map(|(what, l)| format!("{what}: {}", name_some(l)))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        )
        .with("changed", changed)
        .with("notListed", extra)
        .with("missing", missing));
    }
    if let Some(d) = doc.get("filesDigest").and_then(Value::as_str) {
        if !same_hash(d, &files_digest(files)) {
            return Err(HostError::new(
                ErrorCode::VerifyLockMismatch,
                "app.lock.json filesDigest does not match its file list",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::foundation::hashing::sha256;

    fn rec(path: &str, body: &[u8]) -> FileRecord {
        FileRecord {
            path: path.into(),
            size: body.len() as u64,
            sha256: sha256(body),
        }
    }

    #[test]
    fn round_trip_and_tamper_detection() {
        let files = vec![rec("APP.md", b"---\n"), rec("a.txt", b"a")];
        let lock = render(&files);
        verify(lock.as_bytes(), &files).unwrap();
        // The lock itself and the signature file are not part of the list.
        let mut with_lock = files.clone();
        with_lock.push(rec("app.lock.json", lock.as_bytes()));
        verify(lock.as_bytes(), &with_lock).unwrap();

        let tampered = vec![rec("APP.md", b"---\n"), rec("a.txt", b"b")];
        let e = verify(lock.as_bytes(), &tampered).unwrap_err();
        assert_eq!(e.code, ErrorCode::VerifyLockMismatch);
        assert_eq!(e.details["changed"][0], "a.txt");

        let added = vec![
            rec("APP.md", b"---\n"),
            rec("a.txt", b"a"),
            rec("evil.js", b"x"),
        ];
        assert_eq!(
            verify(lock.as_bytes(), &added).unwrap_err().details["notListed"][0],
            "evil.js"
        );
        assert_eq!(
            verify(b"{}", &files).unwrap_err().code,
            ErrorCode::VerifyLockInvalid
        );
    }
}
