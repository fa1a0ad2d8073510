//! Our hashes agree byte for byte with the Agent App reference CLI (agentapp-ref 0.10.0).
//!
//! The pinned values below were produced by the reference CLI's own `hashFile` /
//! `hashDirectory` algorithm over these fixtures. `vectors/ordering` is built to catch every
//! ordering mistake: per-directory sorting (`a/b` before `a-b/x`), uppercase before lowercase,
//! UTF-16 order of non-ASCII names (U+1F600 sorts before U+E000 in UTF-16 but after it in
//! UTF-8), `node_modules` skipped, an empty file, CRLF kept in APP.md.

mod support;

use support::{fixture, inspect_path, zip_dir};

const ORDERING_PACKAGE: &str =
    "sha256:0fe3b56424d3b2e0fdead56d9c5ffbcf37d7de605b7a10384793736731d40c4c";
const ORDERING_MANIFEST: &str =
    "sha256:8e438304a62aa345515c2f873aa769a466467b754372a2f85b03f1129c2f379d";
const HELLO_PACKAGE: &str =
    "sha256:07a3a58f39b8ffa1b54dbf40fcfa7fde1965c4235ef72dcfa8ed1228ca34e2d9";
const HELLO_MANIFEST: &str =
    "sha256:e40f30d015449603c9bd00ebb40a21bb370dee3fd065de2b731d190a9248ca14";

#[test]
fn folder_hashes_match_the_reference_cli() {
    let i = inspect_path(&fixture("vectors/ordering"));
    assert_eq!(i.read.package_hash, ORDERING_PACKAGE);
    assert_eq!(i.manifest_hash, ORDERING_MANIFEST);
    let order: Vec<&str> = i.read.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        order,
        vec![
            ".hidden",
            "APP.md",
            "B/c",
            "a/b",
            "a-b/x",
            "empty",
            "z.txt",
            "é.txt",
            "ü/x",
            "😀.txt",
            "\u{e000}.txt"
        ]
    );
    assert_eq!(i.read.skipped, vec!["node_modules"]);

    let i = inspect_path(&fixture("good/hello-app"));
    assert_eq!(i.read.package_hash, HELLO_PACKAGE);
    assert_eq!(i.manifest_hash, HELLO_MANIFEST);
}

#[test]
fn a_zip_of_the_folder_hashes_the_same_with_or_without_a_top_folder() {
    let tmp = tempfile::tempdir().unwrap();
    for top in [None, Some("ordering")] {
        let z = tmp
            .path()
            .join(format!("{top:?}.zip").replace(['(', ')', '"'], ""));
        zip_dir(&fixture("vectors/ordering"), &z, top);
        let i = inspect_path(&z);
        assert_eq!(i.read.package_hash, ORDERING_PACKAGE, "top folder {top:?}");
        assert_eq!(i.manifest_hash, ORDERING_MANIFEST);
    }
}

#[test]
fn projection_is_byte_identical_across_runs_and_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let z = tmp.path().join("hello.zip");
    zip_dir(&fixture("good/hello-app"), &z, Some("hello-app"));
    let a = serde_json::to_vec(&inspect_path(&fixture("good/hello-app")).projection).unwrap();
    let b = serde_json::to_vec(&inspect_path(&fixture("good/hello-app")).projection).unwrap();
    let c = serde_json::to_vec(&inspect_path(&z).projection).unwrap();
    assert_eq!(a, b);
    assert_eq!(a, c);
}
