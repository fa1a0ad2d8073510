//! The escape suite: the probe service (fixtures/apps/service-probe) tries every escape in
//! issue 24 §5 from inside the sandbox; each must be contained, and nothing on the host changes.

mod common;

use std::io::Read;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::time::Duration;

use common::Host;
use serde_json::{json, Value};

const MARKER: &str = "APPHOST_PROBE_MARKER_5f1c";

#[test]
fn every_escape_probe_is_contained_and_the_host_is_unchanged() {
    // a secret in the host's environment must not show up in any environ the service can read
    std::env::set_var("APPHOST_PROBE_SECRET", MARKER);
    let host = Host::setup();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let abstract_name = format!("apphost-probe-{}", std::process::id());
    let abstract_listener =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap())
            .unwrap();
    abstract_listener.set_nonblocking(true).unwrap();
    let unix_path = host.tmp.path().join("host.sock");
    let unix_listener = UnixListener::bind(&unix_path).unwrap();
    unix_listener.set_nonblocking(true).unwrap();

    let before_data = Host::snapshot(&host.data);
    let before_pkg = Host::snapshot(&host.package);
    let home = host.tmp.path().join("home");
    let targets = json!({
        "host_pid": std::process::id(),
        "ssh_key": home.join(".ssh/id_rsa"),
        "host_db": host.data.join("host.db"),
        "other_app_data": host.data.join("apps/other-app/notes.txt"),
        "secrets_enc": host.data.join("secrets.enc"),
        "model_key": host.data.join("model.key"),
        "data_dir": host.data,
        "host_port": tcp.local_addr().unwrap().port(),
        "abstract_name": abstract_name,
        "unix_path": unix_path,
        "marker": MARKER,
    });

    let mut svc = host.start_probe();
    let init = svc
        .call("initialize", json!({}), Duration::from_secs(20))
        .unwrap();
    assert_eq!(init["name"], "service-probe");
    let report = svc
        .call("probe", targets, Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("{e}: {}", svc.logs()));
    let report = report.as_object().expect("probe report object");
    let escaped: Vec<(&String, &Value)> = report
        .iter()
        .filter(|(_, r)| r["contained"] != Value::Bool(true))
        .collect();
    for (name, r) in report {
        eprintln!("{name:32} {} {}", r["contained"], r["detail"]);
    }
    assert!(escaped.is_empty(), "escapes: {escaped:#?}");
    assert!(report.len() >= 40, "only {} probes ran", report.len());

    // nothing reached the host listeners
    assert!(tcp.accept().is_err());
    assert!(abstract_listener.accept().is_err());
    assert!(unix_listener.accept().is_err());
    svc.kill();
    // the host's data and the package are byte-for-byte unchanged (the service dir may hold its own files)
    let after_data: Vec<_> = Host::snapshot(&host.data)
        .into_iter()
        .filter(|(p, _)| !p.starts_with(&host.service_dir))
        .collect();
    let before_data: Vec<_> = before_data
        .into_iter()
        .filter(|(p, _)| !p.starts_with(&host.service_dir))
        .collect();
    assert_eq!(before_data, after_data);
    assert_eq!(before_pkg, Host::snapshot(&host.package));
    // and the service left no stray bytes on the host stdio
    let mut s = String::new();
    let _ = std::io::empty().read_to_string(&mut s);
}
