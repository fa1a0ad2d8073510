//! Serving an app's UI files: one function behind the desktop scheme handler and the browser
//! mode alike.
//!
//! Files come only from the verified, content-addressed store (`Store::read_file` rehashes every
//! read): a file whose bytes no longer match is refused (`serve.tampered`), never served. Only
//! files under the app's UI root (`runtimePackage.ui.path`) are reachable, so `APP.md`, storage
//! migrations or signatures are never served. Disabled and uninstalled apps serve nothing. Paths
//! are percent-decoded once, per segment; `.`/`..`/empty segments, encoded slashes or
//! backslashes, control characters and NUL are refused; there are no directory listings. Every
//! response, errors included, carries the app's CSP, `X-Content-Type-Options: nosniff` and a
//! MIME type from a fixed table (unknown types are `application/octet-stream`).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use super::csp::{self, CspInput, FrameOptions};
use super::dev_console;
use super::origin::{app_host_label, OriginStyle};
use crate::foundation::error::ErrorCode;
use crate::install::store::{ActiveApp, ChangeStamp, Store};

/// Where requests come from and who may frame the app.
#[derive(Debug, Clone)]
pub struct ServeContext {
    pub style: OriginStyle,
    /// The host UI origin(s): the only allowed `frame-ancestors`.
    pub frame_ancestors: Vec<String>,
}

/// A response, transport-neutral.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppResponse {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
    /// Set when the request was refused: a stable reason for diagnostics.
    pub refusal: Option<ServeRefusal>,
}

impl AppResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why a request was refused (stable strings; `tampered` is also logged as a warning).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServeRefusal {
    pub reason: &'static str,
    pub app: Option<String>,
    pub path: String,
}

/// Serves `path` (the raw, still percent-encoded URL path, without query or fragment) for the
/// app whose host label is `label`. Reads the app's facts from the store on every request; the
/// desktop keeps a [`CachedServer`] instead.
pub fn serve(store: &Store, ctx: &ServeContext, label: &str, path: &str) -> AppResponse {
    match resolve(store, ctx, label) {
        Some(app) => serve_app(store, &app, path),
        None => unknown_app(path),
    }
}

/// What serving an app's files depends on, besides the file itself: read from the store once
/// per app and kept by [`CachedServer`] until the store changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedApp {
    pub name: String,
    pub version: String,
    pub enabled: bool,
    /// The CSP of every response for this app (errors included).
    pub csp: String,
    /// The UI root inside the package (`None`: the app has no UI to serve).
    pub root: Option<String>,
    /// The file a directory request gets (`index.html` unless the manifest says otherwise).
    pub entry: String,
    /// An `apphost dev` install (a dev build with its `dev-app/<name>` row): its pages get the
    /// dev console script (`dev_console.rs`); `ui.frame.forms` is told to that script.
    pub dev: bool,
    pub forms: bool,
}

/// The installed app behind `label`, with what serving it depends on (`None`: no such app).
pub fn resolve(store: &Store, ctx: &ServeContext, label: &str) -> Option<ServedApp> {
    let name = find_app(store, label)?;
    let app = store.active_app(&name).ok()?;
    let dev = is_dev_build(&app.version) && store.is_dev(&name).unwrap_or(false);
    Some(ServedApp {
        dev,
        forms: FrameOptions::from_manifest(&app.manifest.data).forms,
        csp: csp_for(&app, ctx),
        root: ui_root(&app),
        entry: ui_entry(&app),
        name: app.name,
        version: app.version,
        enabled: app.enabled,
    })
}

/// Whether a version is an `apphost dev` build (`<version>+dev.<ms>`).
pub fn is_dev_build(version: &str) -> bool {
    semver::Version::parse(version).is_ok_and(|v| v.build.as_str().starts_with("dev."))
}

fn unknown_app(path: &str) -> AppResponse {
    refuse(404, "serve.unknown_app", None, path, None)
}

