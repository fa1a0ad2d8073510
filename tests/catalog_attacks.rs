//! The remote catalog client against a hostile or broken server (issue 22 §2/§4): every attack
//! is reproduced against a loopback server, refused with its stable `catalog.*` code, and
//! changes nothing: the trusted metadata on disk stays byte for byte, the installed apps and
//! their readiness stay as they were, no download is left behind.

mod catalog_support;
mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use catalog_support::server::{Reply, Server};
use catalog_support::{cli, code_of, expired, month, Repo};
use host_core::install::remote::publish::{self, Keys};
use host_core::install::remote::tuf::metadata::{MetaFile, Snapshot, Timestamp, SPEC_VERSION};
use host_core::install::remote::tuf::sign::sign;
use host_core::install::remote::tuf::verify::sha256_hex;
use host_core::install::signature;
use serde_json::Value;

struct Env {
    tmp: tempfile::TempDir,
    data: PathBuf,
    repo: Repo,
    server: Server,
}

const PKG: &str = "targets/packages/hello-app-1.0.0.zip";

impl Env {
    /// A catalog with hello-app 1.0.0, added to a fresh data directory.
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let repo = Repo::new(&tmp.path().join("publisher"));
        repo.add("hello-app");
        repo.build();
        let server = Server::start();
        server.serve_dir(&repo.out);
        let env = Env {
            data: tmp.path().join("data"),
            tmp,
            repo,
            server,
        };
        let root = env.repo.root_file();
        let (code, v) = env.run(&[
            "catalog",
            "add",
            "main",
            &env.server.url.clone(),
            "--root",
            root.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{v}");
        env
    }

    fn run(&self, args: &[&str]) -> (i32, Value) {
        self.run_env(args, &[])
    }

    fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, Value) {
        cli(self.tmp.path(), &self.data, args, env)
    }

    fn install_v1(&self) {
        let (code, v) = self.run(&["install", "hello-app", "--yes", "--sideload"]);
        assert_eq!(code, 0, "{v}");
        assert_eq!(v["app"]["activeVersion"], "1.0.0", "{v}");
    }

    fn trusted(&self) -> Vec<u8> {
        std::fs::read(self.data.join("catalogs/main/trusted.json")).unwrap()
    }

    /// What must not change: the trusted metadata, the installed apps, their readiness.
    fn observed(&self) -> (Vec<u8>, Value, Option<Value>) {
        let (_, apps) = self.run(&["list"]);
        let installed = apps.as_array().is_some_and(|a| !a.is_empty());
        let readiness = installed.then(|| self.run(&["readiness", "hello-app"]).1);
        (self.trusted(), apps, readiness)
    }

    fn downloads_left(&self) -> Vec<String> {
        common::files_under(&self.data.join("catalogs/downloads"))
            .into_keys()
            .collect()
    }

    /// Runs `args`, expects `code`, and checks nothing changed.
    fn refused(&self, args: &[&str], env: &[(&str, &str)], code: &str) -> Value {
        let before = self.observed();
        let (exit, v) = self.run_env(args, env);
        assert_ne!(exit, 0, "{args:?} passed: {v}");
        assert_eq!(code_of(&v), code, "{args:?}: {v}");
        assert_eq!(self.observed(), before, "{args:?} changed state");
        assert!(
            self.downloads_left().is_empty(),
            "{:?}",
            self.downloads_left()
        );
        v
    }

    fn refresh_refused(&self, code: &str) -> Value {
        self.refused(&["catalog", "refresh"], &[], code)
    }

    fn serve_metadata(&self, name: &str, bytes: Vec<u8>) {
        self.server
            .set(&format!("metadata/{name}"), Reply::File(bytes));
    }

    /// A copy of the repository's metadata files as they are now.
    fn metadata_now(&self) -> BTreeMap<String, Vec<u8>> {
        common::files_under(&self.repo.out.join("metadata"))
    }
}

fn meta_file(version: u64, bytes: &[u8]) -> MetaFile {
    MetaFile {
        version,
        length: Some(bytes.len() as u64),
        hashes: Some(BTreeMap::from([("sha256".to_owned(), sha256_hex(bytes))])),
    }
}

