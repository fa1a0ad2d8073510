//! The encrypted-file secret store and the model settings on top of it: round trips, a wrong
//! or missing key, file permissions, the key kept apart from the data directory, and no
//! plaintext secret anywhere in the data directory (secrets.enc, host.db and its WAL).

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use host_core::foundation::error::ErrorCode;
use host_core::foundation::paths::DataDir;
use host_core::hosting::model_settings::{self, KeyChange, KeyOutcome};
use host_core::install::secrets::{EncryptedFileStore, SecretBackend, SecretStore, SecretValue};
use host_core::install::store::Store;

const CANARY: &str = "sk-live-CANARY-7f3a9c1e-plaintext-must-not-appear";

struct Env {
    tmp: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            tmp: tempfile::tempdir().unwrap(),
        }
    }
    fn data(&self) -> DataDir {
        let d = self.tmp.path().join("data");
        fs::create_dir_all(&d).unwrap();
        DataDir::at(d)
    }
    fn key_file(&self) -> PathBuf {
        self.tmp.path().join("config/apphost/keys/test.key")
    }
    fn store(&self) -> EncryptedFileStore {
        EncryptedFileStore::new(&self.data(), self.key_file()).unwrap()
    }
}

fn secret(s: &str) -> SecretValue {
    SecretValue::new(s.to_owned())
}

