//! Identifier newtypes.

use std::fmt;

/// An app's identity as RuntimeCore sees it: the manifest `name`, validated against the
/// standard's pattern `^[a-z0-9][a-z0-9-_.]*$` (1..=64 characters). Because the pattern excludes
/// `/`, `\\` and a leading `.`, an `AppId` is always safe to use as one path component.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct AppId(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid app id {0:?}: must match ^[a-z0-9][a-z0-9-_.]*$ and be 1..=64 characters")]
pub struct InvalidAppId(pub String);

impl AppId {
    pub fn new(name: &str) -> Result<Self, InvalidAppId> {
        if is_valid_app_name(name) {
            Ok(AppId(name.to_owned()))
        } else {
            Err(InvalidAppId(name.to_owned()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AppId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The standard's app-name rule (`app-manifest.schema.json#/properties/name`).
pub fn is_valid_app_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() > 64 {
        return false;
    }
    let first_ok = bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit();
    first_ok
        && bytes.iter().all(|&b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_standard_names() {
        for ok in ["a", "content-factory-app", "x.y_z-1", "0app"] {
            assert!(AppId::new(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_names_that_could_escape_a_directory() {
        for bad in [
            "",
            ".",
            "..",
            ".hidden",
            "a/b",
            "a\\b",
            "A",
            "-a",
            "é",
            &"a".repeat(65),
        ] {
            assert!(AppId::new(bad).is_err(), "{bad:?}");
        }
    }
}
