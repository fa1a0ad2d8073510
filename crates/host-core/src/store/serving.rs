//! What the app surfaces need from the store: the active version of an app, its manifest and
//! hashes, whether it is enabled, and its grants, in one consistent read.

use std::collections::BTreeSet;

use rusqlite::params;

use super::{stored_manifest, Store};
use crate::error::HostResult;
use crate::manifest::Manifest;

/// The facts a mount or a served file is decided from.
#[derive(Debug, Clone)]
pub struct ActiveApp {
    pub name: String,
    pub version: String,
    pub enabled: bool,
    pub package_hash: String,
    pub manifest_hash: String,
    pub manifest: Manifest,
    pub grants: BTreeSet<String>,
}

impl Store {
    /// The active version of an installed app (`app.not_installed` when it is not).
    pub fn active_app(&self, name: &str) -> HostResult<ActiveApp> {
        let app = self.app_row(name)?;
        let (package_hash, manifest_hash, manifest_json): (String, String, String) =
            self.conn.query_row(
                "SELECT package_hash, manifest_hash, manifest_json FROM app_versions WHERE name = ?1 AND version = ?2",
                params![name, app.active],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?;
        Ok(ActiveApp {
            name: name.to_owned(),
            version: app.active,
            enabled: app.enabled,
            package_hash,
            manifest_hash,
            manifest: stored_manifest(&manifest_json)?,
            grants: self.grants_of(name)?,
        })
    }
}
