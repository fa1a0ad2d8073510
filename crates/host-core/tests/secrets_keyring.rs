//! The OS keyring is used only where a Secret Service answers: on a D-Bus session bus without
//! one (a private `dbus-daemon` started here) or with no bus at all, `KeyringStore::connect`
//! fails with `secret.store_unavailable` in bounded time and `auto` falls back to the encrypted
//! file. (One test: it sets process-wide environment variables.)

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use host_core::foundation::error::ErrorCode;
use host_core::foundation::paths::DataDir;
use host_core::install::secrets::{self, KeyringStore, SecretBackend};

#[test]
fn without_a_secret_service_auto_falls_back_to_the_encrypted_file() {
    let tmp = tempfile::tempdir().unwrap();
    let data = DataDir::at(tmp.path().join("data"));
    std::fs::create_dir_all(data.root()).unwrap();
    std::env::set_var("APPHOST_SECRET_KEY_FILE", tmp.path().join("keys/k.key"));
    std::env::remove_var("APPHOST_SECRET_STORE");

    // 1. No bus at all.
    std::env::set_var(
        "DBUS_SESSION_BUS_ADDRESS",
        format!("unix:path={}", tmp.path().join("no-bus").display()),
    );
    let start = Instant::now();
    let e = KeyringStore::connect(&data)
        .err()
        .expect("no keyring without a bus");
    assert_eq!(e.code, ErrorCode::SecretStoreUnavailable);
    assert!(start.elapsed() < Duration::from_secs(11));
    assert_eq!(
        secrets::open_default(&data).unwrap().backend(),
        SecretBackend::EncryptedFile
    );

    // 2. A real session bus on which no Secret Service runs.
    let Ok(mut daemon) = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--print-address=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    else {
        panic!("dbus-daemon is needed for this test (apt-get install dbus)");
    };
    let mut address = String::new();
    BufReader::new(daemon.stdout.take().unwrap())
        .read_line(&mut address)
        .unwrap();
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", address.trim());
    let start = Instant::now();
    let result = KeyringStore::connect(&data);
    let took = start.elapsed();
    std::env::set_var("APPHOST_SECRET_STORE", "keyring");
    let forced = secrets::open_default(&data);
    std::env::set_var("APPHOST_SECRET_STORE", "auto");
    let auto = secrets::open_default(&data);
    let _ = daemon.kill();
    let _ = daemon.wait();

    let e = result.err().expect("no Secret Service on this bus");
    assert_eq!(e.code, ErrorCode::SecretStoreUnavailable, "{}", e.message);
    assert!(took < Duration::from_secs(11), "{took:?}");
    assert_eq!(
        forced.err().expect("keyring was forced").code,
        ErrorCode::SecretStoreUnavailable
    );
    assert_eq!(auto.unwrap().backend(), SecretBackend::EncryptedFile);
}
