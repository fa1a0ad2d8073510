//! `host_core::install::manifest::load` with the default limits, on an `APP.md` and optionally one
//! layered or metadata file; a manifest that loads is also projected and evaluated for
//! readiness (pure functions of it). Nothing may panic.
//!
//! Input format (so plain `APP.md` files are valid seeds): everything up to the first NUL byte
//! is `APP.md`. After the NUL, one byte picks a file name from `COMPANIONS` and the rest is
//! that file's content.
#![no_main]

use std::collections::BTreeMap;

use host_core::foundation::hashing::{manifest_hash, sha256, FileRecord};
use host_core::foundation::limits::Limits;
use host_core::install::manifest;
use host_core::foundation::profile::HostProfile;
use host_core::install::projection::{project, ProjectionInput};
use host_core::install::readiness::{evaluate, HostState};
use libfuzzer_sys::fuzz_target;

const COMPANIONS: &[&str] = &[
    "app.capabilities.yaml",
    "app.entries.yaml",
    "app.permissions.yaml",
    "app.errors.yaml",
    "app.i18n.yaml",
    "app.runtime.yaml",
    "app.requirements.yaml",
    "app.boundary.yaml",
    "app.integrations.yaml",
    "app.operations.yaml",
    "app.install.yaml",
    "app.signature.yaml",
    "evals/readiness.yaml",
    "evals/health.yaml",
    "app.unknown.yaml",
    "app.manifest.json",
];

fuzz_target!(|data: &[u8]| {
    let (app_md, rest) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    };
    let mut captured = BTreeMap::new();
    captured.insert("APP.md".to_owned(), app_md.to_vec());
    if let Some((&pick, body)) = rest.and_then(|r| r.split_first()) {
        let name = COMPANIONS[pick as usize % COMPANIONS.len()];
        captured.insert(name.to_owned(), body.to_vec());
    }
    let limits = Limits::default();
    let Ok(m) = manifest::load(&captured, &limits) else {
        return;
    };
    let _ = m.first_error();
    let files: Vec<FileRecord> = captured
        .iter()
        .map(|(path, bytes)| FileRecord {
            path: path.clone(),
            size: bytes.len() as u64,
            sha256: sha256(bytes),
        })
        .collect();
    let mhash = manifest_hash(app_md);
    let _ = project(&ProjectionInput {
        manifest: &m,
        files: &files,
        package_hash: &mhash,
        manifest_hash: &mhash,
    });
    let state = HostState::preview(jiff::Timestamp::from_second(1_800_000_000).unwrap());
    let _ = evaluate(&m, &files, &HostProfile::current(), &state);
});
