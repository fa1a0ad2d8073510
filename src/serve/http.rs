//! One request of `apphost serve`, routed by its `Host` header:
//!
//! - the host UI (`127.0.0.1:<port>`): the launch-token exchange, the embedded UI files, deep
//!   links `/apps/<app>/<entry>`, and `POST /api/<command>` (the command layer,
//!   `host_core::api`, on the blocking pool);
//! - an app origin (`<label>.localhost:<port>`): that app's files through `Session::serve`
//!   (the desktop's file server, CSP with `frame-ancestors` = the host UI origin); GET and HEAD
//!   only, never the API, never a cookie, never the session secret;
//! - any other `Host`: refused (DNS rebinding).
//!
//! # The session: a header secret, not the cookie
//!
//! Browsers do not separate cookies by port: the session cookie set by `127.0.0.1:<port>` is also
//! sent to every other server on `127.0.0.1`, and a page served from any loopback port can set or
//! overwrite a cookie of that name (`path=/api` shadows it, a `Set-Cookie` with `Path=/` replaces
//! it). `SameSite` does not help either: ports do not make another site. A `__Host-` prefix does
//! not help: Chromium (156) accepts one from `http://127.0.0.1`, but sends it to other ports too
//! and lets another port's server overwrite it. So the cookie can be neither what authorizes an API call nor something
//! whose loss logs the UI out.
//!
//! What authorizes `POST /api/<command>` is the per-session secret in the `X-AppHost-Session`
//! header (with `Origin` = the host UI's origin). The secret exists only in the one answer to the
//! launch-token exchange (`GET <path>?token=T`, which serves the UI document for `<path>` with
//! `<meta name="apphost-session">`); the page moves it to its origin's `localStorage` and removes
//! the token from the address bar. No other origin can read that storage: not another loopback
//! port (origins include the port), not an app frame on `<label>.localhost:<port>`. Reloads,
//! deep links and a second tab of the same origin read it back; the next `apphost serve` prints a
//! new token and makes new secrets, so a stale stored one is just refused. (The alternative, the
//! host UI on a per-launch unguessable host name, keeps a cookie as the credential and relies on
//! the name staying secret, though it sits in the address bar, the history and every `Host`
//! header; and a page on `<name>.localhost:<other port>` would get the cookie again.)
//!
//! The HttpOnly cookie only gates the UI's documents (navigations cannot carry a header): any
//! valid cookie among several of that name wins, so a planted junk one does not lock the page
//! out, and every authorized API answer sets it again if the request did not carry it, so an
//! overwritten one is repaired while a page is open.
//!
//! Every refusal is a `HostError` JSON body with a stable code (`api.*`, `docs/cli.md`).

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use host_core::api::{self, Session};
use host_core::foundation::error::{ErrorClass, ErrorCode, HostError};
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;

use super::assets;
use super::guard::{cookies, query_param, same_secret, HostKind, Hosts};

/// Largest JSON body of an API call (a relayed bridge message is far smaller).
pub const MAX_JSON_BODY: usize = 4 * 1024 * 1024;
/// Time a client has to send a request body.
pub const BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
/// The request header that carries the session secret of API calls.
pub const SESSION_HEADER: &str = "x-apphost-session";
/// The `<meta name=…>` of the exchange's document that hands the page the session secret.
pub const SESSION_META: &str = "apphost-session";
/// `POST` here with the session secret: the session cookie is set again (a tab whose cookie
/// another loopback port overwrote).
pub const RESTORE_PATH: &str = "/session/cookie";
/// The script of the "not signed in" page that does so (`ui-host/public/session-restore.js`).
pub const RESTORE_SCRIPT: &str = "/session-restore.js";

/// The server's shared state.
pub struct Server {
    pub session: Arc<Session>,
    pub hosts: Hosts,
    /// The launch token printed in the URL; `None` once exchanged (it works once).
    launch_token: Mutex<Option<String>>,
    /// The session cookie's value, handed out in exchange for the launch token (UI documents).
    cookie_secret: String,
    cookie_name: String,
    /// The API's session secret (`X-AppHost-Session`), handed out in the same answer only.
    api_secret: String,
}

