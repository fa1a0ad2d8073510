//! HTTP for remote catalogs: reqwest over rustls (ring; the platform's roots), on a
//! current-thread tokio runtime per fetcher.
//!
//! - URLs: `https://` always; plain `http://` only for loopback hosts (`localhost`,
//!   `127.0.0.0/8`, `[::1]`): TUF signatures, not the transport, make the metadata and
//!   packages trustworthy, and tests serve repositories from a loopback server. Redirects are
//!   not followed. `APPHOST_CATALOG_CA_FILE` (PEM) replaces the roots, for local HTTPS tests.
//! - Every read is bounded: metadata by its signed length or its role's limit, a package by
//!   its signed length (one byte more is `catalog.target_too_large`: endless data).
//! - Time: a stall timeout per read (`APPHOST_CATALOG_STALL_TIMEOUT_MS`, 30 s) and a total
//!   bound per file (`APPHOST_CATALOG_TOTAL_TIMEOUT_MS`, 30 min): `catalog.timeout`.
//! - Packages stream into `<data>/catalogs/downloads/<sha256>.part`, hashed while written;
//!   an interrupted download resumes with a `Range` request (up to 3 attempts per command,
//!   and from the same file on the next command).

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::tuf::metadata::TargetFile;
use super::update::Fetch;
use crate::foundation::error::{ErrorCode, HostError, HostResult};

#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub stall: Duration,
    pub total: Duration,
}

impl Timeouts {
    pub fn from_env() -> Timeouts {
        let ms = |name: &str, default: u64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
                .filter(|v| *v > 0)
                .unwrap_or(default)
        };
        Timeouts {
            stall: Duration::from_millis(ms("APPHOST_CATALOG_STALL_TIMEOUT_MS", 30_000)),
            total: Duration::from_millis(ms("APPHOST_CATALOG_TOTAL_TIMEOUT_MS", 1_800_000)),
        }
    }
}

/// Checks a catalog URL: https, or http to a loopback host. Answers it with a trailing `/`.
pub fn check_url(text: &str) -> HostResult<url::Url> {
    let bad = |why: &str| {
        HostError::new(ErrorCode::CatalogInsecureUrl, format!("{text}: {why}")).with("url", text)
    };
    let mut u = url::Url::parse(text).map_err(|e| bad(&format!("not a URL ({e})")))?;
    if u.query().is_some()
        || u.fragment().is_some()
        || !u.username().is_empty()
        || u.password().is_some()
    {
        return Err(bad("a catalog URL has no query, fragment or credentials"));
    }
    let loopback = match u.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match u.scheme() {
        "https" => {}
        "http" if loopback => {}
        "http" => {
            return Err(bad(
                "plain http is allowed for loopback hosts only; use https",
            ))
        }
        _ => {
            return Err(bad(
                "only https (or http on loopback) catalogs are supported",
            ))
        }
    }
    if !u.path().ends_with('/') {
        let p = format!("{}/", u.path());
        u.set_path(&p);
    }
    Ok(u)
}

pub struct HttpFetch {
    base: url::Url,
    client: reqwest::Client,
    rt: tokio::runtime::Runtime,
    timeouts: Timeouts,
}

fn failed(url: &url::Url, why: impl std::fmt::Display) -> HostError {
    HostError::new(
        ErrorCode::CatalogFetchFailed,
        format!("cannot fetch {url}: {why}"),
    )
    .with("url", url.as_str())
}

fn timeout(url: &url::Url, what: &str) -> HostError {
    HostError::new(ErrorCode::CatalogTimeout, format!("{url}: {what}")).with("url", url.as_str())
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// How much and how long a body may be read, and the error past `max` bytes.
struct Limit<'a> {
    max: u64,
    deadline: Instant,
    over: &'a dyn Fn(u64) -> HostError,
}

/// Why a body read stopped early.
enum Stop {
    Error(HostError),
    /// The connection broke: the bytes so far are kept and the download may resume.
    Interrupted(HostError),
}

