//! The OS-keyring path against a real Secret Service: a private D-Bus session bus with
//! `gnome-keyring-daemon` on it (the Debian package `gnome-keyring`, installed by
//! `scripts/setup.sh`), its keyrings in this test's own folder, its login keyring created and
//! unlocked with a password given on its stdin.
//! `auto` picks the keyring; an app's secret slot is bound there (nothing lands in the data
//! directory), `lime.secrets.getRef` answers an opaque ref, the host resolves it, and
//! `uninstall --delete-data` deletes the keyring item. (One test: it sets process-wide
//! environment variables.)

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::app_secrets;
use host_core::hosting::bridge::host::{BridgeHost, Outgoing};
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::capability::services::Services;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::install::secrets::{self, KeyringStore, SecretBackend, SecretValue};
use host_core::install::store::{DataMode, Store};
use serde_json::{json, Value};
use support::{copy_dir, fixture, install};

const CANARY: &str = "kr-CANARY-3b9e41-in-the-keyring-only";

/// Children killed (by their own handle) when the test ends, passing or not.
struct Daemons(Vec<Child>);

impl Drop for Daemons {
    fn drop(&mut self) {
        for c in self.0.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn start_bus(daemons: &mut Daemons) -> String {
    let mut bus = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--print-address=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("dbus-daemon is needed for this test (bash scripts/setup.sh)");
    let mut address = String::new();
    BufReader::new(bus.stdout.take().unwrap())
        .read_line(&mut address)
        .unwrap();
    daemons.0.push(bus);
    address.trim().to_owned()
}

fn start_keyring(daemons: &mut Daemons, bus: &str, home: &Path) {
    let runtime = home.join("run");
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let mut gk = Command::new("gnome-keyring-daemon")
        .args(["--foreground", "--unlock", "--components=secrets"])
        .env("DBUS_SESSION_BUS_ADDRESS", bus)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("gnome-keyring-daemon is needed for this test (bash scripts/setup.sh)");
    // `--unlock` reads the login keyring's password from stdin (until EOF) and creates that
    // keyring, the default collection, if it does not exist. (With an empty password it creates
    // none, and with no collection the Secret Service cannot store anything.)
    gk.stdin.take().unwrap().write_all(b"apphost-test").unwrap();
    daemons.0.push(gk);
}

fn variant(tmp: &Path) -> PathBuf {
    let dest = tmp.join("kr-app");
    copy_dir(&fixture("good/hello-app"), &dest);
    let md = std::fs::read_to_string(dest.join("APP.md"))
        .unwrap()
        .replacen("name: hello-app", "name: kr-app", 1)
        .replacen(
            "    lime.storage: \"^0.10.0\"\n",
            "    lime.storage: \"^0.10.0\"\n    lime.secrets: \"^0.10.0\"\n",
            1,
        )
        .replacen(
            "runtimePackage:",
            "secrets:\n  - {key: api_token, required: true, scope: app}\nruntimePackage:",
            1,
        );
    std::fs::write(dest.join("APP.md"), md).unwrap();
    dest
}

fn files_contain(dir: &Path, needle: &str) -> bool {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else if String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).contains(needle) {
                return true;
            }
        }
    }
    false
}

#[test]
fn app_secrets_live_in_a_real_secret_service_when_one_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let mut daemons = Daemons(Vec::new());
    let bus = start_bus(&mut daemons);
    start_keyring(&mut daemons, &bus, &tmp.path().join("home"));
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", &bus);
    std::env::set_var("APPHOST_SECRET_STORE", "auto");
    // Only reached if the keyring path were not taken: never the user's config.
    std::env::set_var("APPHOST_SECRET_KEY_FILE", tmp.path().join("keys/k.key"));
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &variant(tmp.path()));

    // The daemon claims its bus name shortly after starting.
    let start = Instant::now();
    let keyring = loop {
        match KeyringStore::connect(&dir) {
            Ok(k) => break k,
            Err(e) if start.elapsed() > Duration::from_secs(20) => {
                panic!("gnome-keyring-daemon never answered: {}", e.message)
            }
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    };
    use host_core::install::secrets::SecretStore;
    keyring
        .set("probe/x", &SecretValue::new("v".into()))
        .unwrap();
    assert_eq!(keyring.get("probe/x").unwrap().unwrap().expose(), "v");
    assert!(keyring.delete("probe/x").unwrap());
    assert!(keyring.get("probe/x").unwrap().is_none());
    assert_eq!(
        secrets::open_default(&dir).unwrap().backend(),
        SecretBackend::Keyring
    );

    // An app slot bound through `auto` goes to the keyring.
    let (store, _) = Store::open_locked(&dir).unwrap();
    let b = app_secrets::set(
        &store,
        "kr-app",
        "api_token",
        &SecretValue::new(CANARY.into()),
    )
    .unwrap();
    assert!(
        b.stored_as.starts_with("keyring:app/kr-app/api_token/"),
        "{}",
        b.stored_as
    );
    assert!(!dir.root().join("secrets.enc").exists());
    assert!(!files_contain(dir.root(), CANARY));

    // The app gets the opaque ref over the bridge; the host resolves it from the keyring.
    let mut host = BridgeHost::new(
        Services::new(dir.apps_data()),
        HostProfile::all_available(),
        OriginStyle::Scheme,
    );
    let m = host.mount(&store, "kr-app", "notes").unwrap();
    let msg = |kind: &str, id: &str, payload: Value| {
        json!({"protocol": PROTOCOL, "version": 1, "type": kind, "requestId": id,
               "appId": "kr-app", "entryKey": "notes", "payload": payload})
        .to_string()
    };
    host.handle(
        &store,
        &m.mount_id,
        &m.origin,
        &msg("app:ready", "r0", json!({})),
    );
    let out = host.handle(
        &store,
        &m.mount_id,
        &m.origin,
        &msg(
            "capability:invoke",
            "r1",
            json!({"capability": "lime.secrets", "method": "getRef", "args": {"key": "api_token"}}),
        ),
    );
    let text = serde_json::to_string(&out).unwrap();
    assert!(!text.contains(CANARY));
    let Outgoing::Post { message, .. } = &out[0] else {
        panic!("{out:?}")
    };
    let r = message["payload"]["value"]["ref"].as_str().unwrap();
    assert_eq!(r, b.handle);
    assert_eq!(
        app_secrets::resolve(&store, "kr-app", r)
            .unwrap()
            .unwrap()
            .expose(),
        CANARY
    );

    // uninstall --delete-data deletes the keyring item.
    let name = b.stored_as.split_once(':').unwrap().1.to_owned();
    let out = store
        .uninstall("kr-app", DataMode::DeleteData, None)
        .unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert!(keyring.get(&name).unwrap().is_none());
    drop(daemons);
}