type Answer = Response<Full<Bytes>>;

impl Server {
    pub fn new(
        session: Arc<Session>,
        hosts: Hosts,
        launch_token: String,
        cookie_secret: String,
        api_secret: String,
    ) -> Self {
        // Cookies are not separated by port: one name per port keeps two servers apart.
        let cookie_name = format!("apphost_{}", hosts.port);
        Server {
            session,
            hosts,
            launch_token: Mutex::new(Some(launch_token)),
            cookie_secret,
            cookie_name,
            api_secret,
        }
    }

    /// Whether any `Cookie` header carries a valid session cookie (a junk or planted cookie of
    /// the same name beside it changes nothing).
    fn has_cookie(&self, req: &Request<Incoming>) -> bool {
        req.headers().get_all(header::COOKIE).iter().any(|h| {
            cookies(h.as_bytes(), &self.cookie_name)
                .any(|value| same_secret(value, self.cookie_secret.as_bytes()))
        })
    }

    /// Whether the request carries the API's session secret (exactly one such header).
    fn has_api_secret(&self, req: &Request<Incoming>) -> bool {
        let mut values = req.headers().get_all(SESSION_HEADER).iter();
        match (values.next(), values.next()) {
            (Some(value), None) => same_secret(value.as_bytes(), self.api_secret.as_bytes()),
            _ => false,
        }
    }

    fn session_cookie(&self) -> String {
        format!(
            "{}={}; HttpOnly; SameSite=Strict; Path=/",
            self.cookie_name, self.cookie_secret
        )
    }

    /// Takes the launch token if `offered` is it (once).
    fn exchange(&self, offered: &str) -> bool {
        let Ok(mut slot) = self.launch_token.lock() else {
            return false;
        };
        match slot.as_deref() {
            Some(token) if same_secret(token.as_bytes(), offered.as_bytes()) => {
                *slot = None;
                true
            }
            _ => false,
        }
    }
}

/// Answers one request (never fails: every problem is an HTTP answer).
pub async fn handle(server: Arc<Server>, req: Request<Incoming>) -> Result<Answer, Infallible> {
    let host = req.headers().get(header::HOST).map(HeaderValue::as_bytes);
    Ok(match server.hosts.classify(host) {
        HostKind::HostUi => host_ui(server, req).await,
        HostKind::App(label) => app_file(server, label, req).await,
        HostKind::Foreign => refuse(
            StatusCode::FORBIDDEN,
            ErrorCode::ApiForbidden,
            "this server answers only its own host names",
            "host",
        ),
    })
}

async fn host_ui(server: Arc<Server>, req: Request<Incoming>) -> Answer {
    let path = req.uri().path().to_owned();
    if let Some(command) = path.strip_prefix("/api/") {
        let command = command.to_owned();
        return api_call(server, command, req).await;
    }
    if path == RESTORE_PATH {
        return restore_cookie(&server, &req);
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            ErrorCode::ApiBadRequest,
            "only GET and HEAD outside /api/",
            "method",
        );
    }
    let head = req.method() == Method::HEAD;
    if let Some(offered) = query_param(req.uri().query(), "token") {
        if head {
            // No body to carry the secret: do not spend the token on it.
            return refuse(
                StatusCode::METHOD_NOT_ALLOWED,
                ErrorCode::ApiBadRequest,
                "the launch link is opened with GET",
                "method",
            );
        }
        return exchange(&server, offered, &path, wants_json(&req));
    }
    if path == RESTORE_SCRIPT {
        // Public like every UI file's code; it is what a tab without its cookie runs.
        if let Some(bytes) = assets::file(&RESTORE_SCRIPT[1..]) {
            return ui_file(RESTORE_SCRIPT, bytes.to_vec(), &server.hosts, head);
        }
    }
    if !server.has_cookie(&req) {
        return not_signed_in();
    }
    let found = match path.as_str() {
        "/" | "/index.html" => assets::file("index.html").map(|b| ("index.html", b.to_vec())),
        p if p.starts_with("/apps/") => assets::index_for_deep_link().map(|b| ("index.html", b)),
        p => {
            let rel = &p[1..];
            assets::file(rel).map(|b| (rel, b.to_vec()))
        }
    };
    match found {
        Some((name, bytes)) => ui_file(name, bytes, &server.hosts, head),
        None => refuse(
            StatusCode::NOT_FOUND,
            ErrorCode::ApiNotFound,
            "no such file",
            "path",
        ),
    }
}