impl HttpFetch {
    pub fn new(url: &str, timeouts: Timeouts) -> HostResult<HttpFetch> {
        let base = check_url(url)?;
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            .connect_timeout(timeouts.stall)
            .read_timeout(timeouts.stall)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy();
        if let Ok(ca) = std::env::var("APPHOST_CATALOG_CA_FILE") {
            let pem = std::fs::read(&ca).map_err(|e| {
                HostError::io(ErrorCode::SourceIo, "cannot read", Path::new(&ca), e)
            })?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
                HostError::new(
                    ErrorCode::SourceIo,
                    format!("{ca}: not PEM certificates: {e}"),
                )
            })?;
            builder = builder.tls_certs_only(certs);
        }
        let client = builder
            .build()
            .map_err(|e| failed(&base, format!("cannot set up HTTP: {}", error_chain(&e))))?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| HostError::new(ErrorCode::Internal, format!("no tokio runtime: {e}")))?;
        Ok(HttpFetch {
            base,
            client,
            rt,
            timeouts,
        })
    }

    fn url(&self, path: &str) -> HostResult<url::Url> {
        self.base
            .join(path)
            .map_err(|e| failed(&self.base, format!("bad path {path}: {e}")))
    }

    async fn send(
        &self,
        url: &url::Url,
        range_from: u64,
        deadline: Instant,
    ) -> HostResult<reqwest::Response> {
        let mut req = self.client.get(url.clone());
        if range_from > 0 {
            req = req.header(reqwest::header::RANGE, format!("bytes={range_from}-"));
        }
        let wait = self
            .timeouts
            .stall
            .min(deadline.saturating_duration_since(Instant::now()));
        match tokio::time::timeout(wait, req.send()).await {
            Err(_) => Err(timeout(url, "no answer in time")),
            Ok(Err(e)) if e.is_timeout() => Err(timeout(url, "no answer in time")),
            Ok(Err(e)) => Err(failed(url, error_chain(&e))),
            Ok(Ok(r)) => Ok(r),
        }
    }

    /// Reads the body in chunks, handing each to `sink`; more than `max` bytes in all stops.
    async fn read_body(
        &self,
        url: &url::Url,
        resp: &mut reqwest::Response,
        mut have: u64,
        limit: Limit<'_>,
        sink: &mut dyn FnMut(&[u8]) -> HostResult<()>,
    ) -> Result<u64, Stop> {
        let Limit {
            max,
            deadline,
            over,
        } = limit;
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Err(Stop::Error(timeout(
                    url,
                    "the download took longer than its total time bound",
                )));
            }
            let wait = self.timeouts.stall.min(deadline - now);
            let chunk = match tokio::time::timeout(wait, resp.chunk()).await {
                Err(_) => return Err(Stop::Error(timeout(url, "the server stopped sending"))),
                Ok(Err(e)) if e.is_timeout() => {
                    return Err(Stop::Error(timeout(url, "the server stopped sending")))
                }
                Ok(Err(e)) => {
                    return Err(Stop::Interrupted(failed(
                        url,
                        format!("interrupted: {}", error_chain(&e)),
                    )))
                }
                Ok(Ok(None)) => return Ok(have),
                Ok(Ok(Some(c))) => c,
            };
            if have + chunk.len() as u64 > max {
                return Err(Stop::Error(over(max)));
            }
            have += chunk.len() as u64;
            sink(&chunk).map_err(Stop::Error)?;
        }
    }

    /// Downloads a package target into `part` (resuming what it holds), checking the signed
    /// length and SHA-256. On success `part` holds exactly the signed file. `progress` gets
    /// (bytes on disk, signed length) after each chunk (callers throttle) and answers whether
    /// to go on: `false` stops with `catalog.download_cancelled` and removes `part`.
    pub fn download(
        &self,
        path: &str,
        target: &TargetFile,
        part: &Path,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> HostResult<()> {
        let mut last = None;
        for _ in 0..3 {
            match self.download_once(path, target, part, progress) {
                Ok(()) => return Ok(()),
                Err(Stop::Error(e)) => {
                    // Wrong, endless or too slow data is not kept; only a cut connection's
                    // bytes are (resumed by the next attempt or command).
                    let _ = std::fs::remove_file(part);
                    return Err(e);
                }
                Err(Stop::Interrupted(e)) => last = Some(e),
            }
        }
        Err(last
            .unwrap_or_else(|| HostError::new(ErrorCode::CatalogFetchFailed, "download failed")))
    }

    fn download_once(
        &self,
        path: &str,
        target: &TargetFile,
        part: &Path,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<(), Stop> {
        let io = |e: std::io::Error| {
            Stop::Error(HostError::io(ErrorCode::Internal, "cannot write", part, e))
        };
        let url = self.url(&format!("targets/{path}")).map_err(Stop::Error)?;
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(part)
            .map_err(io)?;
        let mut have = file.metadata().map_err(io)?.len();
        if have > target.length {
            file.set_len(0).map_err(io)?;
            have = 0;
        }
        let mut hasher = Sha256::new();
        if have > 0 {
            let mut f = std::fs::File::open(part).map_err(io)?.take(have);
            let mut buf = vec![0u8; 1 << 16];
            loop {
                let n = f.read(&mut buf).map_err(io)?;
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
            }
        }
        let deadline = Instant::now() + self.timeouts.total;
        let length = target.length;
        let result = self.rt.block_on(async {
            if have == length {
                return Ok(have);
            }
            let mut resp = self
                .send(&url, have, deadline)
                .await
                .map_err(Stop::Interrupted)?;
            let status = resp.status();
            if have > 0 && status == reqwest::StatusCode::PARTIAL_CONTENT {
                let range = resp
                    .headers()
                    .get(reqwest::header::CONTENT_RANGE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("");
                if !range.starts_with(&format!("bytes {have}-")) {
                    return Err(Stop::Error(failed(
                        &url,
                        format!("Content-Range {range:?} does not resume at {have}"),
                    )));
                }
            } else if status.is_success() {
                // A whole file (the server ignored the Range): start over.
                file.set_len(0).map_err(io)?;
                have = 0;
                hasher = Sha256::new();
            } else {
                return Err(Stop::Error(failed(&url, format!("HTTP {status}"))));
            }
            let over = |max: u64| {
                HostError::new(
                    ErrorCode::CatalogTargetTooLarge,
                    format!("{path}: the server sent more than the {max} bytes the catalog signed"),
                )
                .with("path", path)
            };
            let cancelled = || {
                HostError::new(
                    ErrorCode::CatalogDownloadCancelled,
                    format!("{path}: the download was cancelled"),
                )
                .with("path", path)
            };
            let mut written = have;
            if !progress(written, length) {
                return Err(Stop::Error(cancelled()));
            }
            let mut sink = |chunk: &[u8]| -> HostResult<()> {
                hasher.update(chunk);
                file.write_all(chunk)
                    .map_err(|e| HostError::io(ErrorCode::Internal, "cannot write", part, e))?;
                written += chunk.len() as u64;
                if progress(written.min(length), length) {
                    Ok(())
                } else {
                    Err(cancelled())
                }
            };
            self.read_body(
                &url,
                &mut resp,
                have,
                Limit {
                    max: length,
                    deadline,
                    over: &over,
                },
                &mut sink,
            )
            .await
        });
        let got = result?;
        // No fsync: the download is a throwaway that the install reads at once and removes; it
        // is believed only through the hash checked here and the install pipeline's own
        // hashes. After a crash a `.part` whose tail was lost fails this check and is fetched
        // again. (Flushing 200 MB was most of the catalog path's extra cost: docs/benchmarks.md.)
        let sha = hex::encode(hasher.finalize());
        if got != length || !sha.eq_ignore_ascii_case(target.sha256()) {
            return Err(Stop::Error(
                HostError::new(
                    ErrorCode::CatalogTargetMismatch,
                    format!("{path} is not the package the catalog signed"),
                )
                .with("path", path)
                .with("length", got)
                .with("signedLength", length)
                .with("sha256", sha)
                .with("signedSha256", target.sha256()),
            ));
        }
        Ok(())
    }
}

impl Fetch for HttpFetch {
    fn fetch(&self, path: &str, max: u64) -> HostResult<Option<Vec<u8>>> {
        let url = self.url(path)?;
        let deadline = Instant::now() + self.timeouts.total;
        self.rt.block_on(async {
            let mut resp = self.send(&url, 0, deadline).await?;
            let status = resp.status();
            if status == reqwest::StatusCode::NOT_FOUND {
                return Ok(None);
            }
            if !status.is_success() {
                return Err(failed(&url, format!("HTTP {status}")));
            }
            let over = |max: u64| {
                HostError::new(
                    ErrorCode::CatalogMetadataTooLarge,
                    format!("{path}: more than {max} bytes"),
                )
                .with("path", path)
                .with("limit", max)
            };
            if resp.content_length().is_some_and(|n| n > max) {
                return Err(over(max));
            }
            let mut body = Vec::new();
            let mut sink = |c: &[u8]| -> HostResult<()> {
                body.extend_from_slice(c);
                Ok(())
            };
            match self
                .read_body(
                    &url,
                    &mut resp,
                    0,
                    Limit {
                        max,
                        deadline,
                        over: &over,
                    },
                    &mut sink,
                )
                .await
            {
                Ok(_) => Ok(Some(body)),
                Err(Stop::Error(e)) | Err(Stop::Interrupted(e)) => Err(e),
            }
        })
    }
}
