//! The package files of an installed version, for the service host to lay out the read-only
//! `/app` a backend service runs from (each file then read through [`Store::read_file`], which
//! checks its hash).

use super::Store;
use crate::foundation::error::HostResult;

impl Store {
    /// The package paths of `name`'s `version`, sorted.
    pub fn package_paths(&self, name: &str, version: &str) -> HostResult<Vec<String>> {
        let mut paths: Vec<String> = self
            .file_records(name, version)?
            .into_iter()
            .map(|r| r.path)
            .collect();
        paths.sort();
        Ok(paths)
    }
}