/// A snapshot naming `targets` at `targets_version`, signed by `keys`' snapshot key.
fn snapshot_over(keys: &Keys, version: u64, targets_version: u64, targets: &[u8]) -> Vec<u8> {
    let s = Snapshot {
        kind: "snapshot".into(),
        spec_version: SPEC_VERSION.into(),
        version,
        expires: month().snapshot.to_string(),
        meta: BTreeMap::from([(
            "targets.json".to_owned(),
            meta_file(targets_version, targets),
        )]),
    };
    sign(&s, &[&keys.snapshot])
}

/// A timestamp naming `snapshot` at `snapshot_version`.
fn timestamp_over(keys: &Keys, version: u64, snapshot_version: u64, snapshot: &[u8]) -> Vec<u8> {
    let t = Timestamp {
        kind: "timestamp".into(),
        spec_version: SPEC_VERSION.into(),
        version,
        expires: month().timestamp.to_string(),
        meta: BTreeMap::from([(
            "snapshot.json".to_owned(),
            meta_file(snapshot_version, snapshot),
        )]),
    };
    sign(&t, &[&keys.timestamp])
}

#[test]
fn rollback_of_timestamp_snapshot_or_targets_is_refused() {
    let env = Env::new();
    let v1 = env.metadata_now();
    env.repo.build(); // every role at version 2
    env.server.serve_dir(&env.repo.out);
    assert_eq!(env.run(&["catalog", "refresh"]).0, 0);

    // An older timestamp, validly signed.
    env.serve_metadata("timestamp.json", v1["timestamp.json"].clone());
    let v = env.refresh_refused("catalog.rollback");
    assert_eq!(v["error"]["details"]["role"], "timestamp");

    // A new timestamp that names the older snapshot.
    let ts = timestamp_over(&env.repo.keys, 3, 1, &v1["snapshot.json"]);
    env.serve_metadata("timestamp.json", ts);
    env.serve_metadata("snapshot.json", v1["snapshot.json"].clone());
    let v = env.refresh_refused("catalog.rollback");
    assert_eq!(v["error"]["details"]["role"], "snapshot");

    // A new snapshot and timestamp that name the older targets.
    let snap = snapshot_over(&env.repo.keys, 3, 1, &v1["targets.json"]);
    let ts = timestamp_over(&env.repo.keys, 3, 3, &snap);
    env.serve_metadata("timestamp.json", ts);
    env.serve_metadata("snapshot.json", snap);
    env.serve_metadata("targets.json", v1["targets.json"].clone());
    let v = env.refresh_refused("catalog.rollback");
    assert_eq!(v["error"]["details"]["role"], "targets.json");
}

#[test]
fn expired_metadata_is_refused_and_the_catalog_is_listed_stale() {
    let env = Env::new();
    env.install_v1();
    for role in ["timestamp", "snapshot", "targets"] {
        env.repo.build_with(&expired(role));
        env.server.serve_dir(&env.repo.out);
        let v = env.refresh_refused("catalog.metadata_expired");
        assert_eq!(v["error"]["details"]["role"], role);
        // Installing through the catalog is refused too; the installed app is untouched.
        env.refused(
            &["update", "hello-app", "--yes", "--sideload"],
            &[],
            "catalog.metadata_expired",
        );
    }
    let (_, list) = env.run(&["catalog", "list"]);
    assert_eq!(list[0]["stale"], true, "{list}");
    assert!(list[0]["staleSince"].is_string(), "{list}");
    assert_eq!(
        list[0]["lastError"]["code"], "catalog.metadata_expired",
        "{list}"
    );
    // The installed app still runs as before: readiness unchanged is checked by `refused`.
}

#[test]
fn mix_and_match_metadata_is_refused() {
    let env = Env::new();
    let v1 = env.metadata_now();
    env.repo.build();
    env.server.serve_dir(&env.repo.out);
    // The new timestamp with the old snapshot.
    env.serve_metadata("snapshot.json", v1["snapshot.json"].clone());
    let v = env.refresh_refused("catalog.metadata_mismatch");
    assert_eq!(v["error"]["details"]["role"], "snapshot");
    // The new timestamp and snapshot with the old targets.
    env.server.serve_dir(&env.repo.out);
    env.serve_metadata("targets.json", v1["targets.json"].clone());
    let v = env.refresh_refused("catalog.metadata_mismatch");
    assert_eq!(v["error"]["details"]["role"], "targets");
    // A snapshot whose version is not the one the timestamp signed (hash left out).
    let targets = env.repo.metadata("targets.json");
    let snap = snapshot_over(&env.repo.keys, 7, 2, &targets);
    let mut ts_meta = meta_file(8, &snap);
    ts_meta.hashes = None;
    ts_meta.length = None;
    let ts = Timestamp {
        kind: "timestamp".into(),
        spec_version: SPEC_VERSION.into(),
        version: 9,
        expires: month().timestamp.to_string(),
        meta: BTreeMap::from([("snapshot.json".to_owned(), ts_meta)]),
    };
    env.server.serve_dir(&env.repo.out);
    env.serve_metadata("snapshot.json", snap);
    env.serve_metadata("timestamp.json", sign(&ts, &[&env.repo.keys.timestamp]));
    env.refresh_refused("catalog.metadata_mismatch");
}