/// `GET <path>?token=…`: a valid launch token (once) is answered with the UI document for
/// `<path>` carrying the API's session secret in `<meta name="apphost-session">`, and sets the
/// session cookie (HttpOnly, SameSite=Strict, this host only). The page keeps the secret and
/// takes the token out of its address (`ui-host/src/transport.ts`).
fn exchange(server: &Server, offered: &str, path: &str, api_client: bool) -> Answer {
    if !server.exchange(offered) {
        if !api_client {
            return link_used();
        }
        return refuse(
            StatusCode::UNAUTHORIZED,
            ErrorCode::ApiUnauthorized,
            "this launch link is not valid (each one works once): start `apphost serve` again",
            "token",
        );
    }
    let index = if path.starts_with("/apps/") {
        assets::index_for_deep_link()
    } else {
        assets::file("index.html").map(<[u8]>::to_vec)
    };
    let Some(index) = index.and_then(|b| String::from_utf8(b).ok()) else {
        return refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Internal,
            "the host UI has no index.html",
            "ui",
        );
    };
    let document = with_session_meta(&index, &server.api_secret);
    let mut answer = ui_file("index.html", document.into_bytes(), &server.hosts, false);
    if let Ok(v) = HeaderValue::from_str(&server.session_cookie()) {
        answer.headers_mut().insert(header::SET_COOKIE, v);
    }
    answer
}

/// `index` with `<meta name="apphost-session" content="<secret>">` first in its `<head>`.
pub fn with_session_meta(index: &str, secret: &str) -> String {
    let meta = format!("\n    <meta name=\"{SESSION_META}\" content=\"{secret}\" />");
    match index.find("<head>") {
        Some(at) => {
            let (head, rest) = index.split_at(at + "<head>".len());
            format!("{head}{meta}{rest}")
        }
        None => format!("{meta}{index}"),
    }
}

/// `POST /session/cookie`: the caller proves the session with the secret (and the host UI's
/// `Origin`) and gets the cookie again. Grants nothing the secret does not already grant.
fn restore_cookie(server: &Server, req: &Request<Incoming>) -> Answer {
    if let Some(refusal) = api_refusal(server, req) {
        return refusal;
    }
    let mut answer = Response::new(Full::new(Bytes::new()));
    *answer.status_mut() = StatusCode::NO_CONTENT;
    let h = answer.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&server.session_cookie()) {
        h.insert(header::SET_COOKIE, v);
    }
    security_headers(h);
    answer
}

/// Why an API-like request (`/api/`, `/session/cookie`) is refused, if it is: not a POST, not
/// from the host UI's origin, or without the session secret.
fn api_refusal(server: &Server, req: &Request<Incoming>) -> Option<Answer> {
    if req.method() != Method::POST {
        return Some(refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            ErrorCode::ApiBadRequest,
            "host API calls are POST requests",
            "method",
        ));
    }
    let origin = req.headers().get(header::ORIGIN).map(HeaderValue::as_bytes);
    if !server.hosts.is_ui_origin(origin) {
        return Some(refuse(
            StatusCode::FORBIDDEN,
            ErrorCode::ApiForbidden,
            "the host API answers only the host UI's own origin",
            "origin",
        ));
    }
    if !server.has_api_secret(req) {
        return Some(refuse(
            StatusCode::UNAUTHORIZED,
            ErrorCode::ApiUnauthorized,
            "no valid session: open the URL `apphost serve` printed (this page was not signed in by it)",
            "session",
        ));
    }
    None
}

