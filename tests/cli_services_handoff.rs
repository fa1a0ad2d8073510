//! `apphost services` handed to the running host (`apphost serve`) over its App Server door
//! (`apphost/services.*`, docs/services.md): `start` leaves the service running in the host
//! after the command ends, `call` is answered by the host's process (audited `by: door`), and a
//! `call` whose command is stopped with Ctrl-C is cancelled in the host: the service reads
//! `$/cancelRequest` for it, and the host's next call is answered at once. Needs the sandbox shim
//! beside the binary (`cargo build -p service-sandbox --bin apphost-service-shim`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::services_cli::ServicesHost;
use common::{apphost_in, copy_dir, describe, Serving};
use host_core::foundation::paths::DataDir;
use host_core::install::store::Store;
use serde_json::Value;

const APP: &str = "relay-app";

/// The doc-parser sample with its service replaced by the relay test service
/// (fixtures/services/relay.py), whose calls wait up to 30 s.
fn relay_package(tmp: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pkg = tmp.join("pkg-relay");
    copy_dir(&root.join("fixtures/apps/doc-parser"), &pkg);
    std::fs::remove_dir_all(pkg.join("services/parser")).unwrap();
    std::fs::create_dir_all(pkg.join("services/relay")).unwrap();
    std::fs::copy(
        root.join("fixtures/services/relay.py"),
        pkg.join("services/relay/relay.py"),
    )
    .unwrap();
    let manifest = std::fs::read_to_string(pkg.join("APP.md"))
        .unwrap()
        .replace("name: doc-parser", &format!("name: {APP}"))
        .replace("  - key: parser\n", "  - key: relay\n")
        .replace("services/parser/parser.py", "services/relay/relay.py")
        .replace("timeoutMs: 5000", "timeoutMs: 30000");
    std::fs::write(pkg.join("APP.md"), manifest).unwrap();
    pkg
}

/// The JSON lines the relay service wrote to `/service/<name>`.
fn service_file(h: &ServicesHost, name: &str) -> Vec<Value> {
    let path = DataDir::at(h.data.clone())
        .apps_data()
        .join(APP)
        .join("services/relay")
        .join(name);
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// The `service.call` audit rows of the relay app: who asked each.
fn calls_by(h: &ServicesHost) -> Vec<String> {
    let store = Store::open_for_calls(&DataDir::at(h.data.clone())).unwrap();
    let mut rows = store.audit_log(Some(APP), 1000).unwrap();
    rows.reverse();
    rows.into_iter()
        .filter(|r| r["action"] == "service.call")
        .map(|r| r["details"]["by"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn running(h: &ServicesHost) -> bool {
    let list = h.json(&["services", "list", APP]);
    list.as_array()
        .and_then(|l| l.iter().find(|s| s["key"] == "relay"))
        .map(|s| s["state"] == "running")
        .unwrap_or(false)
}

#[test]
fn with_serve_running_services_commands_are_handed_to_it_and_ctrl_c_cancels_a_call() {
    let h = ServicesHost::new();
    let pkg = relay_package(h.tmp.path());
    let out = h.run(&["install", pkg.to_str().unwrap(), "--yes", "--sideload"]);
    assert!(out.status.success(), "{}", describe(&out));
    let _serve = Serving::start(apphost_in(h.tmp.path(), &h.data));
    assert!(h.data.join("runtime/app-server.sock").exists());

    // start: the host runs the service, and it outlives the command.
    h.json(&["services", "start", APP, "relay"]);
    assert!(
        running(&h),
        "the host's service runs after the command ended"
    );

    // call: answered by the host's process, audited as the door's.
    let v = h.json(&["services", "call", APP, "relay", "echo", r#"{"n": 1}"#]);
    assert_eq!(v["echo"]["n"], 1, "{v}");
    assert_eq!(calls_by(&h), ["door"]);

    // Ctrl-C on a call the host is running for the command: the host cancels it.
    let mut cli = apphost_in(h.tmp.path(), &h.data)
        .args(["services", "call", APP, "relay", "hang-noted"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the service to get the call", || {
        !service_file(&h, "hanging").is_empty()
    });
    assert!(service_file(&h, "cancelled").is_empty());
    // The terminal's Ctrl-C: SIGINT to the command (its default action ends the process).
    let int = std::process::Command::new("kill")
        .args(["-INT", &cli.id().to_string()])
        .status()
        .unwrap();
    assert!(int.success());
    let status = cli.wait().unwrap();
    assert!(!status.success(), "Ctrl-C ended the command: {status:?}");
    wait_for("$/cancelRequest to reach the service", || {
        !service_file(&h, "cancelled").is_empty()
    });
    let hanging = service_file(&h, "hanging");
    let cancelled = service_file(&h, "cancelled");
    assert_eq!(cancelled.len(), 1, "{cancelled:?}");
    assert_eq!(
        cancelled[0]["id"], hanging[0],
        "the cancelled call is the one that hung"
    );

    // The service is free again: the next call is answered at once, by the same process.
    let t = Instant::now();
    let v = h.json(&["services", "call", APP, "relay", "echo", r#"{"n": 2}"#]);
    assert_eq!(v["echo"]["n"], 2, "{v}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(running(&h));
    assert_eq!(calls_by(&h), ["door", "door", "door"]);
}
