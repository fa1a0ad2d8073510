//! The `agentapp:` scheme: app files for app frames, one host per app
//! (`agentapp://<label>/<path>`), answered off the main thread by a pooled
//! `surface::serve::CachedServer` (same answers as `serve`; per-app facts reused until the store
//! changes, every file's hash still checked).
//!
//! The handler only adapts: it takes the host label and the raw path (query and fragment
//! stripped), and copies status, headers and body. Which file, which CSP and whether to refuse
//! are decided in host-core; the session keeps refusals for diagnostics and logs tampered files.
//! Tauri puts no CSP of its own on custom-scheme responses: the CSP comes from `serve`.

use std::borrow::Cow;
use std::sync::Arc;

use host_core::hosting::surface::origin::OriginStyle;
use host_core::hosting::surface::serve::{AppResponse, ServeContext};
use tauri::http::{Request, Response, Uri};
use tauri::{Manager, Runtime, UriSchemeContext, UriSchemeResponder};

use host_core::api::Session;

pub const SCHEME: &str = "agentapp";

/// The host UI's origin on this platform: the only page that may frame an app.
pub const HOST_UI_ORIGIN: &str = "tauri://localhost";

/// The asynchronous protocol handler registered for [`SCHEME`].
pub fn handle<R: Runtime>(
    ctx: UriSchemeContext<'_, R>,
    request: Request<Vec<u8>>,
    responder: UriSchemeResponder,
) {
    let session = Arc::clone(ctx.app_handle().state::<Arc<Session>>().inner());
    let uri = request.uri().clone();
    tauri::async_runtime::spawn_blocking(move || {
        responder.respond(to_http(answer(&session, &uri)));
    });
}

/// The serve context of the desktop window.
pub fn context() -> ServeContext {
    ServeContext {
        style: OriginStyle::Scheme,
        frame_ancestors: vec![HOST_UI_ORIGIN.to_owned()],
    }
}

fn answer(session: &Session, uri: &Uri) -> AppResponse {
    let label = uri.host().unwrap_or_default();
    // `Uri::path` has neither query nor fragment.
    let path = uri.path();
    match session.serve(label, path) {
        Ok(answer) => answer,
        Err(error) => {
            tracing::warn!(code = error.code.as_str(), message = %error.message, "agentapp: cannot open the store");
            AppResponse {
                status: 500,
                headers: vec![
                    ("Content-Type", "text/plain; charset=utf-8".to_owned()),
                    (
                        "Content-Security-Policy",
                        "default-src 'none'; frame-ancestors 'none'".to_owned(),
                    ),
                    ("X-Content-Type-Options", "nosniff".to_owned()),
                ],
                body: b"serve.io".to_vec(),
                refusal: None,
            }
        }
    }
}

fn to_http(answer: AppResponse) -> Response<Cow<'static, [u8]>> {
    let mut builder = Response::builder().status(answer.status);
    for (name, value) in &answer.headers {
        builder = builder.header(*name, value.as_str());
    }
    builder.body(Cow::Owned(answer.body)).unwrap_or_else(|_| {
        let mut fallback = Response::new(Cow::Borrowed(&b"serve.io"[..]));
        *fallback.status_mut() = tauri::http::StatusCode::INTERNAL_SERVER_ERROR;
        fallback
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_copy_status_headers_and_body() {
        let r = to_http(AppResponse {
            status: 403,
            headers: vec![
                ("Content-Security-Policy", "default-src 'none'".into()),
                ("X-Content-Type-Options", "nosniff".into()),
            ],
            body: b"serve.tampered".to_vec(),
            refusal: None,
        });
        assert_eq!(r.status().as_u16(), 403);
        assert_eq!(r.headers()["content-security-policy"], "default-src 'none'");
        assert_eq!(r.headers()["x-content-type-options"], "nosniff");
        assert_eq!(&r.body()[..], b"serve.tampered");
    }

    #[test]
    fn frames_may_only_be_embedded_by_the_host_ui() {
        let ctx = context();
        assert_eq!(ctx.frame_ancestors, ["tauri://localhost"]);
        assert!(matches!(ctx.style, OriginStyle::Scheme));
        let uri: Uri = "agentapp://hello-app/a%20b/index.html?app=x#frag"
            .parse()
            .unwrap();
        assert_eq!(uri.host(), Some("hello-app"));
        assert_eq!(uri.path(), "/a%20b/index.html");
    }
}
