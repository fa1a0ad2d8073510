//! The files `build.rs` embedded: templates, the SDK's package and its `npm pack` tarball.

include!(concat!(env!("OUT_DIR"), "/author_files.rs"));

/// The host's version: the SDK's `package.json` carries the same (`tests/author_new.rs`).
pub const HOST_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Whether the SDK was built before this binary (else `new` and `sdk` fail: `author.sdk_missing`).
pub fn sdk_available() -> bool {
    SDK_FILES.iter().any(|(p, _)| *p == "dist/runtime.js")
}

/// The SDK's package files: `(path in the package, bytes)`, `dist/…` and `package.json`, `README.md`.
pub fn sdk_files() -> &'static [(&'static str, &'static [u8])] {
    SDK_FILES
}

/// The SDK's built modules and their types (`dist/` without the prefix): what apps vendor.
pub fn sdk_dist() -> impl Iterator<Item = (&'static str, &'static [u8])> {
    SDK_FILES
        .iter()
        .filter_map(|(p, b)| p.strip_prefix("dist/").map(|rel| (rel, *b)))
}

/// The `npm pack` tarball of this version's SDK, when the build made one.
pub fn sdk_pack() -> Option<(&'static str, &'static [u8])> {
    SDK_PACK.first().copied()
}

/// The files of one template folder (`common`, `page`, `agent`), relative to it.
pub fn template_files(folder: &str) -> impl Iterator<Item = (&'static str, &'static [u8])> + '_ {
    TEMPLATE_FILES.iter().filter_map(move |(p, b)| {
        p.strip_prefix(folder)
            .and_then(|rest| rest.strip_prefix('/'))
            .map(|rel| (rel, *b))
    })
}