#[test]
fn root_rotation_needs_the_old_roots_signatures() {
    let env = Env::new();
    let new = Keys::single(&signature::generate_key().unwrap());
    let exp = month().root;
    // Signed only by the new key: a forged rotation.
    let forged = sign(&publish::root_for(&new, exp, 2), &[&new.root]);
    env.serve_metadata("2.root.json", forged);
    env.refresh_refused("catalog.root_rotation_refused");
    // Signed by both, but claiming version 5 (fast-forward).
    let ff = sign(
        &publish::root_for(&new, exp, 5),
        &[&new.root, &env.repo.keys.root],
    );
    env.serve_metadata("2.root.json", ff);
    env.refresh_refused("catalog.root_rotation_refused");
    // Signed by the old root only: the new root's own threshold is not met.
    let half = sign(&publish::root_for(&new, exp, 2), &[&env.repo.keys.root]);
    env.serve_metadata("2.root.json", half);
    env.refresh_refused("catalog.root_rotation_refused");

    // A real rotation (both sign) is followed, and then only the new keys are trusted.
    env.server.remove("metadata/2.root.json");
    let mut rotated = Repo::new(&env.tmp.path().join("rotated"));
    rotated.out = env.repo.out.clone();
    rotated.packages = env.repo.packages.clone();
    rotated.keys = Keys {
        previous_root: vec![env.repo.keys.root.clone()],
        ..new
    };
    rotated.build();
    env.server.serve_dir(&rotated.out);
    let (code, v) = env.run(&["catalog", "refresh"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v[0]["rootVersion"], 2, "{v}");
    // Metadata signed with the old (now retired) timestamp key is refused.
    let snap = env.repo.metadata("snapshot.json");
    let stale_key_ts = timestamp_over(&env.repo.keys, 99, 3, &snap);
    env.serve_metadata("timestamp.json", stale_key_ts);
    env.refresh_refused("catalog.signature_invalid");
}

#[test]
fn wrong_keys_and_unmet_thresholds_are_refused() {
    let env = Env::new();
    let attacker = Keys::single(&signature::generate_key().unwrap());
    // The same timestamp content, signed by a key the root does not name.
    let snap = env.repo.metadata("snapshot.json");
    env.serve_metadata("timestamp.json", timestamp_over(&attacker, 5, 1, &snap));
    let v = env.refresh_refused("catalog.signature_invalid");
    assert_eq!(v["error"]["details"]["role"], "timestamp");
    // Targets signed by the attacker, with a snapshot and timestamp the real keys signed
    // (a compromised snapshot/timestamp server cannot add packages).
    env.server.serve_dir(&env.repo.out);
    let targets: Value = serde_json::from_slice(&env.repo.metadata("targets.json")).unwrap();
    let forged_targets = sign(&targets["signed"], &[&attacker.targets]);
    let snap = snapshot_over(&env.repo.keys, 2, 1, &forged_targets);
    env.serve_metadata("targets.json", forged_targets);
    env.serve_metadata(
        "timestamp.json",
        timestamp_over(&env.repo.keys, 2, 2, &snap),
    );
    env.serve_metadata("snapshot.json", snap);
    let v = env.refresh_refused("catalog.signature_invalid");
    assert_eq!(v["error"]["details"]["role"], "targets");

    // A root (properly rotated) that asks two targets keys; targets signed by one of them.
    env.server.serve_dir(&env.repo.out);
    let second = signature::generate_key().unwrap();
    let mut root = publish::root_for(&env.repo.keys, month().root, 2);
    let second_pub = host_core::install::remote::tuf::sign::public_key(&second.verifying_key());
    let second_id = host_core::install::remote::tuf::verify::key_id(&second_pub);
    root.keys.insert(second_id.clone(), second_pub);
    let t = root.roles.get_mut("targets").unwrap();
    t.keyids.push(second_id);
    t.threshold = 2;
    env.serve_metadata("2.root.json", sign(&root, &[&env.repo.keys.root]));
    let v = env.refresh_refused("catalog.signature_invalid");
    assert_eq!(v["error"]["details"]["threshold"], 2, "{v}");
    assert_eq!(v["error"]["details"]["valid"], 1, "{v}");
}

#[test]
fn a_package_that_differs_from_the_signed_target_is_refused() {
    let env = Env::new();
    let good = std::fs::read(env.repo.out.join(PKG)).unwrap();
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0xff;
    env.server.set(PKG, Reply::File(flipped));
    let args = ["install", "hello-app", "--yes", "--sideload"];
    env.refused(&args, &[], "catalog.target_mismatch");
    // Shorter than signed.
    env.server
        .set(PKG, Reply::File(good[..good.len() - 10].to_vec()));
    env.refused(&args, &[], "catalog.target_mismatch");
    // A new release file (a new version), edited by the server.
    env.repo.add("hello-app-v2");
    env.repo.build();
    env.server.serve_dir(&env.repo.out);
    let mut releases = std::fs::read(env.repo.out.join("targets/releases/hello-app.json")).unwrap();
    releases[10] = b' ';
    env.server
        .set("targets/releases/hello-app.json", Reply::File(releases));
    env.refresh_refused("catalog.target_mismatch");
}

#[test]
fn endless_data_is_cut_at_the_signed_length() {
    let env = Env::new();
    let started = Instant::now();
    env.server.set(PKG, Reply::Endless);
    env.refused(
        &["install", "hello-app", "--yes", "--sideload"],
        &[],
        "catalog.target_too_large",
    );
    env.server.set("metadata/timestamp.json", Reply::Endless);
    env.refresh_refused("catalog.metadata_too_large");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn slow_data_times_out() {
    let env = Env::new();
    let args = ["install", "hello-app", "--yes", "--sideload"];
    env.server.set(PKG, Reply::Stall);
    let started = Instant::now();
    env.refused(
        &args,
        &[("APPHOST_CATALOG_STALL_TIMEOUT_MS", "500")],
        "catalog.timeout",
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    // One byte every 100 ms never stalls; the total bound stops it.
    env.server.set(PKG, Reply::Drip);
    let started = Instant::now();
    env.refused(
        &args,
        &[
            ("APPHOST_CATALOG_STALL_TIMEOUT_MS", "1000"),
            ("APPHOST_CATALOG_TOTAL_TIMEOUT_MS", "1500"),
        ],
        "catalog.timeout",
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn server_errors_and_garbage_never_change_an_installed_app() {
    let env = Env::new();
    env.install_v1();
    env.server
        .set("metadata/timestamp.json", Reply::Status(500));
    env.refresh_refused("catalog.fetch_failed");
    env.server.set(
        "metadata/timestamp.json",
        Reply::File(b"{\"signed\": [garbage".to_vec()),
    );
    env.refresh_refused("catalog.metadata_invalid");
    env.server.set(
        "metadata/timestamp.json",
        Reply::File(b"{\"signed\": {}, \"signatures\": []}".to_vec()),
    );
    env.refresh_refused("catalog.signature_invalid");
    // `update --all` reports the failure and leaves the app as it was.
    let before = env.observed();
    let (code, v) = env.run(&["update", "--all", "--yes", "--sideload"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(
        v["failed"][0]["error"]["code"], "catalog.signature_invalid",
        "{v}"
    );
    assert_eq!(env.observed(), before);
    let (_, list) = env.run(&["catalog", "list"]);
    assert_eq!(list[0]["stale"], true, "{list}");
    let since = list[0]["staleSince"].as_str().unwrap().to_owned();
    // Still failing later: "since" stays the first failure.
    env.refresh_refused("catalog.signature_invalid");
    let (_, list) = env.run(&["catalog", "list"]);
    assert_eq!(list[0]["staleSince"], since.as_str());
    // The server recovers: no longer stale.
    env.server.serve_dir(&env.repo.out);
    assert_eq!(env.run(&["catalog", "refresh"]).0, 0);
    let (_, list) = env.run(&["catalog", "list"]);
    assert_eq!(list[0]["stale"], false, "{list}");
}

#[test]
fn a_release_whose_app_id_differs_from_the_package_is_refused() {
    let env = Env::new();
    // The publisher signs a release of "hello-app" whose package is notes-viewer.
    env.repo.add("notes-viewer");
    env.repo.build();
    let mut rel: Value = serde_json::from_slice(
        &std::fs::read(env.repo.out.join("targets/releases/notes-viewer.json")).unwrap(),
    )
    .unwrap();
    let mut release = rel["releases"][0].take();
    release["appId"] = "hello-app".into();
    release["version"] = "9.0.0".into();
    let file = serde_json::json!({"appId": "hello-app", "releases": [release]});
    let bytes = serde_json::to_vec(&file).unwrap();
    std::fs::write(env.repo.out.join("targets/releases/hello-app.json"), &bytes).unwrap();
    let targets: Value = serde_json::from_slice(&env.repo.metadata("targets.json")).unwrap();
    let mut map: BTreeMap<String, host_core::install::remote::tuf::metadata::TargetFile> =
        serde_json::from_value(targets["signed"]["targets"].clone()).unwrap();
    map.insert(
        "releases/hello-app.json".into(),
        host_core::install::remote::tuf::metadata::TargetFile {
            length: bytes.len() as u64,
            hashes: BTreeMap::from([("sha256".to_owned(), sha256_hex(&bytes))]),
            custom: None,
        },
    );
    publish::sign_repository(&env.repo.out, map, &env.repo.keys, &month()).unwrap();
    env.server.serve_dir(&env.repo.out);
    assert_eq!(env.run(&["catalog", "refresh"]).0, 0);
    env.refused(
        &["install", "hello-app@9.0.0", "--yes", "--sideload"],
        &[],
        "catalog.release_mismatch",
    );
}

#[test]
fn a_revoked_release_is_refused_and_skipped() {
    let env = Env::new();
    env.repo.add("hello-app-v2");
    std::fs::write(
        env.repo.packages.join("hello-app-v2.release.json"),
        r#"{"revoked": {"reason": "leaks notes"}}"#,
    )
    .unwrap();
    env.repo.build();
    env.server.serve_dir(&env.repo.out);
    assert_eq!(env.run(&["catalog", "refresh"]).0, 0);
    let v = env.refused(
        &["install", "hello-app@1.1.0", "--yes", "--sideload"],
        &[],
        "catalog.release_revoked",
    );
    assert_eq!(v["error"]["details"]["reason"], "leaks notes");
    // Without a version the newest unrevoked release is taken.
    env.install_v1();
    let (code, v) = env.run(&["update", "hello-app", "--yes", "--sideload"]);
    assert_eq!((code, &v["upToDate"]), (0, &Value::from("1.0.0")), "{v}");
}

#[test]
fn an_interrupted_download_resumes_with_a_range_request() {
    let env = Env::new();
    let good = std::fs::read(env.repo.out.join(PKG)).unwrap();
    env.server
        .set(PKG, Reply::CutOnce(good.clone(), good.len() / 2));
    env.install_v1();
    let asked: Vec<Option<String>> = env
        .server
        .log()
        .into_iter()
        .filter(|(p, _)| p.ends_with("hello-app-1.0.0.zip"))
        .map(|(_, r)| r)
        .collect();
    assert_eq!(
        asked,
        vec![None, Some(format!("bytes={}-", good.len() / 2))]
    );
    assert!(env.downloads_left().is_empty());
}

#[test]
fn trusted_state_edited_on_disk_is_not_believed() {
    let env = Env::new();
    let path = env.data.join("catalogs/main/trusted.json");
    let mut state: Value = serde_json::from_slice(&env.trusted()).unwrap();
    let file = state["files"]["releases/hello-app.json"]
        .as_str()
        .unwrap()
        .replace("1.0.0", "1.0.1");
    state["files"]["releases/hello-app.json"] = file.into();
    std::fs::write(&path, serde_json::to_vec(&state).unwrap()).unwrap();
    env.refused(
        &["install", "hello-app", "--yes", "--sideload"],
        &[],
        "catalog.target_mismatch",
    );
    let (_, s) = env.run(&["catalog", "search"]);
    assert_eq!(s, Value::Array(vec![]), "a tampered state lists nothing");
}
