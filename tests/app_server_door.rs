//! The App Server door (docs/app-server.md, "The door"): a host process (`apphost serve`) owns
//! the runtime and serves it on `<data>/runtime/app-server.sock`; `apphost app-server --stdio`
//! relays to it. Two clients start, read and cancel each other's sessions; a killed client loses
//! nothing; wrong tokens, other users, oversized lines and one connection too many are refused
//! with stable codes; a crashed host's socket is stale and replaced.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::{apphost_in, describe, Serving};

const WAIT: Duration = Duration::from_secs(20);

/// A stand-in model provider whose answers start streaming and never end (a turn stays
/// running until it is cancelled).
fn hanging_provider() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if conn.read(&mut byte).unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let _ = conn.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n\
                      data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"thinking\"},\"finish_reason\":null}]}\n\n",
                );
                std::thread::sleep(Duration::from_secs(120));
            });
        }
    });
    base
}

/// A line-based JSON-RPC client over any byte stream; notifications are kept in order.
struct Client {
    write: Box<dyn Write + Send>,
    lines: mpsc::Receiver<Value>,
    events: Vec<Value>,
    next_id: u64,
    /// A socket client's stream, shut down on drop (the reader thread holds a clone).
    stream: Option<UnixStream>,
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Some(s) = &self.stream {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}

impl Client {
    fn new(read: impl Read + Send + 'static, write: impl Write + Send + 'static) -> Client {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(read).lines() {
                let Ok(line) = line else { return };
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    return;
                };
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        Client {
            write: Box::new(write),
            lines: rx,
            events: Vec::new(),
            next_id: 0,
            stream: None,
        }
    }

    fn socket(data: &Path) -> Client {
        let s = UnixStream::connect(socket(data)).unwrap();
        let mut c = Client::new(s.try_clone().unwrap(), s.try_clone().unwrap());
        c.stream = Some(s);
        c
    }

    fn send(&mut self, v: &Value) {
        self.try_send(v).unwrap();
    }

    /// Sends, tolerating a peer that closed already (a refused connection).
    fn try_send(&mut self, v: &Value) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(v).unwrap();
        line.push(b'\n');
        self.write.write_all(&line)?;
        self.write.flush()
    }

    /// The next message that is not a notification (`None`: the connection closed).
    fn answer(&mut self) -> Option<Value> {
        loop {
            let v = self.lines.recv_timeout(WAIT).ok()?;
            if v.get("method").is_some() {
                self.events.push(v);
            } else {
                return Some(v);
            }
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let a = self.answer().unwrap_or_else(|| panic!("{method}: closed"));
        assert_eq!(a["id"], id, "{a}");
        a
    }

    fn ok(&mut self, method: &str, params: Value) -> Value {
        let a = self.call(method, params);
        assert!(a.get("error").is_none(), "{method}: {a}");
        a["result"].clone()
    }

    fn handshake(&mut self, token: Option<&str>) -> Value {
        let mut p = json!({"clientInfo": {"name": "door-test"}});
        if let Some(t) = token {
            p["authToken"] = json!(t);
        }
        let r = self.ok("initialize", p);
        self.send(&json!({"jsonrpc": "2.0", "method": "initialized"}));
        r
    }

    /// Waits for an `agentSession/event` of `session` with this type (and payload status).
    fn wait_event(&mut self, session: &str, ty: &str, status: Option<&str>) -> Value {
        let found = |e: &Value| {
            let e = &e["params"]["event"];
            e["sessionId"] == session
                && e["type"] == ty
                && status.is_none_or(|s| e["payload"]["status"] == s)
        };
        let end = Instant::now() + WAIT;
        loop {
            if let Some(e) = self.events.iter().find(|e| found(e)) {
                return e["params"]["event"].clone();
            }
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) => self.events.push(v),
                Err(_) => panic!("no {ty} of {session}: {:?}", self.events),
            }
        }
    }

    /// Reads until the peer closes; what came before.
    fn rest(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Ok(v) = self.lines.recv_timeout(WAIT) {
            out.push(v);
        }
        out
    }
}

