//! Checks on what callers pass: ids, names, MIME types; and lowercase hex.

use crate::ids::ArtifactId;

use super::*;

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

pub(super) fn is_sha_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// An artifact id as callers pass it: the runtime id charset, and our `artifact_` prefix.
pub fn check_id(id: &str) -> Result<(), ArtifactError> {
    if ArtifactId::new(id).is_ok() && id.starts_with("artifact_") {
        Ok(())
    } else {
        Err(ArtifactError::InvalidId)
    }
}

/// A display and file name, never a path: 1..=255 bytes, no `/`, `\`, control or format
/// characters, not `.` or `..`, no leading or trailing space.
pub fn check_name(name: &str) -> Result<(), ArtifactError> {
    if name.is_empty() {
        return Err(ArtifactError::InvalidName("empty"));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(ArtifactError::InvalidName("longer than 255 bytes"));
    }
    if name == "." || name == ".." {
        return Err(ArtifactError::InvalidName("not a file name"));
    }
    if name.contains(['/', '\\']) {
        return Err(ArtifactError::InvalidName(
            "contains a path separator ('/' or '\\')",
        ));
    }
    if name.chars().any(|c| {
        c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
    }) {
        return Err(ArtifactError::InvalidName(
            "contains a control or invisible formatting character",
        ));
    }
    if name.starts_with(' ') || name.ends_with(' ') {
        return Err(ArtifactError::InvalidName("starts or ends with a space"));
    }
    Ok(())
}

/// `type/subtype` with RFC 6838 name characters, optional `; param=value` parameters of token
/// characters, at most 127 bytes.
pub fn check_mime(m: &str) -> Result<(), ArtifactError> {
    let tok = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    let mut parts = m.split(';');
    let essence = parts.next().unwrap_or("");
    let ok = m.len() <= MAX_MIME_BYTES
        && essence
            .split_once('/')
            .is_some_and(|(t, s)| tok(t) && tok(s))
        && parts.all(|p| {
            p.trim_start()
                .split_once('=')
                .is_some_and(|(k, v)| tok(k) && tok(v.trim_matches('"')))
        });
    if ok {
        Ok(())
    } else {
        Err(ArtifactError::InvalidMimeType)
    }
}
