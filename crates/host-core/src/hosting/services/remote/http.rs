//! One JSON-RPC POST to a remote service's declared endpoint, made by the host: reqwest over
//! rustls (ring), no proxy, no cookies, no connection kept. The client (building one loads the
//! TLS roots: 17-56 ms measured) and a one-worker tokio runtime are made once per process; a
//! call is spawned there and the caller waits on a channel, so a caller on a tokio worker never
//! nests runtimes.
//!
//! Refusals, each a stable `service.*` code: a redirect (`service.remote_redirect`: never
//! followed, so only the declared origin is ever contacted), a status outside 2xx
//! (`service.http_status`), a `Content-Type` other than `application/json`
//! (`service.remote_content_type`), a body over the cap, announced or streamed
//! (`service.remote_too_large`), no full answer before the call's deadline, however slowly it
//! trickles (`service.timeout`), a connection or TLS failure (`service.remote_unreachable`).
//! The auth value is a sensitive header: it is never in a message, an error or the audit.
//!
//! Only public addresses are reached (`install/remote_address.rs`): an IP-literal host is
//! checked before anything is sent, a name by the client's resolver (`resolve.rs`: resolved
//! once, every address checked, the connection made to the checked ones), each refusal
//! `service.remote_address_refused`. A caller's cancel (a frame's `capability:cancel`, a
//! workflow run's cancel) aborts the request in flight: its task is dropped, and with it the
//! connection (`service.cancelled`), instead of running to the deadline.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use service_sandbox::cancel::{CancelToken, CANCEL_POLL};
use zeroize::Zeroizing;

use crate::hosting::services::ServiceFailure;
use crate::install::remote_address;

/// Largest response body read (the same cap as a local service's channel line).
pub const MAX_RESPONSE_BYTES: usize = 1 << 20;

/// The request: everything owned, so it can move to the request's thread.
pub struct Post {
    pub url: url::Url,
    pub body: Vec<u8>,
    /// `(header name, value)` the host adds (`Authorization: Bearer …` or the declared header).
    pub auth: Option<(String, Zeroizing<String>)>,
    pub timeout: Duration,
    pub max_body: usize,
}

fn fail(code: &'static str, message: impl Into<String>) -> ServiceFailure {
    ServiceFailure::new(code, message)
}

fn retryable(code: &'static str, message: impl Into<String>) -> ServiceFailure {
    let mut f = fail(code, message);
    f.retryable = true;
    f
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s.chars().take(512).collect()
}

/// The process's client and the runtime its requests run on.
struct Shared {
    rt: tokio::runtime::Runtime,
    client: reqwest::Client,
}

fn shared() -> Result<&'static Shared, ServiceFailure> {
    static SHARED: OnceLock<Result<Shared, String>> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("apphost-remote-calls")
                .enable_all()
                .build()
                .map_err(|e| format!("no tokio runtime: {e}"))?;
            // Redirects are never followed; the scheme was checked with the declaration (https,
            // or loopback http in debug builds) and is re-checked per call by the caller.
            let client = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .dns_resolver(std::sync::Arc::new(
                    super::resolve::CheckedResolver::system(),
                ))
                .pool_max_idle_per_host(0)
                .connect_timeout(Duration::from_secs(10))
                .user_agent(concat!("AppHost/", env!("CARGO_PKG_VERSION")))
                .build()
                .map_err(|e| error_chain(&e))?;
            Ok(Shared { rt, client })
        })
        .as_ref()
        .map_err(|e| fail("service.start_failed", e.clone()))
}

/// POSTs `p` and waits for the whole answer's body (at most `p.timeout`), or until `cancel`:
/// then the request is aborted (its connection dropped) and the call is `service.cancelled`.
pub fn post(p: Post, cancel: &CancelToken) -> Result<Vec<u8>, ServiceFailure> {
    remote_address::check_url(&p.url).map_err(|r| fail(remote_address::CODE, r.to_string()))?;
    if cancel.is_cancelled() {
        return Err(cancelled());
    }
    let shared = shared()?;
    let timeout = p.timeout;
    let deadline = Instant::now() + timeout;
    let (tx, rx) = std::sync::mpsc::channel();
    let task = shared.rt.spawn(async move {
        let out = match tokio::time::timeout_at(deadline.into(), exchange(&shared.client, p)).await
        {
            Ok(out) => out,
            Err(_) => Err(retryable(
                "service.timeout",
                "the remote service did not answer in time",
            )),
        };
        let _ = tx.send(out);
    });
    let give_up = deadline + Duration::from_secs(2);
    loop {
        match rx.recv_timeout(CANCEL_POLL) {
            Ok(out) => return out,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                if !cancel.is_cancelled() && Instant::now() < give_up => {}
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if cancel.is_cancelled() => {
                // Dropping the task drops the request and its connection.
                task.abort();
                return Err(cancelled());
            }
            Err(_) => {
                task.abort();
                return Err(retryable(
                    "service.timeout",
                    "the remote service did not answer in time",
                ));
            }
        }
    }
}

fn cancelled() -> ServiceFailure {
    fail("service.cancelled", "the caller cancelled the call")
}

async fn exchange(client: &reqwest::Client, p: Post) -> Result<Vec<u8>, ServiceFailure> {
    let mut req = client
        .post(p.url.clone())
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(reqwest::header::ACCEPT, "application/json")
        .body(p.body);
    if let Some((name, value)) = &p.auth {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| fail("service.invalid_spec", "the auth header name is not valid"))?;
        let mut value = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
            fail(
                "service.remote_secret_missing",
                "the secret's value cannot be sent in a header (it holds control characters)",
            )
        })?;
        value.set_sensitive(true);
        req = req.header(name, value);
    }
    let mut resp = req.send().await.map_err(|e| {
        if let Some(refused) = super::resolve::refused_in(&e) {
            fail(remote_address::CODE, refused.to_string())
        } else if e.is_timeout() {
            retryable(
                "service.timeout",
                "the remote service did not answer in time",
            )
        } else {
            retryable(
                "service.remote_unreachable",
                format!("cannot reach {}: {}", origin(&p.url), error_chain(&e)),
            )
        }
    })?;
    let status = resp.status();
    if status.is_redirection() {
        let to = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .chars()
            .take(200)
            .collect::<String>();
        return Err(fail(
            "service.remote_redirect",
            format!(
                "the remote service answered {status} to {to:?}: redirects are not followed (only {} is called)",
                origin(&p.url)
            ),
        ));
    }
    if !status.is_success() {
        return Err(fail(
            "service.http_status",
            format!("the remote service answered HTTP {}", status.as_u16()),
        ));
    }
    let media = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
    if media.as_deref() != Some("application/json") {
        return Err(fail(
            "service.remote_content_type",
            format!(
                "the remote service answered Content-Type {}, not application/json",
                media.as_deref().unwrap_or("(none)")
            ),
        ));
    }
    let too_large = || {
        fail(
            "service.remote_too_large",
            format!("the remote service's answer is over {} bytes", p.max_body),
        )
    };
    if resp.content_length().is_some_and(|n| n > p.max_body as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    loop {
        let chunk = resp.chunk().await.map_err(|e| {
            if e.is_timeout() {
                retryable(
                    "service.timeout",
                    "the remote service did not answer in time",
                )
            } else {
                retryable(
                    "service.remote_unreachable",
                    format!("the answer was cut: {}", error_chain(&e)),
                )
            }
        })?;
        let Some(chunk) = chunk else { break };
        if body.len() + chunk.len() > p.max_body {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn origin(u: &url::Url) -> String {
    u.origin().ascii_serialization()
}
