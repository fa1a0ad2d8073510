//! A raw HTTP/1.1 client for `apphost serve`'s integration tests (`tests/serve_http.rs`,
//! `tests/serve_attacks.rs`): every header an attacker controls is written by hand.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::{apphost_in, describe};

pub struct Served {
    pub child: Child,
    pub _tmp: tempfile::TempDir,
    pub port: u16,
    pub token: String,
    pub stderr: PathBuf,
}

pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "{} not JSON ({e}): {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }
    pub fn code(&self) -> String {
        self.json()["code"].as_str().unwrap_or_default().to_owned()
    }
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn start(install: &[&str]) -> Served {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    for pkg in install {
        let out = apphost_in(tmp.path(), &data)
            .args(["install", "--yes", "--sideload"])
            .arg(repo().join(pkg))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", describe(&out));
    }
    let stderr = tmp.path().join("serve.stderr");
    let mut child = apphost_in(tmp.path(), &data)
        .arg("serve")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let first: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    assert_eq!(first["pid"], child.id(), "{first}");
    let port = u16::try_from(first["port"].as_u64().unwrap()).unwrap();
    let url = first["url"].as_str().unwrap();
    let prefix = format!("http://127.0.0.1:{port}/?token=");
    let token = url
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{url}"))
        .to_owned();
    assert_eq!(token.len(), 64);
    Served {
        child,
        _tmp: tmp,
        port,
        token,
        stderr,
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    pub fn ui(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
    pub fn app_host(&self, label: &str) -> String {
        format!("{label}.localhost:{}", self.port)
    }

    /// Sends one request (raw head lines + body) and reads the whole answer.
    pub fn raw(&self, head: &str, body: &[u8]) -> Reply {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut req = head.replace('\n', "\r\n");
        req.push_str("Connection: close\r\n\r\n");
        s.write_all(req.as_bytes()).unwrap();
        let _ = s.write_all(body);
        let mut bytes = Vec::new();
        let _ = s.read_to_end(&mut bytes);
        parse(&bytes)
    }

    pub fn get(&self, host: &str, path: &str, cookie: Option<&str>) -> Reply {
        let mut head = format!("GET {path} HTTP/1.1\nHost: {host}\n");
        if let Some(c) = cookie {
            head.push_str(&format!("Cookie: {c}\n"));
        }
        self.raw(&head, b"")
    }

    /// A POST; `auth` is raw header lines (`Cookie: …\n`, `X-AppHost-Session: …\n`).
    pub fn post(
        &self,
        host: &str,
        origin: Option<&str>,
        auth: Option<&str>,
        path: &str,
        ctype: &str,
        body: &[u8],
    ) -> Reply {
        let mut head = format!(
            "POST {path} HTTP/1.1\nHost: {host}\nContent-Type: {ctype}\nContent-Length: {}\n",
            body.len()
        );
        if let Some(o) = origin {
            head.push_str(&format!("Origin: {o}\n"));
        }
        if let Some(a) = auth {
            head.push_str(a);
        }
        self.raw(&head, body)
    }

    /// Signs in with the launch token: the cookie it sets and the secret its document carries.
    pub fn sign_in(&self) -> Login {
        self.sign_in_at("/")
    }

    pub fn sign_in_at(&self, path: &str) -> Login {
        let r = self.get(&self.ui(), &format!("{path}?token={}", self.token), None);
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        let set = r.header("set-cookie").unwrap().to_owned();
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict"),
            "{set}"
        );
        assert!(
            !set.to_ascii_lowercase().contains("domain="),
            "host-only cookie: {set}"
        );
        assert_eq!(r.header("cache-control"), Some("no-store"));
        let secret = session_meta(&r.body)
            .unwrap_or_else(|| panic!("no session meta in {}", String::from_utf8_lossy(&r.body)));
        assert_eq!(secret.len(), 64);
        Login {
            cookie: set.split(';').next().unwrap().to_owned(),
            secret,
        }
    }

    /// A host API call as the host UI makes it.
    pub fn api(&self, login: &Login, command: &str, args: Value) -> Reply {
        self.post(
            &self.ui(),
            Some(&self.origin()),
            Some(&login.headers()),
            &format!("/api/{command}"),
            "application/json",
            args.to_string().as_bytes(),
        )
    }

    pub fn ok(&self, login: &Login, command: &str, args: Value) -> Value {
        let r = self.api(login, command, args);
        assert_eq!(
            r.status,
            200,
            "{command}: {}",
            String::from_utf8_lossy(&r.body)
        );
        r.json()
    }
}

/// What signing in gave one browser.
#[derive(Debug, Clone)]
pub struct Login {
    /// `name=value` of the session cookie.
    pub cookie: String,
    /// The API's session secret (`X-AppHost-Session`).
    pub secret: String,
}

impl Login {
    /// The header lines of an API call as the host UI makes it.
    pub fn headers(&self) -> String {
        format!(
            "Cookie: {}\nX-AppHost-Session: {}\n",
            self.cookie, self.secret
        )
    }

    /// Only the cookie (what any other loopback port receives).
    pub fn cookie_only(&self) -> String {
        format!("Cookie: {}\n", self.cookie)
    }
}

/// The `content` of `<meta name="apphost-session" …>` in a document, if any.
pub fn session_meta(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let at = text.find("name=\"apphost-session\" content=\"")?;
    let rest = &text[at + "name=\"apphost-session\" content=\"".len()..];
    Some(rest[..rest.find('"')?].to_owned())
}

pub fn parse(bytes: &[u8]) -> Reply {
    let split = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no head in {:?}", String::from_utf8_lossy(bytes)));
    let head = std::str::from_utf8(&bytes[..split]).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Reply {
        status,
        headers,
        body: bytes[split + 4..].to_vec(),
    }
}

pub fn executions(s: &Served, login: &Login) -> u64 {
    s.ok(login, "bridge_diagnostics", serde_json::json!({}))["executions"]
        .as_u64()
        .unwrap()
}