fn files_under(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.clone(), fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn assert_no_plaintext(dir: &Path, value: &str) {
    let files = files_under(dir);
    assert!(!files.is_empty());
    for (path, bytes) in files {
        assert!(
            !contains(&bytes, value.as_bytes()),
            "{} holds the secret in plaintext",
            path.display()
        );
    }
}

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn round_trip_overwrite_and_delete() {
    let env = Env::new();
    let s = env.store();
    assert_eq!(s.backend(), SecretBackend::EncryptedFile);
    assert_eq!(s.get("model.apiKey").unwrap(), None);
    // Reading creates nothing.
    assert!(!s.data_file().exists() && !s.key_file().exists());
    s.set("model.apiKey", &secret(CANARY)).unwrap();
    s.set("app/notes/token", &secret("second")).unwrap();
    assert_eq!(s.get("model.apiKey").unwrap(), Some(secret(CANARY)));
    s.set("model.apiKey", &secret("rotated")).unwrap();
    // A fresh instance (another process) reads the same.
    let again = env.store();
    assert_eq!(again.get("model.apiKey").unwrap(), Some(secret("rotated")));
    assert_eq!(
        again.get("app/notes/token").unwrap(),
        Some(secret("second"))
    );
    assert!(again.delete("model.apiKey").unwrap());
    assert!(!again.delete("model.apiKey").unwrap());
    assert_eq!(s.get("model.apiKey").unwrap(), None);
    assert_eq!(s.get("app/notes/token").unwrap(), Some(secret("second")));
}

#[test]
fn files_are_private_and_hold_no_plaintext() {
    let env = Env::new();
    let s = env.store();
    s.set("model.apiKey", &secret(CANARY)).unwrap();
    assert_eq!(mode(s.key_file()), 0o600);
    assert_eq!(mode(s.key_file().parent().unwrap()), 0o700);
    assert_eq!(mode(s.data_file()), 0o600);
    assert_no_plaintext(env.data().root(), CANARY);
    let key_text = fs::read_to_string(s.key_file()).unwrap();
    assert_eq!(key_text.trim().len(), 64, "a 256-bit key in hex");
    assert!(!key_text.contains(CANARY));
    // Two writes of the same value differ (fresh nonce each time).
    let before = fs::read(s.data_file()).unwrap();
    s.set("model.apiKey", &secret(CANARY)).unwrap();
    assert_ne!(before, fs::read(s.data_file()).unwrap());
    // Debug never shows a value.
    assert!(!format!("{:?}", secret(CANARY)).contains(CANARY));
}

#[test]
fn a_different_key_or_a_changed_file_does_not_open() {
    let env = Env::new();
    let s = env.store();
    s.set("model.apiKey", &secret(CANARY)).unwrap();
    let good_key = fs::read(s.key_file()).unwrap();

    // Another valid key.
    fs::write(s.key_file(), format!("{}\n", "ab".repeat(32))).unwrap();
    let e = s.get("model.apiKey").unwrap_err();
    assert_eq!(e.code, ErrorCode::SecretUndecryptable);
    assert!(!e.message.contains(CANARY));
    // Writing with the wrong key is refused too (it would destroy the other secrets).
    assert_eq!(
        s.set("x", &secret("y")).unwrap_err().code,
        ErrorCode::SecretUndecryptable
    );

    // The right key, but one flipped bit in the ciphertext.
    fs::write(s.key_file(), &good_key).unwrap();
    let mut bytes = fs::read(s.data_file()).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(s.data_file(), &bytes).unwrap();
    assert_eq!(
        s.get("model.apiKey").unwrap_err().code,
        ErrorCode::SecretUndecryptable
    );
}

#[test]
fn a_missing_or_bad_key_file_is_refused() {
    let env = Env::new();
    let s = env.store();
    s.set("model.apiKey", &secret(CANARY)).unwrap();
    let key = fs::read(s.key_file()).unwrap();

    // Readable by others.
    fs::set_permissions(s.key_file(), fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(
        s.get("model.apiKey").unwrap_err().code,
        ErrorCode::SecretKeyUnavailable
    );
    fs::set_permissions(s.key_file(), fs::Permissions::from_mode(0o600)).unwrap();

    // Not a key.
    fs::write(s.key_file(), "not hex\n").unwrap();
    assert_eq!(
        s.get("model.apiKey").unwrap_err().code,
        ErrorCode::SecretKeyUnavailable
    );

    // Gone while the secrets file exists: an error, never a silent new key.
    fs::remove_file(s.key_file()).unwrap();
    assert_eq!(
        s.get("model.apiKey").unwrap_err().code,
        ErrorCode::SecretKeyUnavailable
    );
    assert_eq!(
        s.set("model.apiKey", &secret("new")).unwrap_err().code,
        ErrorCode::SecretKeyUnavailable
    );
    assert!(!s.key_file().exists());
    fs::write(s.key_file(), &key).unwrap();
    fs::set_permissions(s.key_file(), fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(s.get("model.apiKey").unwrap(), Some(secret(CANARY)));
}

#[test]
fn the_key_file_may_not_live_in_the_data_directory() {
    let env = Env::new();
    let data = env.data();
    for inside in [
        data.root().join("secrets.key"),
        data.root().join("a/../k.key"),
    ] {
        let e = EncryptedFileStore::new(&data, inside).err().unwrap();
        assert_eq!(e.code, ErrorCode::SecretKeyUnavailable);
    }
}

#[test]
fn names_and_sizes_are_checked() {
    let env = Env::new();
    let s = env.store();
    for bad in ["", "a b", "x\n", "ü", &"n".repeat(201)] {
        assert_eq!(
            s.set(bad, &secret("v")).unwrap_err().code,
            ErrorCode::SecretInvalidName
        );
    }
    assert_eq!(
        s.set("big", &secret(&"v".repeat(64 * 1024 + 1)))
            .unwrap_err()
            .code,
        ErrorCode::SecretInvalidName
    );
    assert!(!s.data_file().exists(), "a rejected write leaves nothing");
}

// --- model settings ------------------------------------------------------------------------

/// Model settings tests use the file store through `APPHOST_SECRET_STORE`/`..._KEY_FILE`; they
/// share one process environment, so they run inside one test.
#[test]
fn model_settings_keep_the_key_out_of_host_db_and_bound_to_its_url() {
    let env = Env::new();
    std::env::set_var("APPHOST_SECRET_STORE", "file");
    std::env::set_var("APPHOST_SECRET_KEY_FILE", env.key_file());
    let data = env.data();
    let (store, _) = Store::open_locked(&data).unwrap();
    assert_eq!(model_settings::load(&store).unwrap(), None);
    assert_eq!(
        model_settings::status(&store).unwrap().status,
        "needs-setup"
    );
    assert_eq!(
        model_settings::provider_config(&store).unwrap_err().code,
        ErrorCode::ModelNotConfigured
    );

    let (s, outcome) = model_settings::set(
        &store,
        "http://127.0.0.1:9/v1/",
        "llama3",
        KeyChange::Set(secret(CANARY)),
    )
    .unwrap();
    assert_eq!(outcome, KeyOutcome::Stored);
    assert_eq!(s.base_url, "http://127.0.0.1:9/v1");
    assert_eq!(
        s.api_key_ref.as_deref(),
        Some("encrypted-file:model.apiKey")
    );
    let cfg = model_settings::provider_config(&store).unwrap();
    assert_eq!(cfg.api_key.as_deref(), Some(CANARY));
    assert_eq!(cfg.model, "llama3");
    let st = model_settings::status(&store).unwrap();
    assert_eq!(st.status, "ready");
    assert!(st.api_key.set && st.api_key.present == Some(true));
    assert!(!serde_json::to_string(&st).unwrap().contains(CANARY));
    // Not in host.db, its WAL, or anywhere else in the data directory.
    assert_no_plaintext(data.root(), CANARY);

    // A rejected change leaves the data directory byte-identical.
    let before = files_under(data.root());
    assert_eq!(
        model_settings::set(&store, "ftp://x", "m", KeyChange::Keep)
            .unwrap_err()
            .code,
        ErrorCode::ModelInvalidBaseUrl
    );
    assert_eq!(
        model_settings::set(&store, "http://x/v1", "", KeyChange::Remove)
            .unwrap_err()
            .code,
        ErrorCode::ModelInvalidName
    );
    assert!(before == files_under(data.root()));

    // Same URL, new model: the key stays.
    let (_, outcome) =
        model_settings::set(&store, "http://127.0.0.1:9/v1", "qwen", KeyChange::Keep).unwrap();
    assert_eq!(outcome, KeyOutcome::Kept);
    assert_eq!(
        model_settings::provider_config(&store)
            .unwrap()
            .api_key
            .as_deref(),
        Some(CANARY)
    );

    // Another URL: the key is not carried over to it, and it is deleted from the store.
    let (s, outcome) = model_settings::set(
        &store,
        "https://elsewhere.example/v1",
        "qwen",
        KeyChange::Keep,
    )
    .unwrap();
    assert_eq!(outcome, KeyOutcome::DroppedForNewUrl);
    assert_eq!(s.api_key_ref, None);
    assert_eq!(
        model_settings::provider_config(&store).unwrap().api_key,
        None
    );
    assert_eq!(env.store().get("model.apiKey").unwrap(), None);

    // A ref whose secret vanished is reported, not sent empty.
    model_settings::set(&store, "http://h/v1", "m", KeyChange::Set(secret("k2"))).unwrap();
    env.store().delete("model.apiKey").unwrap();
    assert_eq!(
        model_settings::provider_config(&store).unwrap_err().code,
        ErrorCode::ModelApiKeyMissing
    );
    assert_eq!(
        model_settings::status(&store).unwrap().status,
        "needs-setup"
    );
}