async fn api_call(server: Arc<Server>, command: String, req: Request<Incoming>) -> Answer {
    if let Some(refusal) = api_refusal(&server, &req) {
        return refusal;
    }
    // An overwritten or missing cookie is set again, so reloads keep working.
    let repair_cookie = !server.has_cookie(&req);
    let upload = command == "upload_package";
    let (wanted, limit) = if upload {
        ("application/zip", host_core::api::uploads::MAX_UPLOAD_BYTES)
    } else {
        ("application/json", MAX_JSON_BODY)
    };
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase());
    if content_type.as_deref() != Some(wanted) {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::ApiBadRequest,
            &format!("this call needs Content-Type: {wanted}"),
            "content-type",
        );
    }
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large(limit);
    }
    let read = tokio::time::timeout(BODY_TIMEOUT, Limited::new(req.into_body(), limit).collect());
    let body = match read.await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => return too_large(limit),
        Ok(Err(_)) | Err(_) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                ErrorCode::ApiBadRequest,
                "the request body could not be read (broken off or too slow)",
                "body",
            )
        }
    };
    let session = Arc::clone(&server.session);
    let result = tokio::task::spawn_blocking(move || {
        if upload {
            return api::upload_package(&session, &body);
        }
        let args: Value = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&body).map_err(|e| {
                HostError::new(ErrorCode::ApiBadArguments, "the body is not JSON")
                    .with("command", command.chars().take(64).collect::<String>())
                    .with("reason", e.to_string())
            })?
        };
        api::call(&session, &command, args)
    })
    .await
    .unwrap_or_else(|e| {
        Err(
            HostError::new(ErrorCode::Internal, "a host command crashed")
                .with("reason", e.to_string()),
        )
    });
    let mut answer = match result {
        Ok(value) => json(StatusCode::OK, &value),
        Err(error) => json(status_of(&error), &error),
    };
    if repair_cookie {
        if let Ok(v) = HeaderValue::from_str(&server.session_cookie()) {
            answer.headers_mut().insert(header::SET_COOKIE, v);
        }
    }
    answer
}

async fn app_file(server: Arc<Server>, label: String, req: Request<Incoming>) -> Answer {
    let head = req.method() == Method::HEAD;
    if req.method() != Method::GET && !head {
        return refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            ErrorCode::ApiBadRequest,
            "app files are read with GET",
            "method",
        );
    }
    if req.uri().path().starts_with("/api/") {
        return refuse(
            StatusCode::FORBIDDEN,
            ErrorCode::ApiForbidden,
            "app origins have no host API",
            "app-origin",
        );
    }
    let path = req.uri().path().to_owned();
    let session = Arc::clone(&server.session);
    let served = tokio::task::spawn_blocking(move || session.serve(&label, &path)).await;
    let answer = match served {
        Ok(Ok(answer)) => answer,
        _ => {
            return refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::StoreIo,
                "the store cannot be opened",
                "store",
            )
        }
    };
    let mut response = Response::new(Full::new(if head {
        Bytes::new()
    } else {
        Bytes::from(answer.body)
    }));
    *response.status_mut() =
        StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in &answer.headers {
        if let Ok(v) = HeaderValue::from_str(value) {
            response.headers_mut().insert(*name, v);
        }
    }
    response
}

fn ui_file(name: &str, bytes: Vec<u8>, hosts: &Hosts, head: bool) -> Answer {
    let mut answer = Response::new(Full::new(if head {
        Bytes::new()
    } else {
        Bytes::from(bytes)
    }));
    let h = answer.headers_mut();
    if let Ok(v) = HeaderValue::from_str(assets::mime(name)) {
        h.insert(header::CONTENT_TYPE, v);
    }
    if let Ok(v) = HeaderValue::from_str(&host_ui_csp(hosts)) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    security_headers(h);
    answer
}

