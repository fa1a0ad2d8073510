//! An installed app's icon for the app list: `presentation.icon` (or `install.branding.icon`),
//! a file of the package read from the verified store (its hash checked) and answered as a
//! `data:` URL, or a `data:` URL written in the manifest itself. Bounded: a file over
//! [`MAX_ICON_BYTES`], of another type than PNG, JPEG, GIF or WebP, missing or tampered with
//! gives no icon (the host UI draws the app's initial instead); nothing here fails the list.

use base64::Engine;
use rusqlite::{params, OptionalExtension};
use serde_json::Value;

use super::Store;
use crate::install::manifest::Manifest;

/// Largest icon file answered (its `data:` URL is about 4/3 of it).
pub const MAX_ICON_BYTES: u64 = 32 * 1024;

/// The image types an icon may have, by file extension.
fn mime_of(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return None,
    })
}

/// A `data:` URL the host UI shows as is: one of the image types, base64, bounded.
fn valid_data_url(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("data:") else {
        return false;
    };
    let Some((mime, b64)) = rest.split_once(";base64,") else {
        return false;
    };
    matches!(
        mime,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp"
    ) && (b64.len() as u64) <= MAX_ICON_BYTES * 4 / 3 + 4
        && !b64.is_empty()
        && b64
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='))
}

/// The icon's declared location, if any.
pub(crate) fn declared_icon(manifest: &Manifest) -> Option<String> {
    let at = |p: &str| {
        manifest
            .data
            .get(p.split('/').next().unwrap_or_default())
            .and_then(|v| v.pointer(&p[p.find('/').unwrap_or(p.len())..]))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    at("presentation/icon").or_else(|| at("install/branding/icon"))
}

impl Store {
    /// The icon of `name`@`version` as a `data:` URL, or `None` (see the module doc).
    pub(crate) fn icon_data_url(
        &self,
        name: &str,
        version: &str,
        manifest: &Manifest,
    ) -> Option<String> {
        let declared = declared_icon(manifest)?;
        if declared.starts_with("data:") {
            return valid_data_url(&declared).then_some(declared);
        }
        let path = declared.trim_start_matches("./");
        let mime = mime_of(path)?;
        let size: i64 = self
            .conn
            .query_row(
                "SELECT b.size FROM version_files v JOIN blobs b ON b.sha256 = v.blob
                 WHERE v.name = ?1 AND v.version = ?2 AND v.path = ?3",
                params![name, version, path],
                |r| r.get(0),
            )
            .optional()
            .ok()??;
        if size <= 0 || size as u64 > MAX_ICON_BYTES {
            return None;
        }
        let bytes = self.read_file(name, version, path).ok()?;
        Some(format!(
            "data:{mime};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bounded_base64_images_pass_as_data_urls() {
        assert!(valid_data_url("data:image/png;base64,iVBORw0KGgo="));
        assert!(!valid_data_url("data:image/svg+xml;base64,PHN2Zz4="));
        assert!(!valid_data_url("data:text/html;base64,PGgxPg=="));
        assert!(!valid_data_url("data:image/png;base64,"));
        assert!(!valid_data_url("data:image/png;base64,a\"onerror=x"));
        assert!(!valid_data_url("https://example.com/icon.png"));
        let big = format!("data:image/png;base64,{}", "A".repeat(64 * 1024));
        assert!(!valid_data_url(&big));
    }

    #[test]
    fn icon_types_come_from_the_extension() {
        assert_eq!(mime_of("assets/Icon.PNG"), Some("image/png"));
        assert_eq!(mime_of("icon.jpeg"), Some("image/jpeg"));
        assert_eq!(mime_of("icon.svg"), None);
        assert_eq!(mime_of("icon"), None);
    }
}
