//! The host's secret store: API keys now, the values bound to apps' `lime.secrets` slots later.
//!
//! [`SecretStore`] has two implementations, chosen by [`open_default`]:
//!
//! - [`KeyringStore`]: the OS keyring through the freedesktop Secret Service (GNOME Keyring,
//!   KWallet, KeePassXC), over D-Bus with a pure-Rust client (keyring → secret-service → zbus;
//!   libdbus is not linked). Used when a Secret Service answers. Items are labelled
//!   `service=apphost`, `username=<data-dir id>/<name>`, so two data directories never share one.
//! - [`EncryptedFileStore`]: `<data>/secrets.enc`, one XChaCha20-Poly1305 blob (random 192-bit
//!   nonce per write) under a random 256-bit key kept in a separate key file:
//!   `$APPHOST_SECRET_KEY_FILE` if set, else `$XDG_CONFIG_HOME/apphost/keys/<data-dir id>.key`
//!   (`~/.config/...`). The key file is created `0600` in a `0700` folder, must not lie inside
//!   the data directory, and is refused if group or others can read it.
//!
//! `APPHOST_SECRET_STORE=keyring|file|auto` (default `auto`) overrides the choice; tests use
//! `file` so they never touch a user's keyring.
//!
//! **Threat model (encrypted file).** It protects secrets in copies of the data directory that
//! travel without the key: backups, a synced or shared data folder, a `host.db` or data
//! directory attached to a bug report, a stolen disk image of that folder alone. It does *not*
//! protect against anything running as the same user (which can read the key file as AppHost
//! does), nor against root, nor against a backup that holds both the data directory and
//! `~/.config`. The OS keyring is stronger only in that it may be locked while the user is
//! logged out; an unlocked keyring hands secrets to any process of the user.
//!
//! Secret values are never logged, never written to `host.db` (only a ref such as
//! `encrypted-file:model.apiKey` is), never printed, and held in zeroizing buffers where this
//! code holds them (copies made by the D-Bus or HTTP layers are outside its reach).

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;

pub const SECRET_STORE_ENV: &str = "APPHOST_SECRET_STORE";
pub const SECRET_KEY_FILE_ENV: &str = "APPHOST_SECRET_KEY_FILE";
const KEYRING_SERVICE: &str = "apphost";
const MAGIC: &[u8; 16] = b"APPHOST-SECRETS\x01";
const NONCE_LEN: usize = 24;
/// Largest secrets file read (bounded memory on a corrupt or hostile file).
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Largest single secret value.
pub const MAX_SECRET_BYTES: usize = 64 * 1024;

/// A secret value: zeroed when dropped, never shown by `Debug`, not `Display` or `Serialize`.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(Zeroizing<String>);

impl SecretValue {
    pub fn new(value: String) -> Self {
        SecretValue(Zeroizing::new(value))
    }
    /// The value itself, for the one place that must send it (an HTTP header).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretValue(<redacted>)")
    }
}

/// Which implementation holds a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretBackend {
    Keyring,
    EncryptedFile,
}

impl SecretBackend {
    pub fn as_str(self) -> &'static str {
        match self {
            SecretBackend::Keyring => "keyring",
            SecretBackend::EncryptedFile => "encrypted-file",
        }
    }
    pub fn parse(s: &str) -> Option<SecretBackend> {
        match s {
            "keyring" => Some(SecretBackend::Keyring),
            "encrypted-file" => Some(SecretBackend::EncryptedFile),
            _ => None,
        }
    }
}

/// Where a secret is kept: `<backend>:<name>`. This, never the value, is what `host.db` holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRef {
    pub backend: SecretBackend,
    pub name: String,
}

impl SecretRef {
    pub fn parse(s: &str) -> Option<SecretRef> {
        let (b, name) = s.split_once(':')?;
        let backend = SecretBackend::parse(b)?;
        check_name(name).ok()?;
        Some(SecretRef {
            backend,
            name: name.to_owned(),
        })
    }
}

impl std::fmt::Display for SecretRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.backend.as_str(), self.name)
    }
}

pub trait SecretStore: Send + Sync {
    fn backend(&self) -> SecretBackend;
    /// Where the secrets are, for people (a path or the keyring's name); never a value.
    fn location(&self) -> String;
    fn set(&self, name: &str, value: &SecretValue) -> HostResult<()>;
    fn get(&self, name: &str) -> HostResult<Option<SecretValue>>;
    /// Removes a secret; `false` if there was none.
    fn delete(&self, name: &str) -> HostResult<bool>;
    fn reference(&self, name: &str) -> SecretRef {
        SecretRef {
            backend: self.backend(),
            name: name.to_owned(),
        }
    }
}