/// The host UI's CSP: its own files only, frames only from app origins on this port, nothing
/// may frame it. The same rules as the desktop's `tauri.conf.json` CSP, spelled for HTTP.
pub fn host_ui_csp(hosts: &Hosts) -> String {
    format!(
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
         connect-src 'self'; frame-src http://*.localhost:{port}; object-src 'none'; base-uri 'self'; \
         form-action 'none'; frame-ancestors 'none'",
        port = hosts.port
    )
}

fn security_headers(h: &mut hyper::HeaderMap) {
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

/// The HTTP status of a command's failure, by its class.
pub fn status_of(error: &HostError) -> StatusCode {
    match error.code.class() {
        ErrorClass::Usage | ErrorClass::Input => StatusCode::BAD_REQUEST,
        ErrorClass::Rejected => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorClass::Declined | ErrorClass::Conflict => StatusCode::CONFLICT,
        ErrorClass::NotFound => StatusCode::NOT_FOUND,
        ErrorClass::ProviderUnavailable | ErrorClass::ProviderRefused => StatusCode::BAD_GATEWAY,
        ErrorClass::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

fn json<T: serde::Serialize>(status: StatusCode, value: &T) -> Answer {
    let body = serde_json::to_vec(value).unwrap_or_else(|_| b"null".to_vec());
    let mut answer = Response::new(Full::new(Bytes::from(body)));
    *answer.status_mut() = status;
    let h = answer.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"),
    );
    security_headers(h);
    answer
}

fn refuse(status: StatusCode, code: ErrorCode, message: &str, reason: &str) -> Answer {
    json(
        status,
        &HostError::new(code, message).with("reason", reason),
    )
}

fn too_large(limit: usize) -> Answer {
    json(
        StatusCode::PAYLOAD_TOO_LARGE,
        &HostError::new(ErrorCode::ApiBodyTooLarge, "the request body is too large")
            .with("limit", limit),
    )
}

/// Whether a request comes from an API client rather than a browser navigation: it accepts
/// `application/json` or carries the session header. Those keep the JSON error bodies.
fn wants_json(req: &Request<Incoming>) -> bool {
    let accepts_json = req
        .headers()
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.to_ascii_lowercase().contains("application/json"));
    accepts_json || req.headers().contains_key(SESSION_HEADER)
}

/// The page a browser gets for a launch link that was already used (or is not this server's):
/// what happened and how to get a fresh link. Static: it echoes nothing from the request.
pub const LINK_USED_PAGE: &str = "<!doctype html><html lang=en><meta charset=utf-8>\
<title>AppHost: this sign-in link was already used</title>\
<h1>This sign-in link was already used</h1>\
<p>Each link that <code>apphost serve</code> (or <code>apphost dev --serve</code>) prints signs in \
one browser, once. The browser that opened it first stays signed in: there, reload the page or \
open <a href=\"/\">the host UI</a>.</p>\
<p>To sign in this browser, stop the server (Ctrl-C) and start it again: \
<code>apphost serve</code>, or <code>apphost dev &lt;folder&gt; --serve</code>. \
Its first line is a fresh link.</p></html>";

fn link_used() -> Answer {
    let mut answer = Response::new(Full::new(Bytes::from_static(LINK_USED_PAGE.as_bytes())));
    *answer.status_mut() = StatusCode::UNAUTHORIZED;
    let h = answer.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"),
    );
    security_headers(h);
    answer
}

/// The "not signed in" page: a tab that still holds the session secret gets its cookie again
/// through [`RESTORE_SCRIPT`] and reloads; any other sees the message.
fn not_signed_in() -> Answer {
    let mut answer = Response::new(Full::new(Bytes::from_static(
        b"<!doctype html><meta charset=utf-8><title>AppHost</title>\
          <script src=\"/session-restore.js\"></script>\
          <p>Open the URL that <code>apphost serve</code> printed (it signs this browser in once).</p>",
    )));
    *answer.status_mut() = StatusCode::UNAUTHORIZED;
    let h = answer.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
        ),
    );
    security_headers(h);
    answer
}
