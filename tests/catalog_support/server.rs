//! A loopback HTTP/1.1 server for catalog tests: serves files from memory (with `Range`), or
//! misbehaves on purpose per path (HTTP errors, endless or stalled bodies, a cut connection).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Debug)]
pub enum Reply {
    File(Vec<u8>),
    Status(u16),
    /// 200 without a length, bytes until the client hangs up.
    Endless,
    /// Headers (with a length), then nothing.
    Stall,
    /// One byte every 100 ms.
    Drip,
    /// The file, but the first request is cut after this many bytes.
    CutOnce(Vec<u8>, usize),
}

#[derive(Default)]
struct Shared {
    routes: BTreeMap<String, Reply>,
    /// (path, Range header) of every request.
    log: Vec<(String, Option<String>)>,
}

#[derive(Clone)]
pub struct Server {
    pub url: String,
    shared: Arc<Mutex<Shared>>,
}

impl Server {
    pub fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/repo/", listener.local_addr().unwrap());
        let shared = Arc::new(Mutex::new(Shared::default()));
        let s2 = shared.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let shared = s2.clone();
                std::thread::spawn(move || {
                    let _ = handle(conn, &shared);
                });
            }
        });
        Server { url, shared }
    }

    pub fn set(&self, path: &str, reply: Reply) {
        self.shared
            .lock()
            .unwrap()
            .routes
            .insert(format!("/repo/{path}"), reply);
    }

    pub fn remove(&self, path: &str) {
        self.shared
            .lock()
            .unwrap()
            .routes
            .remove(&format!("/repo/{path}"));
    }

    /// Serves every file under `dir` (replacing what was served).
    pub fn serve_dir(&self, dir: &std::path::Path) {
        let mut s = self.shared.lock().unwrap();
        s.routes.clear();
        for (rel, bytes) in crate::common::files_under(dir) {
            s.routes.insert(format!("/repo/{rel}"), Reply::File(bytes));
        }
    }

    pub fn log(&self) -> Vec<(String, Option<String>)> {
        self.shared.lock().unwrap().log.clone()
    }
}

fn handle(conn: TcpStream, shared: &Arc<Mutex<Shared>>) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut out = conn;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
        let mut range = None;
        loop {
            let mut h = String::new();
            reader.read_line(&mut h)?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("range") {
                    range = Some(v.trim().to_owned());
                }
            }
        }
        let reply = {
            let mut s = shared.lock().unwrap();
            s.log.push((path.clone(), range.clone()));
            let r = s.routes.get(&path).cloned();
            if let Some(Reply::CutOnce(bytes, _)) = &r {
                // Only the first request is cut.
                s.routes.insert(path.clone(), Reply::File(bytes.clone()));
            }
            r
        };
        match reply {
            None => status(&mut out, 404)?,
            Some(Reply::Status(code)) => status(&mut out, code)?,
            Some(Reply::File(bytes)) => file(&mut out, &bytes, range.as_deref())?,
            Some(Reply::CutOnce(bytes, n)) => {
                write!(
                    out,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
                    bytes.len()
                )?;
                out.write_all(&bytes[..n])?;
                out.flush()?;
                return Ok(()); // hang up mid-body
            }
            Some(Reply::Endless) => {
                write!(out, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")?;
                let chunk = vec![b'x'; 64 * 1024];
                loop {
                    out.write_all(&chunk)?;
                }
            }
            Some(Reply::Stall) => {
                write!(out, "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")?;
                out.flush()?;
                std::thread::sleep(Duration::from_secs(30));
                return Ok(());
            }
            Some(Reply::Drip) => {
                write!(out, "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")?;
                for _ in 0..600 {
                    out.write_all(b"x")?;
                    out.flush()?;
                    std::thread::sleep(Duration::from_millis(100));
                }
                return Ok(());
            }
        }
    }
}

fn status(out: &mut TcpStream, code: u16) -> std::io::Result<()> {
    let body = format!("status {code}");
    write!(
        out,
        "HTTP/1.1 {code} X\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    out.flush()
}

fn file(out: &mut TcpStream, bytes: &[u8], range: Option<&str>) -> std::io::Result<()> {
    let from = range
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.strip_suffix('-'))
        .and_then(|n| n.parse::<usize>().ok());
    match from {
        Some(n) if n < bytes.len() => {
            write!(
                out,
                "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {n}-{}/{}\r\nContent-Length: {}\r\n\r\n",
                bytes.len() - 1,
                bytes.len(),
                bytes.len() - n
            )?;
            out.write_all(&bytes[n..])?;
        }
        _ => {
            write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
                bytes.len()
            )?;
            out.write_all(bytes)?;
        }
    }
    out.flush()
}