/// Names: 1..=200 of `A-Z a-z 0-9 . _ - / :`, e.g. `model.apiKey` or `app/notes/token`.
pub fn check_name(name: &str) -> HostResult<()> {
    let ok = !name.is_empty()
        && name.len() <= 200
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-/:".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(HostError::new(
            ErrorCode::SecretInvalidName,
            format!("{name:?} is not a valid secret name"),
        ))
    }
}

fn check_value(value: &SecretValue) -> HostResult<()> {
    if value.expose().len() > MAX_SECRET_BYTES {
        return Err(HostError::new(
            ErrorCode::SecretInvalidName,
            format!("a secret value may hold at most {MAX_SECRET_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// A short stable id of the data directory (its canonical path), naming its key file and its
/// keyring items.
pub fn data_dir_id(dir: &DataDir) -> String {
    let canonical = fs::canonicalize(dir.root()).unwrap_or_else(|_| dir.root().to_path_buf());
    let digest = Sha256::digest(canonical.as_os_str().as_encoded_bytes());
    hex::encode(&digest[..8])
}

/// The store `APPHOST_SECRET_STORE` asks for: `auto` (default) is the keyring when a Secret
/// Service answers, else the encrypted file.
pub fn open_default(dir: &DataDir) -> HostResult<Box<dyn SecretStore>> {
    let choice = std::env::var(SECRET_STORE_ENV).unwrap_or_default();
    match choice.trim() {
        "file" | "encrypted-file" => Ok(Box::new(EncryptedFileStore::for_data_dir(dir)?)),
        "keyring" => Ok(Box::new(KeyringStore::connect(dir)?)),
        "" | "auto" => match KeyringStore::connect(dir) {
            Ok(k) => Ok(Box::new(k)),
            Err(e) => {
                tracing::info!(
                    "no Secret Service ({}); keeping secrets in an encrypted file",
                    e.message
                );
                Ok(Box::new(EncryptedFileStore::for_data_dir(dir)?))
            }
        },
        other => Err(HostError::new(
            ErrorCode::SecretStoreUnavailable,
            format!("{SECRET_STORE_ENV}={other:?}: expected keyring, file or auto"),
        )),
    }
}

/// The store a [`SecretRef`] points into.
pub fn open_backend(dir: &DataDir, backend: SecretBackend) -> HostResult<Box<dyn SecretStore>> {
    Ok(match backend {
        SecretBackend::Keyring => Box::new(KeyringStore::connect(dir)?),
        SecretBackend::EncryptedFile => Box::new(EncryptedFileStore::for_data_dir(dir)?),
    })
}

// --- the OS keyring ------------------------------------------------------------------------

/// Secrets in the OS keyring (Secret Service over D-Bus).
pub struct KeyringStore {
    scope: String,
}

/// Runs `f` on its own thread and waits at most 10 s: keyring's blocking D-Bus calls must not
/// run on a tokio worker (they would deadlock), and a D-Bus peer that never answers must not
/// hang AppHost.
fn on_thread<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> Result<T, keyring::Error> + Send + 'static,
) -> HostResult<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("apphost-keyring".into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .map_err(|e| HostError::new(ErrorCode::SecretStoreUnavailable, e.to_string()))?;
    match rx.recv_timeout(std::time::Duration::from_secs(10)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(HostError::new(
            ErrorCode::SecretStoreUnavailable,
            format!("the OS keyring failed to {what}: {e}"),
        )),
        Err(_) => Err(HostError::new(
            ErrorCode::SecretStoreUnavailable,
            format!("the OS keyring did not answer in time ({what})"),
        )),
    }
}

impl KeyringStore {
    /// Connects and checks that a Secret Service answers (a lookup of a name never stored).
    pub fn connect(dir: &DataDir) -> HostResult<KeyringStore> {
        let store = KeyringStore {
            scope: data_dir_id(dir),
        };
        let probe = format!("{}/.probe", store.scope);
        on_thread("answer", move || {
            match keyring::Entry::new(KEYRING_SERVICE, &probe)?.get_password() {
                Ok(_) | Err(keyring::Error::NoEntry) => Ok(()),
                Err(e) => Err(e),
            }
        })?;
        Ok(store)
    }

    fn user(&self, name: &str) -> String {
        format!("{}/{name}", self.scope)
    }
}

impl SecretStore for KeyringStore {
    fn backend(&self) -> SecretBackend {
        SecretBackend::Keyring
    }
    fn location(&self) -> String {
        format!("OS keyring (Secret Service), service {KEYRING_SERVICE:?}")
    }
    fn set(&self, name: &str, value: &SecretValue) -> HostResult<()> {
        check_name(name)?;
        check_value(value)?;
        let (user, value) = (self.user(name), value.clone());
        on_thread("store a secret", move || {
            keyring::Entry::new(KEYRING_SERVICE, &user)?.set_password(value.expose())
        })
    }
    fn get(&self, name: &str) -> HostResult<Option<SecretValue>> {
        check_name(name)?;
        let user = self.user(name);
        on_thread("read a secret", move || {
            match keyring::Entry::new(KEYRING_SERVICE, &user)?.get_password() {
                Ok(v) => Ok(Some(SecretValue::new(v))),
                Err(keyring::Error::NoEntry) => Ok(None),
                Err(e) => Err(e),
            }
        })
    }
    fn delete(&self, name: &str) -> HostResult<bool> {
        check_name(name)?;
        let user = self.user(name);
        on_thread("delete a secret", move || {
            match keyring::Entry::new(KEYRING_SERVICE, &user)?.delete_credential() {
                Ok(()) => Ok(true),
                Err(keyring::Error::NoEntry) => Ok(false),
                Err(e) => Err(e),
            }
        })
    }
}

// --- the encrypted file ----------------------------------------------------------------------

/// Secrets in `<data>/secrets.enc`, encrypted with a key kept in a separate file.
pub struct EncryptedFileStore {
    data_file: PathBuf,
    lock_file: PathBuf,
    key_file: PathBuf,
}

type Secrets = BTreeMap<String, Zeroizing<String>>;

fn key_err(msg: String, path: &Path) -> HostError {
    HostError::new(ErrorCode::SecretKeyUnavailable, msg).with("keyFile", path.display().to_string())
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> HostError {
    HostError::io(ErrorCode::StoreIo, what, path, e)
}

impl EncryptedFileStore {
    /// The store of `dir`, with its key file from `APPHOST_SECRET_KEY_FILE` or the user's
    /// config folder.
    pub fn for_data_dir(dir: &DataDir) -> HostResult<EncryptedFileStore> {
        let key_file = match std::env::var_os(SECRET_KEY_FILE_ENV).filter(|v| !v.is_empty()) {
            Some(p) => std::path::absolute(PathBuf::from(&p)).unwrap_or_else(|_| p.into()),
            None => dirs::config_dir()
                .ok_or_else(|| {
                    HostError::new(
                        ErrorCode::SecretKeyUnavailable,
                        format!("no user config folder is known; set {SECRET_KEY_FILE_ENV}"),
                    )
                })?
                .join("apphost/keys")
                .join(format!("{}.key", data_dir_id(dir))),
        };
        EncryptedFileStore::new(dir, key_file)
    }

    /// The store of `dir` with the key in `key_file`, which must not lie inside `dir`.
    pub fn new(dir: &DataDir, key_file: PathBuf) -> HostResult<EncryptedFileStore> {
        let canon = |p: &Path| {
            // The deepest existing ancestor, canonicalized, plus the rest.
            let mut base = p.to_path_buf();
            let mut rest = Vec::new();
            while !base.exists() {
                match (base.parent(), base.file_name()) {
                    (Some(parent), Some(name)) => {
                        rest.push(name.to_owned());
                        base = parent.to_path_buf();
                    }
                    _ => break,
                }
            }
            let mut out = fs::canonicalize(&base).unwrap_or(base);
            out.extend(rest.iter().rev());
            out
        };
        if canon(&key_file).starts_with(canon(dir.root())) {
            return Err(key_err(
                format!(
                    "the secrets key file {} lies inside the data directory; it must be kept apart from it",
                    key_file.display()
                ),
                &key_file,
            ));
        }
        Ok(EncryptedFileStore {
            data_file: dir.root().join("secrets.enc"),
            lock_file: dir.root().join("secrets.lock"),
            key_file,
        })
    }

    pub fn data_file(&self) -> &Path {
        &self.data_file
    }
    pub fn key_file(&self) -> &Path {
        &self.key_file
    }

    fn lock(&self) -> HostResult<File> {
        if let Some(parent) = self.lock_file.parent() {
            fs::create_dir_all(parent).map_err(|e| io_err("cannot create", parent, e))?;
        }
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&self.lock_file)
            .map_err(|e| io_err("cannot open", &self.lock_file, e))?;
        f.lock()
            .map_err(|e| io_err("cannot lock", &self.lock_file, e))?;
        Ok(f)
    }

    /// The key, if its file exists; refused if it is not a private 32-byte key.
    fn read_key(&self) -> HostResult<Option<Zeroizing<[u8; 32]>>> {
        let meta = match fs::symlink_metadata(&self.key_file) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(key_err(
                    format!("cannot read the secrets key file: {e}"),
                    &self.key_file,
                ))
            }
        };
        if !meta.is_file() {
            return Err(key_err(
                format!("{} is not a regular file", self.key_file.display()),
                &self.key_file,
            ));
        }
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(key_err(
                format!(
                    "the secrets key file {} is readable by other users (mode {:o}); make it 0600",
                    self.key_file.display(),
                    meta.permissions().mode() & 0o777
                ),
                &self.key_file,
            ));
        }
        let text = Zeroizing::new(fs::read_to_string(&self.key_file).map_err(|e| {
            key_err(
                format!("cannot read the secrets key file: {e}"),
                &self.key_file,
            )
        })?);
        let mut key = Zeroizing::new([0u8; 32]);
        hex::decode_to_slice(text.trim(), key.as_mut_slice()).map_err(|_| {
            key_err(
                format!(
                    "{} does not hold a 256-bit hex key",
                    self.key_file.display()
                ),
                &self.key_file,
            )
        })?;
        Ok(Some(key))
    }

    /// Creates a fresh random key file (0600 in a 0700 folder); when another creator got there
    /// first, its key.
    fn create_key(&self) -> HostResult<Zeroizing<[u8; 32]>> {
        let mut key = Zeroizing::new([0u8; 32]);
        getrandom::fill(key.as_mut_slice())
            .map_err(|e| HostError::new(ErrorCode::Internal, format!("no randomness: {e}")))?;
        if let Some(parent) = self.key_file.parent() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(|e| {
                    key_err(
                        format!("cannot create {}: {e}", parent.display()),
                        &self.key_file,
                    )
                })?;
        }
        // Written whole to a private temporary file, then linked into place: a concurrent
        // creator (another thread or process) either wins the link, and this one reads its key,
        // or loses it; nobody ever reads a half-written key file.
        let mut nonce = [0u8; 8];
        let _ = getrandom::fill(&mut nonce);
        let tmp = self.key_file.with_extension(format!(
            "tmp-{}-{}",
            std::process::id(),
            hex::encode(nonce)
        ));
        let written = (|| -> std::io::Result<()> {
            let mut f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)?;
            let mut text = Zeroizing::new(hex::encode(key.as_slice()));
            text.push('\n');
            f.write_all(text.as_bytes())?;
            f.sync_all()
        })();
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(key_err(
                format!("cannot write the secrets key file: {e}"),
                &self.key_file,
            ));
        }
        let linked = fs::hard_link(&tmp, &self.key_file);
        let _ = fs::remove_file(&tmp);
        match linked {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return self.read_key()?.ok_or_else(|| {
                    key_err(
                        "the secrets key file vanished while it was created".into(),
                        &self.key_file,
                    )
                });
            }
            Err(e) => {
                return Err(key_err(
                    format!("cannot create the secrets key file: {e}"),
                    &self.key_file,
                ))
            }
        }
        Ok(key)
    }

    fn load(&self, key: Option<&[u8; 32]>) -> HostResult<Secrets> {
        let bytes = match fs::File::open(&self.data_file) {
            Ok(f) => {
                let len = f.metadata().map(|m| m.len()).unwrap_or(0);
                if len > MAX_FILE_BYTES {
                    return Err(self.undecryptable("it is too large"));
                }
                let mut buf = Zeroizing::new(Vec::with_capacity(len as usize));
                use std::io::Read;
                f.take(MAX_FILE_BYTES + 1)
                    .read_to_end(&mut buf)
                    .map_err(|e| io_err("cannot read", &self.data_file, e))?;
                buf
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Secrets::new()),
            Err(e) => return Err(io_err("cannot read", &self.data_file, e)),
        };
        let Some(key) = key else {
            return Err(key_err(
                format!(
                    "{} exists but its key file {} is missing",
                    self.data_file.display(),
                    self.key_file.display()
                ),
                &self.key_file,
            ));
        };
        if bytes.len() < MAGIC.len() + NONCE_LEN + 16 || &bytes[..MAGIC.len()] != MAGIC {
            return Err(self.undecryptable("it is not an AppHost secrets file"));
        }
        let (nonce, sealed) = bytes[MAGIC.len()..].split_at(NONCE_LEN);
        let cipher = XChaCha20Poly1305::new(key.into());
        let plain = Zeroizing::new(
            cipher
                .decrypt(
                    XNonce::from_slice(nonce),
                    Payload {
                        msg: sealed,
                        aad: MAGIC,
                    },
                )
                .map_err(|_| {
                    self.undecryptable(
                        "the key does not open it (a different key, or the file was changed)",
                    )
                })?,
        );
        let map: BTreeMap<String, String> = serde_json::from_slice(&plain)
            .map_err(|_| self.undecryptable("its content is not a secrets map"))?;
        Ok(map
            .into_iter()
            .map(|(k, v)| (k, Zeroizing::new(v)))
            .collect())
    }

    fn undecryptable(&self, why: &str) -> HostError {
        HostError::new(
            ErrorCode::SecretUndecryptable,
            format!("cannot decrypt {}: {why}", self.data_file.display()),
        )
        .with("path", self.data_file.display().to_string())
        .with("keyFile", self.key_file.display().to_string())
    }

    /// Writes the whole map: temp file (0600) → fsync → rename → fsync the folder.
    fn save(&self, key: &[u8; 32], secrets: &Secrets) -> HostResult<()> {
        let plain_map: BTreeMap<&str, &str> = secrets
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let plain = Zeroizing::new(
            serde_json::to_vec(&plain_map)
                .map_err(|e| HostError::new(ErrorCode::Internal, e.to_string()))?,
        );
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce)
            .map_err(|e| HostError::new(ErrorCode::Internal, format!("no randomness: {e}")))?;
        let cipher = XChaCha20Poly1305::new(key.into());
        let sealed = cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: &plain,
                    aad: MAGIC,
                },
            )
            .map_err(|_| HostError::new(ErrorCode::Internal, "encryption failed"))?;
        let tmp = self.data_file.with_extension("enc.tmp");
        let write = || -> std::io::Result<()> {
            let _ = fs::remove_file(&tmp);
            let mut f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)?;
            f.write_all(MAGIC)?;
            f.write_all(&nonce)?;
            f.write_all(&sealed)?;
            f.sync_all()?;
            fs::rename(&tmp, &self.data_file)?;
            if let Some(parent) = self.data_file.parent() {
                File::open(parent)?.sync_all()?;
            }
            Ok(())
        };
        write().map_err(|e| {
            let _ = fs::remove_file(&tmp);
            io_err("cannot write", &self.data_file, e)
        })
    }

    fn update(&self, f: impl FnOnce(&mut Secrets) -> bool) -> HostResult<bool> {
        let _lock = self.lock()?;
        let key = self.read_key()?;
        let mut secrets = self.load(key.as_deref())?;
        let changed = f(&mut secrets);
        if changed {
            let key = match key {
                Some(k) => k,
                None => self.create_key()?,
            };
            self.save(&key, &secrets)?;
        }
        Ok(changed)
    }
}

