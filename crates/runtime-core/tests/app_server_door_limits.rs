//! The door's bounds with small limits (`app_server::door`): a client that never completes the
//! handshake is closed with `-32005` `appserver.handshake_timeout`; the connection cap refuses
//! one more with `-32005` `appserver.connection_limit` and frees its slot when a client leaves;
//! dropping the door removes its socket and token files.

use std::time::Duration;

use runtime_core::app_server::door::{self, DoorLimits};
use runtime_core::runtime::{Runtime, RuntimeConfig};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

fn limits(max_connections: usize) -> DoorLimits {
    DoorLimits {
        max_connections,
        handshake_timeout: Duration::from_millis(300),
        ..DoorLimits::default()
    }
}

async fn next_line(s: &mut BufReader<UnixStream>) -> Option<Value> {
    let mut line = String::new();
    let n = tokio::time::timeout(Duration::from_secs(10), s.read_line(&mut line))
        .await
        .expect("an answer or a close in time")
        .unwrap();
    (n > 0).then(|| serde_json::from_str(&line).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_client_is_closed_and_the_cap_refuses_one_more() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = Runtime::open(RuntimeConfig::new(tmp.path()), None).unwrap();
    let d = door::open(
        rt.clone(),
        &tokio::runtime::Handle::current(),
        limits(2),
        None,
    )
    .unwrap();
    let sock = door::socket_path(tmp.path());
    let token = std::fs::read_to_string(door::token_path(tmp.path())).unwrap();
    assert_eq!(d.socket(), sock);

    // Two slots: both taken by silent clients, a third is refused at once.
    let mut a = BufReader::new(UnixStream::connect(&sock).await.unwrap());
    let mut b = BufReader::new(UnixStream::connect(&sock).await.unwrap());
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut c = BufReader::new(UnixStream::connect(&sock).await.unwrap());
    let refusal = next_line(&mut c).await.unwrap();
    assert_eq!(refusal["error"]["code"], -32005, "{refusal}");
    assert_eq!(
        refusal["error"]["data"]["code"],
        "appserver.connection_limit"
    );
    assert!(
        next_line(&mut c).await.is_none(),
        "closed after the refusal"
    );

    // The silent ones are closed after the handshake timeout, with the stable code.
    for s in [&mut a, &mut b] {
        let e = next_line(s).await.unwrap();
        assert_eq!(e["error"]["code"], -32005, "{e}");
        assert_eq!(e["error"]["data"]["code"], "appserver.handshake_timeout");
        assert!(next_line(s).await.is_none());
    }

    // Their slots are free again: a client with the token completes the handshake.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut ok = BufReader::new(UnixStream::connect(&sock).await.unwrap());
    let init = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{{\"clientInfo\":{{\"name\":\"t\"}},\"authToken\":\"{token}\"}}}}\n{{\"jsonrpc\":\"2.0\",\"method\":\"initialized\"}}\n"
    );
    ok.get_mut().write_all(init.as_bytes()).await.unwrap();
    let r = next_line(&mut ok).await.unwrap();
    assert_eq!(
        r["result"]["serverInfo"]["protocolVersion"], "appserver.v0",
        "{r}"
    );
    // Past the handshake the timeout no longer applies.
    tokio::time::sleep(Duration::from_millis(600)).await;
    ok.get_mut()
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"capability/list\"}\n")
        .await
        .unwrap();
    let r = next_line(&mut ok).await.unwrap();
    assert_eq!(r["id"], 2, "{r}");

    // Closing the door removes its files.
    drop(d);
    assert!(!sock.exists());
    assert!(!door::token_path(tmp.path()).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_door_is_never_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = Runtime::open(RuntimeConfig::new(tmp.path()), None).unwrap();
    let h = tokio::runtime::Handle::current();
    let first = door::open(rt.clone(), &h, limits(4), None).unwrap();
    let token = std::fs::read_to_string(door::token_path(tmp.path())).unwrap();
    // A second door on the same directory while the first answers: refused, files untouched.
    let second = door::open(rt.clone(), &h, limits(4), None);
    assert_eq!(
        second.err().map(|e| e.kind()),
        Some(std::io::ErrorKind::AddrInUse)
    );
    assert!(first.socket().exists());
    assert_eq!(
        std::fs::read_to_string(door::token_path(tmp.path())).unwrap(),
        token,
        "the live door's token was replaced"
    );
}
