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

/// `/tmp` is a tmpfs of its own size (`launch::TMP_BYTES`, 64 MiB): a fill across many files,
/// each under `RLIMIT_FSIZE`, stops there with `ENOSPC` instead of taking host memory, and the
/// service keeps running.
#[test]
fn a_many_file_tmp_fill_stops_at_the_tmpfs_size() {
    let host = Host::setup();
    let mut sup = common::supervise(
        host.probe_spec(),
        Duration::from_secs(60),
        host.probe_log(),
        |_| {},
    );
    // 24 files x 4 MiB = 96 MiB asked for, more than the tmpfs holds.
    let r = sup
        .call("fill", json!({"dir": "/tmp", "files": 24, "mib": 4}))
        .unwrap();
    let wrote = r["wrote"].as_u64().unwrap();
    let cap = service_sandbox::launch::TMP_BYTES;
    assert!(wrote <= cap, "wrote {wrote} bytes into a {cap}-byte /tmp");
    assert!(wrote >= cap / 2, "{r}");
    assert!(
        r["error"].as_str().unwrap_or("").contains("No space left"),
        "{r}"
    );
    assert!(sup.is_running(), "a full /tmp is not a crash");
}

/// The disk-fill probe across many files: each file stays under `RLIMIT_FSIZE` (16 MiB), so only
/// the directory's total quota holds them (the supervisor's watcher stops the service); the next
/// launch is refused and nothing starts; a one-file fill stops at what is left (`EFBIG`).
#[test]
fn a_many_file_disk_fill_is_held_to_the_total_quota_and_the_next_launch_is_refused() {
    use service_sandbox::disk_usage::{usage, Bounds};
    use service_sandbox::{AuditEvent, DiskQuota};
    use std::sync::{Arc, Mutex};

    let host = Host::setup();
    let quota: u64 = 8 << 20;
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let mut sup = common::supervise(
        host.probe_spec(),
        Duration::from_secs(60),
        host.probe_log(),
        move |e| sink.lock().unwrap().push(e),
    )
    .with_disk_quota(DiskQuota {
        scan_every: Duration::from_millis(50),
        ..DiskQuota::new(quota)
    });
    // 32 files x 4 MiB = 128 MiB asked for
    let e = sup
        .call("fill", json!({"files": 32, "mib": 4}))
        .expect_err("the fill outran the quota");
    assert_eq!(e.code(), "service.disk_quota_exceeded", "{e}");
    assert!(!sup.is_running());
    let used = usage(&host.service_dir, Bounds::default()).unwrap().bytes;
    eprintln!("many-file fill stopped with {used} bytes on disk (quota {quota})");
    assert!((quota..40 << 20).contains(&used), "{used}");
    let ev = events.lock().unwrap().clone();
    assert!(
        ev.iter()
            .any(|e| matches!(e, AuditEvent::LimitHit { what } if what.starts_with("disk quota"))),
        "{ev:?}"
    );
    assert!(ev.contains(&AuditEvent::Stopped {
        reason: "disk-quota".into()
    }));
    // over quota: refused before anything runs
    let starts = |ev: &[AuditEvent]| {
        ev.iter()
            .filter(|e| matches!(e, AuditEvent::Started { .. }))
            .count()
    };
    let before = starts(&events.lock().unwrap());
    let e = sup.call("echo", json!({})).unwrap_err();
    assert_eq!(e.code(), "service.disk_quota_exceeded");
    assert_eq!(starts(&events.lock().unwrap()), before);
    assert!(events.lock().unwrap().contains(&AuditEvent::Refused {
        code: "service.disk_quota_exceeded".into()
    }));

    // freed: it starts again, and one file can grow only by what is left (EFBIG at the quota)
    for e in std::fs::read_dir(&host.service_dir).unwrap() {
        std::fs::remove_file(e.unwrap().path()).unwrap();
    }
    std::fs::write(host.service_dir.join("old.bin"), vec![7u8; 5 << 20]).unwrap();
    let out = sup.call("fill", json!({"files": 1, "mib": 8}));
    match &out {
        Ok(out) => {
            assert!(
                out["error"]
                    .as_str()
                    .unwrap_or("")
                    .contains("File too large"),
                "{out}"
            );
            assert!(out["wrote"].as_u64().unwrap() <= 3 << 20, "{out}");
        }
        // reaching the quota exactly is "full": the watcher may stop it right after
        Err(e) => assert_eq!(e.code(), "service.disk_quota_exceeded", "{e}"),
    }
    let used = usage(&host.service_dir, Bounds::default()).unwrap().bytes;
    assert!(used <= quota + (64 << 10), "{used}");
    sup.stop("test");
}