fn socket(data: &Path) -> PathBuf {
    data.join("runtime/app-server.sock")
}

fn token(data: &Path) -> String {
    std::fs::read_to_string(data.join("runtime/app-server.token")).unwrap()
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

struct Host {
    tmp: tempfile::TempDir,
    data: PathBuf,
    serve: Option<Serving>,
}

impl Host {
    /// A data directory with a (hanging) model configured.
    fn new() -> Host {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let out = apphost_in(tmp.path(), &data)
            .args([
                "model",
                "set",
                "--base-url",
                &hanging_provider(),
                "--model",
                "m",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", describe(&out));
        Host {
            tmp,
            data,
            serve: None,
        }
    }

    fn cmd(&self) -> Command {
        apphost_in(self.tmp.path(), &self.data)
    }

    /// Starts `apphost serve` and waits for its first line (the door is open by then).
    fn serve(&mut self) {
        self.serve = Some(Serving::start(self.cmd()));
        assert!(socket(&self.data).exists(), "no door after serve started");
    }

    /// `apphost app-server --stdio` as a client.
    fn stdio(&self) -> (Child, Client) {
        let mut child = self
            .cmd()
            .args(["app-server", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin: ChildStdin = child.stdin.take().unwrap();
        let c = Client::new(child.stdout.take().unwrap(), stdin);
        (child, c)
    }
}

fn start_session(c: &mut Client) -> String {
    let r = c.ok("agentSession/start", json!({"appId": "door.test"}));
    r["session"]["sessionId"].as_str().unwrap().to_owned()
}

fn start_turn(c: &mut Client, session: &str) -> String {
    let r = c.ok(
        "agentSession/turn/start",
        json!({"sessionId": session, "input": {"text": "go"}}),
    );
    r["turn"]["turnId"].as_str().unwrap().to_owned()
}

fn turn_status(c: &mut Client, session: &str, turn: &str) -> String {
    let r = c.ok("agentSession/read", json!({"sessionId": session}));
    let t = r["turns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["turnId"] == turn)
        .unwrap_or_else(|| panic!("{turn} not in {r}"));
    t["status"].as_str().unwrap().to_owned()
}

#[test]
fn the_door_is_private_and_two_clients_share_sessions() {
    let mut host = Host::new();
    host.serve();
    let rt = host.data.join("runtime");
    assert_eq!(mode(&rt), 0o700);
    assert_eq!(mode(&socket(&host.data)), 0o600);
    assert_eq!(mode(&rt.join("app-server.token")), 0o600);
    assert_eq!(token(&host.data).len(), 64);

    // The relay (apphost app-server --stdio) and a direct socket client.
    let (mut relay_child, mut relay) = host.stdio();
    let init = relay.handshake(None);
    assert_eq!(init["runtime"]["status"], "ready", "{init}");
    let mut direct = Client::socket(&host.data);
    direct.handshake(Some(&token(&host.data)));

    // Started by the relay, read and cancelled by the socket client.
    let s1 = start_session(&mut relay);
    let t1 = start_turn(&mut relay, &s1);
    relay.wait_event(&s1, "turn.started", None);
    assert_eq!(turn_status(&mut direct, &s1, &t1), "running");
    direct.ok(
        "agentSession/turn/cancel",
        json!({"sessionId": s1, "turnId": t1}),
    );
    relay.wait_event(&s1, "turn.failed", Some("cancelled"));
    direct.wait_event(&s1, "turn.failed", Some("cancelled"));

    // And the other way round.
    let s2 = start_session(&mut direct);
    let t2 = start_turn(&mut direct, &s2);
    direct.wait_event(&s2, "turn.started", None);
    assert_eq!(turn_status(&mut relay, &s2, &t2), "running");
    relay.ok(
        "agentSession/turn/cancel",
        json!({"sessionId": s2, "turnId": t2}),
    );
    direct.wait_event(&s2, "turn.failed", Some("cancelled"));

    // The external client is killed mid-stream: its session and running turn stay.
    let s3 = start_session(&mut relay);
    let t3 = start_turn(&mut relay, &s3);
    relay.wait_event(&s3, "model.delta", None);
    relay_child.kill().unwrap();
    relay_child.wait().unwrap();
    assert_eq!(turn_status(&mut direct, &s3, &t3), "running");
    let read = direct.ok("agentSession/read", json!({"sessionId": s3}));
    assert_eq!(read["session"]["appId"], "door.test");
    direct.ok(
        "agentSession/turn/cancel",
        json!({"sessionId": s3, "turnId": t3}),
    );
    direct.wait_event(&s3, "turn.failed", Some("cancelled"));

    // A new relay after the kill sees every session.
    let (mut again_child, mut again) = host.stdio();
    again.handshake(None);
    for (s, t) in [(&s1, &t1), (&s2, &t2), (&s3, &t3)] {
        assert_eq!(turn_status(&mut again, s, t), "cancelled");
    }
    // It finds them without being told their ids (`agentSession/list`), whichever client
    // started them, and a title it sets is what the socket client lists.
    let listed = again.ok("agentSession/list", json!({"appId": "door.test"}));
    let mut ids: Vec<&str> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    ids.sort();
    let mut want = vec![s1.as_str(), s2.as_str(), s3.as_str()];
    want.sort();
    assert_eq!(ids, want, "{listed}");
    again.ok(
        "agentSession/update",
        json!({"sessionId": s2, "title": "Named by the relay"}),
    );
    let by_socket = direct.ok("agentSession/list", json!({"appId": "door.test"}));
    assert!(
        by_socket["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["sessionId"] == s2.as_str() && s["title"] == "Named by the relay"),
        "{by_socket}"
    );
    let _ = again_child.kill();
    let _ = again_child.wait();
}

#[test]
fn wrong_or_missing_tokens_are_refused_and_the_connection_closed() {
    let mut host = Host::new();
    host.serve();
    let good = token(&host.data);
    let mut flipped = good.clone().into_bytes();
    flipped[0] = if flipped[0] == b'a' { b'b' } else { b'a' };
    let flipped = String::from_utf8(flipped).unwrap();
    for bad in [None, Some(""), Some("0"), Some(flipped.as_str())] {
        let mut c = Client::socket(&host.data);
        let mut p = json!({"clientInfo": {"name": "intruder"}});
        if let Some(t) = bad {
            p["authToken"] = json!(t);
        }
        let a = c.call("initialize", p);
        assert_eq!(a["error"]["code"], -32004, "{a}");
        assert_eq!(a["error"]["data"]["code"], "appserver.bad_token", "{a}");
        // Closed: nothing more is answered, whatever is sent.
        let _ = c.try_send(&json!({"jsonrpc": "2.0", "id": 9, "method": "agentSession/start", "params": {"appId": "door.test"}}));
        assert!(c.rest().is_empty());
    }
    // Business methods before a handshake are refused as on stdio (and create nothing).
    let mut c = Client::socket(&host.data);
    let a = c.call("agentSession/start", json!({"appId": "door.test"}));
    assert_eq!(a["error"]["code"], -32002, "{a}");
    // The good token still works.
    let mut ok = Client::socket(&host.data);
    ok.handshake(Some(&good));
    let list = ok.ok("capability/list", json!({}));
    assert!(list["capabilities"]
        .as_array()
        .is_some_and(|c| !c.is_empty()));
}

#[test]
fn an_oversized_message_is_refused_and_the_connection_keeps_serving() {
    let mut host = Host::new();
    host.serve();
    let mut c = Client::socket(&host.data);
    c.handshake(Some(&token(&host.data)));
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"agentSession/start\",\"params\":{{\"appId\":\"{}\"}}}}\n",
        "a".repeat(5 * 1024 * 1024)
    );
    c.write.write_all(big.as_bytes()).unwrap();
    let a = c.answer().unwrap();
    assert_eq!(
        a["error"]["code"],
        -32600,
        "{}",
        &a.to_string()[..200.min(a.to_string().len())]
    );
    assert_eq!(a["id"], Value::Null);
    // Still served.
    let s = start_session(&mut c);
    assert!(s.starts_with("session") || !s.is_empty());
}

#[test]
fn a_hundred_connections_get_sixty_four_slots_and_the_rest_a_stable_refusal() {
    let mut host = Host::new();
    host.serve();
    let t = token(&host.data);
    let mut clients: Vec<Client> = (0..100).map(|_| Client::socket(&host.data)).collect();
    let (mut served, mut refused) = (0, 0);
    for c in &mut clients {
        c.next_id += 1;
        let id = c.next_id;
        let _ = c.try_send(&json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
            "params": {"clientInfo": {"name": "many"}, "authToken": t}}));
    }
    for c in &mut clients {
        match c.answer() {
            Some(a) if a.get("result").is_some() => served += 1,
            Some(a) => {
                assert_eq!(a["error"]["code"], -32005, "{a}");
                assert_eq!(a["error"]["data"]["code"], "appserver.connection_limit");
                refused += 1;
            }
            None => panic!("a connection got no answer"),
        }
    }
    assert_eq!((served, refused), (64, 36));
    // Closing them frees the slots.
    drop(clients);
    let end = Instant::now() + WAIT;
    loop {
        let mut c = Client::socket(&host.data);
        let _ = c.try_send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"clientInfo": {"name": "after"}, "authToken": t}}));
        let a = c.answer().unwrap_or(Value::Null);
        if a.get("result").is_some() {
            break;
        }
        assert!(Instant::now() < end, "slots never came back: {a}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_client_that_never_reads_blocks_only_itself() {
    let mut host = Host::new();
    host.serve();
    let t = token(&host.data);
    let mut stuck = Client::socket(&host.data);
    stuck.handshake(Some(&t));
    // Thousands of requests whose answers (a few KiB each) it never reads: its socket buffer
    // and outbound queue fill, and its connection waits.
    let burst: Vec<u8> = (0..20_000)
        .flat_map(|i| {
            let mut l = serde_json::to_vec(
                &json!({"jsonrpc": "2.0", "id": 1000 + i, "method": "capability/list"}),
            )
            .unwrap();
            l.push(b'\n');
            l
        })
        .collect();
    let mut w = stuck.stream.as_ref().unwrap().try_clone().unwrap();
    w.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    let _ = w.write_all(&burst);
    // Meanwhile another client is served at once, turns included.
    let started = Instant::now();
    let mut other = Client::socket(&host.data);
    other.handshake(Some(&t));
    let s = start_session(&mut other);
    start_turn(&mut other, &s);
    other.wait_event(&s, "turn.started", None);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "another client waited {:?}",
        started.elapsed()
    );
    drop(stuck);
}

#[test]
fn another_user_is_refused_by_peer_uid() {
    if rustix_uid() != 0 {
        eprintln!("skipped: needs root to run a client as another user");
        return;
    }
    if Command::new("python3").arg("-c").arg("1").output().is_err() {
        eprintln!("skipped: no python3 to act as the other user's client");
        return;
    }
    let mut host = Host::new();
    host.serve();
    // Loosen what the door relies on first (as a careless admin might): the uid check holds.
    for p in [
        host.tmp.path().to_path_buf(),
        host.data.clone(),
        host.data.join("runtime"),
    ] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(socket(&host.data), std::fs::Permissions::from_mode(0o666)).unwrap();
    let script = format!(
        "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect({:?})\nf=s.makefile('rb')\nsys.stdout.write(f.readline().decode())",
        socket(&host.data).to_str().unwrap()
    );
    use std::os::unix::process::CommandExt;
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&out.stdout);
    let a: Value = serde_json::from_str(line.trim())
        .unwrap_or_else(|e| panic!("{e}: {line:?} {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(a["error"]["code"], -32004, "{a}");
    assert_eq!(a["error"]["data"]["code"], "appserver.peer_uid", "{a}");
}

fn rustix_uid() -> u32 {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .unwrap_or(u32::MAX)
}

#[test]
fn a_crashed_hosts_socket_is_stale_stdio_owns_the_runtime_and_a_new_host_replaces_it() {
    let mut host = Host::new();
    host.serve();
    let mut c = Client::socket(&host.data);
    c.handshake(Some(&token(&host.data)));
    let s = start_session(&mut c);
    // The host crashes: its socket file stays behind.
    let mut serve = host.serve.take().unwrap();
    serve.child.kill().unwrap();
    serve.child.wait().unwrap();
    assert!(socket(&host.data).exists());
    // app-server --stdio finds nobody at the door: it owns the runtime (no runtime.busy) and
    // removes the stale file; the session started through the door is there.
    let (mut child, mut own) = host.stdio();
    own.handshake(None);
    let read = own.ok("agentSession/read", json!({"sessionId": s}));
    assert_eq!(read["session"]["sessionId"], s);
    assert!(!socket(&host.data).exists(), "the stale socket was kept");
    drop(own);
    let _ = child.kill();
    let _ = child.wait();
    // A stale file left again is replaced by the next host.
    std::os::unix::net::UnixListener::bind(socket(&host.data)).unwrap();
    host.serve();
    let mut c = Client::socket(&host.data);
    c.handshake(Some(&token(&host.data)));
    c.ok("agentSession/read", json!({"sessionId": s}));
}

/// `cargo test -p apphost --test app_server_door -- --ignored --nocapture bench`: one call
/// (`agentSession/read`) over the door (relay → socket) vs. over stdio (the runtime in the
/// app-server process), p50/p95 in microseconds.
#[test]
#[ignore]
fn bench_socket_vs_stdio() {
    const N: usize = 2000;
    fn measure(c: &mut Client, s: &str) -> Vec<u128> {
        for _ in 0..100 {
            c.ok("agentSession/read", json!({"sessionId": s}));
        }
        let mut out: Vec<u128> = (0..N)
            .map(|_| {
                let t = Instant::now();
                c.ok("agentSession/read", json!({"sessionId": s}));
                t.elapsed().as_micros()
            })
            .collect();
        out.sort_unstable();
        out
    }
    let pct = |v: &[u128], p: usize| v[(v.len() * p / 100).min(v.len() - 1)];
    let mut host = Host::new();
    // stdio: app-server owns the runtime.
    let (mut child, mut own) = host.stdio();
    own.handshake(None);
    let s = start_session(&mut own);
    let stdio = measure(&mut own, &s);
    drop(own);
    let _ = child.kill();
    let _ = child.wait();
    // socket: through the relay to the host's door, and directly.
    host.serve();
    let (mut child, mut relay) = host.stdio();
    relay.handshake(None);
    let relayed = measure(&mut relay, &s);
    let mut direct = Client::socket(&host.data);
    direct.handshake(Some(&token(&host.data)));
    let socket = measure(&mut direct, &s);
    let _ = child.kill();
    let _ = child.wait();
    for (name, v) in [
        ("stdio (owner)", &stdio),
        ("stdio relay → door", &relayed),
        ("socket (direct)", &socket),
    ] {
        println!(
            "{name}: n={N} min={}us p50={}us p95={}us max={}us",
            v[0],
            pct(v, 50),
            pct(v, 95),
            v[v.len() - 1]
        );
    }
    println!(
        "ratio p50 socket/stdio = {:.2}, relay/stdio = {:.2}",
        pct(&socket, 50) as f64 / pct(&stdio, 50) as f64,
        pct(&relayed, 50) as f64 / pct(&stdio, 50) as f64
    );
}
