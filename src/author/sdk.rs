//! `apphost sdk --out <dir> [--pack]`: the Host Bridge SDK's npm package as this host embeds it
//! (`package.json` with the host's version, `README.md`, `dist/` = the ESM build and its `.d.ts`),
//! and with `--pack` also its `npm pack` tarball (made by the SDK's `npm run build`, embedded by
//! `build.rs`). The folder is written whole or not at all.

use std::path::{Path, PathBuf};

use host_core::{ErrorCode, HostError, HostResult};

use super::embedded::{sdk_available, sdk_files, sdk_pack, HOST_VERSION};
use super::write_tree::write_tree;

/// What `write_sdk` wrote.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WrittenSdk {
    pub path: PathBuf,
    pub version: &'static str,
    pub files: usize,
    /// The tarball's path, with `--pack`.
    pub tarball: Option<PathBuf>,
}

pub fn write_sdk(out: &Path, pack: bool) -> HostResult<WrittenSdk> {
    if !sdk_available() {
        return Err(missing(
            "this apphost was built without the SDK (bridge-sdk/dist)",
        ));
    }
    let mut files: Vec<(String, Vec<u8>)> = sdk_files()
        .iter()
        .map(|(rel, bytes)| ((*rel).to_owned(), bytes.to_vec()))
        .collect();
    let mut tarball = None;
    if pack {
        let (name, bytes) = sdk_pack().ok_or_else(|| {
            missing("this apphost was built without the SDK's npm pack tarball (bridge-sdk/pack)")
        })?;
        files.push((name.to_owned(), bytes.to_vec()));
        tarball = Some(out.join(name));
    }
    write_tree(out, &files)?;
    Ok(WrittenSdk {
        path: out.to_path_buf(),
        version: HOST_VERSION,
        files: files.len(),
        tarball,
    })
}

fn missing(what: &str) -> HostError {
    HostError::new(
        ErrorCode::AuthorSdkMissing,
        format!("{what}: run `npm run build` before `cargo build`"),
    )
}