/// Serves `path` of a resolved app: refuses a disabled app or one without a UI, then reads the
/// file from the store, whose hash is checked on every read.
pub fn serve_app(store: &Store, app: &ServedApp, path: &str) -> AppResponse {
    let name = app.name.as_str();
    let csp = app.csp.as_str();
    if !app.enabled {
        return refuse(403, "serve.app_disabled", Some(name), path, Some(csp));
    }
    let Some(root) = &app.root else {
        return refuse(404, "serve.no_ui", Some(name), path, Some(csp));
    };
    let Some(rel) = decode_path(path) else {
        return refuse(400, "serve.bad_path", Some(name), path, Some(csp));
    };
    let rel = if rel.is_empty() || rel.ends_with('/') {
        format!("{rel}{}", app.entry)
    } else {
        rel
    };
    if app.dev && rel == dev_console::SCRIPT_PATH {
        return AppResponse {
            status: 200,
            headers: headers(mime_for(&rel), csp),
            body: dev_console::script(app.forms),
            refusal: None,
        };
    }
    let full = if root.is_empty() {
        rel.clone()
    } else {
        format!("{root}/{rel}")
    };
    match store.read_file(name, &app.version, &full) {
        Ok(body) => {
            let mime = mime_for(&rel);
            let body = if app.dev && mime.starts_with("text/html") {
                dev_console::inject(body)
            } else {
                body
            };
            AppResponse {
                status: 200,
                headers: headers(mime, csp),
                body,
                refusal: None,
            }
        }
        Err(e) if e.code == ErrorCode::StoreCorrupt => {
            tracing::warn!(app = %name, path = %full, "refused to serve a file whose content no longer matches its hash");
            refuse(403, "serve.tampered", Some(name), path, Some(csp))
        }
        Err(e) if e.code == ErrorCode::AppNotInstalled => {
            refuse(404, "serve.not_found", Some(name), path, Some(csp))
        }
        Err(e) => {
            tracing::warn!(app = %name, path = %full, error = %e.message, "cannot serve an app file");
            refuse(500, "serve.io", Some(name), path, Some(csp))
        }
    }
}

/// A file server over one open store that keeps each app's [`ServedApp`] (which app a host
/// label names, its active version, enabled flag, UI root and CSP) until the store changes
/// ([`ChangeStamp`]: any commit, by this process or another, drops every entry). The file itself
/// is still looked up and its hash checked on every request, so a disabled, uninstalled,
/// updated or tampered app is never served from the cache. Only installed apps are kept, so the
/// memory is bounded by the number of installed apps.
pub struct CachedServer {
    store: Store,
    ctx: ServeContext,
    stamp: Option<ChangeStamp>,
    apps: HashMap<String, Arc<ServedApp>>,
}

impl CachedServer {
    pub fn new(store: Store, ctx: ServeContext) -> Self {
        CachedServer {
            store,
            ctx,
            stamp: None,
            apps: HashMap::new(),
        }
    }

    /// Same answer as [`serve`] on this store.
    pub fn serve(&mut self, label: &str, path: &str) -> AppResponse {
        match self.resolve(label) {
            Some(app) => serve_app(&self.store, &app, path),
            None => unknown_app(path),
        }
    }

    /// Whether the facts of the app behind `label` are cached for the store's current state
    /// (diagnostics and tests).
    pub fn is_cached(&self, label: &str) -> bool {
        self.stamp.is_some()
            && self.store.change_stamp().ok() == self.stamp
            && self.apps.contains_key(label)
    }

    fn resolve(&mut self, label: &str) -> Option<Arc<ServedApp>> {
        let stamp = self.store.change_stamp().ok();
        if stamp.is_none() || stamp != self.stamp {
            self.apps.clear();
            self.stamp = stamp;
        }
        if let Some(app) = self.apps.get(label) {
            return Some(Arc::clone(app));
        }
        let app = Arc::new(resolve(&self.store, &self.ctx, label)?);
        if self.stamp.is_some() {
            self.apps.insert(label.to_owned(), Arc::clone(&app));
        }
        Some(app)
    }
}

/// The app whose host label is `label`, if installed.
pub fn find_app(store: &Store, label: &str) -> Option<String> {
    store
        .app_names()
        .ok()?
        .into_iter()
        .find(|n| app_host_label(n) == label)
}

/// The CSP of an app's responses: declared network domains the user granted, frame options.
pub fn csp_for(app: &ActiveApp, ctx: &ServeContext) -> String {
    let origin = ctx.style.origin(&app.name);
    let domains = granted_domains(app);
    csp::build(&CspInput {
        app_origin: &origin,
        frame_ancestors: &ctx.frame_ancestors,
        connect_domains: &domains,
        frame: FrameOptions::from_manifest(&app.manifest.data),
    })
    .header
}

/// Domains of `network` permissions that are declared and granted.
pub fn granted_domains(app: &ActiveApp) -> Vec<String> {
    let mut out = Vec::new();
    for p in app.manifest.view().permissions() {
        let granted = p.key().is_some_and(|k| app.grants.contains(k));
        let network = p.scope() == Some("network");
        if !(granted && network) {
            continue;
        }
        for d in p.domains() {
            if !out.iter().any(|x: &String| x == d) {
                out.push(d.to_owned());
            }
        }
    }
    out
}

/// `runtimePackage.ui.path` as a package-relative directory (`./dist/ui` → `dist/ui`).
pub fn ui_root(app: &ActiveApp) -> Option<String> {
    let p = app.manifest.view().runtime_package().ui_path()?.as_str()?;
    let p = p.trim_start_matches("./").trim_end_matches('/');
    if p == "." {
        return Some(String::new());
    }
    decode_path(p).filter(|d| !d.ends_with('/'))
}

