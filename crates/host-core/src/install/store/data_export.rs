//! `apphost export`: the app's data as the zip uninstall's "export, then delete" writes, with
//! nothing removed and no state changed.

use std::path::Path;

use serde::Serialize;

use super::{app_id, Store};
use crate::foundation::error::{ErrorCode, HostError, HostResult};

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportOutcome {
    pub app: String,
    pub exported_to: String,
    pub files: u64,
    pub bytes: u64,
    /// Entries of the app's data the export left out (links, special files, too deep).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub export_skipped: Vec<runtime_core::SkippedEntry>,
}

impl Store {
    /// Zips the data of the installed app `name` to `dest` (a new file: never replaced; written
    /// aside and renamed, so a failure leaves no file). Reads only: the store, the app and its
    /// data stay as they were.
    pub fn export_data(&self, name: &str, dest: &Path) -> HostResult<ExportOutcome> {
        self.app_row(name)?;
        let id = app_id(name)?;
        let dest = std::path::absolute(dest).map_err(|e| super::io("cannot resolve", dest, e))?;
        let exists = || {
            HostError::new(
                ErrorCode::ExportFailed,
                format!("{} already exists; choose a new file", dest.display()),
            )
            .with("path", dest.display().to_string())
        };
        if std::fs::symlink_metadata(&dest).is_ok() {
            return Err(exists());
        }
        let report = self.app_data().export_zip(&id, &dest).map_err(|e| {
            HostError::new(ErrorCode::ExportFailed, format!("export failed: {e}"))
                .with("path", dest.display().to_string())
        })?;
        Ok(ExportOutcome {
            app: name.to_owned(),
            exported_to: dest.display().to_string(),
            files: report.files,
            bytes: report.bytes,
            export_skipped: report.skipped,
        })
    }
}