impl SecretStore for EncryptedFileStore {
    fn backend(&self) -> SecretBackend {
        SecretBackend::EncryptedFile
    }
    fn location(&self) -> String {
        format!(
            "encrypted file {} (key in {})",
            self.data_file.display(),
            self.key_file.display()
        )
    }
    fn set(&self, name: &str, value: &SecretValue) -> HostResult<()> {
        check_name(name)?;
        check_value(value)?;
        self.update(|s| {
            s.insert(name.to_owned(), Zeroizing::new(value.expose().to_owned()));
            true
        })?;
        Ok(())
    }
    fn get(&self, name: &str) -> HostResult<Option<SecretValue>> {
        check_name(name)?;
        let key = self.read_key()?;
        let mut secrets = self.load(key.as_deref())?;
        Ok(secrets
            .remove(name)
            .map(|mut v| SecretValue::new(std::mem::take(&mut *v))))
    }
    fn delete(&self, name: &str) -> HostResult<bool> {
        check_name(name)?;
        self.update(|s| s.remove(name).is_some())
    }
}

#[cfg(test)]
mod key_race_tests {
    use super::*;

    #[test]
    fn concurrent_creators_of_the_key_file_all_end_with_the_one_key() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path().join("data"));
        let key_file = tmp.path().join("keys").join("k.key");
        let keys: Vec<[u8; 32]> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| {
                    let (dir, key_file) = (dir.clone(), key_file.clone());
                    s.spawn(move || {
                        let store = EncryptedFileStore::new(&dir, key_file).unwrap();
                        *store.create_key().unwrap()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(
            keys.windows(2).all(|w| w[0] == w[1]),
            "two keys were handed out"
        );
        let store = EncryptedFileStore::new(&dir, key_file.clone()).unwrap();
        assert_eq!(*store.read_key().unwrap().unwrap(), keys[0]);
        let left: Vec<_> = std::fs::read_dir(key_file.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 1, "temporary files left: {left:?}");
    }
}
