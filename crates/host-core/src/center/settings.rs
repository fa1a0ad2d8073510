//! The settings page: trusted publisher keys (with fingerprints), the limits in effect, the
//! theme (a `settings` row, `ui.theme`) and where the data directory is.

use serde::Serialize;
use serde_json::json;

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;
use crate::install::signature::{self, TrustedKey};
use crate::install::store::Store;

/// The `settings` key of the host UI's theme.
pub const THEME_KEY: &str = "ui.theme";
pub const THEMES: [&str; 3] = ["system", "light", "dark"];

/// A trusted key as the settings page lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrustedKeyRow {
    pub key_id: String,
    pub public_key: String,
    pub name: String,
    pub fingerprint: String,
}

/// SHA-256 of the raw 32-byte Ed25519 public key, as 16 groups of 4 hex digits (the key id is
/// its first 16 digits). `None` if `public_key` is not a valid key.
pub fn fingerprint(public_key: &str) -> Option<String> {
    let vk = signature::parse_public_key(public_key).ok()?;
    let hex = hex::encode(crate::foundation::hashing::sha256(vk.as_bytes()));
    Some(
        hex.as_bytes()
            .chunks(4)
            .map(|c| std::str::from_utf8(c).unwrap_or(""))
            .collect::<Vec<_>>()
            .join(" "),
    )
}

fn row(k: TrustedKey) -> TrustedKeyRow {
    TrustedKeyRow {
        fingerprint: fingerprint(&k.public_key).unwrap_or_default(),
        key_id: k.key_id,
        public_key: k.public_key,
        name: k.name,
    }
}

pub fn trusted_keys(dir: &DataDir) -> HostResult<Vec<TrustedKeyRow>> {
    Ok(Store::open(dir)?
        .trusted_keys()?
        .into_iter()
        .map(row)
        .collect())
}

/// Trusts a key given as its base64 text or as a public key file's JSON (`apphost keygen`'s
/// `.pub.json`). Answers every trusted key.
pub fn add_trusted_key(
    dir: &DataDir,
    public_key: &str,
    label: Option<&str>,
) -> HostResult<Vec<TrustedKeyRow>> {
    let (vk, doc_name) = match serde_json::from_str::<serde_json::Value>(public_key) {
        Ok(doc) if doc.is_object() => signature::parse_public_key_doc(&doc)?,
        _ => (signature::parse_public_key(public_key)?, None),
    };
    let name = label
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .or(doc_name)
        .unwrap_or_else(|| "publisher".into());
    let store = super::open_locked(dir)?;
    store.add_trusted_key(&TrustedKey {
        key_id: signature::key_id(&vk),
        public_key: signature::encode_public_key(&vk),
        name,
    })?;
    Ok(store.trusted_keys()?.into_iter().map(row).collect())
}

/// Stops trusting a key (by key id or full public key). Answers every trusted key left.
pub fn remove_trusted_key(dir: &DataDir, key_id: &str) -> HostResult<Vec<TrustedKeyRow>> {
    let store = super::open_locked(dir)?;
    store.remove_trusted_key(key_id)?;
    Ok(store.trusted_keys()?.into_iter().map(row).collect())
}

/// What the settings page shows.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostSettings {
    pub data_dir: String,
    #[schemars(with = "std::collections::BTreeMap<String, serde_json::Value>")]
    pub limits: serde_json::Value,
    pub theme: String,
    pub version: &'static str,
}

/// The theme stored, `system` when none is.
pub fn theme(store: &Store) -> HostResult<String> {
    Ok(store
        .settings()?
        .get(THEME_KEY)
        .filter(|t| THEMES.contains(&t.as_str()))
        .cloned()
        .unwrap_or_else(|| "system".into()))
}

pub fn host_settings(dir: &DataDir) -> HostResult<HostSettings> {
    let store = Store::open(dir)?;
    let l = store.limits()?;
    Ok(HostSettings {
        data_dir: dir.root().display().to_string(),
        limits: json!({
            "maxFiles": l.max_files,
            "maxUnpackedBytes": l.max_unpacked_bytes,
            "maxManifestBytes": l.max_manifest_bytes,
            "maxCompressionRatio": l.max_compression_ratio,
        }),
        theme: theme(&store)?,
        version: env!("CARGO_PKG_VERSION"),
    })
}

/// Stores the theme (`system`, `light` or `dark`; anything else is `setting.invalid`).
pub fn set_theme(dir: &DataDir, theme: &str) -> HostResult<String> {
    if !THEMES.contains(&theme) {
        return Err(HostError::new(
            ErrorCode::SettingInvalid,
            format!("theme must be one of system, light, dark (not {theme:?})"),
        )
        .with("key", THEME_KEY));
    }
    let store = super::open_locked(dir)?;
    // The host UI says its theme on every start: only a change is written (and audited).
    if store.settings()?.get(THEME_KEY).map(String::as_str) == Some(theme) {
        return Ok(theme.to_owned());
    }
    store.write_settings(
        &[(THEME_KEY, Some(theme))],
        "setting",
        &json!({"key": THEME_KEY, "value": theme}),
    )?;
    Ok(theme.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_is_the_sha256_of_the_raw_key_and_starts_with_the_key_id() {
        let key = signature::generate_key().unwrap();
        let vk = key.verifying_key();
        let fp = fingerprint(&signature::encode_public_key(&vk)).unwrap();
        assert_eq!(fp.len(), 64 + 15);
        let id = signature::key_id(&vk);
        assert!(fp
            .replace(' ', "")
            .starts_with(id.trim_start_matches("ed25519:")));
        assert_eq!(fingerprint("not a key"), None);
    }
}