/// `runtimePackage.ui.entry`, or `index.html`.
pub fn ui_entry(app: &ActiveApp) -> String {
    app.manifest
        .view()
        .runtime_package()
        .ui_entry()
        .and_then(decode_path)
        .filter(|e| !e.is_empty() && !e.ends_with('/'))
        .unwrap_or_else(|| "index.html".to_owned())
}

/// Percent-decodes a URL path once, segment by segment. `None` for anything that could step
/// outside the UI root or name something odd. A trailing `/` is kept (it asks for the entry file
/// of that directory).
pub fn decode_path(raw: &str) -> Option<String> {
    let trimmed = raw.strip_prefix('/').unwrap_or(raw);
    if trimmed.is_empty() {
        return Some(String::new());
    }
    let trailing = trimmed.ends_with('/');
    let body = trimmed.strip_suffix('/').unwrap_or(trimmed);
    let mut out = Vec::new();
    for seg in body.split('/') {
        let bytes = percent_decode(seg)?;
        let s = String::from_utf8(bytes).ok()?;
        if s.is_empty()
            || s == "."
            || s == ".."
            || s.contains(['/', '\\'])
            || s.chars().any(|c| c.is_control())
        {
            return None;
        }
        out.push(s);
    }
    let mut joined = out.join("/");
    if trailing {
        joined.push('/');
    }
    Some(joined)
}

fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hi = (*b.get(i + 1)? as char).to_digit(16)?;
            let lo = (*b.get(i + 2)? as char).to_digit(16)?;
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

/// The MIME type of a file, from its extension.
pub fn mime_for(path: &str) -> &'static str {
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" | "cjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "webmanifest" => "application/manifest+json",
        "txt" | "md" => "text/plain; charset=utf-8",
        "csv" => "text/csv; charset=utf-8",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "avif" => "image/avif",
        "ico" => "image/x-icon",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        "ttf" => "font/ttf",
        "otf" => "font/otf",
        "wasm" => "application/wasm",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "ogg" => "audio/ogg",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

fn headers(content_type: &str, csp: &str) -> Vec<(&'static str, String)> {
    vec![
        ("Content-Type", content_type.to_owned()),
        ("Content-Security-Policy", csp.to_owned()),
        ("X-Content-Type-Options", "nosniff".to_owned()),
        ("Referrer-Policy", "no-referrer".to_owned()),
        ("Cache-Control", "no-cache".to_owned()),
        ("Cross-Origin-Resource-Policy", "same-origin".to_owned()),
        (
            "Permissions-Policy",
            "camera=(), microphone=(), geolocation=(), usb=(), serial=(), hid=(), payment=()"
                .to_owned(),
        ),
    ]
}

fn refuse(
    status: u16,
    reason: &'static str,
    app: Option<&str>,
    path: &str,
    csp: Option<&str>,
) -> AppResponse {
    let csp = csp.unwrap_or("default-src 'none'; frame-ancestors 'none'");
    AppResponse {
        status,
        headers: headers("text/plain; charset=utf-8", csp),
        body: reason.as_bytes().to_vec(),
        refusal: Some(ServeRefusal {
            reason,
            app: app.map(str::to_owned),
            path: path.chars().take(512).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_decoded_once_and_traversal_is_refused() {
        assert_eq!(decode_path("/").as_deref(), Some(""));
        assert_eq!(decode_path("/index.html").as_deref(), Some("index.html"));
        assert_eq!(decode_path("/a%20b/c.js").as_deref(), Some("a b/c.js"));
        assert_eq!(decode_path("/sub/").as_deref(), Some("sub/"));
        for bad in [
            "/../APP.md",
            "/a/../../x",
            "/%2e%2e/APP.md",
            "/%2E%2E/APP.md",
            "/a%2f..%2fb",
            "/a%5cb",
            "/a\\b",
            "/a//b",
            "/./a",
            "/a%00b",
            "/a%0ab",
            "/%zz",
            "/a%2",
            "/%ff%fe",
        ] {
            assert_eq!(decode_path(bad), None, "{bad}");
        }
    }

    #[test]
    fn mime_types_come_from_a_fixed_table() {
        assert_eq!(mime_for("index.html"), "text/html; charset=utf-8");
        assert_eq!(mime_for("a/b/APP.JS"), "text/javascript; charset=utf-8");
        assert_eq!(mime_for("x.wasm"), "application/wasm");
        assert_eq!(mime_for("noext"), "application/octet-stream");
        assert_eq!(mime_for("x.exe"), "application/octet-stream");
    }

    #[test]
    fn refusals_carry_the_hardening_headers() {
        let r = refuse(404, "serve.not_found", Some("a"), "/x", None);
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
        assert!(r.header("content-security-policy").is_some());
        assert_eq!(r.refusal.unwrap().reason, "serve.not_found");
    }
}
