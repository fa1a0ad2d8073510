//! The `local-http` plane: a sandboxed service serving HTTP on the socket the host bound and
//! passed in, reachable only with the per-launch token. Each attack is reproduced from outside
//! (another process, no token, a wrong token) and from inside (the service trying the network or
//! the host-side path), and must be refused with the service's state unchanged.

mod common;

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::http_service_spec;
use serde_json::{json, Value};
use service_sandbox::http_plane::client;
use service_sandbox::{AuditEvent, HttpService, Plane, Policy, ServiceSpec, Supervisor};

const T: Duration = Duration::from_secs(20);

struct Setup {
    tmp: tempfile::TempDir,
    spec: ServiceSpec,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let spec = http_service_spec(tmp.path());
    Setup { tmp, spec }
}

/// A separate local process (python3) sending `POST /rpc` to `socket` with `auth` as the
/// Authorization header; prints the status code or the connect error.
fn from_another_process(socket: &Path, auth: Option<&str>) -> String {
    let script = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(5)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("connect failed:", e.__class__.__name__); sys.exit(0)
body = b'{"jsonrpc":"2.0","id":1,"method":"count","params":{}}'
auth = ("Authorization: %s\r\n" % sys.argv[2]) if len(sys.argv) > 2 else ""
s.sendall(("POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n%sConnection: close\r\n\r\n" % (len(body), auth)).encode() + body)
print(s.recv(100).split(b"\r\n")[0].decode())
"#;
    let mut cmd = Command::new("/usr/bin/python3");
    cmd.arg("-c").arg(script).arg(socket);
    if let Some(a) = auth {
        cmd.arg(a);
    }
    let out = cmd.output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn the_host_calls_the_service_over_its_private_socket() {
    let s = setup();
    let mut svc = HttpService::start(&s.spec).unwrap();
    assert_eq!(
        svc.call("initialize", json!({}), T).unwrap(),
        json!({"ok": true})
    );
    assert_eq!(
        svc.call("upper", json!({"text": "abc"}), T).unwrap(),
        json!({"text": "ABC"})
    );
    let err = svc.call("nope", json!({}), T).unwrap_err();
    assert_eq!(err.code(), "service.error");
    // the socket lives in a host-private 0700 dir outside the service dir
    let sock = svc.socket_path();
    let dir = sock.parent().unwrap();
    assert_eq!(
        std::fs::metadata(dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    assert!(!sock.starts_with(s.tmp.path()));
    assert_eq!(std::fs::read_dir(&s.spec.service_dir).unwrap().count(), 0);
    svc.kill();
    assert!(!dir.exists(), "socket dir removed on kill");
}

#[test]
fn another_process_without_or_with_a_wrong_token_is_refused_and_changes_nothing() {
    let s = setup();
    let mut svc = HttpService::start(&s.spec).unwrap();
    svc.call("initialize", json!({}), T).unwrap();
    let sock = svc.socket_path();
    assert_eq!(
        from_another_process(&sock, None),
        "HTTP/1.1 401 Unauthorized"
    );
    assert_eq!(
        from_another_process(
            &sock,
            Some("Bearer 0000000000000000000000000000000000000000000000000000000000000000")
        ),
        "HTTP/1.1 401 Unauthorized"
    );
    assert_eq!(
        from_another_process(&sock, Some("Basic aG9zdDpob3N0")),
        "HTTP/1.1 401 Unauthorized"
    );
    // the host's own client without the token gets the same
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"count","params":{}}"#;
    let resp = client::post(&sock, None, "/rpc", body, T, 1 << 20).unwrap();
    assert_eq!(resp.status, 401);
    // none of those requests ran: the first authorised count is 1
    assert_eq!(
        svc.call("count", json!({}), T).unwrap(),
        json!({"count": 1})
    );
}

#[test]
fn the_service_has_no_network_and_cannot_see_the_host_side_socket() {
    let s = setup();
    let host_listener = TcpListener::bind("127.0.0.1:0").unwrap();
    host_listener.set_nonblocking(true).unwrap();
    let port = host_listener.local_addr().unwrap().port();
    let mut svc = HttpService::start(&s.spec).unwrap();
    let tcp = svc.call("probe_tcp", json!({"port": port}), T).unwrap();
    assert!(
        tcp["connect"].as_str().unwrap().starts_with("refused"),
        "{tcp}"
    );
    assert!(
        host_listener.accept().is_err(),
        "nothing reached the host listener"
    );
    // the path of the host-side socket does not exist in the sandbox
    let sock = svc.socket_path();
    let probe = svc
        .call("probe_socket", json!({"path": sock.to_string_lossy()}), T)
        .unwrap();
    assert_eq!(probe["exists"], json!(false), "{probe}");
    assert!(probe["connect"].as_str().unwrap().starts_with("refused"));
}

#[test]
fn a_slowloris_answer_ends_in_a_timeout_and_a_flood_in_a_protocol_error() {
    let s = setup();
    let mut svc = HttpService::start(&s.spec).unwrap();
    svc.call("initialize", json!({}), T).unwrap();
    let t0 = Instant::now();
    let err = svc
        .call("slow", json!({}), Duration::from_millis(800))
        .unwrap_err();
    assert_eq!(err.code(), "service.timeout");
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    let err = svc.call("flood", json!({}), T).unwrap_err();
    assert_eq!(err.code(), "service.protocol", "{err}");
    // the service still answers
    assert_eq!(
        svc.call("count", json!({}), T).unwrap(),
        json!({"count": 1})
    );
}

#[test]
fn the_supervisor_runs_a_local_http_service_and_leaves_nothing_behind() {
    let s = setup();
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let ev = events.clone();
    let plane = Plane::for_manifest("client-local", "local-http").unwrap();
    let mut sup = Supervisor::new(
        s.spec.clone(),
        Policy::default(),
        s.tmp.path().join("logs/api.log"),
        Box::new(|| Box::new(|_, _| Err((-32601, "none".into())))),
        Box::new(move |e: AuditEvent| ev.lock().unwrap().push(e)),
    )
    .with_plane(plane);
    let out: Value = sup.call("upper", json!({"text": "hi"})).unwrap();
    assert_eq!(out, json!({"text": "HI"}));
    sup.stop("user");
    assert!(!sup.is_running());
    let events = events.lock().unwrap();
    assert!(matches!(events.first(), Some(AuditEvent::Started { pid }) if *pid > 0));
    assert!(
        sup.logs().contains("api: \"POST /rpc HTTP/1.1\" 200"),
        "{}",
        sup.logs()
    );
}
